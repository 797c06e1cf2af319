"""`kitty safe-commit` in the wrong place: a file a WP owns, whose lane worktree exists, is
committed there (on the lane branch), not on the branch checked out where you stand."""

from __future__ import annotations

import re
from pathlib import Path

from tests.helpers import git, kitty, make_mission, ok

WPS = [
    {"wp_id": "WP01", "title": "Cart", "subtasks": ["T001"], "owned": ["src/cart/**"]},
    {"wp_id": "WP02", "title": "Docs", "subtasks": ["T002"], "owned": ["docs/guide.md"]},
]


def _setup(repo: Path) -> tuple[Path, str]:
    mission = make_mission(repo, wps=WPS)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plan")
    out = ok(repo, "agent", "action", "implement", "WP01", "--agent", "claude").out
    workspace = Path(re.search(r"Workspace: cd (.+)", out).group(1))  # type: ignore[union-attr]
    return workspace, mission.name


def test_refused_in_the_primary_checkout_naming_the_worktree(repo: Path) -> None:
    _, slug = _setup(repo)
    (repo / "src" / "cart").mkdir(parents=True)
    (repo / "src" / "cart" / "a.py").write_text("x = 1\n")
    head = git(repo, "rev-parse", "HEAD")
    run = kitty(repo, "safe-commit", "src/cart/a.py", "-m", "feat(WP01): cart")
    assert run.code == 1, run.out + run.err
    text = run.out + run.err
    assert "WP01" in text and f".worktrees/{slug}-lane-a" in text
    assert "--force" in text
    assert git(repo, "rev-parse", "HEAD") == head  # nothing committed
    run = kitty(repo, "safe-commit", "src/cart/a.py", "-m", "x", "--json")
    assert run.json()["error"]["code"] == "guard_refused"
    # --force: the person means it
    ok(repo, "safe-commit", "src/cart/a.py", "-m", "feat(WP01): cart, on main", "--force")
    assert git(repo, "rev-parse", "HEAD") != head


def test_files_no_lane_worktree_holds_commit_as_before(repo: Path) -> None:
    workspace, _ = _setup(repo)
    (repo / "notes.txt").write_text("mine\n")
    ok(repo, "safe-commit", "notes.txt", "-m", "notes")  # owned by no WP
    (repo / "docs").mkdir()
    (repo / "docs" / "guide.md").write_text("guide\n")
    ok(repo, "safe-commit", "docs/guide.md", "-m", "docs")  # WP02: no worktree yet
    (workspace / "src" / "cart").mkdir(parents=True)
    (workspace / "src" / "cart" / "a.py").write_text("x = 1\n")
    ok(workspace, "safe-commit", "src/cart/a.py", "-m", "feat(WP01): cart")  # the right place
