"""`kitty accept` and `kitty merge`: readiness, then lanes → mission branch → target."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kitty.adapters import contain, eventlog
from kitty.adapters.files import atomic_write, dump_json
from kitty.core import lanes
from kitty.core.clock import format_at
from kitty.core.snapshot import sort_ids
from kitty.core.state import Board
from kitty.core.transitions import MoveRequest, check_move, issue_blockers
from kitty.errors import GitError, GuardRefused, UsageError
from kitty.services.autocommit import autocommit
from kitty.services.workspace import Mission
from kitty.services.worktrees import lane_branch, lane_path, mission_branch, target_branch


class NotReady(GuardRefused):
    code = "not_ready"

    def __init__(self, what: str, problems: list[str], hint: str) -> None:
        super().__init__(f"{what}: {len(problems)} problem(s)\n  " + "\n  ".join(problems), hint)
        self.problems = problems

    def to_json(self) -> dict[str, Any]:
        return dict(super().to_json(), problems=self.problems)


def _active(mission: Mission) -> list[str]:
    return [w for w in mission.all_ids() if mission.board.lane(w) != lanes.CANCELED]


def readiness(mission: Mission) -> list[str]:
    """Every reason the mission cannot be accepted, all at once."""
    from kitty.adapters.git import Git

    board = mission.board
    problems = []
    for wp_id in _active(mission):
        lane = board.lane(wp_id)
        if lane not in lanes.SATISFIED:
            problems.append(f"{wp_id} is {lane or 'not finalized'} (needs approved or done)")
        wp = mission.wps.get(wp_id)
        st = board.wps.get(wp_id)
        if wp and st and lane != lanes.APPROVED:  # approved: accept records them (_remarks)
            open_tasks = [t for t in wp.subtasks if st.subtasks.get(t) != "done"]
            if open_tasks:
                problems.append(f"{wp_id} subtasks not done: {', '.join(open_tasks)}")
    for row in mission.policy().issue_rows:
        verdict = row.verdict.strip().lower()
        if verdict in ("", "unknown"):
            problems.append(f"{row.source}: {row.issue} has verdict {verdict or 'empty'}")
        elif verdict == "in-mission":
            problems.append(
                f"{row.source}: {row.issue} is still in-mission "
                "(give it a final verdict before the merge)"
            )
    for lane in (mission.lanes_doc or {}).get("lanes", []):
        path = lane_path(mission, str(lane["lane_id"]))
        if path.is_dir():
            dirty = Git(path, gitpython=True).changed_paths()
            if dirty:
                problems.append(
                    f"{lane['lane_id']} worktree has uncommitted changes: " + ", ".join(dirty[:8])
                )
    return problems


def _remarks(mission: Mission, board: Board) -> dict[str, dict[str, Any]]:
    """Approved WPs whose subtasks are not all done (a rejection reset them; the approval
    that followed, an arbiter's or a forced one, did not re-mark them): accept records them
    done as actor `accept`, naming the approval, instead of in someone's name."""
    found: dict[str, dict[str, Any]] = {}
    for wp_id in _active(mission):
        st = board.wps.get(wp_id)
        wp = mission.wps.get(wp_id)
        if st is None or wp is None or st.lane != lanes.APPROVED:
            continue
        left = [t for t in wp.subtasks if st.subtasks.get(t) != "done"]
        if not left:
            continue
        if st.arbiter and st.arbiter.get("to_lane") == lanes.APPROVED:
            how = f"an arbiter decision of {st.arbiter.get('by') or 'unknown'}"
        elif st.reviews and st.reviews[-1].verdict == "approved":
            how = f"{st.reviews[-1].reviewer or 'unknown'}'s approval"
        else:
            how = f"{st.actor or 'unknown'}'s move"
        found[wp_id] = {
            "subtasks": left,
            "note": f"subtasks {', '.join(left)} marked done at acceptance: {wp_id} was "
            f"approved by {how} after a rejection reset them, without re-implementation",
        }
    return found


def accept(mission: Mission, agent: str | None) -> dict[str, Any]:
    from kitty.adapters.git import Git

    if mission.meta.get("accepted_at"):
        return {
            "mission": mission.slug,
            "accepted": True,
            "already": True,
            "accepted_at": mission.meta["accepted_at"],
            "problems": [],
        }
    problems = readiness(mission)
    if problems:
        raise NotReady(
            f"{mission.slug} is not ready to accept",
            problems,
            "fix every problem listed, then run `kitty accept` again",
        )
    who = mission.actor(agent)
    commit = Git(mission.project.root, gitpython=True).sha()

    def build(board: Board) -> list[dict[str, Any]]:
        at = format_at(eventlog.now_us())
        meta = dict(mission.meta)
        remarks = _remarks(mission, board)
        record: dict[str, Any] = {
            "accept_commit": commit,
            "accepted_at": at,
            "accepted_by": who,
            "acceptance_mode": "local",
        }
        if remarks:
            record["subtasks_marked_done"] = {w: r["subtasks"] for w, r in remarks.items()}
        meta.update(record)
        meta["acceptance_history"] = [*meta.get("acceptance_history", []), record]
        atomic_write(mission.dir / "meta.json", dump_json(meta))
        marks = [
            mission.annotation(
                wp_id,
                "accept",
                {"subtasks": dict.fromkeys(r["subtasks"], "done"), "note": r["note"] + f" ({who})"},
            )
            for wp_id, r in sorted(remarks.items())
        ]
        return [
            *marks,
            {"event_type": "MissionAccepted", "mission_slug": mission.slug, "payload": record},
        ]

    mission.record(build)
    mission.refresh()
    autocommit(mission, f"accept {mission.slug}")
    return {
        "mission": mission.slug,
        "accepted": True,
        "already": False,
        "accepted_at": mission.meta.get("accepted_at"),
        "accepted_by": who,
        "accept_commit": commit,
        "problems": [],
    }


# -- merge -------------------------------------------------------------------


def _state_path(mission: Mission) -> Path:
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
        for w in _active(mission)
        if mission.board.lane(w) not in lanes.SATISFIED
    ]
    rows = mission.policy().issue_rows
    for wp_id in _active(mission):
        problems += [
            f"{rows[0].source} blocks {wp_id}: {b}" for b in issue_blockers(wp_id, lanes.DONE, rows)
        ]
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

    def __init__(self, step: dict[str, Any], files: list[str], worktree: Path) -> None:
        what = (
            f"lane {step['lane_id']}"
            if step["kind"] == "lane"
            else f"{step['branch']} into {step['target']}"
        )
        super().__init__(
            f"merging {what} conflicts on: {', '.join(files)}",
            f"resolve the files in {worktree}, `git add` them, then run `kitty merge --resume`; "
            "or `kitty merge --abort` to go back. Your checkout was not touched.",
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
    state_file = _state_path(mission)
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
    else:
        if state_file.is_file():
            raise GuardRefused(
                "a merge of this mission is already in progress",
                "run `kitty merge --resume` or `kitty merge --abort`",
            )
        _preflight(mission)
        path = contain.check(_merge_path(mission))  # no `.worktrees` symlink on the way
        m_branch, target = mission_branch(mission), target_branch(mission)
        if not git.branch_exists(m_branch):
            git.create_branch(m_branch, target)
        if path.exists():
            raise GitError(f"{path} already exists", "remove it, then run `kitty merge` again")
        git.add_detached_worktree(path, m_branch)
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
        _save(state_file, state)
    return _run(mission, git, state, state_file, resume)


def _save(path: Path, state: dict[str, Any]) -> None:
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
            _after_step(git, wt, state, step)
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
            raise MergeConflict(step, outcome.conflicts, wt.path)
        _after_step(git, wt, state, step)
        state["next"] += 1
        _save(state_file, state)
    return _finish(mission, git, wt, state, state_file)


def _message(mission: Mission, step: dict[str, Any]) -> str:
    if step["kind"] == "lane":
        return f"Merge {step['lane_id']} ({', '.join(step['wp_ids'])}) into {mission.slug}"
    return f"Merge mission {mission.slug} into {step['target']}"


def _after_step(git: Any, wt: Any, state: dict[str, Any], step: dict[str, Any]) -> None:
    if step["kind"] == "lane":
        git.set_branch(state["mission_branch"], wt.sha())
        return
    result = wt.sha()
    holder = git.worktree_of(step["target"])
    if holder is not None:
        from kitty.adapters.git import Git

        status, out, _ = Git(holder, gitpython=True).status("merge", "--ff-only", "--quiet", result)
        if status != 0:
            raise GitError(
                f"cannot fast-forward {step['target']} in {holder}: {out.strip()[:200]}",
                "commit or stash the local changes there, then `kitty merge --resume`",
            )
    else:
        git.set_branch(step["target"], result)
    state["merge_commit"] = result


def _finish(
    mission: Mission, git: Any, wt: Any, state: dict[str, Any], state_file: Path
) -> dict[str, Any]:
    with_branch = {w for s in state["steps"] if s["kind"] == "lane" for w in s["wp_ids"]}
    # A WP approved without a lane branch (e.g. an arbiter approval before any
    # implementation) has no code of its own; the mission's merge completes it too.
    merged_wps = sort_ids(with_branch | set(_active(mission)))
    policy = mission.policy()

    def build(board: Board) -> list[dict[str, Any]]:
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

    records = mission.record(build)
    git.remove_worktree(wt.path, force=True)
    removed = []
    if not state["keep_worktrees"]:
        for step in state["steps"]:
            if step["kind"] != "lane":
                continue
            path = lane_path(mission, step["lane_id"])
            if path.is_dir():
                git.remove_worktree(path, force=False)
            git.delete_branch(step["branch"])
            removed.append(step["lane_id"])
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


def _abort(mission: Mission, state_file: Path) -> dict[str, Any]:
    from kitty.adapters.git import Git

    if not state_file.is_file():
        raise UsageError("no merge in progress for this mission", "nothing to abort")
    state = json.loads(state_file.read_text())
    git = Git(mission.project.root, gitpython=True)
    path = Path(state["worktree"])
    if path.is_dir():
        Git(path, gitpython=True).abort_merge()
        git.remove_worktree(path, force=True)
    git.set_branch(state["mission_branch"], state["mission_start"])
    state_file.unlink()
    return {
        "mission": mission.slug,
        "aborted": True,
        "mission_branch": state["mission_branch"],
        "reset_to": state["mission_start"],
    }
