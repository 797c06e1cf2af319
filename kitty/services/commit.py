"""`kitty safe-commit`: commit exactly the listed paths of the current worktree."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kitty.adapters import layout
from kitty.errors import GuardRefused, UsageError


def safe_commit(cwd: Path, paths: list[str], message: str) -> dict[str, Any]:
    from kitty.adapters.gitrepo import Git

    if not message.strip():
        raise UsageError("a commit needs a message", 'pass -m "feat(WP01): what changed"')
    if not paths:
        raise UsageError("name the files to commit", "kitty safe-commit src/a.py -m MSG")
    project = layout.find_project(cwd)
    top = project.worktree.resolve()
    git = Git(project.worktree)
    changed = set(git.changed_paths())
    relative: list[str] = []
    problems: list[str] = []
    for raw in paths:
        full = (cwd / raw).resolve()
        try:
            rel = full.relative_to(top)
        except ValueError:
            problems.append(f"{raw}: outside this worktree ({top})")
            continue
        parts = rel.parts
        if not parts or parts[0] in (".git", ".worktrees"):
            problems.append(
                f"{raw}: inside {parts[0] if parts else 'the worktree root'}/, "
                "which kitty never commits from here"
            )
            continue
        name = rel.as_posix()
        if name not in changed and not any(c.startswith(name + "/") for c in changed):
            problems.append(f"{raw}: not changed (or git-ignored)")
            continue
        relative.append(name)
    if problems:
        raise GuardRefused(
            "safe-commit refused; nothing was committed:\n  " + "\n  ".join(problems),
            "list only files you changed in this worktree",
        )
    sha = git.commit_only(relative, message)
    return {"commit": sha, "paths": relative, "branch": git.current_branch(), "worktree": str(top)}
