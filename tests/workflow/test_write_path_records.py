"""What the write path appends, record by record (kitty/workflow/moves.py).

The log is the only source of truth, so each move is checked by the exact lines
it writes: the transition, its policy metadata, the review result, the
annotation that follows, and the review-cycle file of a rejection.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import git, kitty, lane_commit, make_mission, ok

BASE = {
    "evidence": None,
    "execution_mode": "worktree",
    "mission_id": "01ABCDEFGHJKMNPQRSTVWXYZ00",
    "mission_slug": "demo-01ABCDEF",
    "review_ref": None,
    "review_result": None,
    "wp_id": "WP01",
}
REF = "review-cycle://demo-01ABCDEF/WP01-thing/review-cycle-1.md"
LANE = "refs/heads/kitty/mission-demo-01ABCDEF-lane-a"


def lane_commits(repo: Path) -> dict[str, str]:
    """What a for_review event records of the lane (issue 41): its head and the base."""
    return {
        "lane_head": git(repo, "rev-parse", LANE).strip(),
        "lane_base": git(repo, "rev-parse", "main").strip(),
    }


def records(mission: Path, last: int) -> list[dict[str, Any]]:
    """The last `last` lines, without their ids and times. Each transition's causal link
    (`kitty_after`) is checked: the id of the WP's previous transition, null for none."""
    lines = (mission / "status.events.jsonl").read_text().splitlines()
    previous: dict[str, str | None] = {}
    out = []
    for number, line in enumerate(lines):
        event = json.loads(line)
        event_id = event.pop("event_id")
        if "from_lane" in event:
            assert event.pop("kitty_after") == previous.get(event["wp_id"]), line
            previous[event["wp_id"]] = event_id
        if number < len(lines) - last:
            continue
        assert re.fullmatch(r"[0-9A-HJKMNP-TV-Z]{26}", event_id)
        assert event.pop("at").endswith("+00:00")
        out.append(event)
    return out


def in_review(repo: Path) -> Path:
    mission = make_mission(repo, wps=[{"wp_id": "WP01", "subtasks": ["T001", "T002"]}])
    ok(repo, "move", "WP01", "claimed", "--agent", "claude")
    ok(repo, "move", "WP01", "in_progress", "--agent", "claude")
    ok(
        repo,
        "agent",
        "tasks",
        "mark-status",
        "T001",
        "T002",
        "--status",
        "done",
        "--agent",
        "claude",
    )
    lane_commit(repo, "WP01")
    ok(repo, "move", "WP01", "for_review", "--agent", "claude", "--note", "ready")
    ok(repo, "move", "WP01", "in_review", "--agent", "codex")
    return mission


def test_claim_to_review_records(repo: Path) -> None:
    mission = in_review(repo)
    pid = os.getppid()
    assert records(mission, 5) == [
        dict(
            BASE,
            actor="claude",
            force=False,
            from_lane="claimed",
            to_lane="in_progress",
            policy_metadata={"agent": "claude", "shell_pid": pid},
            reason=None,
        ),
        {
            "actor": "claude",
            "delta": {"subtasks": {"T001": "done", "T002": "done"}},
            "kind": "annotation",
            "wp_id": "WP01",
        },
        dict(
            BASE,
            actor="claude",
            force=False,
            from_lane="in_progress",
            to_lane="for_review",
            policy_metadata=lane_commits(repo),
            reason="ready",
        ),
        {"actor": "claude", "delta": {"note": "ready"}, "kind": "annotation", "wp_id": "WP01"},
        dict(
            BASE,
            actor="codex",
            force=False,
            from_lane="for_review",
            to_lane="in_review",
            policy_metadata={"agent": "codex", "shell_pid": pid},
            reason=None,
        ),
    ]


