"""Holder checks in replay (issue 27.6): after clones merge, a kitty-written move out of
a held lane by someone who does not hold the WP is a conflict, and an old holder's
offline move does not undo a lease reclaim. History (no `kitty_after`) is unchanged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kitty.core.log.conflicts import open_views
from kitty.core.log.read import parse_lines
from kitty.core.log.state import replay
from tests.core.log.lines import T0, tr
from tests.helpers import kitty, make_mission, ok


def kt(
    wp: str, frm: str, to: str, at: str, eid: str, agent: str, after: str | None, **kw: Any
) -> str:
    """A kitty-written transition: it carries `kitty_after`, the id of the WP's last
    applied transition its writer saw (the causal link)."""
    policy = dict(kw.pop("policy", {}), agent=agent)
    return tr(wp, frm, to, at, eid, actor=agent, policy_metadata=policy, kitty_after=after, **kw)


def hist(wp: str, frm: str, to: str, at: str, eid: str, agent: str) -> str:
    """A transition Spec Kitty wrote (history: no `kitty_after`)."""
    return tr(wp, frm, to, at, eid, actor=agent, policy_metadata={"agent": agent})


BASE = [
    tr("WP01", "genesis", "planned", T0.format(1), "A"),
    kt("WP01", "planned", "claimed", T0.format(2), "B", "alice", "A"),
]


def board_of(lines: list[str]) -> Any:
    return replay(parse_lines(lines).events)


def test_a_move_by_someone_who_does_not_hold_the_wp_is_a_conflict() -> None:
    """Mixed history: alice started WP01 with Spec Kitty (a history line, which takes no
    link); bob's kitty linked to alice's claim, never saw her start it, and blocks it."""
    started = hist("WP01", "claimed", "in_progress", T0.format(3), "C", "alice")
    bob = kt("WP01", "claimed", "blocked", T0.format(4), "D", "bob", "B")
    board = board_of([*BASE, started, bob])
    st = board.wps["WP01"]
    assert st.lane == "in_progress" and st.agent == "alice"
    [conflict] = board.conflicts
    assert (conflict.kind, conflict.agent, conflict.holder) == ("not_holder", "bob", "alice")
    assert "alice holds WP01" in conflict.message
    [view] = open_views(board, "m")
    assert any("--force --agent bob" in c for c in view["commands"]), view["commands"]


def test_the_holder_a_forced_move_and_history_still_apply() -> None:
    own = board_of([*BASE, kt("WP01", "claimed", "in_progress", T0.format(3), "C", "alice", "B")])
    assert own.wps["WP01"].lane == "in_progress" and not own.conflicts
    forced = kt("WP01", "claimed", "blocked", T0.format(3), "C", "bob", "B", force=True)
    assert board_of([*BASE, forced]).wps["WP01"].lane == "blocked"
    # forced by someone whose clone had not seen the claim yet: still the override it says
    unseen = kt("WP01", "claimed", "blocked", T0.format(3), "C", "bob", None, force=True)
    board = board_of([*BASE, unseen])
    assert board.wps["WP01"].lane == "blocked" and not board.conflicts
    history = tr("WP01", "claimed", "in_progress", T0.format(3), "C", actor="bob")
    board = board_of([*BASE, history])  # Spec Kitty's line: folded as before
    assert board.wps["WP01"].lane == "in_progress" and not board.conflicts
    review = [
        kt("WP01", "claimed", "in_progress", T0.format(3), "C", "alice", "B"),
        kt("WP01", "in_progress", "for_review", T0.format(4), "D", "alice", "C"),
        hist("WP01", "for_review", "in_review", T0.format(5), "E", "rita"),
        kt("WP01", "in_review", "approved", T0.format(6), "F", "alice", "D"),
    ]
    board = board_of(BASE + review)
    assert board.wps["WP01"].lane == "in_review"
    assert [(c.kind, c.holder) for c in board.conflicts] == [("not_holder", "rita")]


LEASE = {"machine": "m1", "lease_seconds": 60}
RECLAIM = {"previous_holder": "alice", "previous_machine": "m1", "by": "carol"}
RECLAIMED = [
    tr("WP01", "genesis", "planned", T0.format(1), "A"),
    kt("WP01", "planned", "claimed", T0.format(2), "B", "alice", "A", policy=LEASE),
    kt(
        "WP01",
        "claimed",
        "planned",
        T0.format(4),
        "R1",
        "kitty-lease",
        "B",
        force=True,
        policy={"reclaim": dict(RECLAIM, lease_expired_at=T0.format(3))},
    ),
    kt(
        "WP01",
        "planned",
        "claimed",
        T0.format(5),
        "R2",
        "carol",
        "R1",
        policy={"reclaim": dict(RECLAIM, lease_expired_at=T0.format(3)), **LEASE},
    ),
]


def test_an_old_holders_offline_move_does_not_undo_a_lease_reclaim() -> None:
    """alice, offline, saw only her own claim (B); the reclaim (R1) also followed B: a
    fork, which the reclaim won (it came first), so her move is refused, and says why."""
    offline = kt("WP01", "claimed", "in_progress", T0.format(6), "X", "alice", "B", policy=LEASE)
    board = board_of([*RECLAIMED, offline])
    st = board.wps["WP01"]
    assert st.lane == "claimed" and st.agent == "carol"  # the reclaim stands
    [conflict] = board.conflicts
    assert conflict.kind == "stale_from_lane" and conflict.event_id == "X"
    assert "carol reclaimed it when alice's lease expired" in conflict.message


def test_doctor_reports_a_merged_move_by_a_non_holder(repo: Path) -> None:
    mission = make_mission(repo, wps=[{"wp_id": "WP01", "title": "A"}])
    ok(repo, "move", "WP01", "claimed", "--agent", "alice")
    log = mission / "status.events.jsonl"
    # What another clone's kitty wrote, merged in: bob's move of alice's WP.
    log.write_text(
        log.read_text()
        + kt(
            "WP01",
            "claimed",
            "in_progress",
            "2099-01-01T00:00:00+00:00",
            "01ZZZZZZZZZZZZZZZZZZZZZZZZ",
            "bob",
            None,
        )
        + "\n"
    )
    doctor = kitty(repo, "doctor")
    assert doctor.code == 1
    assert "conflict: WP01 claimed -> in_progress by bob was not applied" in doctor.out
    view = ok(repo, "status", "--json").json()["work_packages"][0]
    assert view["lane"] == "claimed" and view["holder"] == "alice"


def test_a_takeover_whose_writer_saw_the_holder_is_applied() -> None:
    """On one clone `kitty move` lets bob move alice's WP: its link names alice's claim."""
    seen = tr(
        "WP01",
        "claimed",
        "in_progress",
        T0.format(3),
        "C",
        actor="bob",
        policy_metadata={"agent": "bob"},
        kitty_after="B",
    )
    board = board_of([*BASE, seen])
    assert board.wps["WP01"].lane == "in_progress" and not board.conflicts


def _reclaimed_by(by: str | None) -> list[str]:
    reclaim = {k: v for k, v in RECLAIM.items() if k != "by"} | ({"by": by} if by else {})
    lines = list(RECLAIMED)
    lines[2] = kt(
        "WP01",
        "claimed",
        "planned",
        T0.format(4),
        "R1",
        "kitty-lease",
        "B",
        force=True,
        policy={"reclaim": dict(reclaim, lease_expired_at=T0.format(3))},
    )
    lines[3] = kt(
        "WP01",
        "planned",
        "claimed",
        T0.format(5),
        "R2",
        "carol",
        "R1",
        policy={"reclaim": dict(reclaim, lease_expired_at=T0.format(3)), **LEASE},
    )
    return lines


def test_a_refused_move_by_the_holder_a_reclaim_replaced_says_who_reclaimed_it_and_when() -> None:
    """alice's move from a clone that never saw the reclaim (it names a move this log does
    not have) reaches the holder rule: carol holds WP01, and the message says the reclaim
    (by whoever made it, else the holder) would be undone."""
    expired = T0.format(3)
    base = "WP01 claimed -> in_progress by {who} was not applied: carol holds WP01 (claimed)"
    undo = "; {by} reclaimed it when alice's lease expired at {at}, and this move would undo that"
    for by, named in (("lead", "lead"), (None, "carol")):
        offline = kt("WP01", "claimed", "in_progress", T0.format(6), "X", "alice", "Z")
        board = board_of([*_reclaimed_by(by), offline])
        assert board.wps["WP01"].lane == "claimed" and board.wps["WP01"].agent == "carol"
        [conflict] = board.conflicts
        assert conflict.kind == "not_holder"
        assert conflict.message == base.format(who="alice") + undo.format(by=named, at=expired)
    bob = kt("WP01", "claimed", "in_progress", T0.format(6), "X", "bob", "Z")
    [conflict] = board_of([*_reclaimed_by("lead"), bob]).conflicts
    assert conflict.message == base.format(who="bob")  # bob lost no lease: no reclaim story


def test_the_holder_rule_reads_any_replays_events_and_states() -> None:
    """The rule is pure and duck-typed: an event that does not say it is kitty-written is
    history (never a conflict); a state without a takeover record or a reclaim still
    refuses a non-holder's kitty move, with the plain message."""
    from types import SimpleNamespace

    from kitty.core.log.holders import holder_conflict

    st = SimpleNamespace(agent="alice", reviewer=None)
    move = {"wp_id": "WP01", "from_lane": "claimed", "to_lane": "blocked", "force": False}
    assert holder_conflict(st, "claimed", SimpleNamespace(**move), "bob") is None
    linked = SimpleNamespace(**move, linked=True)
    assert holder_conflict(st, "claimed", linked, "bob") == (
        "WP01 claimed -> blocked by bob was not applied: alice holds WP01 (claimed)"
    )
    assert holder_conflict(st, "claimed", linked, "alice") is None
    assert holder_conflict(st, "for_review", linked, "bob") is None
