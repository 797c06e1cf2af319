"""`kitty agent action implement|review`: claim, prepare the workspace, write the prompt."""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from typing import Any

from kitty.adapters import contain
from kitty.core import lanes
from kitty.core.decide.steps import FIX, IMPLEMENT, REVIEW
from kitty.core.log.state import Board, WPState
from kitty.core.move import MoveRequest
from kitty.core.record import replace
from kitty.core.transitions import check_move
from kitty.errors import GuardRefused, UsageError
from kitty.mission.workspace import Mission
from kitty.mission.worktrees import (
    LaneWorkspace,
    discard,
    ensure_lane_workspace,
    existing_workspace,
)
from kitty.workflow.action_prompts import (
    deliver,
    dependency_infos,
    lane_changes,
    last_feedback,
    prompt_path,
    prompt_setting,
    review_files,
)
from kitty.workflow.dispatches import (
    DISPATCH,
    LEGACY_DISPATCH,
    check_invocation,
    dispatch_of,
    dispatch_record,
)
from kitty.workflow.nextstep import next_step
from kitty.workflow.rules import gate

#: The dispatch names stay importable from here (kitty.workflow.dispatches holds them).
__all__ = [
    "DISPATCH",
    "LEGACY_DISPATCH",
    "check_invocation",
    "dispatch_of",
    "dispatch_record",
    "implement",
    "prompt_path",
    "review",
]


def _who(mission: Mission, agent: str | None) -> str:
    return mission.actor(agent)


def _pick(mission: Mission, wp_text: str | None, who: str, wanted: tuple[str, ...]) -> str:
    if wp_text is not None:
        return mission.resolve_wp(wp_text)
    decision = next_step(mission, who)
    if decision.action not in wanted or decision.wp_id is None:
        raise GuardRefused(
            f"nothing to {wanted[0]} for {who}: {decision.reason}",
            "; ".join(decision.commands) or "run `kitty next`",
        )
    return decision.wp_id


def _implement_refusal(mission: Mission, board: Board, wp_id: str, who: str) -> str | None:
    st = board.wps.get(wp_id)
    if st is None or st.lane is None:
        return f"{wp_id} is not finalized (run `kitty finalize --mission {mission.slug}`)"
    if st.lane in (lanes.CLAIMED, lanes.IN_PROGRESS):
        return None if st.implementer == who else f"{wp_id} is held by {st.implementer}"
    if st.lane != lanes.PLANNED:
        return f"{wp_id} is {st.lane}, not planned"
    wp = mission.wps[wp_id]
    waiting = [d for d in wp.dependencies if board.lane(d) not in lanes.SATISFIED]
    if waiting:
        return f"{wp_id} depends on " + ", ".join(f"{d} ({board.lane(d)})" for d in waiting)
    return None


def implement(
    mission: Mission,
    wp_text: str | None,
    agent: str | None,
    profile: str | None = None,
    model: str | None = None,
    invocation_id: str | None = None,
    in_workspace: bool = False,
) -> dict[str, Any]:
    """`in_workspace`: the agent starts in its workspace (the sprint's agent CLIs), so
    its prompt has no `cd` line."""
    if model and not invocation_id:
        raise UsageError("--model needs --invocation-id", "pass both, or neither")
    who = _who(mission, agent)
    wp_id = _pick(mission, wp_text, who, (IMPLEMENT, FIX))
    if invocation_id:
        check_invocation(mission, invocation_id, wp_id, "implement", who, model)
    refusal = _implement_refusal(mission, mission.board, wp_id, who)
    if refusal:
        raise GuardRefused(
            f"cannot implement {wp_id}: {refusal}", "run `kitty next` to see what is ready for you"
        )
    contain.check(prompt_path(mission, wp_id, "implement"))  # refused before the claim
    ws = ensure_lane_workspace(mission, wp_id)
    try:
        _claim(mission, wp_id, who, profile, model, invocation_id, ws)
    except BaseException:
        discard(mission, ws)
        raise
    st = mission.board.wps[wp_id]
    feedback, ref = last_feedback(mission, st) if st.review_cycles else (None, None)
    gate_failure = gate.failure_text(st.scalars) if gate.failed(st.scalars) else None
    prompt = {
        "feedback": feedback,
        "feedback_ref": ref,
        "dependencies": dependency_infos(mission, wp_id),
        "gate_failure": gate_failure,
        **prompt_setting(mission, in_workspace),
    }
    return deliver(
        mission,
        wp_id,
        "implement",
        who,
        ws,
        st,
        prompt,
        fix_mode=feedback is not None or gate_failure is not None,
        merged_lanes=ws.merged_lanes,
    )


