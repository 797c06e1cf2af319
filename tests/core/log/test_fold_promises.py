"""What the board shows after a history: who holds a WP, its review rounds, its decisions,
and the conflicts replay reports (their wording included). Also how a writer links the
moves it appends, and the board's own lookups."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kitty.core.log.read import parse_lines
from kitty.core.log.state import Board, as_dict, extend, link, replay
from tests.core.log.lines import T, ann, chain, tr


def board_of(lines: list[str]) -> Board:
    return replay(parse_lines(lines).events)


def test_a_conflict_names_the_mover_and_machine_even_when_the_policy_leaves_them_blank() -> None:
    blank = {"agent": "", "machine": ""}
    lines = chain(
        "WP01",
        ("genesis", "planned", "A"),
        ("planned", "claimed", "B", {"actor": "alice"}),
        ("planned", "claimed", "C", {"actor": "bob", "policy_metadata": blank, "kitty_after": "A"}),
    )
    board = board_of(lines)
    assert [(c.event_id, c.agent, c.machine, c.message) for c in board.conflicts] == [
        (
            "C",
            "bob",  # a blank policy agent is no agent: the actor moved it
            None,  # a blank machine is no machine
            "WP01 planned -> claimed by bob was not applied: WP01 was already claimed",
        )
    ]


def test_anonymous_moves_are_no_retry_of_each_other_and_their_followers_stay_lost() -> None:
    lines = chain(
        "WP01",
        ("genesis", "planned", "A"),
        ("planned", "claimed", "B", {"actor": None}),
        ("planned", "claimed", "B2", {"actor": None, "kitty_after": "A"}),
        ("claimed", "in_progress", "C", {"actor": None}),
    )
    board = board_of(lines)
    assert board.wps["WP01"].lane == "claimed"
    assert [(c.event_id, c.kind, c.message) for c in board.conflicts] == [
        (
            "B2",
            "stale_from_lane",
            "WP01 planned -> claimed by unknown was not applied: WP01 was already claimed",
        ),
        (
            "C",
            "stale_from_lane",
            "WP01 claimed -> in_progress by unknown was not applied: "
            "it follows B2, a move that was not applied",
        ),
    ]


def test_a_linked_move_from_an_unknown_lane_is_an_illegal_edge_not_a_crash() -> None:
    board = board_of(
        chain(
            "WP01",
            ("genesis", "planned", "A"),
            ("flying", "claimed", "B", {"actor": "alice", "kitty_after": "Z"}),
        )
    )
    assert board.wps["WP01"].lane == "planned"
    assert [(c.kind, c.message) for c in board.conflicts] == [
        (
            "illegal_edge",
            "WP01 flying -> claimed is not a legal move without --force and was not applied",
        )
    ]


def test_an_approval_by_the_implementer_named_only_in_the_policy_is_a_self_review() -> None:
    alice = {"actor": None, "policy_metadata": {"agent": "alice"}}
    board = board_of(
        chain(
            "WP01",
            ("genesis", "planned", "A"),
            ("planned", "claimed", "B", alice),
            ("claimed", "in_progress", "C", alice),
            ("in_progress", "approved", "D", alice),
        )
    )
    assert board.wps["WP01"].lane == "in_progress"
    assert [(c.kind, c.message) for c in board.conflicts] == [
        (
            "self_review",
            "alice implemented WP01 and approved it without the self-review fallback; "
            "the approval was not applied",
        )
    ]


def _reclaim_history(reclaim: dict[str, Any], claimed_by_bob: bool) -> list[str]:
    """alice claims WP01 with a lease; the lease expires and the WP is released (and
    claimed by bob); then alice's offline move, linked to her claim, arrives."""
    lines = [
        tr("WP01", "genesis", "planned", T.format(1), "A", kitty_after=None),
        tr(
            "WP01",
            "planned",
            "claimed",
            T.format(2),
            "B",
            actor="alice",
            policy_metadata={"agent": "alice", "machine": "m1", "lease_seconds": 60},
            kitty_after="A",
        ),
        tr(
            "WP01",
            "claimed",
            "planned",
            T.format(5),
            "R1",
            actor="kitty-lease",
            force=True,
            reason="lease expired",
            policy_metadata={"reclaim": reclaim},
            kitty_after="B",
        ),
    ]
    if claimed_by_bob:
        lines.append(
            tr(
                "WP01",
                "planned",
                "claimed",
                T.format(6),
                "R2",
                actor="bob",
                policy_metadata={"agent": "bob", "reclaim": reclaim},
                kitty_after="R1",
            )
        )
    lines.append(
        tr(
            "WP01",
            "claimed",
            "in_progress",
            T.format(7),
            "X",
            actor="alice",
            policy_metadata={"agent": "alice"},
            kitty_after="B",
        )
    )
    return lines


