"""Issue 9: the commands agents copy (from the skill, `next`, the sprint) work as printed.

Each test reproduces one failure an unattended agent hit, as a regression test.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kitty.errors import GuardRefused
from tests.helpers import git, kitty, make_mission, ok

SLUG = "demo-01ABCDEF"
WPS = [
    {"wp_id": "WP01", "title": "Module A", "subtasks": ["T001", "T002"], "owned": ["src/a.py"]},
    {"wp_id": "WP02", "title": "Module B", "deps": ["WP01"], "owned": ["src/b.py"]},
]


def events(repo: Path) -> list[dict[str, object]]:
    path = repo / "kitty-specs" / SLUG / "status.events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def last_move(repo: Path) -> dict[str, object]:
    return [e for e in events(repo) if "to_lane" in e][-1]


def to_review(repo: Path, agent: str = "claude") -> None:
    ok(repo, "move", "WP01", "claimed", "--agent", agent)
    ok(repo, "move", "WP01", "in_progress", "--agent", agent)
    ok(repo, "agent", "tasks", "mark-status", "T001", "T002", "--status", "done")
    ok(repo, "move", "WP01", "for_review", "--agent", agent, "--note", "ready")
    ok(repo, "move", "WP01", "in_review", "--agent", "codex")


def reject(repo: Path, times: int) -> None:
    for n in range(times):
        if n:
            ok(repo, "move", "WP01", "claimed", "--agent", "claude")
            ok(repo, "move", "WP01", "in_progress", "--agent", "claude")
            ok(repo, "agent", "tasks", "mark-status", "T001", "T002", "--status", "done")
            ok(repo, "move", "WP01", "for_review", "--agent", "claude", "--note", "fixed")
            ok(repo, "move", "WP01", "in_review", "--agent", "codex")
        else:
            to_review(repo)
        ok(repo, "move", "WP01", "planned", "--agent", "codex", "--note", f"round {n + 1}: no")


# -- actor resolution -----------------------------------------------------------


@pytest.mark.parametrize(
    ("setup", "expected"),
    [
        ("flag", "lead"),
        ("env", "from-env"),
        ("config", "from-config"),
        ("git-name", "Git Name"),
        ("git-email", "mail@example.com"),
        ("nothing", "user"),
    ],
)
def test_actor_resolution_order(
    repo: Path, monkeypatch: pytest.MonkeyPatch, setup: str, expected: str
) -> None:
    config = "agents:\n  available: [claude, codex]\n"
    if setup in ("flag", "env", "config"):
        config += "identity: from-config\n"
        git(repo, "config", "user.name", "Git Name")
    if setup in ("flag", "env"):
        monkeypatch.setenv("KITTY_AGENT", "from-env")
    if setup == "git-name":
        git(repo, "config", "user.name", "Git Name")
        git(repo, "config", "user.email", "mail@example.com")
    if setup == "git-email":
        git(repo, "config", "user.email", "mail@example.com")
    make_mission(repo, wps=WPS, config=config)
    args = ["--agent", "lead"] if setup == "flag" else []
    moved = ok(repo, "move", "WP01", "claimed", *args, "--json").json()
    assert moved["actor"] == expected
    assert events(repo)[-1]["actor"] == expected


def test_skill_arbiter_commands_work_literally(repo: Path) -> None:
    """seeds/004 Options A/B/C carry no --agent; Spec Kitty records actor `user`."""
    make_mission(repo, wps=WPS)
    reject(repo, 3)
    nxt = ok(repo, "next", "--agent", "claude", "--json").json()
    assert nxt["action"] == "arbiter"
    # The option A command exactly as printed in the skill.
    ok(
        repo,
        "agent",
        "tasks",
        "move-task",
        "WP01",
        "--to",
        "approved",
        "--force",
        "--note",
        "Arbiter decision: Approved after 3 cycles. Meets acceptance criteria. Rationale: ok",
    )
    last = [e for e in events(repo) if e.get("to_lane") == "approved"][-1]
    assert last["actor"] == "user" and last["force"] is True
    assert last["policy_metadata"]["arbiter"]["decision"] == "approve"


def test_skill_escalation_command_works_literally(repo: Path) -> None:
    make_mission(repo, wps=WPS)
    reject(repo, 3)
    ok(
        repo,
        "agent",
        "tasks",
        "move-task",
        "WP01",
        "--to",
        "blocked",
        "--force",
        "--note",
        "Escalated to human after 3 cycles. Conflict: style",
    )
    assert last_move(repo)["to_lane"] == "blocked"


def test_next_arbiter_hints_run_as_printed(repo: Path) -> None:
    import shlex

    make_mission(repo, wps=WPS)
    reject(repo, 3)
    commands = ok(repo, "next", "--agent", "claude", "--json").json()["commands"]
    assert len(commands) == 2
    argv = shlex.split(commands[0].replace("<why the work is acceptable>", "fine"))
    assert argv[0] == "kitty"
    ok(repo, *argv[1:])
    assert last_move(repo)["to_lane"] == "approved"


def test_force_still_needs_a_note(repo: Path) -> None:
    make_mission(repo, wps=WPS)
    refused = kitty(repo, "move", "WP01", "approved", "--force")
    assert refused.code == 1 and "note" in refused.err


def test_self_review_fallback_command_from_the_skill(repo: Path) -> None:
    make_mission(repo, wps=WPS)
    to_review(repo)
    ok(
        repo,
        "agent",
        "tasks",
        "move-task",
        "WP01",
        "--to",
        "approved",
        "--force",
        "--self-review-fallback",
        "--intended-reviewer",
        "codex",
        "--reviewer-failure-reason",
        "exit 1",
        "--note",
        "Self-review fallback after reviewer failure: tests pass",
    )
    last = last_move(repo)
    assert last["to_lane"] == "approved" and last["actor"] == "user"
    fallback = last["policy_metadata"]["self_review_fallback"]
    assert fallback["intended_reviewer"] == "codex"
    assert fallback["reviewer_failure_reason"] == "exit 1"


def test_for_review_without_agent_records_an_actor(repo: Path) -> None:
    make_mission(repo, wps=WPS)
    ok(repo, "move", "WP01", "claimed", "--agent", "claude")
    ok(repo, "move", "WP01", "in_progress", "--agent", "claude")
    ok(repo, "agent", "tasks", "mark-status", "T001", "T002", "--status", "done")
    ok(repo, "agent", "tasks", "move-task", "WP01", "--to", "for_review", "--note", "Ready")
    assert all(e.get("actor") for e in events(repo))
    assert last_move(repo)["actor"] == "user"


# -- rejections ---------------------------------------------------------------------


def test_rejection_with_note_alone_stores_the_note_as_feedback(repo: Path) -> None:
    mission = make_mission(repo, wps=WPS)
    to_review(repo)
    moved = ok(
        repo, "move", "WP01", "planned", "--agent", "codex", "--note", "Add the tests", "--json"
    ).json()
    assert moved["review_cycles"] == 1 and moved["review_ref"]
    cycle = next((mission / "tasks").glob("*/review-cycle-1.md"))
    assert "Add the tests" in cycle.read_text()
    assert "verdict: rejected" in cycle.read_text()


def test_rejection_without_feedback_or_note_is_refused(repo: Path) -> None:
    make_mission(repo, wps=WPS)
    to_review(repo)
    refused = kitty(repo, "move", "WP01", "planned", "--agent", "codex")
    assert refused.code == 1 and "--note" in refused.err


# -- arbiter approval without implementation: next, accept and merge agree ---------


def run_printed(repo: Path, command: str) -> None:
    import shlex

    argv = shlex.split(command)
    assert argv[0] == "kitty", command
    ok(repo, *argv[1:])


def test_arbiter_approval_after_rejection_next_and_accept_agree(repo: Path) -> None:
    """Case 3: a rejection resets subtasks; after an arbiter approval `next` said ACCEPT
    while `kitty accept` refused. Now `next` prints the re-marking commands first."""
    make_mission(repo, wps=WPS[:1])
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plan")
    reject(repo, 1)
    ok(repo, "move", "WP01", "approved", "--force", "--note", "Arbiter decision: fine as is")
    nxt = ok(repo, "next", "--agent", "claude", "--json").json()
    assert nxt["action"] == "accept"
    assert "T001 T002" in nxt["commands"][0] and "mark-status" in nxt["commands"][0]
    for command in nxt["commands"]:
        run_printed(repo, command)
    nxt = ok(repo, "next", "--agent", "claude", "--json").json()
    assert nxt["action"] == "merge"


def test_merge_completes_an_approved_wp_without_a_lane_branch(repo: Path) -> None:
    """Case 2: arbiter-approved, never implemented: merge said `done: -` and `next`
    answered MERGE forever."""
    make_mission(repo, wps=WPS)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plan")
    for wp in ("WP01", "WP02"):
        ok(repo, "move", wp, "approved", "--force", "--note", "Arbiter decision: nothing to do")
    seen = []
    for _ in range(6):
        nxt = ok(repo, "next", "--agent", "claude", "--json").json()
        seen.append(nxt["action"])
        if nxt["action"] == "done":
            break
        for command in nxt["commands"]:
            run_printed(repo, command)
    assert seen[-1] == "done", seen
    assert "merge" in seen
    status = ok(repo, "status", "--json").json()
    assert {w["id"]: w["lane"] for w in status["work_packages"]} == {
        "WP01": "done",
        "WP02": "done",
    }


# -- Spec Kitty parity ----------------------------------------------------------------


def wp_status(repo: Path, wp_id: str = "WP01") -> dict[str, object]:
    views = ok(repo, "status", "--json").json()["work_packages"]
    return next(w for w in views if w["id"] == wp_id)


def test_review_status_has_feedback_then_acknowledged(repo: Path) -> None:
    make_mission(repo, wps=WPS)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plan")
    assert wp_status(repo)["review_status"] is None
    reject(repo, 1)
    assert wp_status(repo)["review_status"] == "has_feedback"
    from kitty.core.render import board_text

    view = ok(repo, "status", "--json").json()
    assert "has feedback" in board_text(view, 120, False)
    ok(repo, "agent", "action", "implement", "WP01", "--agent", "claude")
    assert wp_status(repo)["review_status"] == "acknowledged"
    status_json = json.loads((repo / "kitty-specs" / SLUG / "status.json").read_text())
    assert status_json["work_packages"]["WP01"]["review_status"] == "acknowledged"


LEGACY_MATRIX = """# Issue matrix

