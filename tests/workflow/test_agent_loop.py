"""Issue 9: the commands agents copy (from the skill, `next`, the sprint) work as printed.

Each test reproduces one failure an unattended agent hit, as a regression test.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kitty.errors import GuardRefused
from tests.helpers import git, kitty, lane_commit, make_mission, ok

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
    lane_commit(repo, "WP01")
    ok(repo, "move", "WP01", "for_review", "--agent", agent, "--note", "ready")
    ok(repo, "move", "WP01", "in_review", "--agent", "codex")


def reject(repo: Path, times: int) -> None:
    for n in range(times):
        if n:
            ok(repo, "move", "WP01", "claimed", "--agent", "claude")
            ok(repo, "move", "WP01", "in_progress", "--agent", "claude")
            ok(repo, "agent", "tasks", "mark-status", "T001", "T002", "--status", "done")
            lane_commit(repo, "WP01")
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
    nxt = ok(repo, "next", "--agent", "gemini", "--json").json()
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
    """Issue 22.1/22.4: `commands` run in order records nothing contradictory (it is
    empty: the decision is a choice), and each choice, filled in, runs and names its
    actor."""
    import shlex

    make_mission(repo, wps=WPS)
    reject(repo, 3)
    nxt = ok(repo, "next", "--agent", "gemini", "--json").json()
    assert (nxt["action"], nxt["commands"]) == ("arbiter", [])
    approve = nxt["choices"][0]
    (command,) = approve["commands"]
    for placeholder in approve["fill"]:
        command = command.replace(placeholder, "fine")
    argv = shlex.split(command)
    assert argv[0] == "kitty" and "--agent" in argv
    ok(repo, *argv[1:])
    moved = last_move(repo)
    assert (moved["to_lane"], moved["actor"]) == ("approved", "gemini")
    # The text form shows the same choices.
    text = ok(repo, "next", "--agent", "gemini").out
    assert "choose one" not in text  # decided: nothing left to choose


def test_the_arbiter_step_never_goes_to_the_implementer(repo: Path) -> None:
    """Issue 22.4: claude implemented WP01; at the cap claude waits and codex decides."""
    make_mission(repo, wps=WPS, config="agents:\n  available: [claude, codex]\n")
    reject(repo, 3)
    mine = ok(repo, "next", "--agent", "claude", "--json").json()
    assert mine["action"] == "wait" and mine["choices"] == []
    assert "waits for an arbiter decision (you implemented it)" in mine["blocked_by"][0]
    theirs = ok(repo, "next", "--agent", "codex", "--json").json()
    assert theirs["action"] == "arbiter"
    assert all("--agent codex" in c["commands"][0] for c in theirs["choices"][:2])


def test_a_decision_under_the_fallback_identity_warns_while_an_agent_holds_the_wp(
    repo: Path,
) -> None:
    """Issue 22.4: run without --agent, the move is recorded as git's user: say so."""
    make_mission(repo, wps=WPS)
    ok(repo, "move", "WP01", "claimed", "--agent", "claude")
    ok(repo, "move", "WP01", "in_progress", "--agent", "claude")
    moved = kitty(repo, "move", "WP01", "blocked", "--force", "--note", "Escalated to human: x")
    assert moved.code == 0
    assert (
        "warning: WP01 was held by claude, and this move is recorded as 'user' (the fallback "
        "identity: no --agent, no $KITTY_AGENT); if an agent made it, pass --agent NAME"
    ) in moved.err
    named = kitty(repo, "move", "WP01", "planned", "--agent", "lead")
    assert named.code == 0 and "warning" not in named.err


def test_approving_unreviewed_work_needs_force_or_a_recorded_review(repo: Path) -> None:
    """Issue 22.2: in_progress -> approved with a note alone was an approval nobody gave."""
    make_mission(repo, wps=WPS)
    ok(repo, "move", "WP01", "claimed", "--agent", "claude")
    ok(repo, "move", "WP01", "in_progress", "--agent", "claude")
    refused = kitty(
        repo, "agent", "tasks", "move-task", "WP01", "--to", "approved", "--note", "Review passed"
    )
    assert refused.code == 1 and "records no review" in refused.err
    assert last_move(repo)["to_lane"] == "in_progress"
    review = repo / "review.md"
    review.write_text("Read every line; it does what WP01 asks.\n")
    ok(repo, "move", "WP01", "approved", "--agent", "codex", "--review-feedback-file", str(review))
    moved = last_move(repo)
    assert moved["review_result"]["verdict"] == "approved" and moved["review_ref"]


def test_the_holder_releases_a_claim_without_force(repo: Path) -> None:
    """Issue 22.12: `kitty move WP01 claimed` by mistake, undone by the same actor."""
    make_mission(repo, wps=WPS)
    ok(repo, "move", "WP01", "claimed", "--agent", "claude")
    other = kitty(repo, "move", "WP01", "planned", "--agent", "codex")
    assert other.code == 1
    released = ok(repo, "move", "WP01", "planned", "--agent", "claude", "--json").json()
    assert (released["from_lane"], released["to_lane"]) == ("claimed", "planned")
    event = last_move(repo)
    assert event["force"] is True  # Spec Kitty's table has no claimed -> planned edge
    assert event["reason"] == "claim released by its holder claude"
    assert event["policy_metadata"]["release"] == {"holder": "claude"}
    assert ok(repo, "next", "--agent", "codex", "--json").json()["wp_id"] == "WP01"


