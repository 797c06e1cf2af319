"""`--to doing` (Spec Kitty's alias of in_progress) is accepted wherever Spec Kitty 3.2.7
accepts it. Its move-task walks forward lane by lane (tasks_finalize_validation.
_lane_targets_for_emit): from planned, `--to doing` records planned -> claimed and
claimed -> in_progress; a forced move is one event, as there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import kitty, lane_commit, make_mission, ok


def _transitions(mission: Path) -> list[tuple[str, str, str, object]]:
    lines = (mission / "status.events.jsonl").read_text().splitlines()
    return [
        (e["wp_id"], e["from_lane"], e["to_lane"], e["actor"])
        for e in map(json.loads, lines)
        if "to_lane" in e and e["from_lane"] != "genesis"
    ]


@pytest.mark.parametrize("lane", ["doing", "in_progress"])
@pytest.mark.parametrize("command", ["move", "move-task"])
def test_doing_from_planned_claims_then_starts(repo: Path, lane: str, command: str) -> None:
    mission = make_mission(repo, wps=[{"wp_id": "WP01"}])
    args = (
        ["move", "WP01", lane]
        if command == "move"
        else ["agent", "tasks", "move-task", "WP01", "--to", lane]
    )
    run = ok(repo, *args, "--agent", "claude", "--note", "starting", "--json")
    view = run.json()
    assert (view["from_lane"], view["to_lane"]) == ("planned", "in_progress")
    assert len(view["event_ids"]) == 3  # two transitions and the note
    assert _transitions(mission) == [
        ("WP01", "planned", "claimed", "claude"),
        ("WP01", "claimed", "in_progress", "claude"),
    ]
    events = [json.loads(x) for x in (mission / "status.events.jsonl").read_text().splitlines()]
    notes = [e for e in events if e.get("kind") == "annotation"]
    assert [n["delta"] for n in notes] == [{"note": "starting"}]
    board = ok(repo, "status", "--json").json()["work_packages"]
    assert [(w["id"], w["lane"], w["agent"]) for w in board] == [("WP01", "in_progress", "claude")]


def test_doing_from_claimed_and_blocked_is_one_event(repo: Path) -> None:
    mission = make_mission(repo, wps=[{"wp_id": "WP01"}, {"wp_id": "WP02"}])
    ok(repo, "move", "WP01", "claimed", "--agent", "claude")
    ok(repo, "move", "WP02", "blocked", "--agent", "lead")
    ok(repo, "agent", "tasks", "move-task", "WP01", "--to", "doing", "--agent", "claude")
    ok(repo, "agent", "tasks", "move-task", "WP02", "--to", "doing", "--agent", "claude")
    assert _transitions(mission)[2:] == [
        ("WP01", "claimed", "in_progress", "claude"),
        ("WP02", "blocked", "in_progress", "claude"),
    ]


def test_doing_where_spec_kitty_refuses_it_is_refused(repo: Path) -> None:
    mission = make_mission(repo, wps=[{"wp_id": "WP01"}])
    for lane in ("claimed", "in_progress", "for_review"):
        if lane == "for_review":
            lane_commit(repo, "WP01")
        ok(repo, "move", "WP01", lane, "--agent", "claude")
    before = (mission / "status.events.jsonl").read_text()
    run = kitty(repo, "agent", "tasks", "move-task", "WP01", "--to", "doing", "--agent", "x")
    assert run.code == 1
    assert "cannot move from for_review to in_progress" in run.err
    assert (mission / "status.events.jsonl").read_text() == before


def test_a_forced_doing_from_planned_is_one_event(repo: Path) -> None:
    mission = make_mission(repo, wps=[{"wp_id": "WP01"}])
    ok(repo, "move", "WP01", "doing", "--force", "--agent", "lead", "--note", "hand-off")
    assert _transitions(mission) == [("WP01", "planned", "in_progress", "lead")]