| Issue | Title | Verdict | Evidence ref |
|-------|-------|---------|--------------|
| #1730 | Vocabulary | fixed | WP01 commit |
| #1731 | Template | {verdict} | later |

Valid `Verdict` values: `fixed`, `verified-already-fixed`, `deferred-with-followup`.
"""


def test_legacy_issue_matrix_md_guards_approval(repo: Path) -> None:
    mission = make_mission(repo, wps=WPS)
    (mission / "issue-matrix.md").write_text(LEGACY_MATRIX.format(verdict="unknown"))
    to_review(repo)
    refused = kitty(repo, "move", "WP01", "approved", "--agent", "codex", "--note", "ok")
    assert refused.code == 1 and "#1731 (unknown)" in refused.err
    assert "issue-matrix.md blocks moving WP01" in refused.err  # the file the rows came from
    accept = kitty(repo, "accept", "--json")
    assert accept.code == 1
    assert "issue-matrix.md: #1731 has verdict unknown" in accept.json()["error"]["problems"]
    (mission / "issue-matrix.md").write_text(LEGACY_MATRIX.format(verdict="deferred-with-followup"))
    ok(repo, "move", "WP01", "approved", "--agent", "codex", "--note", "ok")
    # issue-matrix.json wins when both exist
    (mission / "issue-matrix.json").write_text('{"schema_version": 1, "rows": {}}')
    (mission / "issue-matrix.md").write_text("no table at all\n")
    assert kitty(repo, "status").code == 0


def test_legacy_issue_matrix_md_without_a_table_is_an_error(repo: Path) -> None:
    mission = make_mission(repo, wps=WPS)
    to_review(repo)
    (mission / "issue-matrix.md").write_text("# Issue matrix\n\nnothing here\n")
    refused = kitty(repo, "move", "WP01", "approved", "--agent", "codex", "--note", "ok")
    assert refused.code != 0 and "issue-matrix.md" in refused.err


def test_invocation_id_fails_closed(repo: Path) -> None:
    make_mission(repo, wps=WPS)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plan")
    args = ("agent", "action", "implement", "WP01", "--agent", "claude", "--model", "haiku")
    unknown = kitty(repo, *args, "--invocation-id", "01NOSUCHDISPATCH")
    assert unknown.code == 1 and "unknown --invocation-id" in unknown.err
    assert wp_status(repo)["lane"] == "planned"  # nothing claimed

    from kitty.services.actions import dispatch_record
    from kitty.services.workspace import Mission

    mission = Mission.open(repo, None)
    record = dispatch_record(mission, "01GOODDISPATCH", "WP01", "implement", "claude", "haiku")
    mission.record(lambda board: [record])
    wrong = kitty(repo, *args[:-1], "opus", "--invocation-id", "01GOODDISPATCH")
    assert wrong.code == 1 and "model 'opus' (dispatched: 'haiku')" in wrong.err
    ok(repo, *args, "--invocation-id", "01GOODDISPATCH")
    assert wp_status(repo)["lane"] == "in_progress"


def test_invocation_id_is_only_a_dispatch_record_found_without_parsing_the_log(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The id is searched in the raw log; a line that merely mentions it (a note) is no
    dispatch, and the first dispatch record with it decides, as a full parse would."""
    from kitty.adapters import eventlog
    from kitty.services import actions
    from kitty.services.actions import dispatch_record
    from kitty.services.workspace import Mission

    make_mission(repo, wps=WPS)
    mission = Mission.open(repo, None)
    note = mission.annotation("WP01", "claude", {"note": "see 01MENTIONED"})
    first = dispatch_record(mission, "01TWICE", "WP01", "implement", "claude", None)
    second = dispatch_record(mission, "01TWICE", "WP02", "implement", "claude", None)
    mission.record(lambda board: [note, first, second])

    def no_full_parse(path: Path) -> None:
        raise AssertionError("the whole log was parsed")

    monkeypatch.setattr(eventlog, "read", no_full_parse)
    fresh = Mission.open(repo, None)
    with pytest.raises(GuardRefused, match="unknown --invocation-id '01MENTIONED'"):
        actions.check_invocation(fresh, "01MENTIONED", "WP01", "implement", "claude", None)
    with pytest.raises(GuardRefused, match="WP 'WP02' \\(dispatched: 'WP01'\\)"):
        actions.check_invocation(fresh, "01TWICE", "WP02", "implement", "claude", None)
    actions.check_invocation(fresh, "01TWICE", "WP01", "implement", "claude", None)


def test_lone_agent_waiting_for_its_own_review_is_blocked_not_wait(repo: Path) -> None:
    make_mission(repo, wps=WPS[:1], config="agents:\n  available: [claude]\n")
    ok(repo, "move", "WP01", "claimed", "--agent", "claude")
    ok(repo, "move", "WP01", "in_progress", "--agent", "claude")
    ok(repo, "agent", "tasks", "mark-status", "T001", "T002", "--status", "done")
    ok(repo, "move", "WP01", "for_review", "--agent", "claude", "--note", "ready")
    nxt = ok(repo, "next", "--agent", "claude", "--json").json()
    assert nxt["action"] == "blocked"
    assert "only configured agent" in nxt["blocked_by"][0]
    for command in nxt["commands"]:
        run_printed(repo, command)
