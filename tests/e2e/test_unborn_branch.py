"""A new repository (`git init`, no commit yet): kitty says what to run, or commits when asked.

kitty's lane worktrees branch from the mission's target branch, so a branch with no commit
yet cannot work: the first `kitty agent action implement` would fail far from the cause.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import git, kitty, ok

FIX = "git commit --allow-empty -m init"


def _new_repo(tmp_path: Path) -> Path:
    root = tmp_path / "fresh"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    return root


def _commits(root: Path) -> int:
    done = git(root, "rev-list", "--all", "--count")
    return int(done.strip() or 0)


def test_init_names_the_missing_commit(tmp_path: Path) -> None:
    root = _new_repo(tmp_path)
    run = ok(root, "init", "--agents", "claude,codex")
    assert FIX in run.out + run.err
    assert _commits(root) == 0  # nothing committed unless asked
    data = ok(root, "init", "--json").json()
    assert data["unborn_branch"] == "main"


def test_mission_create_refuses_an_unborn_target_and_says_what_to_run(tmp_path: Path) -> None:
    root = _new_repo(tmp_path)
    ok(root, "init")
    for args in (["--target-branch", "main"], []):
        run = kitty(root, "mission", "create", "checkout-flow", *args)
        assert run.code == 1, run.out + run.err
        assert FIX in run.out + run.err
        assert "no commit" in run.out + run.err
        assert not any((root / "kitty-specs").iterdir())
    run = kitty(root, "mission", "create", "checkout-flow", "--json")
    assert FIX in json.loads(run.out)["error"]["hint"]


def test_the_fix_as_printed_then_the_readme_flow_works(tmp_path: Path) -> None:
    root = _new_repo(tmp_path)
    ok(root, "init", "--agents", "claude,codex")
    git(root, *FIX.split()[1:])
    _readme_flow(root)


def test_initial_commit_flag_makes_the_commit(tmp_path: Path) -> None:
    root = _new_repo(tmp_path)
    (root / "staged.txt").write_text("not mine to commit\n")
    git(root, "add", "staged.txt")
    run = ok(root, "init", "--initial-commit")
    assert "init" in git(root, "log", "--format=%s", "main")
    assert _commits(root) == 1
    assert "staged.txt" not in git(root, "ls-tree", "-r", "--name-only", "main")  # empty
    assert "staged.txt" in git(root, "diff", "--cached", "--name-only")  # still staged
    assert FIX not in run.out
    ok(root, "init", "--initial-commit")  # again: nothing to do
    assert _commits(root) == 1


def test_mission_create_initial_commit(tmp_path: Path) -> None:
    root = _new_repo(tmp_path)
    ok(root, "init")
    ok(root, "mission", "create", "checkout-flow", "--target-branch", "main", "--initial-commit")
    assert _commits(root) == 1


def _readme_flow(root: Path) -> None:
    ok(root, "mission", "create", "checkout-flow", "--title", "Checkout", "--target-branch", "main")
    ok(
        root,
        *("wp", "add", "--title", "Cart API", "--owns", "src/cart/**"),
        *("--objective", "A REST API for the items of a cart", "--subtask", "Routes"),
    )
    ok(root, "finalize")
    run = ok(root, "agent", "action", "implement", "WP01", "--agent", "claude")
    assert "Workspace: cd " in run.out
