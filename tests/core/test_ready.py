"""The "ready for review" decision on data (kitty.core.ready; issue 41)."""

from __future__ import annotations

import shlex

from kitty.core.log.records import ReviewRecord
from kitty.core.log.state import WPState
from kitty.core.ready import (
    LaneCommit,
    LaneFacts,
    approval_problems,
    base_of,
    body_of,
    bookkeeping,
    ready_refusal,
)

WT = "/repo/.worktrees/m-lane-a"
BRANCH = "kitty/mission-m-lane-a"


def facts(
    commits: tuple[LaneCommit, ...] = (),
    dirty: tuple[tuple[str, str], ...] = (),
    head: str | None = "b" * 40,
) -> LaneFacts:
    return LaneFacts(BRANCH, WT, head, "a" * 40, "its implement began", commits, dirty)


def test_a_commit_of_the_wps_own_and_a_clean_worktree_are_ready() -> None:
    work = LaneCommit("c1", "feat", ("src/app.py",))
    assert ready_refusal("WP01", "m", "claude", "Alpha", facts((work,))) is None


def test_no_commit_is_refused_with_the_branch_and_the_base() -> None:
    refusal = ready_refusal("WP01", "m", "claude", "Alpha", facts())
    assert refusal is not None
    message, hint = refusal
    assert f"{BRANCH} has no commit of WP01's own since its implement began (aaaaaaa)" in message
    assert "kitty agent tasks move-task WP01 --mission m --to for_review --agent claude" in hint
    assert "--force --note 'WP01 needs no commit of its own'" in hint


def test_commits_of_bookkeeping_only_are_not_the_wps_own() -> None:
    paths = (
        "kitty-specs/m/status.events.jsonl",
        "kitty-specs/m/status.json",
        ".kittify/prompts/m/WP01-implement.md",
        "kitty-specs/m/tasks/WP01-alpha.md",  # its front matter only (no body_changed)
        "kitty-specs/m/tasks/WP01-alpha/review-cycle-1.md",
    )
    refusal = ready_refusal("WP01", "m", "claude", "Alpha", facts((LaneCommit("c1", "s", paths),)))
    assert refusal is not None
    assert "change only kitty's files" in refusal[0]
    body = LaneCommit("c1", "s", paths, body_changed=("kitty-specs/m/tasks/WP01-alpha.md",))
    assert ready_refusal("WP01", "m", "claude", "Alpha", facts((body,))) is None


def test_left_files_are_named_capped_and_the_commit_command_is_given() -> None:
    dirty = (*(("??", f"notes{i}.txt") for i in range(10)), (" M", "src/app.py"))
    work = LaneCommit("c1", "feat", ("src/app.py",))
    refusal = ready_refusal("WP01", "m", "claude", "Alpha beta", facts((work,), dirty))
    assert refusal is not None
    message, hint = refusal
    assert "notes0.txt (untracked)" in message and "and 3 more" in message
    wt = shlex.quote(WT)
    assert f"git -C {wt} add -A && git -C {wt} commit -m 'WP01: Alpha beta'" in hint
    # kitty's own files left in the worktree are not the WP's work
    clean = facts((work,), (("??", "kitty-specs/m/status.json"), (" M", ".kittify/x")))
    assert ready_refusal("WP01", "m", "claude", "Alpha", clean) is None


def test_no_lane_branch_says_nothing_is_committed() -> None:
    refusal = ready_refusal("WP01", "m", "claude", "Alpha", facts(head=None))
    assert refusal is not None
    assert f"its lane branch {BRANCH} does not exist" in refusal[0]


def test_the_base_is_the_rejected_head_in_a_fix_cycle() -> None:
    st = WPState("WP01")
    assert base_of(st) == (None, "the lane began")
    st.scalars["base_commit"] = "base"
    assert base_of(st) == ("base", "its implement began")
    st.scalars["review_commit"] = "reviewed"
    assert base_of(st) == ("base", "its implement began")  # no rejection yet
    st.reviews.append(ReviewRecord("changes_requested", "codex", "t", None, None, "planned", "e1"))
    assert base_of(st) == ("reviewed", "the rejection")


def test_an_approval_of_a_moved_lane_or_a_dirty_worktree_is_refused() -> None:
    assert approval_problems("WP01", "b" * 40, facts()) == []
    moved = approval_problems("WP01", "c" * 40, facts())
    assert moved == [f"{BRANCH} moved since WP01 entered review at ccccccc (now bbbbbbb)"]
    left = approval_problems("WP01", "b" * 40, facts(dirty=(("??", "feedback.md"),)))
    assert left == [f"its lane worktree {WT} has work left: feedback.md (untracked)"]


def test_bookkeeping_and_bodies() -> None:
    assert bookkeeping("kitty-specs/m/lanes.json") and bookkeeping(".kittify/config.yaml")
    assert not bookkeeping("kitty-specs/m/spec.md") and not bookkeeping("src/status.json")
    assert body_of("---\na: 1\n---\n# body\n") == "\n# body\n"
    assert body_of("no front matter") == "no front matter"
