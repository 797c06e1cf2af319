"""The review loop's edges, walked as a literal agent runs it: every printed command as printed."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from tests.helpers import Run, kitty, lane_commit, make_mission, ok

WPS = [{"wp_id": "WP01", "title": "Alpha"}, {"wp_id": "WP02", "title": "Beta", "deps": ["WP01"]}]


def run_printed(repo: Path, command: str) -> Run:
    """Run a command kitty printed, exactly as printed."""
    argv = shlex.split(command)
    assert argv[0] == "kitty", command
    return kitty(repo, *argv[1:])


def to_review(repo: Path, implementer: str = "claude", reviewer: str = "codex") -> None:
    for lane in ("claimed", "in_progress", "for_review"):
        if lane == "for_review":
            lane_commit(repo, "WP01")  # a WP enters review with work of its own (issue 41)
        ok(repo, "move", "WP01", lane, "--agent", implementer)
    ok(repo, "move", "WP01", "in_review", "--agent", reviewer)


def reject(repo: Path, tmp: Path, reviewer: str = "codex") -> None:
    feedback = tmp / "feedback.md"
    feedback.write_text("Fix it.\n")
    ok(
        repo,
        "move",
        "WP01",
        "planned",
        "--agent",
        reviewer,
        "--review-feedback-file",
        str(feedback),
    )


def to_cap(repo: Path, tmp: Path, cycles: int = 1) -> None:
    for _ in range(cycles):
        to_review(repo)
        reject(repo, tmp)


def events(repo: Path) -> list[dict[str, Any]]:
    log = repo / "kitty-specs" / "demo-01ABCDEF" / "status.events.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def test_a_note_still_holding_next_s_placeholder_is_refused(repo: Path, tmp_path: Path) -> None:
    make_mission(
        repo, wps=WPS, config="agents:\n  available: [claude, codex]\nreview:\n  max_cycles: 1\n"
    )
    to_cap(repo, tmp_path)
    decision = ok(repo, "next", "--agent", "codex", "--json").json()
    assert decision["action"] == "arbiter"
    before = len(events(repo))
    for option in decision["choices"]:
        (command,) = option["commands"]
        refused = run_printed(repo, command)
        assert refused.code != 0, command
        (placeholder,) = option["fill"]
        assert f"placeholder {placeholder}" in refused.err
        assert "Traceback" not in refused.err
    assert len(events(repo)) == before  # nothing recorded
    escalate = decision["choices"][1]
    (placeholder,) = escalate["fill"]
    filled = escalate["commands"][0].replace(placeholder, "the reviewers disagree on scope")
    assert run_printed(repo, filled).code == 0
    assert "Escalated to human: the reviewers disagree on scope" in json.dumps(events(repo)[-1])


def test_prompt_summary_placeholder_is_refused_too(repo: Path) -> None:
    make_mission(repo, wps=WPS)
    for lane in ("claimed", "in_progress"):
        ok(repo, "move", "WP01", lane, "--agent", "claude")
    refused = kitty(
        repo,
        "move",
        "WP01",
        "for_review",
        "--agent",
        "claude",
        "--note",
        "Ready for review: <summary>",
    )
    assert refused.code != 0 and "placeholder <summary>" in refused.err
    assert ok(repo, "status", "--json").json()["work_packages"][0]["lane"] == "in_progress"


def _halt(reason: str, questions: list[Any], artifact: str | None) -> dict[str, Any]:
    return {
        "loop_verdict": "HALT",
        "reason": reason,
        "round": 1,
        "artifact_path": artifact,
        "halt_file": "kitty-specs/m/tasks/WP01/halt.json",
        "counts": {},
        "context": 'questions[0].options[0]: "a" is not an object with a label',
        "question_chunks": [questions] if questions else [],
        "hint": "proceed-with-gaps",
        "findings": [],
    }


def test_a_malformed_blocker_s_questions_are_not_offered_as_answerable() -> None:
    from kitty.commands.review_text import loop_text

    q = {"id": "q1", "question": "Error or guest?", "options": ["a", "b"]}
    text = loop_text(_halt("blocker_malformed", [q], "f.json"))
    assert "Questions (ask" not in text
    assert "cannot be answered" in text and "q1: Error or guest?" in text
    # a well-formed blocker still lists them to ask
    good = {"id": "q1", "question": "Error or guest?", "options": [{"label": "a"}, {"label": "b"}]}
    assert "Questions (ask 1):\n  q1: Error or guest? [a | b]" in loop_text(
        _halt("blocker", [good], "f.json")
    )


def test_a_halt_without_findings_file_prints_no_findings_path_none() -> None:
    from kitty.commands.review_text import loop_text

    text = loop_text(_halt("reviewer_failed", [], None))
    assert "None" not in text and "Findings path" not in text
    assert "Findings path: f.json" in loop_text(_halt("reviewer_failed", [], "f.json"))


def _backticked(text: str) -> list[str]:
    return text.split("`")[1::2]


def test_a_solo_human_is_told_how_one_person_reviews(repo: Path) -> None:
    wps = [{"wp_id": "WP01", "title": "Alpha"}, {"wp_id": "WP02", "title": "Beta"}]
    make_mission(repo, wps=wps, config="agents:\n  available: [claude, codex]\n")
    for wp in ("WP01", "WP02"):
        for lane in ("claimed", "in_progress", "for_review"):
            if lane == "for_review":
                lane_commit(repo, wp)
            ok(repo, "move", wp, lane, "--agent", "claude")
    decision = ok(repo, "next", "--agent", "claude", "--json").json()
    assert decision["action"] == "wait"
    line = next(b for b in decision["blocked_by"] if b.startswith("WP01"))
    review, fallback = _backticked(line)
    assert "--agent claude:reviewer" in review and "--self-review-fallback" in fallback
    assert run_printed(repo, review).code == 0
    ok(repo, "move", "WP01", "approved", "--agent", "claude:reviewer", "--note", "Review passed")
    (fallback,) = [
        c
        for c in _backticked(
            next(
                b
                for b in ok(repo, "next", "--agent", "claude", "--json").json()["blocked_by"]
                if b.startswith("WP02")
            )
        )
        if "fallback" in c
    ]
    assert run_printed(repo, fallback).code == 0
    lanes_now = {w["id"]: w["lane"] for w in ok(repo, "status", "--json").json()["work_packages"]}
    assert lanes_now == {"WP01": "approved", "WP02": "approved"}


def test_starting_a_wp_whose_dependency_is_not_approved_warns(repo: Path) -> None:
    make_mission(repo, wps=WPS)
    moved = ok(repo, "move", "WP02", "--to", "in_progress", "--agent", "claude")
    assert "WP02 depends on WP01 (planned), not approved yet" in moved.err
    as_json = ok(repo, "move", "WP01", "--to", "claimed", "--agent", "codex", "--json").json()
    assert as_json["warnings"] == []  # no dependencies: nothing to say
    for lane in ("in_progress", "for_review", "in_review"):
        if lane == "for_review":
            lane_commit(repo, "WP01")
        ok(repo, "move", "WP01", lane, "--agent", "codex" if lane != "in_review" else "claude")
    ok(repo, "move", "WP01", "approved", "--agent", "claude", "--note", "Review passed")
    ok(repo, "move", "WP02", "planned", "--agent", "claude")
    again = ok(repo, "move", "WP02", "--to", "in_progress", "--agent", "claude")
    assert "depends on" not in again.err


def _hint(err: str) -> str:
    return err.split("hint: ", 1)[1].strip()


def test_at_the_cap_the_implementer_is_never_told_to_arbitrate(repo: Path, tmp_path: Path) -> None:
    config = "agents:\n  available: [claude, codex]\nreview:\n  max_cycles: 1\n"
    make_mission(repo, wps=WPS, config=config)
    to_cap(repo, tmp_path)
    for argv in (
        ("agent", "action", "implement", "WP01", "--agent", "claude"),
        ("move", "WP01", "claimed", "--agent", "claude"),
    ):
        refused = kitty(repo, *argv)
        assert refused.code == 1 and "needs an arbiter decision" in refused.err
        hint = _hint(refused.err)
        assert "--force" not in hint and "move-task" not in hint, hint
        # the one command it names runs, for claude, as printed
        command = hint[hint.index("meanwhile: ") + len("meanwhile: ") :]
        assert run_printed(repo, command).code == 0
    # another agent is shown the arbiter's commands in its own name
    other = _hint(kitty(repo, "move", "WP01", "claimed", "--agent", "codex").err)
    assert "--to approved --force --agent codex" in other


def test_one_cycle_count_everywhere_after_an_arbiter_decision(repo: Path, tmp_path: Path) -> None:
    config = "agents:\n  available: [claude, codex, gemini]\nreview:\n  max_cycles: 2\n"
    make_mission(repo, wps=WPS, config=config)
    to_cap(repo, tmp_path, cycles=2)
    note = "Escalated to human: scope"
    ok(repo, "move", "WP01", "blocked", "--force", "--agent", "gemini", "--note", note)
    ok(repo, "move", "WP01", "planned", "--agent", "gemini")
    to_cap(repo, tmp_path, cycles=1)  # one more rejection: 1 since the decision, 3 in all

    def everywhere() -> dict[str, str]:
        nxt = ok(repo, "next", "--agent", "claude", "--json").json()
        row = ok(repo, "status", "--json").json()["work_packages"][0]
        return {
            "next --json": nxt["cycle"],
            "next": ok(repo, "next", "--agent", "claude").out.splitlines()[0],
            "status --json": row["cycle"],
            "status --list": ok(repo, "status", "--list").out.splitlines()[0],
            "board": ok(repo, "status").out,
        }

    seen = everywhere()
    assert seen["next --json"] == seen["status --json"] == "1/2, 3 in all"
    assert seen["next"] == "FIX WP01 (cycle 1/2, 3 in all)", seen["board"]
    assert "[cycle 1/2, 3 in all]" in seen["status --list"]
    assert "\n cycle 1/2\n 3 in all\n" in seen["board"], seen["board"]  # a card, narrow
    # the fix prompt says the same count
    prompt = ok(repo, "agent", "action", "implement", "WP01", "--agent", "claude", "--json").json()
    text = Path(prompt["prompt"]).read_text()
    assert prompt["cycle"] == "1/2, 3 in all"
    assert (
        "This is cycle 1/2, 3 in all: a reviewer sent this work package back 1 time(s) "
        "since the arbiter's decision (3 in all)" in text
    )
    # the second cap: the list and `next` agree on 2/2
    for lane in ("for_review",):
        lane_commit(repo, "WP01")
        ok(repo, "move", "WP01", lane, "--agent", "claude")
    ok(repo, "move", "WP01", "in_review", "--agent", "codex")
    reject(repo, tmp_path)
    arbiter = ok(repo, "next", "--agent", "gemini", "--json").json()
    assert (arbiter["action"], arbiter["cycle"]) == ("arbiter", "2/2, 4 in all")
    assert "[cycle 2/2, 4 in all]" in ok(repo, "status", "--list").out


def _reviewing_codex_edits(repo: Path) -> Path:
    config = "agents:\n  available: [claude, codex, gemini]\n"
    make_mission(repo, wps=[{"wp_id": "WP01", "title": "Alpha", "owned": ["a.txt"]}], config=config)
    ok(repo, "agent", "action", "implement", "WP01", "--agent", "claude")
    ws = Path(
        ok(repo, "agent", "action", "implement", "WP01", "--agent", "claude", "--json").json()[
            "workspace"
        ]
    )
    (ws / "a.txt").write_text("claude's work\n")
    import subprocess

    subprocess.run(["git", "add", "a.txt"], cwd=ws, check=True)
    subprocess.run(["git", "commit", "-qm", "feat(WP01): a"], cwd=ws, check=True)
    ok(repo, "move", "WP01", "for_review", "--agent", "claude", "--note", "Ready for review: a")
    ok(repo, "agent", "action", "review", "WP01", "--agent", "codex")
    (ws / "a.txt").write_text("codex fixed it itself\n")
    subprocess.run(["git", "commit", "-qam", "review: fix"], cwd=ws, check=True)
    return ws


def test_after_a_reviewer_edited_the_lane_next_says_what_changed_and_what_to_do(
    repo: Path, tmp_path: Path
) -> None:
    _reviewing_codex_edits(repo)
    refused = kitty(repo, "move", "WP01", "approved", "--agent", "codex", "--note", "Review passed")
    assert refused.code == 1 and "reviewer_failed" in refused.err and "HEAD moved" in refused.err
    # the same reviewer is not sent round again to approve: it is told what changed
    mine = ok(repo, "next", "--agent", "codex", "--json").json()
    assert mine["action"] == "review" and mine["commands"] == []
    assert "changed its lane (HEAD moved" in mine["reason"] and "refused" in mine["reason"]
    reject, hand_over = mine["choices"]
    assert "--to planned" in reject["commands"][0] and "--takeover" in hand_over["commands"][0]
    prompt = ok(repo, "agent", "action", "review", "WP01", "--agent", "codex", "--json").json()
    assert (
        "## Your review changed the lane: approval is refused" in Path(prompt["prompt"]).read_text()
    )
    # another agent is offered the takeover now, not after the 30-minute stall
    other = ok(repo, "next", "--agent", "gemini", "--json").json()
    assert other["action"] == "review" and "changed the lane" in other["reason"]
    (takeover,) = other["commands"]
    assert "--takeover" in takeover and run_printed(repo, takeover).code == 0
    assert ok(repo, "status", "--json").json()["work_packages"][0]["reviewer"] == "gemini"


def test_a_forced_approval_of_a_lane_its_reviewer_changed_says_so_and_is_recorded(
    repo: Path,
) -> None:
    ws = _reviewing_codex_edits(repo)
    head = subprocess_out(ws, "rev-parse", "HEAD")
    forced = ok(
        repo, "move", "WP01", "approved", "--agent", "codex", "--force", "--note", "ok anyway"
    )
    assert "approves code nobody reviewed, and is recorded as such" in forced.err
    (event,) = [e for e in events(repo) if e.get("to_lane") == "approved"]
    changed = event["policy_metadata"]["reviewer_changed_lane"]
    assert changed["reviewer"] == "codex" and changed["commit"] == head
    assert "HEAD moved" in changed["changes"]


def test_a_rejection_after_the_reviewer_changed_the_lane_names_its_commit(
    repo: Path, tmp_path: Path
) -> None:
    ws = _reviewing_codex_edits(repo)
    head = subprocess_out(ws, "rev-parse", "HEAD")
    reject(repo, tmp_path)
    (event,) = [
        e
        for e in events(repo)
        if e.get("to_lane") == "planned" and e.get("from_lane") == "in_review"
    ]
    assert event["policy_metadata"]["reviewer_changed_lane"]["commit"] == head


def subprocess_out(cwd: Path, *args: str) -> str:
    import subprocess

    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()
