"""The merge queue behind `kitty merge` and `kitty sprint --merge` when `verify.*` is
configured: the target branch moves only to a tree whose gate passed.

The approved lanes merge, in dependency order, into a temporary integration worktree
(`.worktrees/<mission>-queue`, detached) on the target's tip; the gate runs there. On a
failure the queue finds the culprit lane by lane (kitty.workflow.rules.queue decides),
sends it back to fix mode naming the WPs it was merged with, and merges the rest. The
state (`.git/kitty/queue-<mission>.json`) is written and fsynced before every step and
names the commit each step starts from, so after a `kill -9` `kitty merge --resume`
does the step again and `kitty merge --abort` leaves the target as it was (once the
target moved, abort finishes the bookkeeping instead). merging.py's pieces do the rest:
its plan (the lanes in order), its readiness check, its lane clean-up.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from kitty.adapters import contain
from kitty.core import lanes
from kitty.errors import GitError, GuardRefused, LockBusy, UsageError
from kitty.mission.mergetree import fast_forward, merge_command, rewind
from kitty.mission.workspace import Mission
from kitty.mission.worktrees import mission_branch, target_branch
from kitty.workflow.gating import gate
from kitty.workflow.gating.queuerecord import ACTOR
from kitty.workflow.gating.queuerecord import record as _record
from kitty.workflow.gating.queuerecord import save as _save
from kitty.workflow.merging import merge as merging
from kitty.workflow.rules import gate as gate_rules
from kitty.workflow.rules import queue as rules


def state_path(mission: Mission) -> Path:
    return mission.project.git_common_dir / "kitty" / f"queue-{mission.slug}.json"


def worktree_path(mission: Mission) -> Path:
    return mission.project.root / ".worktrees" / f"{mission.slug}-queue"


def merge(
    mission: Mission,
    *,
    strategy: str = "merge",
    keep_worktrees: bool = False,
    resume: bool = False,
    abort: bool = False,
    no_verify: bool = False,
    log_dir: Path | None = None,
) -> dict[str, Any]:
    """`kitty merge`: through the queue when verification commands are configured (and
    not --no-verify), else merging's plain merge."""
    if resume and abort:
        raise UsageError("--resume and --abort exclude each other", "pass one of them")
    if strategy not in ("merge", "squash"):
        raise UsageError(f"unknown strategy {strategy!r}", "use merge or squash")
    path = state_path(mission)
    if not path.is_file() and (no_verify or resume or abort or not gate.commands(mission)):
        return _plain(mission, strategy, keep_worktrees, resume, abort, no_verify)
    from filelock import FileLock, Timeout

    lock = FileLock(str(mission.project.lock_path(f"queue-{mission.slug}")), timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise LockBusy(
            f"another kitty merge is running the merge queue of {mission.slug}",
            "wait for it to finish; a killed one frees the lock (then "
            f"`{merge_command(mission.slug, '--resume')}`)",
        ) from None
    try:
        return _queued(mission, path, strategy, keep_worktrees, resume, abort, log_dir)
    finally:
        lock.release()


def _queued(
    mission: Mission,
    path: Path,
    strategy: str,
    keep_worktrees: bool,
    resume: bool,
    abort: bool,
    log_dir: Path | None,
) -> dict[str, Any]:
    if not path.is_file():
        if merging.state_path(mission).is_file():
            raise GuardRefused(
                "a merge of this mission is already in progress",
                f"run `{merge_command(mission.slug, '--resume')}` or "
                f"`{merge_command(mission.slug, '--abort')}`",
            )
        merging._preflight(mission)
        state = _begin(mission, path, strategy, keep_worktrees, log_dir)
    elif not (resume or abort):
        raise GuardRefused(
            "a verified merge of this mission is already in progress",
            f"run `{merge_command(mission.slug, '--resume')}` or "
            f"`{merge_command(mission.slug, '--abort')}`",
        )
    else:
        state = json.loads(path.read_text(encoding="utf-8"))
        if abort and _abortable(mission, state):
            return _abort(mission, path, state)
    found = gate.commands(mission)
    if not found:
        raise UsageError(
            "the verification commands are gone from .kittify/config.yaml",
            f"put them back and run `{merge_command(mission.slug, '--resume')}`, or "
            f"`{merge_command(mission.slug, '--abort')}`",
        )
    return _drive(mission, path, state, found)


def _plain(
    mission: Mission, strategy: str, keep: bool, resume: bool, abort: bool, no_verify: bool
) -> dict[str, Any]:
    """merging's merge; with --no-verify recorded as such on every WP it merged."""
    result = merging.merge(
        mission, strategy=strategy, keep_worktrees=keep, resume=resume, abort=abort
    )
    if no_verify and result.get("merged"):
        note = "merged with --no-verify: the test gate did not run on the merged tree"
        delta = {"note": note, "gate_no_verify": True}
        mission.record(lambda board: [mission.annotation(w, ACTOR, delta) for w in result["done"]])
    return {**result, "verified": False, "no_verify": no_verify}


def _begin(
    mission: Mission, path: Path, strategy: str, keep: bool, log_dir: Path | None
) -> dict[str, Any]:
    from kitty.adapters.git import Git

    git = Git(mission.project.root, gitpython=True)
    target = target_branch(mission)
    done = [w for w in mission.all_ids() if mission.board.lane(w) == lanes.DONE]
    deps = {w: list(wp.dependencies) for w, wp in mission.wps.items()}
    tree = contain.check(worktree_path(mission))  # no `.worktrees` symlink on the way
    _discard(git, tree)  # a queue's leftover whose state is gone: ours to remove
    state = rules.start(
        rules.lanes_in_order(merging.plan(mission), done, deps),
        git.sha(target),
        target,
        strategy=strategy,
        keep_worktrees=keep,
        worktree=str(tree),
        log_dir=str(log_dir or gate.runs_dir(mission, "merge")),
        mission_branch=mission_branch(mission),
    )
    _save(path, state)
    return state


def _discard(git: Any, path: Path) -> None:
    """Remove the integration worktree, even half made by a killed `git worktree add`."""
    if path.is_dir():
        code, _, _ = git.status("worktree", "remove", "--force", str(path))
        if code != 0 or path.exists():
            shutil.rmtree(path)
    git.status("worktree", "prune")


def _whole(path: Path) -> bool:
    """A worktree git knows at `path` (never a folder whose git commands would reach the
    repository around it: a kill can leave one without its `.git` file)."""
    from kitty.adapters.git import Git

    if not (path / ".git").is_file():
        return False
    code, out, _ = Git(path).status("rev-parse", "--show-toplevel")
    return code == 0 and Path(out.strip()).resolve() == path.resolve()


def _tree(git: Any, path: Path, commit: str) -> Any:
    """The integration worktree at `commit`, clean (re-created when it is gone)."""
    from kitty.adapters.git import Git

    if not _whole(path):
        _discard(git, path)
        git.add_detached_worktree(path, commit)
    wt = Git(path, gitpython=True)
    if wt.merging():
        wt.abort_merge()
    wt.run("reset", "--quiet", "--hard", commit)
    wt.run("clean", "-fdxq")
    return wt


def _merge_lanes(wt: Any, state: dict[str, Any], todo: list[dict[str, Any]]) -> Any:
    """Merge `todo` into the worktree; a conflict's failure, or None."""
    for lane in todo:
        message = f"Merge {lane['lane_id']} ({', '.join(lane['wp_ids'])}) for the merge queue"
        outcome = wt.merge(lane["branch"], message)
        if not outcome.ok:
            wt.abort_merge()
            return {"why": "conflict", "files": outcome.conflicts, "conflict_lane": lane["lane_id"]}
    return None


def _test(wt: Any, state: dict[str, Any], found: Any, label: str) -> dict[str, Any] | None:
    """Run the gate on the worktree; its failure, or None (the passing run is kept)."""
    run = gate.run_gate(wt.path, found, Path(state["log_dir"]) / "gate", label, state["timeout"])
    if run["result"] == gate_rules.FAILED:
        return {"why": "gate", "run": run}
    state["passed_run"] = run
    return None


def _step(mission: Mission, git: Any, state: dict[str, Any], found: Any) -> dict[str, Any]:
    """Do one integration step (BATCH, TRY, HOLD); the state after it."""
    action, lane = rules.next_action(state)
    path = Path(state["worktree"])
    if action == rules.HOLD:
        return rules.after_hold(state)
    if action == rules.BATCH:
        wt = _tree(git, path, state["base"])
        failure = _merge_lanes(wt, state, state["lanes"]) or _test(wt, state, found, "queue-all")
        return rules.after_batch(state, None if failure else wt.sha(), failure)
    assert lane is not None
    failure = rules.known_to_fail(state)
    head = None
    if failure is None:
        wt = _tree(git, path, state["head"])
        failure = _merge_lanes(wt, state, [lane]) or _test(wt, state, found, lane["lane_id"])
        head = None if failure else wt.sha()
    return rules.after_try(state, head, failure)


def _drive(mission: Mission, path: Path, state: dict[str, Any], found: Any) -> dict[str, Any]:
    from kitty.adapters.git import Git

    git = Git(mission.project.root, gitpython=True)
    state.setdefault("timeout", gate_rules.settings(mission.config.raw)[0])
    while True:
        action, _ = rules.next_action(state)
        if action == rules.RECORD:
            return _record(mission, git, path, state)
        if action == rules.MOVE:
            if state["phase"] != rules.MOVE:
                state = rules.before_move(state)
                _save(path, state)
            state = rules.after_move(state, _move(mission.slug, git, path, state))
        else:
            state = _step(mission, git, state, found)
        _save(path, state)


def _move(slug: str, git: Any, path: Path, state: dict[str, Any]) -> str:
    """Move the target to the tested tree (squashed onto the old tip with --strategy
    squash: the same tree); the commit it moved to."""
    if not state.get("move_to"):
        head = state["head"]
        if state["strategy"] == "squash":
            message = f"Merge mission {state['mission_branch']} (merge queue, squashed)"
            head = git.run("commit-tree", f"{head}^{{tree}}", "-p", state["base"], "-m", message)
            head = head.strip()
        state["move_to"] = head
        _save(path, state)
    target, move_to = state["target"], state["move_to"]
    tip = git.sha(target)
    if tip == move_to:
        return str(move_to)
    if tip != state["base"]:
        raise GitError(
            f"{target} moved while the merge queue ran ({state['base'][:10]} -> {tip[:10]})",
            f"run `{merge_command(slug, '--abort')}`, then `{merge_command(slug)}` again: the "
            "queue tests the new tip",
        )
    fast_forward(git, target, state["base"], move_to, slug)  # repairs a killed one's checkout
    return str(move_to)


def _abortable(mission: Mission, state: dict[str, Any]) -> bool:
    """Whether the target is still untouched (else abort finishes the bookkeeping)."""
    from kitty.adapters.git import Git

    if state["phase"] == rules.RECORD:
        return False
    tip = Git(mission.project.root, gitpython=True).sha(state["target"])
    return not (state.get("move_to") and tip == state["move_to"])


def _abort(mission: Mission, path: Path, state: dict[str, Any]) -> dict[str, Any]:
    from kitty.adapters.git import Git

    git = Git(mission.project.root, gitpython=True)
    _discard(git, Path(state["worktree"]))
    if state.get("move_to"):  # killed inside the target's fast-forward: its files put back
        rewind(git, state["target"], state["base"], state["move_to"])
    path.unlink()
    return {
        "mission": mission.slug,
        "aborted": True,
        "target": state["target"],
        "target_at": state["base"],
        "verified": True,
    }
