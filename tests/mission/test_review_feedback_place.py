"""Issue 34.5: the review prompt names the exact file for a rejection's feedback (and for
structured findings): inside the lane worktree, where every agent CLI may write, in a
folder git ignores. kitty takes the file into the review cycle and removes it, and
`kitty accept` never refuses a mission over a file kitty itself asked for."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from tests.helpers import git, make_mission, ok

SLUG = "demo-01ABCDEF"


def implemented(repo: Path) -> Path:
    """WP01 implemented by claude in its lane worktree and moved to for_review."""
    claimed = ok(repo, "agent", "action", "implement", "WP01", "--agent", "claude", "--json")
    lane = Path(claimed.json()["workspace"])
    (lane / "a.txt").write_text(f"work {len(list(lane.glob('*.txt')))}\n")
    ok(lane, "safe-commit", "a.txt", "-m", "feat(WP01): work")
    ok(repo, "agent", "tasks", "move-task", "WP01", "--mission", SLUG, "--to", "for_review",
       "--agent", "claude", "--note", "ready")  # fmt: skip
    return lane


def review_prompt(repo: Path) -> str:
    done = ok(repo, "agent", "action", "review", "WP01", "--agent", "codex", "--json").json()
    return Path(done["prompt"]).read_text()


def printed(prompt: str, pattern: str) -> list[str]:
    line = re.search(rf"^    (kitty .*{pattern}.*)$", prompt, re.M)
    assert line, prompt
    return shlex.split(line.group(1))[1:]


def test_the_named_feedback_file_is_collected_removed_and_never_blocks_accept(
    repo: Path,
) -> None:
    make_mission(repo, wps=[{"wp_id": "WP01"}])
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plan")
    lane = implemented(repo)
    prompt = review_prompt(repo)
    feedback = lane / ".kittify" / "feedback" / "WP01-feedback.md"
    assert f"Reject: first write what must change to {feedback} (kitty takes" in prompt
    # the reviewer writes it where it was told: the worktree stays clean for git
    feedback.write_text("Handle the empty cart.\n")
    assert git(lane, "status", "--porcelain", "--untracked-files=all") == ""
    ok(repo, *printed(prompt, "--to planned"))
    assert not feedback.exists()  # collected: in the review cycle now
    (cycle,) = (repo / "kitty-specs" / SLUG / "tasks").rglob("review-cycle-1.md")
    assert "Handle the empty cart." in cycle.read_text()
    fix = ok(repo, "agent", "action", "implement", "WP01", "--agent", "claude", "--json").json()
    assert "Handle the empty cart." in Path(fix["prompt"]).read_text()
    # cycle 2: the reviewer leaves a draft behind and approves; accept still goes through
    implemented(repo)
    prompt = review_prompt(repo)
    feedback.write_text("a draft nobody sent\n")
    ok(repo, *[a.replace("<summary>", "fine") for a in printed(prompt, "--to approved")])
    accepted = ok(repo, "accept", "--mission", SLUG, "--json").json()
    assert accepted, accepted


def test_the_named_findings_file_is_collected_and_a_users_own_file_is_kept(
    repo: Path, tmp_path: Path
) -> None:
    make_mission(repo, wps=[{"wp_id": "WP01"}])
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plan")
    lane = implemented(repo)
    prompt = review_prompt(repo)
    findings = lane / ".kittify" / "feedback" / "WP01-findings.json"
    assert f"Or write structured findings to {findings} (see `kitty review schema`)" in prompt
    findings.write_text(json.dumps({"reviewer": "codex", "findings": []}))
    ok(repo, *printed(prompt, "review submit"))
    assert not findings.exists()
    assert ok(repo, "status", "--json").json()["work_packages"][0]["lane"] == "approved"
    # a feedback file of the user's own, elsewhere, is read and left where it is
    implemented_again = tmp_path / "mine.md"
    implemented_again.write_text("Mine.\n")
    ok(repo, "move", "WP01", "planned", "--agent", "lead", "--force", "--note", "reopen",
       "--review-feedback-file", str(implemented_again))  # fmt: skip
    assert implemented_again.read_text() == "Mine.\n"
