"""`kitty agent tasks status --json` row by row and its progress figures, as Spec Kitty
3.2.7 answers them for the same files (the values below are those of Spec Kitty's own
`agent tasks status --json` for this board, but for two things kitty does not do:
Spec Kitty writes `shell_pid` and its baseline as text, and names the workspace kind
when it can resolve the WP's workspace; kitty gives its fallback, `unknown`)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from tests.helpers import make_mission, ok, spec_kitty_move, write_wp

SLUG = "demo-01ABCDEF"
WPS: list[dict[str, Any]] = [
    {
        "wp_id": "WP01",
        "title": "Core",
        "extra": "phase: Phase 1 - Core\nagent_profile: python-pedro\n"
        "execution_mode: planning_artifact",
    },
    {"wp_id": "WP02", "title": "Api"},
    {"wp_id": "WP03", "title": "Cli", "extra": "phase: 2"},
    {"wp_id": "WP04", "title": "Docs"},
    {"wp_id": "WP05", "title": "Web"},
    {"wp_id": "WP08", "title": "Ops"},
]


def transition(wp: str, frm: str, to: str, at: str, eid: str, **extra: Any) -> str:
    return spec_kitty_move(SLUG, wp, frm, to, at, eid, **extra)


def annotation(wp: str, at: str, eid: str, delta: dict[str, Any]) -> str:
    record = {"actor": "user", "at": at, "delta": delta, "event_id": eid, "kind": "annotation"}
    return json.dumps(dict(record, wp_id=wp), sort_keys=True)


HALT = "kitty-specs/demo-01ABCDEF/reviews/WP05/round-2.md"


def board(repo: Path) -> Path:
    """Six WPs in five lanes (one canceled, one halted by the review panel), WP06 known
    only from an annotation (no file, no lane), WP07 whose file came after finalize
    (no event at all)."""
    mission = make_mission(repo, wps=WPS)
    log = mission / "status.events.jsonl"
    base = log.read_text()
    start = datetime.fromisoformat(json.loads(base.splitlines()[-1])["at"])
    n = iter(range(1, 100))

    def stamp() -> tuple[str, str]:  # after the bootstrap, as Spec Kitty writes them
        i = next(n)
        return (start + timedelta(seconds=i)).isoformat(), f"01KA00000000000000000000{i:02d}"

    def move(wp: str, frm: str, to: str, **extra: Any) -> str:
        return transition(wp, frm, to, *stamp(), **extra)

    def note(wp: str, delta: dict[str, Any]) -> str:
        return annotation(wp, *stamp(), delta)

    claim = {"agent": "claude", "shell_pid": 4242, "shell_pid_created_at": 1767225600.25}
    slots = {"agent_profile": "python-pedro", "role": "implementer", "model": "opus-4"}
    history = [
        move("WP01", "planned", "claimed", policy_metadata=claim),
        move("WP01", "claimed", "in_progress"),
        note("WP01", slots),
        move("WP02", "planned", "claimed", policy_metadata={"agent": "codex"}),
        move("WP02", "claimed", "in_progress"),
        move("WP02", "in_progress", "for_review"),
        move("WP03", "planned", "claimed", policy_metadata={"agent": "gemini"}),
        move("WP04", "planned", "canceled", reason="out of scope"),
        note("WP05", {"review_round": 2, "review_halt": HALT, "review_halt_reason": "blocker"}),
        note("WP06", {"note": "split from WP05"}),
    ]
    log.write_text(base + "\n".join(history) + "\n")
    write_wp(mission, "WP07", title="Late")  # no event: not in the log yet
    return mission


#: What Spec Kitty's row holds for a WP whose file and log say nothing about it.
BLANK = {
    "phase": "Unknown Phase",
    "agent": "",
    "agent_profile": "",
    "resolved_agent_profile": "",
    "resolved_role": "",
    "resolved_model": "",
    "shell_pid": "",
    "shell_pid_created_at": None,
    "execution_mode": "code_change",
    "workspace_kind": "unknown",
}


def test_each_row_carries_spec_kittys_fields_as_it_fills_them(repo: Path) -> None:
    board(repo)
    view = ok(repo, "agent", "tasks", "status", "--json").json()
    rows = {row["id"]: row for row in view["work_packages"]}
    assert list(rows) == ["WP01", "WP02", "WP03", "WP04", "WP05", "WP06", "WP07", "WP08"]
    keys = set(BLANK) | {"file"}
    spec_kitty = {wp: {k: v for k, v in row.items() if k in keys} for wp, row in rows.items()}
    for slot in ("shell_pid", "shell_pid_created_at"):  # compared as Spec Kitty's text
        spec_kitty["WP01"][slot] = str(spec_kitty["WP01"][slot])
    assert spec_kitty["WP01"] == {
        "phase": "Phase 1 - Core",
        "file": "WP01-core.md",
        "agent": "claude",
        "agent_profile": "python-pedro",
        "resolved_agent_profile": "python-pedro",
        "resolved_role": "implementer",
        "resolved_model": "opus-4",
        "shell_pid": "4242",
        "shell_pid_created_at": "1767225600.25",
        "execution_mode": "planning_artifact",
        "workspace_kind": "unknown",
    }
    assert spec_kitty["WP02"] == dict(BLANK, file="WP02-api.md", agent="codex")
    assert spec_kitty["WP03"] == dict(BLANK, file="WP03-cli.md", agent="gemini", phase="2")
    assert spec_kitty["WP04"] == dict(BLANK, file="WP04-docs.md")
    assert spec_kitty["WP07"] == dict(BLANK, file="WP07-late.md")
    assert spec_kitty["WP06"] == dict(BLANK, file="")  # in the log only: no file to name
    assert (rows["WP06"]["lane"], rows["WP07"]["lane"]) == (None, None)


def test_progress_weighs_lanes_as_spec_kitty_does(repo: Path) -> None:
    board(repo)
    view = ok(repo, "agent", "tasks", "status", "--json").json()
    # Spec Kitty reduces the transitions alone: every WP with a lane counts, the
    # canceled one too, the one known from an annotation only does not:
    # (0.3 + 0.6 + 0.05) / 6 (WP01-05, WP08)
    assert view["progress_percentage"] == view["weighted_percentage"] == 15.8
    # kitty's own figure leaves canceled WPs out and counts those without a lane:
    # (0.3 + 0.6 + 0.05) / 7 (WP01-03, WP05-08)
    assert view["progress"] == {"done_percentage": 0.0, "weighted_percentage": 13.6}


def test_a_panel_halt_shows_its_round_file_and_reason(repo: Path) -> None:
    board(repo)
    rows = ok(repo, "agent", "tasks", "status", "--json").json()["work_packages"]
    panel = {row["id"]: (row["review_round"], row["review_halt"]) for row in rows}
    assert panel["WP05"] == (2, {"file": HALT, "reason": "blocker"})
    assert panel["WP01"] == (None, None)


def test_a_mission_not_yet_finalized_is_at_zero(repo: Path) -> None:
    make_mission(repo, wps=WPS, finalize=False)
    view = ok(repo, "agent", "tasks", "status", "--json").json()
    assert (view["progress_percentage"], view["weighted_percentage"]) == (0.0, 0.0)
    assert view["progress"] == {"done_percentage": 0.0, "weighted_percentage": 0.0}