def test_the_cycle_cap_holds_again_after_an_escalation(repo: Path) -> None:
    """Issue 22.3: escalate at 3, a person un-blocks it: 3 more rejections, arbiter again."""
    make_mission(repo, wps=WPS)
    reject(repo, 3)
    ok(repo, "move", "WP01", "blocked", "--force", "--agent", "lead",
       "--note", "Escalated to human: scope")  # fmt: skip
    ok(repo, "move", "WP01", "planned", "--agent", "lead")
    fix = ok(repo, "next", "--agent", "claude", "--json").json()
    assert (fix["action"], fix["cycle"]) == ("fix", "0/3, 3 in all")
    for n in range(3):
        ok(repo, "move", "WP01", "claimed", "--agent", "claude")
        ok(repo, "move", "WP01", "in_progress", "--agent", "claude")
        ok(repo, "agent", "tasks", "mark-status", "T001", "T002", "--status", "done")
        lane_commit(repo, "WP01")
        ok(repo, "move", "WP01", "for_review", "--agent", "claude", "--note", "fixed")
        ok(repo, "move", "WP01", "in_review", "--agent", "codex")
        ok(repo, "move", "WP01", "planned", "--agent", "codex", "--note", f"again {n}")
    nxt = ok(repo, "next", "--agent", "gemini", "--json").json()
    assert (nxt["action"], nxt["cycle"]) == ("arbiter", "3/3, 6 in all")
    assert "[cycle 3/3, 6 in all]" in ok(repo, "status", "--list").out  # one count everywhere
    refused = kitty(repo, "move", "WP01", "claimed", "--agent", "claude")
    assert refused.code == 1 and "needs an arbiter decision" in refused.err


def test_a_silent_review_is_taken_over(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 22.5: a review started by hand and abandoned; two hours later `next` offers
    the takeover, and the printed command takes it over."""
    from kitty.adapters import eventlog

    make_mission(repo, wps=WPS, config="agents:\n  available: [claude, codex, gemini]\n")
    to_review(repo)
    real = eventlog.now_us
    monkeypatch.setattr(eventlog, "now_us", lambda: real() + 2 * 3600 * 1_000_000)
    board = ok(repo, "status", "--json").json()["work_packages"][0]
    assert board["stalled"] == "review silent for 2h00m: `kitty next` offers the takeover"
    assert "STALLED" in ok(repo, "status").out
    nxt = ok(repo, "next", "--agent", "gemini", "--json").json()
    assert nxt["action"] == "review" and "STALLED" in nxt["reason"]
    (command,) = nxt["commands"]
    assert "--takeover" in command
    run_printed(repo, command)
    assert last_move(repo)["to_lane"] == "in_review"
    assert ok(repo, "status", "--json").json()["work_packages"][0]["agent"] == "gemini"


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
    lane_commit(repo, "WP01")
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
    ok(repo, "move", "WP01", "approved", "--force", "--agent", "lead",
       "--note", "Arbiter decision: fine as is")  # fmt: skip
    nxt = ok(repo, "next", "--agent", "claude", "--json").json()
    assert nxt["action"] == "accept"
    # Issue 22.8: no re-mark in claude's name; accept records it as what it is.
    assert nxt["commands"] == [f"kitty accept --mission {SLUG}"]
    for command in nxt["commands"]:
        run_printed(repo, command)
    marks = [e for e in events(repo) if (e.get("delta") or {}).get("subtasks")]
    assert marks[-1]["actor"] == "accept"
    assert marks[-1]["delta"]["note"].startswith(
        "subtasks T001, T002 marked done at acceptance: WP01 was approved by an arbiter "
        "decision of lead after a rejection reset them"
    )
    meta = json.loads((repo / "kitty-specs" / SLUG / "meta.json").read_text())
    assert meta["acceptance_history"][-1]["subtasks_marked_done"] == {"WP01": ["T001", "T002"]}
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
    from kitty.workflow.rules.render import board_text

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

    from kitty.mission.workspace import Mission
    from kitty.workflow.actions import dispatch_record

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
    from kitty.mission.workspace import Mission
    from kitty.workflow import actions
    from kitty.workflow.actions import dispatch_record

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
    lane_commit(repo, "WP01")
    ok(repo, "move", "WP01", "for_review", "--agent", "claude", "--note", "ready")
    nxt = ok(repo, "next", "--agent", "claude", "--json").json()
    assert nxt["action"] == "blocked"
    assert "only configured agent" in nxt["blocked_by"][0]
    for command in nxt["commands"]:
        run_printed(repo, command)
