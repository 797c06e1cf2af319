"""Strict replay of merged histories: first move wins, the rest become conflicts."""

from __future__ import annotations

import json
import random
from typing import Any

from kitty.core.conflicts import open_views, resolve_commands
from kitty.core.events import parse_lines
from kitty.core.state import replay
from tests.core.test_events_state import T0, ann, tr

BASE = [
    tr("WP03", "genesis", "planned", T0.format(1), "A"),
    tr("WP03", "planned", "claimed", T0.format(2), "B", policy_metadata={"agent": "alice"}),
]


def board_of(lines: list[str]) -> Any:
    return replay(parse_lines(lines).events)


def test_offline_double_move_keeps_the_first_and_reports_the_rest() -> None:
    alice = [
        tr("WP03", "claimed", "in_progress", T0.format(3), "C1", actor="alice"),
        tr("WP03", "in_progress", "for_review", T0.format(5), "C2", actor="alice"),
    ]
    bob = [
        tr("WP03", "claimed", "blocked", T0.format(4), "D1", actor="bob"),
        tr("WP03", "blocked", "in_progress", T0.format(6), "D2", actor="bob"),
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
        tr("WP03", "claimed", "in_progress", T0.format(3), "C1", actor="alice"),
        tr("WP03", "claimed", "blocked", T0.format(3), "C0", actor="bob"),  # same instant
        tr("WP03", "in_progress", "for_review", T0.format(5), "C2", actor="alice"),
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
            tr("WP01", "genesis", "planned", T0.format(1), "A"),
            tr("WP01", "planned", "done", T0.format(2), "B"),
        ]
    )
    assert board.wps["WP01"].lane == "planned"
    assert [c.kind for c in board.conflicts] == ["illegal_edge"]
    forced = board_of(
        [
            tr("WP01", "genesis", "planned", T0.format(1), "A"),
            tr("WP01", "planned", "done", T0.format(2), "B", force=True, reason="why"),
        ]
    )
    assert forced.wps["WP01"].lane == "done" and forced.conflicts == []


def test_self_approval_without_fallback_is_a_conflict() -> None:
    lines = [
        *BASE,
        tr("WP03", "claimed", "in_progress", T0.format(3), "C", actor="alice"),
        tr("WP03", "in_progress", "for_review", T0.format(4), "D", actor="alice"),
        tr("WP03", "for_review", "in_review", T0.format(5), "E", actor="alice"),
        tr("WP03", "in_review", "approved", T0.format(6), "F", actor="alice"),
    ]
    board = board_of(lines)
    assert board.wps["WP03"].lane == "in_review"
    assert [c.kind for c in board.conflicts] == ["self_review"]
    fallback = {"self_review_fallback": {"approved_by": "alice"}}
    ok = board_of([*lines[:-1], tr(*json_args(lines[-1]), actor="alice", policy_metadata=fallback)])
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
        tr("WP01", "genesis", "planned", T0.format(1), "A"),
        tr("WP01", "planned", "claimed", T0.format(2), "B", policy_metadata={"machine": "m1"}),
        tr("WP01", "planned", "claimed", T0.format(3), "C", policy_metadata={"machine": "m2"}),
    ]
    board = board_of(lines)
    assert [c.event_id for c in board.conflicts] == ["C"]
    assert board.conflicts[0].machine == "m2"


def test_resolution_by_annotation_or_forced_move() -> None:
    lines = [
        *BASE,
        tr("WP03", "claimed", "in_progress", T0.format(3), "C1", actor="alice"),
        tr("WP03", "claimed", "blocked", T0.format(4), "D1", actor="bob"),
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
        [*lines, tr("WP03", "in_progress", "blocked", T0.format(5), "F", force=True, reason="r")]
    )
    assert forced.open_conflicts() == [] and forced.wps["WP03"].lane == "blocked"
