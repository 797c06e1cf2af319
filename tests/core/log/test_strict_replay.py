"""Replay of merged histories. kitty's own moves (linked by `kitty_after`) are strict: the
first move wins a fork, the rest become conflicts. History (unlinked lines) is folded as
Spec Kitty folds it."""

from __future__ import annotations

import json
import random
from typing import Any

from kitty.core.log.conflicts import open_views, resolve_commands
from kitty.core.log.read import parse_lines
from kitty.core.log.state import replay
from tests.core.log.lines import T0, ann, tr

BASE = [
    tr("WP03", "genesis", "planned", T0.format(1), "A", kitty_after=None),
    tr(
        "WP03",
        "planned",
        "claimed",
        T0.format(2),
        "B",
        policy_metadata={"agent": "alice"},
        kitty_after="A",
    ),
]


def board_of(lines: list[str]) -> Any:
    return replay(parse_lines(lines).events)


def test_offline_double_move_keeps_the_first_and_reports_the_rest() -> None:
    alice = [
        tr("WP03", "claimed", "in_progress", T0.format(3), "C1", actor="alice", kitty_after="B"),
        tr(
            "WP03", "in_progress", "for_review", T0.format(5), "C2", actor="alice", kitty_after="C1"
        ),
    ]
    bob = [
        tr("WP03", "claimed", "blocked", T0.format(4), "D1", actor="bob", kitty_after="B"),
        tr("WP03", "blocked", "in_progress", T0.format(6), "D2", actor="bob", kitty_after="D1"),
    ]
    board = board_of(BASE + alice + bob)
    st = board.wps["WP03"]
    assert st.lane == "for_review" and st.implementer == "alice"
    assert [(c.event_id, c.kind, c.lane) for c in board.conflicts] == [
        ("D1", "stale_from_lane", "in_progress"),
        ("D2", "stale_from_lane", "for_review"),
    ]
    assert board.conflicts[0].agent == "bob" and board.conflicts[0].holder == "alice"
    assert "was not applied: WP03 was already in_progress" in board.conflicts[0].message


def test_every_merge_order_gives_the_same_board() -> None:
    lines = [
        *BASE,
        tr("WP03", "claimed", "in_progress", T0.format(3), "C1", actor="alice", kitty_after="B"),
        tr("WP03", "claimed", "blocked", T0.format(3), "C0", actor="bob", kitty_after="B"),
        tr(
            "WP03", "in_progress", "for_review", T0.format(5), "C2", actor="alice", kitty_after="C1"
        ),
    ]
    seen = set()
    for seed in range(20):
        shuffled = list(lines)
        random.Random(seed).shuffle(shuffled)
        board = board_of(shuffled)
        seen.add((board.wps["WP03"].lane, tuple(c.event_id for c in board.conflicts)))
    # (at, event_id) order: C0 (bob) sorts before C1 at the same instant and wins.
    assert seen == {("blocked", ("C1", "C2"))}


def test_unforced_edge_outside_the_table_is_a_conflict_forced_is_not() -> None:
    board = board_of(
        [
            tr("WP01", "genesis", "planned", T0.format(1), "A", kitty_after=None),
            tr("WP01", "planned", "done", T0.format(2), "B", kitty_after="A"),
        ]
    )
    assert board.wps["WP01"].lane == "planned"
    assert [c.kind for c in board.conflicts] == ["illegal_edge"]
    forced = board_of(
        [
            tr("WP01", "genesis", "planned", T0.format(1), "A", kitty_after=None),
            tr(
                "WP01",
                "planned",
                "done",
                T0.format(2),
                "B",
                force=True,
                reason="why",
                kitty_after="A",
            ),
        ]
    )
    assert forced.wps["WP01"].lane == "done" and forced.conflicts == []


def test_self_approval_without_fallback_is_a_conflict() -> None:
    lines = [
        *BASE,
        tr("WP03", "claimed", "in_progress", T0.format(3), "C", actor="alice", kitty_after="B"),
        tr("WP03", "in_progress", "for_review", T0.format(4), "D", actor="alice", kitty_after="C"),
        tr("WP03", "for_review", "in_review", T0.format(5), "E", actor="alice", kitty_after="D"),
        tr("WP03", "in_review", "approved", T0.format(6), "F", actor="alice", kitty_after="E"),
    ]
    board = board_of(lines)
    assert board.wps["WP03"].lane == "in_review"
    assert [c.kind for c in board.conflicts] == ["self_review"]
    fallback = {"self_review_fallback": {"approved_by": "alice"}}
    ok = board_of(
        [
            *lines[:-1],
            tr(*json_args(lines[-1]), actor="alice", policy_metadata=fallback, kitty_after="E"),
        ]
    )
    assert ok.wps["WP03"].lane == "approved" and ok.conflicts == []


