"""Lane worktrees: `.worktrees/<mission>-<lane>` on branch `kitty/mission-<mission>-<lane>`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kitty.adapters import contain
from kitty.errors import GitError, NotInitialized
from kitty.mission.workspace import Mission

if TYPE_CHECKING:  # GitPython is imported only when a lane worktree is made
    from kitty.adapters.git import Git


@dataclass
class LaneWorkspace:
    lane_id: str | None  # None: a planning-artifact WP, worked on in the primary checkout
    branch: str | None
    path: Path
    base_commit: str | None
    created: bool = False
    merged_lanes: list[str] = field(default_factory=list)


def mission_branch(mission: Mission) -> str:
    return f"kitty/mission-{mission.slug}"


def lane_branch(mission: Mission, lane_id: str) -> str:
    return f"{mission_branch(mission)}-{lane_id}"


def lane_path(mission: Mission, lane_id: str) -> Path:
    return mission.project.root / ".worktrees" / f"{mission.slug}-{lane_id}"


def target_branch(mission: Mission) -> str:
    doc = mission.lanes_doc or {}
    return str(mission.meta.get("target_branch") or doc.get("target_branch") or "main")


def lane_of(mission: Mission, wp_id: str) -> dict[str, Any] | None:
    doc = mission.lanes_doc
    if doc is None:
        raise NotInitialized(
            f"{mission.display}/lanes.json does not exist",
            f"run `kitty finalize --mission {mission.slug}` first",
        )
    for lane in doc.get("lanes", []):
        if wp_id in lane.get("wp_ids", []):
            return dict(lane)
    return None


def existing_workspace(mission: Mission, wp_id: str) -> LaneWorkspace:
    """Where a WP's work lives, without creating anything."""
    lane = lane_of(mission, wp_id)
    if lane is None:
        return LaneWorkspace(None, None, mission.project.root, None)
    lane_id = str(lane["lane_id"])
    return LaneWorkspace(lane_id, lane_branch(mission, lane_id), lane_path(mission, lane_id), None)


def ensure_lane_workspace(mission: Mission, wp_id: str) -> LaneWorkspace:
    """Create or re-enter the WP's lane worktree, with its dependency lanes merged in.

    A merge conflict leaves the repository as it was (new worktree and branches
    removed, merges undone) and names the lanes and files that conflict.
    """
    from kitty.adapters.git import Git

    lane = lane_of(mission, wp_id)
    git = Git(mission.project.root, gitpython=True)
    if lane is None:
        return LaneWorkspace(None, git.current_branch(), mission.project.root, git.sha())
    lane_id = str(lane["lane_id"])
    branch, path = lane_branch(mission, lane_id), lane_path(mission, lane_id)
    # A committed `.worktrees` symlink would put the checkout outside the repository.
    contain.check(path)
    created: list[str] = []
    mission_ref, target = mission_branch(mission), target_branch(mission)
    if not git.branch_exists(mission_ref):
        if not git.branch_exists(target):
            raise GitError(
                f"target branch {target!r} of {mission.slug} does not exist",
                "create it, or fix target_branch in meta.json",
            )
        git.create_branch(mission_ref, target)
        created.append("mission")
    if not git.branch_exists(branch):
        git.create_branch(branch, mission_ref)
        created.append("branch")
    registered = {p.resolve() for p in git.worktrees()}
    if path.resolve() not in registered:
        if path.exists():
            _undo(git, mission, branch, path, created)
            raise GitError(
                f"{path} exists but is not a git worktree",
                "move it away, then run the command again",
            )
        git.add_worktree(path, branch)
        created.append("worktree")
    lane_git = Git(path, gitpython=True)
    merged = _merge_dependencies(mission, wp_id, lane, git, lane_git, created)
    return LaneWorkspace(lane_id, branch, path, lane_git.sha(), bool(created), merged)


def _merge_dependencies(
    mission: Mission, wp_id: str, lane: dict[str, Any], git: Git, lane_git: Git, created: list[str]
) -> list[str]:
    """Merge the lane's dependency lanes into its worktree (`lane_git`); the lanes merged.
    A conflict undoes the merges and what `created` names, then raises."""
    lane_id = str(lane["lane_id"])
    before: str | None = None  # HEAD before the first merge: read only when one happens
    merged = []
    for dep_lane in lane.get("depends_on_lanes", []):
        dep_branch = lane_branch(mission, dep_lane)
        if not git.branch_exists(dep_branch) or lane_git.is_ancestor(dep_branch, "HEAD"):
            continue
        if before is None:
            before = lane_git.sha()
        outcome = lane_git.merge(dep_branch, f"Merge {dep_lane} into {lane_id} for {wp_id}")
        if not outcome.ok:
            lane_git.abort_merge()
            lane_git.run("reset", "--hard", "--quiet", before)
            _undo(git, mission, lane_branch(mission, lane_id), lane_git.path, created)
            raise GitError(
                f"cannot prepare {lane_id} for {wp_id}: merging {dep_lane} conflicts on "
                + ", ".join(outcome.conflicts),
                f"resolve the overlap between {lane_id} and {dep_lane} (they should not write the "
                "same files), then run the command again; nothing was changed",
            )
        merged.append(dep_lane)
    return merged


def discard(mission: Mission, ws: LaneWorkspace) -> None:
    """Remove a worktree this command created (when the claim that needed it failed)."""
    if ws.created and ws.lane_id and ws.branch:
        from kitty.adapters.git import Git

        _undo(Git(mission.project.root, gitpython=True), mission, ws.branch, ws.path, ["worktree"])


def _undo(git: Any, mission: Mission, branch: str, path: Path, created: list[str]) -> None:
    if "worktree" in created:
        git.remove_worktree(path, force=True)
    if "branch" in created:
        git.delete_branch(branch)
    if "mission" in created:
        git.delete_branch(mission_branch(mission))
