"""Lock files and half-finished merges a killed git process leaves behind.

git takes a lock by creating `<file>.lock` (O_EXCL) and renames it into place when
done; `kill -9` in between leaves the `.lock` file, and every later git command that
needs the same file fails with "Unable to create '…/index.lock': File exists".
git holds no open descriptor or flock on these files, so "held" can only mean: a
git process is running in this repository. A lock is *stale* when no live git
process has this repository as its working directory and the file is older than
STALE_AFTER seconds (a git command that just started may still own it).

Only `os` is imported: doctor and sync call this.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

#: A lock younger than this may belong to a git command that is running right now.
STALE_AFTER = 5.0


def lock_files(common_dir: Path) -> list[Path]:
    """Every `*.lock` git may leave in the repository's git directory: top-level files
    (index.lock, HEAD.lock, packed-refs.lock, config.lock, …), those of each linked
    worktree (`worktrees/<name>/index.lock`, …) and ref locks under `refs/`. kitty's own
    lock files (`kitty/*.lock`, held with flock and never removed) are not git's."""
    found: list[Path] = []
    tops = [common_dir]
    worktrees = common_dir / "worktrees"
    if worktrees.is_dir():
        tops += sorted(p for p in worktrees.iterdir() if p.is_dir() and not p.is_symlink())
    for top in tops:
        try:
            found += sorted(
                Path(e.path) for e in os.scandir(top) if e.name.endswith(".lock") and e.is_file()
            )
        except OSError:
            continue
    for folder, dirs, files in os.walk(common_dir / "refs"):
        dirs.sort()
        found += [Path(folder, name) for name in sorted(files) if name.endswith(".lock")]
    return found


def git_running(places: list[Path]) -> bool | None:
    """True when a live git process works in one of `places` (its cwd inside one), False
    when none does, None when this system cannot tell (no /proc)."""
    if not os.path.isdir("/proc/self"):
        return None
    roots = [os.path.realpath(p) for p in places]
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/comm", encoding="utf-8", errors="replace") as handle:
                name = handle.read().strip()
        except OSError:
            continue  # gone, or not ours to read
        if name != "git" and not name.startswith("git-"):
            continue
        try:
            cwd = os.readlink(f"/proc/{entry}/cwd")
        except PermissionError:
            return True  # another user's git we cannot inspect: assume it works here
        except OSError:
            continue  # exited, or a zombie (killed, not yet reaped): it holds nothing
        if any(cwd == r or cwd.startswith(r + os.sep) for r in roots):
            return True
    return False


def wait_for_git(places: list[Path], seconds: float = 2.0) -> bool:
    """Whether no git process works in `places` within `seconds` (a git killed with its
    kitty can take a moment to exit)."""
    deadline = time.monotonic() + seconds
    while git_running(places):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


def stale_locks(
    common_dir: Path, places: list[Path], min_age: float = STALE_AFTER, now: float | None = None
) -> list[Path]:
    """The lock files no live git process can own: none runs in `places` (the work trees
    and git directory) and each is at least `min_age` seconds old (on a system without
    /proc, age alone decides)."""
    locks = lock_files(common_dir)
    if not locks or git_running(places):
        return []
    moment = time.time() if now is None else now
    old = []
    for path in locks:
        try:
            if moment - path.stat().st_mtime >= min_age:
                old.append(path)
        except OSError:
            continue
    return old


def remove(paths: list[Path]) -> list[Path]:
    """Delete the given lock files (already judged stale); returns those removed."""
    removed = []
    for path in paths:
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        removed.append(path)
    return removed


def merge_in_progress(git_dir: Path) -> bool:
    return (git_dir / "MERGE_HEAD").exists()