def test_rejection_records_and_cycle_file(repo: Path, tmp_path: Path) -> None:
    mission = in_review(repo)
    feedback = tmp_path / "fb.md"
    feedback.write_text("Fix it.\n\n")
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
    cycle_file = mission / "tasks" / "WP01-thing" / "review-cycle-1.md"
    assert records(mission, 2) == [
        dict(
            BASE,
            actor="codex",
            force=False,
            from_lane="in_review",
            to_lane="planned",
            policy_metadata=None,
            reason=f"changes requested: {REF}",
            review_ref=REF,
            review_result={
                "feedback_path": str(cycle_file),
                "reference": REF,
                "reviewer": "codex",
                "verdict": "changes_requested",
            },
        ),
        {
            "actor": "codex",
            "delta": {
                "release_runtime_claim": True,
                "subtasks": {"T001": "planned", "T002": "planned"},
            },
            "kind": "annotation",
            "wp_id": "WP01",
        },
    ]
    assert {k: v for k, v in result.items() if k != "event_ids"} == {
        "schema": 1,
        "actor": "codex",
        "arbiter": None,
        "force": False,
        "from_lane": "in_review",
        "mission": "demo-01ABCDEF",
        "review_cycles": 1,
        "cycle": "1/3",
        "review_ref": REF,
        "self_review": None,
        "to_lane": "planned",
        "warnings": [],
        "wp_id": "WP01",
    }
    assert len(result["event_ids"]) == 2
    text = cycle_file.read_text()
    front, body = text.split("---\n")[1], text.split("---\n", 2)[2]
    assert body == "\nFix it.\n"
    lines = front.splitlines()
    assert lines[:3] == ["affected_files: []", "cycle_number: 1", "mission_slug: demo-01ABCDEF"]
    assert re.fullmatch(r"reviewed_at: '\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z'", lines[3])
    assert lines[4:] == ["reviewer_agent: codex", "verdict: rejected", "wp_id: WP01"]
    # the second rejection is cycle 2, in its own file
    ok(repo, "move", "WP01", "claimed", "--agent", "claude")
    ok(repo, "move", "WP01", "in_progress", "--agent", "claude")
    ok(repo, "agent", "tasks", "mark-status", "T001", "T002", "--status", "done")
    lane_commit(repo, "WP01")
    ok(repo, "move", "WP01", "for_review", "--agent", "claude")
    ok(repo, "move", "WP01", "in_review", "--agent", "codex", "--note", "again")
    ok(
        repo,
        "move",
        "WP01",
        "in_progress",
        "--agent",
        "codex",
        "--review-feedback-file",
        str(feedback),
        "--note",
        "see file",
    )
    second = records(mission, 2)
    assert second[0]["reason"] == "see file" and second[0]["to_lane"] == "in_progress"
    assert second[0]["review_ref"] == REF.replace("cycle-1", "cycle-2")
    assert second[1]["delta"] == {
        "note": "see file",
        "release_runtime_claim": True,
        "subtasks": {"T001": "planned", "T002": "planned"},
    }
    assert (mission / "tasks" / "WP01-thing" / "review-cycle-2.md").is_file()


def test_approval_arbiter_and_self_review_records(repo: Path) -> None:
    mission = in_review(repo)
    ok(repo, "move", "WP01", "approved", "--agent", "codex", "--note", "Review passed")
    assert records(mission, 2) == [
        dict(
            BASE,
            actor="codex",
            force=False,
            from_lane="in_review",
            to_lane="approved",
            policy_metadata={"approved_commit": lane_commits(repo)["lane_head"]},
            reason="Review passed",
            review_result={"reference": None, "reviewer": "codex", "verdict": "approved"},
        ),
        {
            "actor": "codex",
            "delta": {"note": "Review passed"},
            "kind": "annotation",
            "wp_id": "WP01",
        },
    ]
    ok(
        repo,
        "move",
        "WP01",
        "blocked",
        "--agent",
        "lead",
        "--force",
        "--note",
        "Escalated to human: scope",
    )
    blocked = records(mission, 2)[0]
    assert blocked["force"] is True and blocked["reason"] == "Escalated to human: scope"
    assert blocked["policy_metadata"] == {
        "arbiter": {
            "by": "lead",
            "cycles": 0,
            "decision": "escalate",
            "note": "Escalated to human: scope",
        }
    }
    ok(
        repo,
        "move",
        "WP01",
        "approved",
        "--agent",
        "claude",
        "--force",
        "--note",
        "fallback",
        "--self-review-fallback",
        "--intended-reviewer",
        "codex",
        "--reviewer-failure-reason",
        "exit 3",
    )
    fallback = records(mission, 2)[0]
    assert fallback["policy_metadata"] == {
        "approved_commit": lane_commits(repo)["lane_head"],
        "self_review_fallback": {
            "approved_by": "claude",
            "implementer": "claude",
            "intended_reviewer": "codex",
            "reviewer_failure_reason": "exit 3",
        },
    }


def test_feedback_file_problems_write_nothing(repo: Path, tmp_path: Path) -> None:
    mission = in_review(repo)
    before = (mission / "status.events.jsonl").read_text()
    missing = kitty(
        repo,
        "move",
        "WP01",
        "planned",
        "--agent",
        "codex",
        "--review-feedback-file",
        str(tmp_path / "nope.md"),
    )
    assert (
        missing.code == 2 and f"cannot read review feedback {tmp_path / 'nope.md'}" in missing.err
    )
    assert "hint: pass a readable regular file" in missing.err
    binary = tmp_path / "bin.md"
    binary.write_bytes(b"\xff\xfe\x00")
    not_text = kitty(
        repo, "move", "WP01", "planned", "--agent", "codex", "--review-feedback-file", str(binary)
    )
    assert not_text.code == 2 and f"review feedback {binary} is not UTF-8 text" in not_text.err
    assert (mission / "status.events.jsonl").read_text() == before
    assert not (mission / "tasks" / "WP01-thing").exists()