def json_args(line: str) -> tuple[str, str, str, str, str]:
    d = json.loads(line)
    return d["wp_id"], d["from_lane"], d["to_lane"], d["at"], d["event_id"] + "x"


def test_spec_kitty_shapes_are_tolerated() -> None:
    lines = [
        # no bootstrap: the first transition starts from planned
        tr("WP01", "planned", "claimed", T0.format(1), "01A", actor="claude"),
        # a migration backfill replays the same claim at the same instant
        tr("WP01", "planned", "claimed", T0.format(1), "4PX", actor="migration:backfill"),
        # a late bootstrap of a WP that already has a lane
        tr("WP01", "genesis", "planned", T0.format(2), "B"),
        # the same agent retries its own claim
        tr("WP01", "planned", "claimed", T0.format(3), "C", actor="claude"),
        tr("WP01", "claimed", "in_progress", T0.format(4), "D", actor="claude"),
    ]
    board = board_of(lines)
    assert board.wps["WP01"].lane == "in_progress"
    assert board.conflicts == []


def test_same_agent_on_two_machines_is_not_a_replica() -> None:
    lines = [
        tr("WP01", "genesis", "planned", T0.format(1), "A", kitty_after=None),
        tr(
            "WP01",
            "planned",
            "claimed",
            T0.format(2),
            "B",
            policy_metadata={"machine": "m1"},
            kitty_after="A",
        ),
        tr(
            "WP01",
            "planned",
            "claimed",
            T0.format(3),
            "C",
            policy_metadata={"machine": "m2"},
            kitty_after="A",
        ),
    ]
    board = board_of(lines)
    assert [c.event_id for c in board.conflicts] == ["C"]
    assert board.conflicts[0].machine == "m2"


def test_resolution_by_annotation_or_forced_move() -> None:
    lines = [
        *BASE,
        tr("WP03", "claimed", "in_progress", T0.format(3), "C1", actor="alice", kitty_after="B"),
        tr("WP03", "claimed", "blocked", T0.format(4), "D1", actor="bob", kitty_after="B"),
    ]
    board = board_of(lines)
    (view,) = open_views(board, "m")
    assert view["commands"] == resolve_commands(board.conflicts[0], "m")
    assert view["commands"][0].startswith("kitty resolve WP03 --mission m --note")
    assert "--to blocked --force --agent bob" in view["commands"][1]
    assert open_views(board, "m", agent="alice") == []
    acked = board_of([*lines, ann("WP03", T0.format(5), "E", {"conflicts_resolved": ["D1"]})])
    assert acked.open_conflicts() == [] and acked.conflicts[0].resolved_by == "E"
    forced = board_of(
        [
            *lines,
            tr(
                "WP03",
                "in_progress",
                "blocked",
                T0.format(5),
                "F",
                force=True,
                reason="r",
                kitty_after="C1",
            ),
        ]
    )
    assert forced.open_conflicts() == [] and forced.wps["WP03"].lane == "blocked"


def test_history_is_folded_as_spec_kitty_folds_it() -> None:
    """Shapes Spec Kitty writes and reads without complaint (issue 21's table): the last
    transition sets the lane, whatever its from_lane, edge or actor; no conflict."""
    shapes = {
        "WP01": [
            ("planned", "claimed"),
            ("claimed", "in_progress"),
            ("in_progress", "for_review"),
            ("for_review", "in_review"),
            ("in_review", "approved"),
            ("approved", "done"),
        ],
        "WP02": [("planned", "claimed"), ("claimed", "planned")],
        "WP03": [
            ("planned", "claimed"),
            ("claimed", "in_progress"),
            ("in_progress", "for_review"),
            ("for_review", "approved"),
        ],
        "WP04": [
            ("planned", "claimed"),
            ("claimed", "in_progress"),
            ("in_progress", "for_review"),
            ("for_review", "done"),
        ],
        "WP05": [("planned", "claimed"), ("claimed", "in_progress"), ("in_progress", "approved")],
        # a stale from_lane: seen from in_review while the WP was approved
        "WP06": [("planned", "in_review"), ("in_review", "approved"), ("in_review", "done")],
    }
    lines = []
    for wp, moves in shapes.items():
        for n, (frm, to) in enumerate(moves):
            # actor `user` implements and approves: one person doing both
            lines.append(tr(wp, frm, to, T0.format(n), f"{wp}-{n}", actor="user"))
    board = board_of(lines)
    assert board.conflicts == []
    assert {wp: st.lane for wp, st in board.wps.items()} == {
        "WP01": "done",
        "WP02": "planned",
        "WP03": "approved",
        "WP04": "done",
        "WP05": "approved",
        "WP06": "done",
    }


