"""`kitty safe-commit`: commit exactly the listed paths of the current worktree."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kitty.adapters import layout
from kitty.errors import GuardRefused, UsageError


def lane_owners(project: layout.Project, here: Path, paths: list[str]) -> list[str]:
    """For each path a WP owns whose lane worktree exists elsewhere than `here`: one line
    naming the path, the WP and that worktree (where the commit belongs)."""
    from kitty.core.overlap import overlap_rule
    from kitty.errors import KittyError
    from kitty.mission.workspace import Mission
    from kitty.mission.worktrees import lane_of, lane_path

    found: list[str] = []
    for slug in layout.list_missions(project):
        mission = Mission(project, slug)
        try:
            wps = mission.wps
            has_lanes = mission.lanes_doc is not None
        except KittyError:
            continue  # a broken mission is doctor's to report, not a reason to refuse here
        if not has_lanes:
            continue
        for path in paths:
            for wp in wps.values():
                if not any(overlap_rule(path, entry) for entry in wp.owned_files):
                    continue
                lane = lane_of(mission, wp.wp_id)
                where = lane_path(mission, str(lane["lane_id"])) if lane else None
                if where is not None and where.is_dir() and where.resolve() != here:
                    found.append(f"{path}: owned by {wp.wp_id}, whose lane worktree is {where}")
                    break
    return found


def safe_commit(cwd: Path, paths: list[str], message: str, force: bool = False) -> dict[str, Any]:
    from kitty.adapters.git import Git

    if not message.strip():
        raise UsageError("a commit needs a message", 'pass -m "feat(WP01): what changed"')
    if not paths:
        raise UsageError("name the files to commit", "kitty safe-commit src/a.py -m MSG")
    project = layout.find_project(cwd)
    top = project.worktree.resolve()
    git = Git(project.worktree, gitpython=True)
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
    misplaced = [] if force else lane_owners(project, top, relative)
    if misplaced:
        raise GuardRefused(
            f"safe-commit refused: these files belong in a lane worktree, not on "
            f"{git.current_branch() or 'this branch'}; nothing was committed:\n  "
            + "\n  ".join(misplaced),
            "commit them there (cd into the worktree and run safe-commit again), "
            "or pass --force to commit them here",
        )
    sha = git.commit_only(relative, message)
    return {"commit": sha, "paths": relative, "branch": git.current_branch(), "worktree": str(top)}