def test_an_expired_holders_late_move_is_reported_with_who_reclaimed_it_and_when() -> None:
    expired = T.format(4)
    by_bob = {"previous_holder": "alice", "lease_expired_at": expired, "by": "bob"}
    released = board_of(_reclaim_history(by_bob, claimed_by_bob=False))
    assert released.wps["WP01"].lane == "planned"
    assert [c.message for c in released.conflicts] == [
        "WP01 claimed -> in_progress by alice was not applied: WP01 was already planned; "
        f"bob reclaimed it when alice's lease expired at {expired}, and this move would undo that"
    ]
    # A reclaim that does not say who took over names the WP's new holder.
    anonymous = {"previous_holder": "alice", "lease_expired_at": expired}
    taken = board_of(_reclaim_history(anonymous, claimed_by_bob=True))
    assert (taken.wps["WP01"].lane, taken.wps["WP01"].agent) == ("claimed", "bob")
    assert [c.message for c in taken.conflicts] == [
        "WP01 claimed -> in_progress by alice was not applied: WP01 was already claimed; "
        f"bob reclaimed it when alice's lease expired at {expired}, and this move would undo that"
    ]


def test_a_retry_of_a_claim_that_left_agent_and_machine_blank_is_still_a_retry() -> None:
    blank, again = {"agent": "", "machine": ""}, {"machine": "m2"}
    board = board_of(
        chain(
            "WP01",
            ("genesis", "planned", "A"),
            ("planned", "claimed", "B", {"actor": "alice", "policy_metadata": blank}),
            (
                "planned",
                "claimed",
                "B2",
                {"actor": "alice", "policy_metadata": again, "kitty_after": "A"},
            ),
        )
    )
    assert board.conflicts == []
    assert (board.wps["WP01"].lane, board.wps["WP01"].last_event_id) == ("claimed", "B")


def test_a_lease_claim_holds_the_wp_for_its_agent_machine_and_lease() -> None:
    lease = {"machine": "m2", "lease_seconds": 600}
    board = board_of(
        [
            tr(
                "WP01",
                "planned",
                "claimed",
                T.format(1),
                "A",
                actor="bob",
                policy_metadata={"agent": "bob", **lease},
            ),
            tr(
                "WP02",
                "planned",
                "claimed",
                T.format(2),
                "B",
                actor="bob",
                policy_metadata={"agent": "bob", "shell_pid": 42, **lease},
            ),
        ]
    )
    assert board.wps["WP01"].runtime_claim == {"agent": "bob", "at": T.format(1), **lease}
    assert board.wps["WP02"].runtime_claim == {
        "agent": "bob",
        "shell_pid": 42,
        "at": T.format(2),
        **lease,
    }


def test_a_review_sent_back_to_work_drops_the_reviewers_process() -> None:
    lines = [
        tr(
            "WP01",
            "for_review",
            "in_review",
            T.format(1),
            "A",
            actor="codex",
            policy_metadata={"shell_pid": 7},
        ),
        tr(
            "WP01",
            "in_review",
            "in_progress",
            T.format(2),
            "B",
            actor="codex",
            review_result={"verdict": "changes_requested", "reviewer": "codex"},
        ),
    ]
    assert board_of(lines[:1]).wps["WP01"].runtime_claim == {
        "agent": "codex",
        "shell_pid": 7,
        "at": T.format(1),
    }
    assert board_of(lines).wps["WP01"].runtime_claim is None


def test_review_rounds_feedback_and_approval() -> None:
    rejected = {"verdict": "changes_requested", "reviewer": "codex"}
    lines = [
        tr("WP01", "for_review", "in_review", T.format(1), "A", actor="codex"),
        tr(
            "WP01",
            "in_review",
            "in_progress",
            T.format(2),
            "B",
            actor="codex",
            review_result=rejected,
        ),
        tr("WP01", "in_progress", "for_review", T.format(3), "C", actor="alice"),
        tr("WP01", "for_review", "in_review", T.format(4), "D", actor="codex"),
        # blocked with changes requested: no new round, the feedback still waits
        tr("WP01", "in_review", "blocked", T.format(5), "E", actor="codex", review_result=rejected),
        tr("WP01", "blocked", "in_review", T.format(6), "F", actor="codex", force=True),
        tr(
            "WP01",
            "in_review",
            "approved",
            T.format(7),
            "G",
            actor="codex",
            review_result={"verdict": "approved", "reviewer": "codex"},
        ),
        tr(
            "WP02",
            "in_review",
            "approved",
            T.format(8),
            "H",
            actor="codex",
            review_result={"reviewer": "codex"},
        ),
    ]
    blocked = board_of(lines[:5]).wps["WP01"]
    assert (blocked.review_cycles, blocked.review_status) == (1, "has_feedback")
    board = board_of(lines)
    done = board.wps["WP01"]
    assert (done.review_cycles, done.review_status) == (1, None)
    assert [(r.verdict, r.cycle, r.to_lane) for r in done.reviews] == [
        ("changes_requested", 1, "in_progress"),
        ("changes_requested", None, "blocked"),
        ("approved", None, "approved"),
    ]
    assert [r.verdict for r in board.wps["WP02"].reviews] == [""]  # no verdict given


