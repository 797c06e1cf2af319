"""Lane changes and subtask marks: validated under the lock, one append each."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from kitty.core import lanes
from kitty.core.limits import check_text
from kitty.core.log.state import HELD, Board, WPState
from kitty.core.move import MoveCheck, MoveRequest, Policy
from kitty.core.record import replace
from kitty.core.transitions import check_move, cycle_label, unready_dependencies
from kitty.errors import NotFound, UsageError
from kitty.mission import feedback
from kitty.mission.workspace import AGENT_ENV, Mission
from kitty.workflow.commits.auto import autocommit
from kitty.workflow.lanecheck import lane_guard, reviewed_lane
from kitty.workflow.reviewcycle import ReviewDoc, read_feedback, write_review_cycle

SUBTASK_STATUSES = lanes.SUBTASK_STATUSES


def move_task(
    mission: Mission,
    wp_text: str,
    to_lane: str,
    *,
    agent: str | None = None,
    note: str | None = None,
    force: bool = False,
    feedback_file: Path | None = None,
    merged: bool = False,
    self_review_fallback: bool = False,
    intended_reviewer: str | None = None,
    reviewer_failure_reason: str | None = None,
    policy_extra: dict[str, Any] | None = None,
    review_doc: ReviewDoc | None = None,
) -> dict[str, Any]:
    """A move as the commands, MCP, the sprint and the panel spell it: the WP's name, the
    options, a feedback file; checked and gathered into one MoveRequest for `move`."""
    wp_id = mission.resolve_wp(wp_text)
    check_text(note, "--note", mission.config.max_text_bytes)
    text = read_feedback(
        feedback_file, mission.project.root, mission.config.max_feedback_bytes, force
    )
    doc = review_doc or (ReviewDoc(text) if text is not None else None)
    req = MoveRequest(
        to_lane=to_lane, actor=mission.actor(agent), force=force, note=note,
        has_feedback=doc is not None, merged=merged, self_review_fallback=self_review_fallback,
        intended_reviewer=intended_reviewer, reviewer_failure_reason=reviewer_failure_reason,
    )  # fmt: skip
    result = move(mission, wp_id, req, doc, policy_extra, named=bool((agent or "").strip()))
    feedback.collected(None if review_doc else feedback_file)  # in the review cycle now
    return result


def move(
    mission: Mission,
    wp_id: str,
    req: MoveRequest,
    doc: ReviewDoc | None = None,
    policy_extra: dict[str, Any] | None = None,
    named: bool = True,
) -> dict[str, Any]:
    """Record one move (and the lanes on its way) under the lock, then auto-commit; the
    answer of `move --json`. `named`: the actor was named (--agent), not the fallback."""
    target = lanes.canonical(req.to_lane)
    policy_extra, reviewed = reviewed_lane(mission, wp_id, target, req.force, policy_extra)
    recorded, unready = lane_guard(mission, wp_id, target, req)  # issue 41
    extra = {**(policy_extra or {}), **recorded} if recorded else policy_extra
    step = _Step(mission, wp_id, req, doc, policy_extra, extra, unready)
    try:
        records = mission.record(step.build)
    except BaseException:
        for path in step.written:
            path.unlink(missing_ok=True)
        raise
    check = step.check
    autocommit(mission, f"{wp_id} {check.from_lane} -> {check.to_lane}", step.written)
    warnings = reviewed + _fallback_warning(wp_id, named, req.actor, step.holder)
    return _moved(mission, wp_id, check, req, records, warnings)


class _Step:
    """The records of one move, built from the board under the lock (`Mission.record`
    calls `build`); what it checked, whom the WP was held by, and the files it wrote stay
    on it for the answer, or to be removed when the append fails."""

    def __init__(
        self,
        mission: Mission,
        wp_id: str,
        req: MoveRequest,
        doc: ReviewDoc | None,
        policy_extra: dict[str, Any] | None,
        extra: dict[str, Any] | None,
        unready: Exception | None,
    ) -> None:
        self.mission, self.wp_id, self.req, self.doc = mission, wp_id, req, doc
        self.policy_extra, self.extra, self.unready = policy_extra, extra, unready
        self.subtasks = wp.subtasks if (wp := mission.wp(wp_id)) else ()
        self.policy = mission.policy()
        self.holder: str | None = None
        self.written: list[Path] = []
        self.check: MoveCheck

    def build(self, board: Board) -> list[dict[str, Any]]:
        mission, wp_id, req = self.mission, self.wp_id, self.req
        before = board.wps.get(wp_id)
        if before is not None and before.lane in HELD:
            self.holder = before.reviewer if before.lane == lanes.IN_REVIEW else before.agent
        state, hops = _on_the_way(
            mission, wp_id, board, self.subtasks, req, self.policy, self.policy_extra
        )
        check = check_move(wp_id, state, self.subtasks, req, self.policy, mission.slug)
        if self.unready is not None:
            raise self.unready
        self.check = replace(check, from_lane=hops[0]["from_lane"]) if hops else check
        return hops + _records(mission, wp_id, check, req, self.doc, self.written, self.extra)


def _moved(
    mission: Mission,
    wp_id: str,
    check: MoveCheck,
    req: MoveRequest,
    records: list[dict[str, Any]],
    warnings: list[str],
) -> dict[str, Any]:
    """What move_task answers (the JSON object of `move --json`)."""
    board = mission.board
    state = board.wps.get(wp_id)
    deps = wp.dependencies if (wp := mission.wp(wp_id)) else ()
    return {
        "mission": mission.slug,
        "wp_id": wp_id,
        "from_lane": check.from_lane,
        "to_lane": check.to_lane,
        "actor": req.actor,
        "force": req.force,
        "review_cycles": state.review_cycles if state else 0,
        "cycle": cycle_label(state, mission.config.max_cycles) if state else None,
        "review_ref": records[0].get("review_ref") if records else None,
        "arbiter": check.arbiter,
        "self_review": check.self_review,
        "event_ids": [r["event_id"] for r in records],
        "warnings": warnings + unready_dependencies(wp_id, check.to_lane, deps, board.lane),
    }


def _fallback_warning(wp_id: str, named: bool, actor: str | None, holder: str | None) -> list[str]:
    """A move recorded under the fallback identity (no --agent, no $KITTY_AGENT) while an
    agent held the WP: most likely an agent ran a command without naming itself."""
    if named or os.environ.get(AGENT_ENV, "").strip():
        return []
    if not holder or holder == actor:
        return []
    return [
        f"{wp_id} was held by {holder}, and this move is recorded as {actor!r} (the fallback "
        "identity: no --agent, no $KITTY_AGENT); if an agent made it, pass --agent NAME"
    ]


def _on_the_way(
    mission: Mission,
    wp_id: str,
    board: Board,
    subtasks: tuple[str, ...],
    req: MoveRequest,
    policy: Policy,
    policy_extra: dict[str, Any] | None,
) -> tuple[WPState | None, list[dict[str, Any]]]:
    """The lanes an unforced move passes through before its target (`lanes.hops`: planned
    -> claimed on the way to in_progress, as Spec Kitty's `--to doing`), each checked and
    recorded like a move of its own; returns the state the last step starts from."""
    state = board.wps.get(wp_id)
    target = lanes.canonical(req.to_lane)
    if req.force or state is None or target is None:
        return state, []
    records: list[dict[str, Any]] = []
    for step in lanes.hops(state.lane, target)[:-1]:
        hop = replace(req, to_lane=step, note=None)
        check = check_move(wp_id, state, subtasks, hop, policy, mission.slug)
        records += _records(mission, wp_id, check, hop, None, [], policy_extra)
        state = replace(state, lane=step)
    return state, records


def _records(
    mission: Mission,
    wp_id: str,
    check: MoveCheck,
    req: MoveRequest,
    doc: ReviewDoc | None,
    written: list[Path],
    policy_extra: dict[str, Any] | None,
) -> list[dict[str, Any]]:
    policy: dict[str, Any] = dict(policy_extra or {})
    if req.actor and check.to_lane in (lanes.CLAIMED, lanes.IN_PROGRESS, lanes.IN_REVIEW):
        policy.setdefault("agent", req.actor)
        policy.setdefault("shell_pid", os.getppid())
    if check.arbiter:
        policy["arbiter"] = check.arbiter
    if check.self_review:
        policy["self_review_fallback"] = check.self_review
    if check.release:
        policy["release"] = {"holder": req.actor}
    fields: dict[str, Any] = {
        "force": req.force or check.release,
        "reason": req.note
        or (f"claim released by its holder {req.actor}" if check.release else None),
        "policy_metadata": policy or None,
    }
    if check.verdict:
        result: dict[str, Any] = {
            "reviewer": req.actor,
            "verdict": check.verdict,
            "reference": None,
        }
        if doc is None and check.verdict == "changes_requested" and req.note:
            doc = ReviewDoc(req.note)  # the note alone is the feedback (Spec Kitty parity)
        if doc is not None:
            label = "rejected" if check.verdict == "changes_requested" else "approved"
            paths, ref, _ = write_review_cycle(mission, wp_id, req.actor, label, doc)
            written.extend(paths)
            result.update(reference=ref, feedback_path=str(paths[0]))
            fields["review_ref"] = ref
            if check.verdict == "changes_requested":
                fields["reason"] = req.note or f"changes requested: {ref}"
        fields["review_result"] = result
    records = [mission.transition(wp_id, check.from_lane, check.to_lane, req.actor, **fields)]
    delta: dict[str, Any] = {}
    if req.note:
        delta["note"] = req.note
    if check.verdict == "changes_requested":
        wp = mission.wp(wp_id)
        delta["release_runtime_claim"] = True
        if wp and wp.subtasks:
            delta["subtasks"] = dict.fromkeys(wp.subtasks, "planned")
    if delta:
        records.append(mission.annotation(wp_id, req.actor, delta))
    return records


def mark_status(
    mission: Mission,
    task_ids: list[str],
    status: str,
    *,
    agent: str | None = None,
    wp_text: str | None = None,
) -> dict[str, Any]:
    if status not in SUBTASK_STATUSES:
        raise UsageError(
            f"unknown subtask status {status!r}", "use one of: " + ", ".join(SUBTASK_STATUSES)
        )
    if not task_ids:
        raise UsageError(
            "name at least one subtask", "kitty agent tasks mark-status T001 --status done"
        )
    only = mission.resolve_wp(wp_text) if wp_text else None
    owner: dict[str, str] = {}
    for wp in mission.wps.values():
        if only is None or wp.wp_id == only:
            for task in wp.subtasks:
                owner.setdefault(task, wp.wp_id)
    grouped: dict[str, dict[str, str]] = {}
    for task in task_ids:
        task = task.strip().upper()
        if task not in owner:
            scope = f"{only}'s subtasks" if only else "any work package's subtasks"
            raise NotFound(
                f"subtask {task} is not in {scope}", "check the WP file's `subtasks:` list"
            )
        grouped.setdefault(owner[task], {})[task] = status
    actor = mission.actor(agent)

    def build(board: Board) -> list[dict[str, Any]]:
        return [
            mission.annotation(wp_id, actor, {"subtasks": marks})
            for wp_id, marks in sorted(grouped.items())
        ]

    records = mission.record(build)
    return {
        "mission": mission.slug,
        "status": status,
        "marked": grouped,
        "event_ids": [r["event_id"] for r in records],
    }
