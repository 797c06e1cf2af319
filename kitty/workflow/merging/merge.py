"""`kitty merge`: lanes → mission branch → target, once `kitty accept`
(kitty.workflow.merging.accept) recorded the mission ready."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from kitty.adapters import contain, eventlog
from kitty.adapters.files import atomic_write, dump_json
from kitty.core import lanes
from kitty.core.clock import format_at
from kitty.core.log.snapshot import sort_ids
from kitty.core.log.state import Board
from kitty.core.move import MoveRequest, Policy
from kitty.core.transitions import check_move, issue_blockers
from kitty.errors import GitError, GuardRefused, UsageError
from kitty.mission.mergetree import (
    clear_dead_locks,
    drop_worktree,
    ensure_worktree,
    fast_forward,
    merge_command,
    registered,
    remove_merged_lane,
    rewind,
)
from kitty.mission.workspace import Mission
from kitty.mission.worktrees import lane_branch, lane_path, mission_branch, target_branch
from kitty.workflow.commits.auto import autocommit
from kitty.workflow.merging.accept import NotReady, active_ids

# -- merge -------------------------------------------------------------------


def state_path(mission: Mission) -> Path:
    return mission.project.git_common_dir / "kitty" / f"merge-{mission.slug}.json"


def _merge_path(mission: Mission) -> Path:
    return mission.project.root / ".worktrees" / f"{mission.slug}-merge"


def plan(mission: Mission) -> list[dict[str, Any]]:
    """Lane merges in lane-graph order, then the mission branch into the target."""
    from kitty.adapters.git import Git

    git = Git(mission.project.root, gitpython=True)
    steps: list[dict[str, Any]] = []
    doc = mission.lanes_doc or {}
    ordered = sorted(doc.get("lanes", []), key=lambda x: (x["parallel_group"], x["lane_id"]))
    for lane in ordered:
        wps = [w for w in lane["wp_ids"] if mission.board.lane(w) != lanes.CANCELED]
        branch = lane_branch(mission, lane["lane_id"])
        if wps and git.branch_exists(branch):
            steps.append(
                {"kind": "lane", "lane_id": lane["lane_id"], "branch": branch, "wp_ids": wps}
            )
    steps.append(
        {"kind": "target", "branch": mission_branch(mission), "target": target_branch(mission)}
    )
    return steps


def _preflight(mission: Mission) -> None:
    if not mission.meta.get("accepted_at"):
        raise GuardRefused(
            f"{mission.slug} is not accepted yet",
            f"run `kitty accept --mission {mission.slug}` first",
        )
    problems = [
        f"{w} is {mission.board.lane(w)}"
        for w in active_ids(mission)
        if mission.board.lane(w) not in lanes.SATISFIED
    ]
    rows = mission.policy().issue_rows
    for wp_id in active_ids(mission):
        problems += [
            f"{rows[0].source} blocks {wp_id}: {b}" for b in issue_blockers(wp_id, lanes.DONE, rows)
        ]
    from kitty.mission.readiness import unreviewed_lanes

    problems += unreviewed_lanes(mission)  # main receives exactly what was reviewed
    if problems:
        raise NotReady(
            f"{mission.slug} cannot be merged",
            sorted(set(problems)),
            "approve every WP and give every issue row a final verdict",
        )


def dry_run(mission: Mission) -> dict[str, Any]:
    from kitty.adapters.git import Git

    git = Git(mission.project.root, gitpython=True)
    steps = plan(mission)
    target = target_branch(mission)
    head = (
        git.sha(mission_branch(mission))
        if git.branch_exists(mission_branch(mission))
        else git.sha(target)
    )
    for step in steps:
        if step["kind"] == "lane":
            merged, conflicts = git.predict_conflicts(head, step["branch"])
        else:
            merged, conflicts = git.predict_conflicts(git.sha(target), head)
        step["predicted_conflicts"] = conflicts
        if merged:
            head = merged
    return {
        "mission": mission.slug,
        "dry_run": True,
        "steps": steps,
        "conflicts": any(s["predicted_conflicts"] for s in steps),
    }


class MergeConflict(GitError):
    code = "merge_conflict"

    def __init__(self, step: dict[str, Any], files: list[str], worktree: Path, slug: str) -> None:
        what = (
            f"lane {step['lane_id']}"
            if step["kind"] == "lane"
            else f"{step['branch']} into {step['target']}"
        )
        super().__init__(
            f"merging {what} conflicts on: {', '.join(files)}",
            f"resolve the files in {worktree}, `git add` them, then run "
            f"`{merge_command(slug, '--resume')}`; or `{merge_command(slug, '--abort')}` to go "
            "back. Your checkout was not touched.",
        )
        self.files = files

    def to_json(self) -> dict[str, Any]:
        return dict(super().to_json(), files=self.files)


def merge(
    mission: Mission,
    *,
    dry: bool = False,
    strategy: str = "merge",
    keep_worktrees: bool = False,
    resume: bool = False,
    abort: bool = False,
) -> dict[str, Any]:
    from kitty.adapters.git import Git

    if resume and abort:
        raise UsageError("--resume and --abort exclude each other", "pass one of them")
    if strategy not in ("merge", "squash"):
        raise UsageError(f"unknown strategy {strategy!r}", "use merge or squash")
    state_file = state_path(mission)
    if abort:
        return _abort(mission, state_file)
    if dry:
        _preflight(mission)
        return dry_run(mission)
    git = Git(mission.project.root, gitpython=True)
    if resume:
        if not state_file.is_file():
            raise UsageError("no merge in progress for this mission", "run `kitty merge`")
        state = json.loads(state_file.read_text())
        _clear_dead_locks(mission, state)
    else:
        state = _start(mission, git, state_file, strategy, keep_worktrees)
    ensure_worktree(git, state)
    return _run(mission, git, state, state_file, resume)


def _start(
    mission: Mission, git: Any, state_file: Path, strategy: str, keep_worktrees: bool
) -> dict[str, Any]:
    """A new merge's state, saved before its worktree is made (a kill from then on is
    resumable)."""
    if state_file.is_file():
        raise GuardRefused(
            "a merge of this mission is already in progress",
            f"run `{merge_command(mission.slug, '--resume')}` or "
            f"`{merge_command(mission.slug, '--abort')}`",
        )
    _preflight(mission)
    path = contain.check(_merge_path(mission))  # no `.worktrees` symlink on the way
    m_branch, target = mission_branch(mission), target_branch(mission)
    if not git.branch_exists(m_branch):
        git.create_branch(m_branch, target)
    if path.exists():
        raise GitError(
            f"{path} already exists (a merge killed before it saved its state)",
            f"run `{merge_command(mission.slug, '--abort')}` to remove it, then "
            f"`{merge_command(mission.slug)}` again",
        )
    state = {
        "steps": plan(mission),
        "next": 0,
        "strategy": strategy,
        "keep_worktrees": keep_worktrees,
        "worktree": str(path),
        "mission_start": git.sha(m_branch),
        "target_start": git.sha(target),
        "mission_branch": m_branch,
        "target": target,
    }
    _save(state_file, state)  # before the worktree: a kill from here on is resumable
    return state


def _clear_dead_locks(mission: Mission, state: dict[str, Any]) -> None:
    from kitty.adapters.git import Git

    project = mission.project
    places = [project.root, project.git_common_dir, project.worktree, Path(state["worktree"])]
    holder = Git(project.root).worktree_of(state["target"])
    places += [holder] if holder else []
    clear_dead_locks(project.git_common_dir, places, state)


def _save(path: Path, state: dict[str, Any]) -> None:
    state["pid"] = os.getpid()  # a resume after a kill removes the git locks it left
    atomic_write(path, json.dumps(state, indent=2, sort_keys=True) + "\n")


def _run(
    mission: Mission, git: Any, state: dict[str, Any], state_file: Path, resume: bool
) -> dict[str, Any]:
    from kitty.adapters.git import Git

    wt = Git(Path(state["worktree"]), gitpython=True)
    squash = state["strategy"] == "squash"
    if resume:
        unresolved = wt.unmerged_paths()
        if unresolved:
            raise GitError(
                "still conflicted: " + ", ".join(unresolved),
                f"resolve and `git add` them in {wt.path}, then --resume",
            )
        if wt.merging() or not wt.ok("diff", "--cached", "--quiet"):
            step = state["steps"][state["next"]]
            if wt.merging():
                wt.run("commit", "--quiet", "--no-edit")
            else:
                wt.run("commit", "--quiet", "-m", _message(mission, step))
            _after_step(mission.slug, git, wt, state, step, state_file)
            state["next"] += 1
            _save(state_file, state)
    while state["next"] < len(state["steps"]):
        step = state["steps"][state["next"]]
        if step["kind"] == "target":
            wt.run("checkout", "--quiet", "--detach", git.sha(step["target"]))
        outcome = wt.merge(
            step["branch"], _message(mission, step), squash=squash and step["kind"] == "target"
        )
        if not outcome.ok:
            raise MergeConflict(step, outcome.conflicts, wt.path, mission.slug)
        _after_step(mission.slug, git, wt, state, step, state_file)
        state["next"] += 1
        _save(state_file, state)
    return _finish(mission, git, wt, state, state_file)


def _message(mission: Mission, step: dict[str, Any]) -> str:
    if step["kind"] == "lane":
        return f"Merge {step['lane_id']} ({', '.join(step['wp_ids'])}) into {mission.slug}"
    return f"Merge mission {mission.slug} into {step['target']}"


def _after_step(
    slug: str, git: Any, wt: Any, state: dict[str, Any], step: dict[str, Any], state_file: Path
) -> None:
    if step["kind"] == "lane":
        git.set_branch(state["mission_branch"], wt.sha())
        return
    result = wt.sha()
    state["target_result"] = result  # a kill inside the fast-forward: resume or abort it
    _save(state_file, state)
    fast_forward(git, step["target"], state["target_start"], result, slug)
    state["merge_commit"] = result


def _finish(
    mission: Mission, git: Any, wt: Any, state: dict[str, Any], state_file: Path
) -> dict[str, Any]:
    with_branch = {w for s in state["steps"] if s["kind"] == "lane" for w in s["wp_ids"]}
    # A WP approved without a lane branch (e.g. an arbiter approval before any
    # implementation) has no code of its own; the mission's merge completes it too.
    merged_wps = sort_ids(with_branch | set(active_ids(mission)))
    policy = mission.policy()
    records = mission.record(
        lambda board: _merged_records(mission, board, state, merged_wps, with_branch, policy)
    )
    if wt.path.is_dir():
        git.remove_worktree(wt.path, force=True)
    git.status("worktree", "prune")
    removed = [] if state["keep_worktrees"] else _remove_lanes(mission, git, state)
    state_file.unlink(missing_ok=True)
    mission.refresh()
    autocommit(mission, f"merge {mission.slug}")
    return {
        "mission": mission.slug,
        "merged": True,
        "merge_commit": state.get("merge_commit"),
        "target": state["target"],
        "strategy": state["strategy"],
        "done": [r["wp_id"] for r in records],
        "removed_lanes": removed,
        "steps": state["steps"],
    }


def _merged_records(
    mission: Mission,
    board: Board,
    state: dict[str, Any],
    merged_wps: list[str],
    with_branch: set[str],
    policy: Policy,
) -> list[dict[str, Any]]:
    """Every merged WP to done (and the merge into meta.json)."""
    records = []
    for wp_id in merged_wps:
        st = board.wps.get(wp_id)
        if st is None or st.lane == lanes.DONE:
            continue
        wp = mission.wps.get(wp_id)
        check = check_move(
            wp_id,
            st,
            wp.subtasks if wp else (),
            MoveRequest(lanes.DONE, "merge", merged=True),
            policy,
            mission.slug,
        )
        records.append(
            mission.transition(
                wp_id,
                check.from_lane,
                lanes.DONE,
                "merge",
                reason=f"merged in {state.get('merge_commit')}"
                + ("" if wp_id in with_branch else " (no lane branch: nothing of its own)"),
            )
        )
    meta = dict(mission.meta)
    meta.update(
        merged_at=format_at(eventlog.now_us()),
        merge_commit=state.get("merge_commit"),
        merge_strategy=state["strategy"],
    )
    atomic_write(mission.dir / "meta.json", dump_json(meta))
    return records


def _remove_lanes(mission: Mission, git: Any, state: dict[str, Any]) -> list[str]:
    """Remove the merged lanes' worktrees and branches; their lane ids."""
    removed = []
    for step in state["steps"]:
        if step["kind"] != "lane":
            continue
        path = lane_path(mission, step["lane_id"])
        if path.is_dir():
            remove_merged_lane(git, path)
        if git.branch_exists(step["branch"]):  # a killed merge may have deleted it
            git.delete_branch(step["branch"])
        removed.append(step["lane_id"])
    return removed


def _abort(mission: Mission, state_file: Path) -> dict[str, Any]:
    from kitty.adapters.git import Git

    git = Git(mission.project.root, gitpython=True)
    if not state_file.is_file():
        path = _merge_path(mission)
        if not (path.exists() or registered(git, path)):
            raise UsageError("no merge in progress for this mission", "nothing to abort")
        # A merge killed before it saved its state: nothing was merged yet.
        drop_worktree(git, path)
        return {"mission": mission.slug, "aborted": True, "removed_worktree": str(path)}
    state = json.loads(state_file.read_text())
    _clear_dead_locks(mission, state)
    path = Path(state["worktree"])
    if path.is_dir() and registered(git, path):
        Git(path, gitpython=True).abort_merge()
    drop_worktree(git, path)
    if state.get("target_result") and state["next"] < len(state["steps"]):
        rewind(git, state["target"], state["target_start"], state["target_result"])
    git.set_branch(state["mission_branch"], state["mission_start"])
    state_file.unlink()
    return {
        "mission": mission.slug,
        "aborted": True,
        "mission_branch": state["mission_branch"],
        "reset_to": state["mission_start"],
    }
