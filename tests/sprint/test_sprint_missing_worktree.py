"""A WP moved to for_review with plain `kitty move` (the README's walk-through) has no lane
worktree: the sprint's reviewer gets one created, and when it cannot be created the sprint
names the real cause and leaves the card's agent as it was (never the failed reviewer)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import lane_commit, ok
from tests.sprint.test_sprint import calls, events, fakes, lanes_of, planned, sprint

__all__ = ["fakes"]  # the fixture, used by name

WPS = [{"wp_id": "WP01", "subtasks": ["T001"], "owned": ["src/a/**"]}]


def _for_review_by_hand(repo: Path) -> Path:
    mission = planned(repo, WPS)
    ok(repo, "move", "WP01", "claimed", "--agent", "claude")
    ok(repo, "move", "WP01", "in_progress", "--agent", "claude")
    ok(repo, "agent", "tasks", "mark-status", "T001", "--status", "done")
    lane_commit(repo, "WP01")
    ok(repo, "move", "WP01", "for_review", "--agent", "claude")
    return mission


def test_the_reviewer_gets_the_missing_worktree(repo: Path, fakes: Path) -> None:
    mission = _for_review_by_hand(repo)
    assert not (repo / ".worktrees").exists()
    done = sprint(repo, "--implementer", "claude", "--reviewer", "codex")
    stream = events(done)
    assert not [e for e in stream if e.get("event") == "error"], done.stdout[-3000:]
    assert "could not start" not in done.stdout + done.stderr
    assert (repo / ".worktrees" / f"{mission.name}-lane-a").is_dir()
    reviews = [c for c in calls(fakes) if c.get("agent") == "codex" or "codex" in str(c)]
    assert reviews, calls(fakes)
    assert lanes_of(repo)["WP01"] == "approved"


def test_a_worktree_that_cannot_be_made_is_named_and_the_card_keeps_its_agent(
    repo: Path, fakes: Path
) -> None:
    _for_review_by_hand(repo)
    before = ok(repo, "status", "--json").json()["work_packages"][0]
    (repo / ".worktrees").write_text("a file where the worktrees folder belongs\n")
    done = sprint(repo, "--implementer", "claude", "--reviewer", "codex")
    text = done.stdout + done.stderr
    assert "could not start codex" not in text and "could not start sleep" not in text
    assert ".worktrees" in text, text[-3000:]
    after = ok(repo, "status", "--json").json()["work_packages"][0]
    assert after["agent"] == before["agent"] == "claude"
    assert after["reviewer"] != "codex"
    assert not calls(fakes)  # no agent was started