def test_unforced_moves_record_an_arbiter_a_self_review_fallback_and_a_reclaim() -> None:
    arbiter = {"decision": "approve", "by": "lead"}
    fallback = {"approved_by": "alice", "reason": "solo"}
    reclaim = {"previous_holder": "alice", "by": "bob"}
    board = board_of(
        [
            tr(
                "WP01",
                "in_review",
                "approved",
                T.format(1),
                "A",
                actor="codex",
                policy_metadata={"arbiter": arbiter},
            ),
            tr(
                "WP02",
                "in_progress",
                "approved",
                T.format(2),
                "B",
                actor="alice",
                policy_metadata={"self_review_fallback": fallback},
            ),
            tr(
                "WP03",
                "planned",
                "claimed",
                T.format(3),
                "C",
                actor="bob",
                policy_metadata={"agent": "bob", "reclaim": reclaim},
            ),
        ]
    )
    wps = board.wps
    assert wps["WP01"].arbiter == {**arbiter, "at": T.format(1), "to_lane": "approved", "cycles": 0}
    assert wps["WP02"].self_review == {**fallback, "at": T.format(2)}
    assert wps["WP03"].reclaim == {**reclaim, "at": T.format(3)}
    assert (wps["WP01"].self_review, wps["WP01"].reclaim, wps["WP02"].arbiter) == (None,) * 3


def test_annotations_keep_spec_kittys_runtime_slots_as_written() -> None:
    lines = [
        tr("WP01", "planned", "claimed", T.format(1), "A", actor="alice"),
        ann("WP01", T.format(2), "B", {"model": "gpt-5", "agent_profile": "4", "shell_pid": "abc"}),
        ann("WP01", T.format(3), "C", {"model": "", "shell_pid": [1]}),
        ann("WP01", T.format(4), "D", {"shell_pid": "42"}),
    ]
    first = board_of(lines[:2]).wps["WP01"].noted_slots
    # only the process id is read as a number, and one that is none stays as written
    assert (first["model"], first["agent_profile"], first["shell_pid"]) == ("gpt-5", "4", "abc")
    second = board_of(lines[:3]).wps["WP01"].noted_slots
    assert (second["model"], second["shell_pid"]) == ("gpt-5", [1])  # blank: no change
    assert board_of(lines).wps["WP01"].noted_slots["shell_pid"] == 42
    # Python's JSON reader takes Infinity: kept as written, never a crash of the fold
    infinite = ann("WP01", T.format(5), "E", {}).replace(
        '"delta": {}', '"delta": {"shell_pid": Infinity}'
    )
    assert board_of([*lines, infinite]).wps["WP01"].noted_slots["shell_pid"] == float("inf")


def _record(wp: str, frm: str, to: str, at: int, eid: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(tr(wp, frm, to, T.format(at), eid, actor="alice"))
    return data


def test_moves_appended_together_are_linked_in_order_and_replay_without_conflict() -> None:
    history = chain(
        "WP01", ("genesis", "planned", "A"), ("planned", "claimed", "B", {"actor": "alice"})
    )
    board = board_of(history)
    others = [
        {"kind": "merge-note", "from_lane": "claimed", "wp_id": "WP01", "event_id": "K"},
        {"event_type": "WPMoved", "from_lane": "claimed", "wp_id": "WP01", "event_id": "E"},
        {"type": "Moved", "from_lane": "claimed", "wp_id": "WP01", "event_id": "Y"},
        json.loads(ann("WP01", T.format(3), "N", {"note": "starting"})),
        dict(_record("WP01", "claimed", "in_progress", 3, "Q"), wp_id=None),
    ]
    moves = [
        _record("WP01", "claimed", "in_progress", 3, "C"),
        _record("WP01", "in_progress", "for_review", 4, "D"),
        _record("WP02", "genesis", "planned", 5, "G"),
    ]
    records = [*others, *moves]
    link(records, board)
    assert [r.get("kitty_after", "-") for r in records] == ["-"] * 5 + ["B", "C", None]
    merged = board_of([*history, *(json.dumps(r) for r in moves)])
    assert merged.conflicts == []
    assert (merged.lane("WP01"), merged.lane("WP02")) == ("for_review", "planned")


def test_the_board_looks_up_a_wp_and_starts_empty() -> None:
    board = board_of([tr("WP01", "genesis", "planned", T.format(1), "A")])
    assert board.get("WP01") is board.wps["WP01"] and board.get("WP01").lane == "planned"
    fresh = extend(
        Board(), parse_lines([tr("WP02", "planned", "claimed", T.format(1), "B")]).events
    )
    assert (fresh.warnings, fresh.conflicts, fresh.lane("WP02")) == ([], [], "claimed")
    unseen = Board().get("WP09")
    assert (unseen.wp_id, unseen.lane) == ("WP09", None)
    with pytest.raises(ValueError) as caught:
        extend(board, parse_lines([tr("WP01", "planned", "claimed", T.format(1), "C")]).events)
    assert str(caught.value) == "extend() needs events newer than the board"


def test_a_config_section_that_is_not_a_table_reads_as_empty() -> None:
    assert as_dict({"lease_minutes": 5}) == {"lease_minutes": 5}
    for odd in (None, ["a"], "panel", 3):
        assert as_dict(odd) == {}