def _claim(
    mission: Mission,
    wp_id: str,
    who: str,
    profile: str | None,
    model: str | None,
    invocation_id: str | None,
    ws: LaneWorkspace,
) -> None:
    subtasks = mission.wps[wp_id].subtasks
    policy = mission.policy()
    actor = {
        "tool": who,
        "role": "implementer",
        "profile": profile,
        "model": model if invocation_id else None,
    }

    def build(board: Board) -> list[dict[str, Any]]:
        refusal = _implement_refusal(mission, board, wp_id, who)
        if refusal:
            raise GuardRefused(f"cannot implement {wp_id}: {refusal}", "run `kitty next`")
        st = board.wps[wp_id]
        records = []
        meta = {"agent": who, "shell_pid": os.getppid()}
        lane = st.lane or lanes.PLANNED
        steps = {
            lanes.PLANNED: [lanes.CLAIMED, lanes.IN_PROGRESS],
            lanes.CLAIMED: [lanes.IN_PROGRESS],
        }.get(lane, [])
        for target in steps:
            request = MoveRequest(target, who)
            check = check_move(
                wp_id, replace(st, lane=lane), subtasks, request, policy, mission.slug
            )
            records.append(
                mission.transition(wp_id, check.from_lane, target, actor, policy_metadata=meta)
            )
            lane = target
        delta = _claim_delta(who, profile, model, invocation_id, ws, st)
        records.append(mission.annotation(wp_id, actor, delta))
        return records

    mission.record(build)


def _claim_delta(
    who: str,
    profile: str | None,
    model: str | None,
    invocation_id: str | None,
    ws: LaneWorkspace,
    st: WPState,
) -> dict[str, Any]:
    """The runtime slots an implementation claim sets."""
    delta: dict[str, Any] = {
        "agent": who,
        "role": "implementer",
        "shell_pid": os.getppid(),
        "workspace": str(ws.path),
    }
    if profile:
        delta["agent_profile"] = profile
    if invocation_id:
        delta.update(model=model, invocation_id=invocation_id)
    if st.review_status == "has_feedback":
        delta["review_status"] = "acknowledged"  # the fix prompt delivers the feedback
    if ws.base_commit and not st.scalars.get("base_commit"):
        delta["base_commit"] = ws.base_commit
    return delta


def _reviewer_gone(st: WPState) -> str | None:
    """Why the process holding a review is known to be gone, or None (alive or unknown)."""
    from kitty.teams.liveness import pid_alive

    claim = st.runtime_claim or {}
    for key in ("agent_pid", "shell_pid"):
        pid = claim.get(key)
        if pid is not None:
            return None if pid_alive(pid) else f"its process {pid} is gone"
    return None


def review_workspace(mission: Mission, wp_id: str) -> LaneWorkspace | None:
    """The WP's lane worktree made when it is missing (`_review_workspace`): what every
    review (the panel's too) does before its first event."""
    return _review_workspace(mission, wp_id)


def _review_workspace(mission: Mission, wp_id: str) -> LaneWorkspace | None:
    """Create the WP's lane worktree when it does not exist (a WP moved to for_review with
    plain `kitty move` never had one), so the reviewer starts where the work is. Returns
    it when this call created it; a failure names the worktree and git's reason."""
    from kitty.errors import KittyError

    ws = existing_workspace(mission, wp_id)
    if ws.lane_id is None or (ws.path / ".git").exists():  # a folder alone is no worktree
        return None
    try:
        made = ensure_lane_workspace(mission, wp_id)
    except KittyError as exc:
        named = KittyError(
            f"{wp_id}'s lane worktree {mission.project.rel(ws.path)} does not exist and "
            f"could not be created: {exc.message}",
            exc.hint,
        )
        named.code, named.exit_code = exc.code, exc.exit_code
        raise named from None
    return made if made.created else None


@dataclass(frozen=True)
class _ReviewClaim:
    """What `kitty agent action review` asked for, as its claim checks it on the board."""

    wp_id: str
    who: str
    actor: dict[str, Any]
    subtasks: tuple[str, ...]
    profile: str | None
    allow_self_review: bool
    takeover: bool
    note: str | None
    #: What the reviewer reads: an approval refuses if the lane changes meanwhile (22.6).
    lane_print: str | None


