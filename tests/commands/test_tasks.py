"""status, move-task, mark-status through the CLI: exit codes and JSON contracts."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest

from kitty.cli import cli
from tests.helpers import git, kitty, lane_commit, make_mission, ok

WPS = [
    {"wp_id": "WP01", "title": "Module A", "subtasks": ["T001", "T002"], "owned": ["src/a.py"]},
    {
        "wp_id": "WP02",
        "title": "Module B",
        "deps": ["WP01"],
        "subtasks": ["T003"],
        "owned": ["src/b.py"],
    },
]


def snapshot(path: Path) -> dict[str, bytes]:
    return {
        str(p): p.read_bytes()
        for p in sorted(path.rglob("*"))
        if p.is_file() and ".git" not in p.parts
    }


def test_status_json_contract(repo: Path) -> None:
    make_mission(repo, wps=WPS)
    data = ok(repo, "status", "--json").json()
    assert data["schema"] == 1
    assert set(data) == {
        "schema",
        "mission",
        "work_packages",
        "summary",
        "progress",
        "critical_path",
        "warnings",
        "conflicts",
        # Spec Kitty 3.2.7's keys (tests/e2e/test_spec_kitty_compat.py)
        "mission_slug",
        "mission_number",
        "mission_type",
        "total_wps",
        "by_lane",
        "progress_percentage",
        "progress_semantics",
        "weighted_percentage",
        "done_count",
        "done_percentage",
        "stale_wps",
        "stale_verdicts",
        "stalled_wps",
        "auto_commit",
    }
    wp1, wp2 = data["work_packages"]
    assert {
        "id",
        "title",
        "lane",
        "dependencies",
        "agent",
        "subtasks",
        "review_cycles",
        "force_count",
        "last_transition_at",
    } <= set(wp1)
    assert (wp1["id"], wp1["lane"], wp1["subtasks"]) == (
        "WP01",
        "planned",
        {"T001": "planned", "T002": "planned"},
    )
    assert wp2["waits_for"] == ["WP01"]
    assert data["summary"]["planned"] == 2 and data["summary"]["done"] == 0
    assert data["progress"] == {"done_percentage": 0.0, "weighted_percentage": 0.0}
    raw = ok(repo, "status", "--json").out
    assert raw == json.dumps(json.loads(raw), sort_keys=True, ensure_ascii=False) + "\n"


def test_status_text_board(repo: Path) -> None:
    make_mission(repo, wps=WPS)
    text = ok(repo, "agent", "tasks", "status").out
    assert "Planned (2)" in text and "WP02 Module B" in text and "waits: WP01" in text
    assert max(len(line) for line in text.splitlines()) <= 80


def test_reads_never_write(repo: Path) -> None:
    mission = make_mission(repo, wps=WPS)
    (mission / "status.json").unlink()
    before = snapshot(repo)
    ok(repo, "status")
    ok(repo, "status", "--json")
    ok(repo, "next", "--agent", "claude")
    ok(repo, "next", "--agent", "claude", "--json")
    ok(repo, "lanes")
    ok(repo, "doctor")
    assert snapshot(repo) == before


def test_full_lifecycle_with_feedback(repo: Path, tmp_path: Path) -> None:
    mission = make_mission(repo, wps=WPS)
    ok(repo, "move", "WP1", "claimed", "--agent", "claude")
    ok(repo, "move", "1", "doing", "--agent", "claude")
    refused = kitty(repo, "agent", "tasks", "move-task", "WP01", "--to", "for_review", "--json")
    assert refused.code == 1
    assert refused.json()["error"] == {
        "code": "guard_refused",
        "message": "WP01 has subtasks not done: T001, T002",
        "hint": "kitty agent tasks mark-status T001 T002 --status done",
    }
    marked = ok(
        repo, "agent", "tasks", "mark-status", "T001", "t002", "--status", "done", "--json"
    ).json()
    assert marked["marked"] == {"WP01": {"T001": "done", "T002": "done"}}
    lane_commit(repo, "WP01")
    ok(repo, "agent", "tasks", "move-task", "WP01", "--to", "for_review", "--note", "ready")
    ok(repo, "move", "WP01", "in_review", "--agent", "codex")
    no_feedback = kitty(repo, "move", "WP01", "planned", "--agent", "codex")
    assert no_feedback.code == 1 and "--review-feedback-file" in no_feedback.err
    empty = tmp_path / "empty.md"
    empty.write_text("  \n")
    blank = kitty(
        repo, "move", "WP01", "planned", "--agent", "codex", "--review-feedback-file", str(empty)
    )
    assert blank.code == 2 and f"review feedback file {empty} is empty" in blank.err
    feedback = tmp_path / "fb.md"
    feedback.write_text("**Issue 1**: missing tests\n")
    result = ok(
        repo,
        "move",
        "WP01",
        "planned",
        "--agent",
        "codex",
        "--review-feedback-file",
        str(feedback),
        "--json",
    ).json()
    ref = "review-cycle://demo-01ABCDEF/WP01-module-a/review-cycle-1.md"
    assert result["review_ref"] == ref and result["review_cycles"] == 1
    cycle_file = mission / "tasks" / "WP01-module-a" / "review-cycle-1.md"
    front, body = cycle_file.read_text().split("---\n")[1:3]
    assert "cycle_number: 1" in front and "reviewer_agent: codex" in front
    assert "verdict: rejected" in front and "wp_id: WP01" in front
    assert "missing tests" in body
    last = json.loads((mission / "status.events.jsonl").read_text().splitlines()[-2])
    assert last["review_ref"] == ref
    assert last["review_result"]["verdict"] == "changes_requested"
    status = ok(repo, "status", "--json").json()["work_packages"][0]
    assert status["review_cycles"] == 1 and status["subtasks"]["T001"] == "planned"
    assert "cycle 1/3" in ok(repo, "status").out


def test_illegal_moves_name_legal_targets(repo: Path) -> None:
    make_mission(repo, wps=WPS)
    bad = kitty(repo, "move", "WP01", "approved", "--agent", "x", "--json")
    assert bad.code == 1
    error = bad.json()["error"]
    assert error["code"] == "invalid_transition"
    assert "legal targets from planned: claimed, blocked, canceled" in error["hint"]
    unknown = kitty(repo, "move", "WP01", "shipped")
    assert unknown.code == 1 and "unknown lane 'shipped'" in unknown.err
    missing = kitty(repo, "move", "WP09", "claimed", "--agent", "x")
    assert missing.code == 1 and "no work package WP09" in missing.err
    force_without_note = kitty(repo, "move", "WP01", "approved", "--force", "--agent", "x")
    assert force_without_note.code == 1 and "--note" in force_without_note.err
    forced = ok(
        repo, "move", "WP01", "blocked", "--force", "--agent", "lead", "--note", "wait", "--json"
    ).json()
    assert forced["force"] is True
    assert ok(repo, "status", "--json").json()["work_packages"][0]["force_count"] == 1


def test_done_needs_merge_and_approval_needs_another_agent(repo: Path) -> None:
    make_mission(repo, wps=WPS)
    for lane in ("claimed", "in_progress"):
        ok(repo, "move", "WP01", lane, "--agent", "claude")
    ok(repo, "agent", "tasks", "mark-status", "T001", "T002", "--status", "done")
    lane_commit(repo, "WP01")
    ok(repo, "move", "WP01", "for_review")
    ok(repo, "move", "WP01", "in_review", "--agent", "claude")
    self_review = kitty(repo, "move", "WP01", "approved", "--agent", "claude")
    assert self_review.code == 1 and "self-review" in self_review.err
    ok(repo, "move", "WP01", "approved", "--agent", "codex")
    done = kitty(repo, "move", "WP01", "done", "--agent", "codex")
    assert done.code == 1 and "kitty merge" in done.err
    final = ok(repo, "next", "--agent", "claude", "--json").json()
    assert (final["action"], final["wp_id"]) == ("implement", "WP02")


def test_agent_identity_from_environment(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_mission(repo, wps=WPS)
    monkeypatch.setenv("KITTY_AGENT", "gemini")
    assert ok(repo, "move", "WP01", "claimed", "--json").json()["actor"] == "gemini"
    assert ok(repo, "next", "--json").json()["action"] == "implement"
    monkeypatch.delenv("KITTY_AGENT")
    nobody = ok(repo, "next", "--json").json()  # falls back to `user`: never a usage error
    assert any("--agent user" in c for c in nobody["commands"])


def test_linked_worktree_uses_the_primary_log(repo: Path) -> None:
    mission = make_mission(repo, wps=WPS)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plan")
    worktree = repo / ".worktrees" / "demo-lane-a"
    git(repo, "worktree", "add", "-q", "-b", "lane-a", str(worktree))
    ok(worktree, "move", "WP01", "claimed", "--agent", "claude")
    primary = (mission / "status.events.jsonl").read_text()
    assert '"to_lane": "claimed"' in primary
    copy = worktree / "kitty-specs" / "demo-01ABCDEF" / "status.events.jsonl"
    assert '"to_lane": "claimed"' not in copy.read_text()
    assert ok(worktree, "status", "--json").json()["work_packages"][0]["lane"] == "claimed"


def test_corrupt_and_torn_lines_are_reported_not_fatal(repo: Path) -> None:
    mission = make_mission(repo, wps=WPS)
    log = mission / "status.events.jsonl"
    lines = log.read_text().splitlines()
    log.write_text(lines[0] + "\n{garbage\n" + lines[1] + "\n" + '{"event_id": "x", "wp_')
    run = ok(repo, "status", "--json")
    assert "status.events.jsonl:2: not valid JSON (line skipped)" in run.err
    assert "status.events.jsonl:4: torn last line" in run.err
    assert [w["lane"] for w in run.json()["work_packages"]] == ["planned", "planned"]
    doctor = kitty(repo, "doctor")
    assert doctor.code == 1 and ":2: not valid JSON" in doctor.out
    ok(repo, "move", "WP01", "claimed", "--agent", "claude")
    text = log.read_text()
    assert '"event_id": "x", "wp_\n{' in text  # the torn fragment was closed, not glued on
    assert ok(repo, "status", "--json").json()["work_packages"][0]["lane"] == "claimed"


def test_rebuild_recreates_status_json(repo: Path) -> None:
    mission = make_mission(repo, wps=WPS)
    ok(repo, "move", "WP01", "claimed", "--agent", "claude")
    original = (mission / "status.json").read_text()
    (mission / "status.json").write_text("garbage")
    ok(repo, "rebuild")
    assert (mission / "status.json").read_text() == original
    data = json.loads(original)
    assert data["work_packages"]["WP01"]["lane"] == "claimed"
    assert data["summary"]["claimed"] == 1 and data["event_count"] == 3


def test_bad_config_is_a_clear_error(repo: Path) -> None:
    make_mission(repo, wps=WPS)
    (repo / ".kittify" / "config.yaml").write_text("agents: [unclosed\n")
    run = kitty(repo, "next", "--agent", "claude")
    assert run.code == 1 and ".kittify/config.yaml" in run.err and "YAML" in run.err


def _commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    found = []
    for name, command in group.commands.items():
        path = f"{prefix} {name}".strip()
        if isinstance(command, click.Group):
            found += _commands(command, path)
        else:
            found.append((path, command))
    return found


def test_every_command_has_help_with_an_example() -> None:
    commands = _commands(cli)
    assert len(commands) >= 15
    for path, command in commands:
        assert command.help, path
        assert "Example" in command.help, f"`kitty {path}` has no example in its help"
        assert all(p.help for p in command.params if isinstance(p, click.Option)), path


def test_usage_errors_exit_2(repo: Path) -> None:
    missing = kitty(repo, "move")
    assert missing.code == 2 and "Missing argument" in missing.err
    unknown = kitty(repo, "frobnicate")
    assert unknown.code == 2 and "No such command 'frobnicate'" in unknown.err
    run = kitty(repo, "status", "--bogus", "--json")
    assert run.code == 2 and run.json()["error"]["code"] == "usage"
