"""The merge queue's last step: what it did, into the mission's log (the gate's result
on every WP it tested, merged WPs to done, culprits back to fix mode with the failing
output and the WPs they were merged with), then the clean-up. Each WP is recorded once:
the state lists those done, saved after each, so a resumed queue skips them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kitty.adapters import eventlog
from kitty.adapters.files import atomic_write, dump_json
from kitty.core import lanes
from kitty.core.clock import format_at
from kitty.core.move import MoveRequest
from kitty.core.transitions import check_move
from kitty.mission.workspace import Mission
from kitty.workflow import moves
from kitty.workflow.commits.auto import autocommit
from kitty.workflow.gating.gate import record_gate
from kitty.workflow.merging import merge as merging
from kitty.workflow.merging.accept import active_ids
from kitty.workflow.rules import gate as gate_rules
from kitty.workflow.rules import queue as rules

ACTOR = "merge-queue"


def save(path: Path, state: dict[str, Any]) -> None:
    atomic_write(path, json.dumps(state, indent=2, sort_keys=True) + "\n")  # fsynced


def _conflict_run(state: dict[str, Any], culprit: dict[str, Any]) -> dict[str, Any]:
    """A conflict, shaped as a failed gate run (the fix prompt shows it the same way)."""
    lane = next(x for x in state["lanes"] if x["lane_id"] == culprit["lane_id"])
    files = ", ".join(culprit.get("files") or [])
    return {
        "commit": state["head"],
        "clean": True,
        "output": state["log_dir"],
        "timeout": state.get("timeout"),
        "result": gate_rules.FAILED,
        "commands": [
            {
                "name": "merge",
                "line": f"git merge {lane['branch']}",
                "exit": 1,
                "exits": [1],
                "seconds": 0,
                "output": state["log_dir"],
                "passed": False,
                "flaky": False,
                "tail": f"merge conflict on: {files}",
            }
        ],
    }


def _to_done(mission: Mission, wp_id: str, final: str) -> None:
    def build(board: Any) -> list[dict[str, Any]]:
        st = board.wps.get(wp_id)
        if st is None or st.lane == lanes.DONE:
            return []
        wp = mission.wps.get(wp_id)
        request = MoveRequest(lanes.DONE, "merge", merged=True)
        check = check_move(
            wp_id, st, wp.subtasks if wp else (), request, mission.policy(), mission.slug
        )
        reason = f"merged in {final} (merge queue: the test gate passed on that tree)"
        return [mission.transition(wp_id, check.from_lane, lanes.DONE, "merge", reason=reason)]

    mission.record(build)


def _wp(mission: Mission, path: Path, state: dict[str, Any], wp_id: str, culprit: Any) -> None:
    if wp_id in state["recorded"]:
        return
    mission.refresh()
    if culprit is None:
        kept = rules.merged_wps(state)
        others = [w for w in kept if w != wp_id]
        record_gate(mission, wp_id, state["passed_run"], ACTOR, gate_rules.QUEUE, others)
        _to_done(mission, wp_id, state["final"])
    else:
        run = culprit.get("run") or _conflict_run(state, culprit)
        made = record_gate(mission, wp_id, run, ACTOR, gate_rules.QUEUE, culprit["with"])
        mission.refresh()
        if mission.board.lane(wp_id) == lanes.APPROVED:
            _, cap = gate_rules.settings(mission.config.raw)
            then = gate_rules.after_gate(made["gate"], made["gate_failures"], cap)
            to_lane, note = (
                (lanes.BLOCKED, gate_rules.escalate_note(made, cap))
                if then == gate_rules.ESCALATE
                else (lanes.PLANNED, rules.fix_note(culprit, state["target"]))
            )
            moves.move_task(mission, wp_id, to_lane, agent=ACTOR, force=True, note=note)
    state["recorded"] = [*state["recorded"], wp_id]
    save(path, state)


def record(mission: Mission, git: Any, path: Path, state: dict[str, Any]) -> dict[str, Any]:
    """Record the queue's outcome, clean up, and answer what `kitty merge` prints."""
    final = state.get("final")
    kept = rules.merged_wps(state)
    for wp_id in kept:
        _wp(mission, path, state, wp_id, None)
    for culprit in state["culprits"]:
        for wp_id in culprit["wp_ids"]:
            _wp(mission, path, state, wp_id, culprit)
    mission.refresh()
    if final:
        git.set_branch(state["mission_branch"], final)
    tree = Path(state["worktree"])
    if tree.is_dir():
        git.status("worktree", "remove", "--force", str(tree))
    git.status("worktree", "prune")
    complete = bool(final) and all(
        mission.board.lane(w) in (lanes.DONE, lanes.CANCELED) for w in active_ids(mission)
    )
    removed: list[str] = []
    if complete:
        if not state["keep_worktrees"]:
            steps = [{"kind": "lane", **x} for x in state["lanes"] if x["lane_id"] in state["kept"]]
            removed = merging._remove_lanes(mission, git, {"steps": steps})
        meta = dict(mission.meta)
        meta.update(
            merged_at=format_at(eventlog.now_us()),
            merge_commit=final,
            merge_strategy=state["strategy"],
            merge_verified=True,
        )
        atomic_write(mission.dir / "meta.json", dump_json(meta))
    path.unlink(missing_ok=True)
    mission.refresh()
    autocommit(mission, f"merge {mission.slug}")
    return {
        "mission": mission.slug,
        "merged": bool(final),
        "complete": complete,
        "merge_commit": final,
        "tested_commit": state["head"] if final else None,  # squash: the same tree
        "target": state["target"],
        "strategy": state["strategy"],
        "done": kept,
        "removed_lanes": removed,
        "gate_output": str(Path(state["log_dir"]) / "gate"),
        **rules.outcome(state),
    }
