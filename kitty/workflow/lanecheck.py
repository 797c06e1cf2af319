"""Did a lane change while someone reviewed it? (reviewers are read-only: seed 002)

A review records the lane worktree's fingerprint (HEAD and the state of its files)
when it starts; an approval from that review, and each panel round, compares it
with the lane as it is then. Plain `git` processes: this runs on a move, where
GitPython is not imported.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from kitty.adapters.git import Git


def _git(path: Path, *args: str) -> str | None:
    code, out, _ = Git(path).status(*args, timeout=60)
    return out if code == 0 else None


def fingerprint(path: Path) -> str | None:
    """`<HEAD sha>+<hash of git status>` of the worktree at `path`, None when unreadable."""
    if not path.is_dir():
        return None
    head = _git(path, "rev-parse", "HEAD")
    status = _git(path, "status", "--porcelain", "--untracked-files=all")
    if head is None or status is None:
        return None
    return f"{head.strip()}+{hashlib.sha1(status.encode()).hexdigest()[:12]}"


def changes(path: Path, before: str) -> str | None:
    """What changed in the worktree since `before` (a fingerprint), or None if nothing."""
    now = fingerprint(path)
    if now is None or now == before:
        return None
    old_head = before.split("+", 1)[0]
    new_head = now.split("+", 1)[0]
    parts = []
    if old_head != new_head:
        commits = (_git(path, "log", "--oneline", f"{old_head}..{new_head}") or "").split("\n")
        files = (_git(path, "diff", "--name-only", old_head, new_head) or "").split()
        parts.append(
            f"HEAD moved {old_head[:7]} -> {new_head[:7]} ("
            + "; ".join(c for c in commits if c)[:200]
            + ")"
            + (f", files: {', '.join(files[:10])}" if files else "")
        )
    dirty = [line[3:] for line in (_git(path, "status", "--porcelain") or "").splitlines()]
    if dirty:
        parts.append("uncommitted: " + ", ".join(dirty[:10]))
    return "; ".join(parts) or "the worktree's files changed"
