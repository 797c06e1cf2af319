"""The merge worktree (`.worktrees/<mission>-merge`) and the merged lanes' worktrees as a
killed `kitty merge` can leave them: `kitty merge` saves its state before it makes the
worktree, so `--resume` finds the worktree missing or half made (a folder git never
registered) and makes it again, `--abort` removes one even without a state file, and
a lane worktree whose removal was cut short is removed whole once only files are
missing from it (its commits are merged). The target moves by a fast-forward of the
checkout that holds it, which first puts back what a killed fast-forward there left
half written (kitty.adapters.gitrepair.undo_checkout); `rewind` undoes one."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from kitty.adapters.git import Git
from kitty.errors import GitError


def registered(git: Any, path: Path) -> bool:
    real = os.path.realpath(path)
    return any(os.path.realpath(p) == real for p in git.worktrees())


def ensure_worktree(git: Any, state: dict[str, Any]) -> None:
    """The merge worktree of `state`, made again when a killed merge left it missing or
    half made (a folder git never registered): at the mission branch, which holds every
    step done so far (a target step checks its own commit out)."""
    path = Path(state["worktree"])
    if path.is_dir() and registered(git, path):
        return
    if path.exists() and not path.is_symlink():
        shutil.rmtree(path)
    git.status("worktree", "prune")
    git.add_detached_worktree(path, state["mission_branch"])


def remove_merged_lane(git: Any, path: Path) -> None:
    """Remove a merged lane's worktree; one whose removal a killed merge left half done
    (files only missing, or its `.git` file gone) is removed whole: its commits are merged."""
    try:
        git.remove_worktree(path, force=False)
        return
    except GitError:
        if (path / ".git").exists():
            code, out, _ = Git(path).status(
                "status", "--porcelain=v1", "-z", "--untracked-files=all"
            )
            entries = [e for e in out.split("\0") if e]
            if code != 0 or any(e[:2].strip() != "D" for e in entries):
                raise  # real changes of someone's: never deleted
    drop_worktree(git, path)


def drop_worktree(git: Any, path: Path) -> None:
    """Remove the merge worktree at `path`, registered or a half-made folder."""
    if path.is_dir() and registered(git, path):
        git.remove_worktree(path, force=True)
    elif path.exists() and not path.is_symlink():
        shutil.rmtree(path)
    git.status("worktree", "prune")


def merge_command(slug: str, *flags: str) -> str:
    """`kitty merge FLAGS --mission SLUG`, as a hint prints it: it works as printed in a
    repository with several missions too."""
    return " ".join(("kitty merge", *flags, "--mission", slug))


def fast_forward(git: Any, target: str, start: str, to: str, slug: str) -> None:
    """Move `target` from `start` to `to`: `git merge --ff-only` in the checkout that
    holds it (after putting back the files a killed one left half written), else the ref.
    `slug`: the mission whose merge moves it (named in the hint of a refusal)."""
    from kitty.adapters.gitrepair import undo_checkout

    holder = git.worktree_of(target)
    if holder is None:
        git.set_branch(target, to)
        return
    there = Git(holder, gitpython=True)
    if there.sha() == start:
        undo_checkout(there, start, to)
    status, out, err = there.status("merge", "--ff-only", "--quiet", to)
    if status != 0:
        raise GitError(
            f"cannot fast-forward {target} in {holder}: {(out or err).strip()[:200]}",
            f"commit or stash the local changes there, then `{merge_command(slug, '--resume')}`",
        )


def rewind(git: Any, target: str, start: str, to: str) -> None:
    """Undo `fast_forward(git, target, start, to)`, done or killed halfway: `target` back
    at `start`, its checkout's files too (local changes kept, as `git reset --keep`)."""
    from kitty.adapters.gitrepair import undo_checkout

    holder = git.worktree_of(target)
    if holder is None:
        if git.sha(target) == to:
            git.set_branch(target, start)
        return
    there = Git(holder, gitpython=True)
    head = there.sha()
    if head == start:
        undo_checkout(there, start, to)
    elif head == to:
        there.run("reset", "--quiet", "--keep", start)


def clear_dead_locks(common_dir: Path, places: list[Path], state: dict[str, Any]) -> list[Path]:
    """The git locks a killed merge left (its pid, saved in `state`, is gone and no git
    process works in `places` now): removed, whatever their age."""
    from kitty.adapters import gitlocks
    from kitty.adapters.gitrepair import pid_alive

    pid = state.get("pid")
    if pid is None or pid == os.getpid() or pid_alive(pid) or not gitlocks.wait_for_git(places):
        return []
    return gitlocks.remove(gitlocks.stale_locks(common_dir, places, min_age=0.0))