def test_mark_status_groups_by_wp_and_refuses_unknown_tasks(repo: Path) -> None:
    mission = make_mission(
        repo,
        wps=[
            {"wp_id": "WP01", "subtasks": ["T001"]},
            {"wp_id": "WP02", "subtasks": ["T002", "T003"]},
        ],
    )
    result = ok(
        repo,
        "agent",
        "tasks",
        "mark-status",
        "t003",
        " T001",
        "T002",
        "--status",
        "in_progress",
        "--json",
    ).json()
    assert result["marked"] == {
        "WP01": {"T001": "in_progress"},
        "WP02": {"T003": "in_progress", "T002": "in_progress"},
    }
    assert records(mission, 2) == [
        {
            "actor": "user",
            "delta": {"subtasks": {"T001": "in_progress"}},
            "kind": "annotation",
            "wp_id": "WP01",
        },
        {
            "actor": "user",
            "delta": {"subtasks": {"T002": "in_progress", "T003": "in_progress"}},
            "kind": "annotation",
            "wp_id": "WP02",
        },
    ]
    bad = kitty(repo, "agent", "tasks", "mark-status", "T001", "--status", "finished")
    assert bad.code == 2
    assert "'finished' is not one of 'done', 'planned', 'in_progress'" in bad.err
    other = kitty(repo, "agent", "tasks", "mark-status", "T002", "--status", "done", "--wp", "WP01")
    assert other.code == 1 and "subtask T002 is not in WP01's subtasks" in other.err
    nowhere = kitty(repo, "agent", "tasks", "mark-status", "T009", "--status", "done")
    assert "subtask T009 is not in any work package's subtasks" in nowhere.err


def test_the_service_refuses_what_the_cli_cannot_even_send(repo: Path, tmp_path: Path) -> None:
    """Callers other than click (the sprint, MCP) get the same clear refusals."""
    import pytest

    from kitty.errors import NotFound, UsageError
    from kitty.mission.workspace import Mission
    from kitty.workflow.moves import mark_status
    from kitty.workflow.reviewcycle import next_cycle_number

    make_mission(repo, wps=[{"wp_id": "WP01", "subtasks": ["T001"]}])
    mission = Mission.open(repo, None)
    with pytest.raises(UsageError) as err:
        mark_status(mission, ["T001"], "finished")
    assert (err.value.message, err.value.hint) == (
        "unknown subtask status 'finished'",
        "use one of: done, planned, in_progress",
    )
    with pytest.raises(UsageError) as err:
        mark_status(mission, [], "done")
    assert (err.value.message, err.value.hint) == (
        "name at least one subtask",
        "kitty agent tasks mark-status T001 --status done",
    )
    with pytest.raises(NotFound) as err2:
        mark_status(mission, ["T009"], "done")
    assert err2.value.hint == "check the WP file's `subtasks:` list"
    result = mark_status(mission, ["t001"], "done")
    assert {k: v for k, v in result.items() if k != "event_ids"} == {
        "mission": "demo-01ABCDEF",
        "status": "done",
        "marked": {"WP01": {"T001": "done"}},
    }
    assert len(result["event_ids"]) == 1
    folder = tmp_path / "cycles"
    assert next_cycle_number(folder) == 1
    folder.mkdir()
    assert next_cycle_number(folder) == 1
    (folder / "review-cycle-3.md").write_text("x")
    (folder / "review-cycle-3.findings.json").write_text("{}")
    (folder / "notes.md").write_text("x")
    assert next_cycle_number(folder) == 4


def test_status_json_never_goes_back_to_an_older_board(repo: Path) -> None:
    """status.json is rewritten after the lock is released: a writer whose append was
    followed by another's leaves the file to that later writer."""
    from kitty.mission.workspace import Mission

    mission_dir = make_mission(repo, wps=[{"wp_id": "WP01"}, {"wp_id": "WP02"}])
    earlier = Mission.open(repo, None)
    board, end = earlier.board, earlier.events_path.stat().st_size
    ok(repo, "move", "WP01", "claimed", "--agent", "claude")  # a later append
    newest = (mission_dir / "status.json").read_text()
    assert '"claimed"' in newest
    assert earlier.publish_status(board, end) is False
    assert (mission_dir / "status.json").read_text() == newest
    (mission_dir / "status.json").unlink()
    current = Mission.open(repo, None)
    assert current.publish_status(current.board, current.events_path.stat().st_size)
    assert (mission_dir / "status.json").read_text() == newest


def test_every_status_json_writer_takes_the_status_lock(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`kitty rebuild`, `doctor --fix`, sync and remote claims write status.json through
    Mission.store_status, under the same lock as a move's rewrite: none can interleave."""
    from kitty.adapters import eventlog
    from kitty.mission.workspace import Mission

    make_mission(repo, wps=[{"wp_id": "WP01"}])
    mission = Mission.open(repo, None)
    lock = mission.project.lock_path(f"status-{mission.slug}")
    monkeypatch.setenv("KITTY_LOCK_TIMEOUT", "0.3")
    with eventlog.locked(lock, "held by the test"):
        for argv in (("rebuild",), ("doctor", "--fix")):
            busy = kitty(repo, *argv)
            assert busy.code == 75, (argv, busy.out, busy.err)
            assert "held by the test" in busy.err or "status.json" in busy.err
    assert ok(repo, "rebuild").out.startswith("rebuilt ")
