"""issue 35.5: `kitty review run` on a clone that lacks the WP's lane worktree makes it (as
`agent action implement` and `agent action review` do) before any event, and reviews the
lane's work there; when it cannot be made, nothing is recorded and the error names it."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import git, ok
from tests.panel.test_review_panel import MISSION, fakes, panel, ready_for_review

__all__ = ["fakes"]  # the fixture, used by name

LANE = f".worktrees/{MISSION}-lane-a"


def test_review_run_makes_the_missing_lane_worktree(
    repo: Path, tmp_path: Path, fakes: Path
) -> None:
    ready_for_review(repo)
    git(repo, "worktree", "remove", "--force", LANE)  # this clone never had it
    code, result = panel(repo, tmp_path, {}, "--panel", "correctness", "--agents", "codex")
    assert code == 0, result
    assert result["loop_verdict"] == "CONVERGED", result
    assert (repo / LANE / "impl_wp01.txt").is_file()
    wp = ok(repo, "status", "--json").json()["work_packages"][0]
    assert wp["lane"] == "approved"


def test_review_run_refuses_before_any_event_when_the_worktree_cannot_be_made(
    repo: Path, tmp_path: Path, fakes: Path
) -> None:
    mission = ready_for_review(repo)
    git(repo, "worktree", "remove", "--force", LANE)
    (repo / LANE).mkdir(parents=True)  # a folder in the way: not a worktree
    (repo / LANE / "junk").write_text("x\n")
    log = mission / "status.events.jsonl"
    before = log.read_bytes()
    code, result = panel(repo, tmp_path, {}, "--panel", "correctness", "--agents", "codex")
    assert code == 1, result
    assert LANE in str(result), result
    assert log.read_bytes() == before
    assert ok(repo, "status", "--json").json()["work_packages"][0]["lane"] == "for_review"