def review(
    mission: Mission,
    wp_text: str | None,
    agent: str | None,
    profile: str | None = None,
    allow_self_review: bool = False,
    takeover: bool = False,
    note: str | None = None,
    in_workspace: bool = False,
) -> dict[str, Any]:
    if takeover and not (note or "").strip():
        raise UsageError("--takeover needs --note", '--takeover --note "why you take it over"')
    who = _who(mission, agent)
    wp_id = _pick(mission, wp_text, who, (REVIEW,))
    wp = mission.wps[wp_id]
    actor = {"tool": who, "role": "reviewer", "profile": profile, "model": None}
    from kitty.workflow.lanecheck import fingerprint

    lane_print = fingerprint(existing_workspace(mission, wp_id).path)
    claim = _ReviewClaim(
        wp_id, who, actor, wp.subtasks, profile, allow_self_review, takeover, note, lane_print
    )
    contain.check(prompt_path(mission, wp_id, "review"))  # before the claim, as the worktree
    made = _review_workspace(mission, wp_id)  # before the claim: a failure claims nothing
    try:
        mission.record(lambda board: _review_records(mission, board, claim))
    except BaseException:
        if made is not None:
            discard(mission, made)
        raise
    st = mission.board.wps[wp_id]
    ws = existing_workspace(mission, wp_id)
    base = st.scalars.get("base_commit")
    reviewed = st.scalars.get("review_commit")  # recorded as it entered review (issue 41)
    reviewed = reviewed if isinstance(reviewed, str) and reviewed else None
    commits, changed, stat = lane_changes(mission, ws, base, reviewed)
    feedback, ref = last_feedback(mission, st)
    dependents = sorted((w.wp_id, w.title) for w in mission.wps.values() if wp_id in w.dependencies)
    prompt = {
        "dependents": dependents,
        "feedback": feedback,
        "feedback_ref": ref,
        "base": str(base) if base else None,
        "changed_files": changed,
        "commits": commits,
        "gate_passed": gate.passed_text(st.scalars),
        "reviewed_commit": reviewed,
        "diff_stat": stat,
        **prompt_setting(mission, in_workspace),
        **review_files(ws, wp_id),
    }
    return deliver(
        mission, wp_id, "review", who, ws, st, prompt, base=base, changed_files=changed,
        reviewed_commit=reviewed,
    )  # fmt: skip


def _review_records(mission: Mission, board: Board, claim: _ReviewClaim) -> list[dict[str, Any]]:
    """The records of a review claim (a takeover releases the old review first)."""
    wp_id, who = claim.wp_id, claim.who
    st = board.wps.get(wp_id)
    lane = st.lane if st else None
    if lane == lanes.IN_REVIEW and st and st.reviewer == who:
        return []  # re-entering your own review
    released: list[dict[str, Any]] = []
    if lane == lanes.IN_REVIEW and st:
        released.append(_release_review(mission, st, claim))
        st = replace(st, lane=lanes.FOR_REVIEW)
        lane = lanes.FOR_REVIEW
    if lane != lanes.FOR_REVIEW:
        held = f" by {st.reviewer}" if st and lane == lanes.IN_REVIEW else ""
        raise GuardRefused(
            f"cannot review {wp_id}: it is {lane}{held}",
            "only a WP in for_review can be claimed for review",
        )
    if st and st.implementer == who and not claim.allow_self_review:
        raise GuardRefused(
            f"{who} implemented {wp_id} and cannot review it (self-review)",
            "dispatch another agent; --allow-self-review overrides",
        )
    request = MoveRequest(lanes.IN_REVIEW, who)
    check_move(wp_id, st, claim.subtasks, request, mission.policy(), mission.slug)
    delta: dict[str, Any] = {"agent": who, "role": "reviewer", "shell_pid": os.getppid()}
    delta["review_head"] = f"{claim.lane_print}@{who}" if claim.lane_print else ""
    if claim.profile:
        delta["agent_profile"] = claim.profile
    return [
        *released,
        mission.transition(
            wp_id,
            lanes.FOR_REVIEW,
            lanes.IN_REVIEW,
            claim.actor,
            reason="Started review via action command",
            review_ref="action-review-claim",
            policy_metadata={"agent": who, "shell_pid": os.getppid()},
        ),
        mission.annotation(wp_id, claim.actor, delta),
    ]


def _release_review(mission: Mission, st: WPState, claim: _ReviewClaim) -> dict[str, Any]:
    """Take a review over (`--takeover`, or its reviewer's process is gone): back to
    for_review, recorded with why; refused while its reviewer may still be at it."""
    wp_id, who = claim.wp_id, claim.who
    gone = _reviewer_gone(st)
    if not (claim.takeover or gone):
        raise GuardRefused(
            f"cannot review {wp_id}: it is in_review by {st.reviewer}",
            f"if {st.reviewer} is no longer reviewing it: kitty agent action review "
            f"{wp_id} --mission {mission.slug} --agent {shlex.quote(who)} --takeover "
            '--note "why you take it over"',
        )
    why = claim.note if claim.takeover else f"reviewer {st.reviewer} is no longer running ({gone})"
    return mission.transition(
        wp_id,
        lanes.IN_REVIEW,
        lanes.FOR_REVIEW,
        who,
        force=True,
        reason=f"review taken over from {st.reviewer} by {who}: {why}",
    )