def test_history_keeps_spec_kittys_rollback_precedence() -> None:
    """At the very same `at`, a review rollback is not replaced by a forward move."""
    at = T0.format(5)
    lines = [
        tr("WP01", "planned", "in_review", T0.format(1), "A"),
        tr("WP01", "in_review", "in_progress", at, "B"),  # the rollback
        tr("WP01", "in_progress", "for_review", at, "C"),  # sorts after B, same instant
    ]
    assert board_of(lines).wps["WP01"].lane == "in_progress"
    later = [*lines[:2], tr("WP01", "in_progress", "for_review", T0.format(6), "C")]
    assert board_of(later).wps["WP01"].lane == "for_review"


def test_a_forks_losing_branch_stays_lost() -> None:
    """bob's claim lost the fork; his next move follows it, so it is lost too, even
    though its from_lane matches the lane alice's claim left."""
    lines = [
        tr("WP01", "genesis", "planned", T0.format(1), "A", kitty_after=None),
        tr("WP01", "planned", "claimed", T0.format(2), "AL", actor="alice", kitty_after="A"),
        tr("WP01", "planned", "claimed", T0.format(3), "BO", actor="bob", kitty_after="A"),
        tr("WP01", "claimed", "in_progress", T0.format(4), "BO2", actor="bob", kitty_after="BO"),
        tr(
            "WP01", "in_progress", "for_review", T0.format(5), "BO3", actor="bob", kitty_after="BO2"
        ),
    ]
    board = board_of(lines)
    st = board.wps["WP01"]
    assert (st.lane, st.implementer) == ("claimed", "alice")
    assert [(c.event_id, c.kind) for c in board.conflicts] == [
        ("BO", "stale_from_lane"),
        ("BO2", "stale_from_lane"),
        ("BO3", "stale_from_lane"),
    ]
    assert "it follows BO, a move that was not applied" in board.conflicts[1].message
    # alice goes on from her claim: applied
    more = board_of(
        [
            *lines,
            tr(
                "WP01",
                "claimed",
                "in_progress",
                T0.format(6),
                "AL2",
                actor="alice",
                kitty_after="AL",
            ),
        ]
    )
    assert more.wps["WP01"].lane == "in_progress" and len(more.conflicts) == 3
    # the resolve hints describe the board as it is: keep in_progress, not a past lane
    (first, *_) = open_views(more, "m")
    assert first["commands"][0].startswith(
        'kitty resolve WP01 --mission m --note "keep in_progress'
    )


def test_history_and_linked_moves_mix_the_later_one_wins() -> None:
    """A Spec Kitty user's move (no link) between a kitty move and the kitty move that
    followed it: the log cannot prove a fork, so the later move wins, as in Spec Kitty."""
    lines = [
        tr("WP01", "genesis", "planned", T0.format(1), "A", kitty_after=None),
        tr("WP01", "planned", "claimed", T0.format(2), "K1", actor="claude", kitty_after="A"),
        tr("WP01", "claimed", "blocked", T0.format(3), "S1", actor="user"),  # Spec Kitty
        tr("WP01", "claimed", "in_progress", T0.format(4), "K2", actor="claude", kitty_after="K1"),
    ]
    board = board_of(lines)
    assert board.wps["WP01"].lane == "in_progress" and board.conflicts == []
    # a kitty move linked to the Spec Kitty move is an ordinary next move
    then = [*lines[:3], tr("WP01", "blocked", "planned", T0.format(4), "K2", kitty_after="S1")]
    assert board_of(then).wps["WP01"].lane == "planned"
