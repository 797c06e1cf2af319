"""`kitty agent action implement|review`: claim, prepare the workspace, write the prompt."""

from __future__ import annotations

import os
import shlex
from dataclasses import replace
from pathlib import Path
from typing import Any

from kitty.adapters.files import atomic_write
from kitty.core import lanes
from kitty.core.decide import FIX, IMPLEMENT, REVIEW, cycle_label
from kitty.core.prompts import DependencyInfo, PromptContext, implement_prompt, review_prompt
from kitty.core.state import Board, WPState
from kitty.core.transitions import MoveRequest, check_move
from kitty.errors import GuardRefused, UsageError
from kitty.services.autocommit import autocommit
from kitty.services.schedule import next_step
from kitty.services.workspace import Mission
from kitty.services.worktrees import (
    LaneWorkspace,
    discard,
    ensure_lane_workspace,
    existing_workspace,
    mission_branch,
)


def prompt_path(mission: Mission, wp_id: str, role: str) -> Path:
    return mission.project.kittify / "prompts" / mission.slug / f"{wp_id}-{role}.md"


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


def _dependencies(mission: Mission, wp_id: str) -> list[DependencyInfo]:
    from kitty.adapters.gitrepo import Git

    git = Git(mission.project.root)
    infos = []
    for dep in mission.wps[wp_id].dependencies:
        dep_wp = mission.wps.get(dep)
        ws = existing_workspace(mission, dep)
        delivered: list[str] = []
        if (
            ws.branch
            and git.branch_exists(ws.branch)
            and git.branch_exists(mission_branch(mission))
        ):
            delivered = git.log_subjects(mission_branch(mission), ws.branch)
        infos.append(
            DependencyInfo(dep, dep_wp.title if dep_wp else dep, mission.board.lane(dep), delivered)
        )
    return infos


def _feedback(mission: Mission, st: WPState | None) -> tuple[str | None, str | None]:
    """The latest changes_requested feedback text and its reference."""
    if st is None:
        return None, None
    for review in reversed(st.reviews):
        if review.verdict != "changes_requested":
            continue
        path = Path(review.feedback_path) if review.feedback_path else None
        if review.reference and review.reference.startswith("review-cycle://"):
            stem_file = review.reference.split("/", 3)[-1]
            path = mission.dir / "tasks" / stem_file
        text = mission.read_inside(path) if path else None
        if text is not None:
            body = (
                text.split("---", 2)[2]
                if text.startswith("---") and text.count("---") >= 2
                else text
            )
            return body.strip(), review.reference
        return "(the feedback file is missing)", review.reference
    return None, None


#: The `event_type` of the log record a sprint writes per dispatch: a lifecycle envelope,
#: which Spec Kitty's reader skips (a top-level `type` it does not know, as the records
#: older kitty wrote, makes Spec Kitty refuse the whole log; `doctor --fix` migrates).
DISPATCH = "KittyDispatch"
LEGACY_DISPATCH = "kitty_dispatch"  # the `type` of those older records


def dispatch_record(
    mission: Mission, invocation_id: str, wp_id: str, action: str, agent: str, model: str | None
) -> dict[str, Any]:
    """What `kitty sprint` appends before it claims a WP for an agent: the durable record
    an `--invocation-id` must match."""
    return {
        "event_type": DISPATCH,
        "payload": {
            "invocation_id": invocation_id,
            "mission_slug": mission.slug,
            "wp_id": wp_id,
            "action": action,
            "agent": agent,
            "model": model,
        },
    }


def dispatch_of(data: dict[str, Any]) -> dict[str, Any] | None:
    """The dispatch a log record holds (its payload; a legacy record is its own), else None."""
    if data.get("event_type") == DISPATCH:
        payload = data.get("payload")
        return payload if isinstance(payload, dict) else None
    if data.get("type") == LEGACY_DISPATCH:
        return data
    return None


def _events_naming(mission: Mission, text: str) -> list[Any]:
    """The log's events whose line contains `text`, in log order. A plain id (a ULID) is
    searched for in the raw log and only the lines holding it are decoded, so a claim
    with --invocation-id does not parse the whole log (seconds at 10,000 WPs); anything
    else (which JSON might have escaped) takes the full parse."""
    if "log" in mission.__dict__ or not (text.isascii() and text.isalnum()):
        return list(mission.log.events)
    from kitty.adapters.eventlog import open_log
    from kitty.core.logread import parse_lines

    fd = open_log(mission.events_path)
    if fd is None:
        return []
    with os.fdopen(fd, "rb") as handle:
        data = handle.read()
    needle, lines = text.encode(), []
    at = data.find(needle)
    while at != -1:
        end = data.find(b"\n", at)
        end = len(data) if end == -1 else end
        lines.append(data[data.rfind(b"\n", 0, at) + 1 : end].decode("utf-8", errors="replace"))
        at = data.find(needle, end)
    return list(parse_lines(lines).events)


def check_invocation(
    mission: Mission, invocation_id: str, wp_id: str, action: str, agent: str, model: str | None
) -> None:
    """Fail closed: the id must name a dispatch kitty recorded for this very claim."""
    from kitty.core.events import Other

    records = [
        found
        for e in _events_naming(mission, invocation_id)
        if isinstance(e, Other)
        and (found := dispatch_of(e.data)) is not None
        and found.get("invocation_id") == invocation_id
    ]
    hint = (
        "pass the --invocation-id of a dispatch kitty recorded (kitty sprint writes one per "
        "agent run), or claim without --model/--invocation-id"
    )
    if not records:
        raise GuardRefused(f"unknown --invocation-id {invocation_id!r}: no such dispatch", hint)
    record = records[0]
    expected: dict[str, tuple[Any, str | None]] = {
        "mission": (record.get("mission_slug"), mission.slug),
        "WP": (record.get("wp_id"), wp_id),
        "action": (record.get("action"), action),
        "agent": (record.get("agent"), agent),
    }
    if record.get("model") is not None or model is not None:
        expected["model"] = (record.get("model"), model)
    wrong = [
        f"{k} {got!r} (dispatched: {want!r})" for k, (want, got) in expected.items() if want != got
    ]
    if wrong:
        raise GuardRefused(
            f"--invocation-id {invocation_id} does not match its dispatch: " + ", ".join(wrong),
            hint,
        )


def implement(
    mission: Mission,
    wp_text: str | None,
    agent: str | None,
    profile: str | None = None,
    model: str | None = None,
    invocation_id: str | None = None,
) -> dict[str, Any]:
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
    ws = ensure_lane_workspace(mission, wp_id)
    try:
        _claim(mission, wp_id, who, profile, model, invocation_id, ws)
    except BaseException:
        discard(mission, ws)
        raise
    st = mission.board.wps[wp_id]
    feedback, ref = _feedback(mission, st) if st.review_cycles else (None, None)
    ctx = _prompt_context(
        mission,
        who,
        wp_id,
        ws,
        st,
        feedback=feedback,
        feedback_ref=ref,
        dependencies=_dependencies(mission, wp_id),
    )
    return _deliver(
        mission,
        wp_id,
        "implement",
        who,
        ws,
        st,
        implement_prompt(ctx),
        fix_mode=feedback is not None,
        merged_lanes=ws.merged_lanes,
    )


def _prompt_context(
    mission: Mission, who: str, wp_id: str, ws: LaneWorkspace, st: WPState, **extra: Any
) -> PromptContext:
    return PromptContext(
        mission.slug,
        who,
        mission.wps[wp_id],
        str(ws.path),
        ws.branch,
        st.review_cycles,
        mission.config.max_cycles,
        **extra,
    )


def _deliver(
    mission: Mission,
    wp_id: str,
    role: str,
    who: str,
    ws: LaneWorkspace,
    st: WPState,
    text: str,
    **extra: Any,
) -> dict[str, Any]:
    """Write the prompt, auto-commit kitty's files, and describe the workspace."""
    path = prompt_path(mission, wp_id, role)
    atomic_write(path, text)
    lane = "in_progress" if role == "implement" else "in_review"
    autocommit(mission, f"{wp_id} {lane} ({who})")
    return {
        "mission": mission.slug,
        "wp_id": wp_id,
        "agent": who,
        "lane": ws.lane_id,
        "branch": ws.branch,
        "workspace": str(ws.path),
        "prompt": str(path),
        "cycle": cycle_label(st, mission.config.max_cycles),
        **extra,
    }


def _claim(
    mission: Mission,
    wp_id: str,
    who: str,
    profile: str | None,
    model: str | None,
    invocation_id: str | None,
    ws: LaneWorkspace,
) -> None:
    wp = mission.wps[wp_id]
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
            check = check_move(
                wp_id,
                replace(st, lane=lane),
                wp.subtasks,
                MoveRequest(target, who),
                policy,
                mission.slug,
            )
            records.append(
                mission.transition(wp_id, check.from_lane, target, actor, policy_metadata=meta)
            )
            lane = target
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
        records.append(mission.annotation(wp_id, actor, delta))
        return records

    mission.record(build)


def _reviewer_gone(st: WPState) -> str | None:
    """Why the process holding a review is known to be gone, or None (alive or unknown)."""
    from kitty.services.liveness import pid_alive

    claim = st.runtime_claim or {}
    for key in ("agent_pid", "shell_pid"):
        pid = claim.get(key)
        if pid is not None:
            return None if pid_alive(pid) else f"its process {pid} is gone"
    return None


def _review_workspace(mission: Mission, wp_id: str) -> LaneWorkspace | None:
    """Create the WP's lane worktree when it does not exist (a WP moved to for_review with
    plain `kitty move` never had one), so the reviewer starts where the work is. Returns
    it when this call created it; a failure names the worktree and git's reason."""
    from kitty.errors import KittyError

    ws = existing_workspace(mission, wp_id)
    if ws.lane_id is None or ws.path.is_dir():
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


def review(
    mission: Mission,
    wp_text: str | None,
    agent: str | None,
    profile: str | None = None,
    allow_self_review: bool = False,
    takeover: bool = False,
    note: str | None = None,
) -> dict[str, Any]:
    if takeover and not (note or "").strip():
        raise UsageError("--takeover needs --note", '--takeover --note "why you take it over"')
    who = _who(mission, agent)
    wp_id = _pick(mission, wp_text, who, (REVIEW,))
    wp = mission.wps[wp_id]
    actor = {"tool": who, "role": "reviewer", "profile": profile, "model": None}
    from kitty.services.lanecheck import fingerprint

    # What the reviewer reads: an approval refuses if the lane changes meanwhile (issue 22.6).
    lane_print = fingerprint(existing_workspace(mission, wp_id).path)

    def build(board: Board) -> list[dict[str, Any]]:
        st = board.wps.get(wp_id)
        lane = st.lane if st else None
        if lane == lanes.IN_REVIEW and st and st.reviewer == who:
            return []  # re-entering your own review
        released: list[dict[str, Any]] = []
        if lane == lanes.IN_REVIEW and st:
            gone = _reviewer_gone(st)
            if not (takeover or gone):
                raise GuardRefused(
                    f"cannot review {wp_id}: it is in_review by {st.reviewer}",
                    f"if {st.reviewer} is no longer reviewing it: kitty agent action review "
                    f"{wp_id} --mission {mission.slug} --agent {shlex.quote(who)} --takeover "
                    '--note "why you take it over"',
                )
            why = note if takeover else f"reviewer {st.reviewer} is no longer running ({gone})"
            released.append(
                mission.transition(
                    wp_id,
                    lanes.IN_REVIEW,
                    lanes.FOR_REVIEW,
                    who,
                    force=True,
                    reason=f"review taken over from {st.reviewer} by {who}: {why}",
                )
            )
            st = replace(st, lane=lanes.FOR_REVIEW)
            lane = lanes.FOR_REVIEW
        if lane != lanes.FOR_REVIEW:
            held = f" by {st.reviewer}" if st and lane == lanes.IN_REVIEW else ""
            raise GuardRefused(
                f"cannot review {wp_id}: it is {lane}{held}",
                "only a WP in for_review can be claimed for review",
            )
        if st and st.implementer == who and not allow_self_review:
            raise GuardRefused(
                f"{who} implemented {wp_id} and cannot review it (self-review)",
                "dispatch another agent; --allow-self-review overrides",
            )
        check_move(
            wp_id,
            st,
            wp.subtasks,
            MoveRequest(lanes.IN_REVIEW, who),
            mission.policy(),
            mission.slug,
        )
        delta: dict[str, Any] = {"agent": who, "role": "reviewer", "shell_pid": os.getppid()}
        delta["review_head"] = f"{lane_print}@{who}" if lane_print else ""
        if profile:
            delta["agent_profile"] = profile
        return [
            *released,
            mission.transition(
                wp_id,
                lanes.FOR_REVIEW,
                lanes.IN_REVIEW,
                actor,
                reason="Started review via action command",
                review_ref="action-review-claim",
                policy_metadata={"agent": who, "shell_pid": os.getppid()},
            ),
            mission.annotation(wp_id, actor, delta),
        ]

    made = _review_workspace(mission, wp_id)  # before the claim: a failure claims nothing
    try:
        mission.record(build)
    except BaseException:
        if made is not None:
            discard(mission, made)
        raise
    st = mission.board.wps[wp_id]
    ws = existing_workspace(mission, wp_id)
    base = st.scalars.get("base_commit")
    commits: list[str] = []
    changed: list[str] = []
    if ws.branch and base:
        from kitty.adapters.gitrepo import Git

        git = Git(mission.project.root)
        if git.branch_exists(ws.branch):
            commits = git.log_subjects(str(base), ws.branch)
            changed = git.changed_between(str(base), ws.branch)
    feedback, ref = _feedback(mission, st)
    dependents = sorted((w.wp_id, w.title) for w in mission.wps.values() if wp_id in w.dependencies)
    ctx = _prompt_context(
        mission,
        who,
        wp_id,
        ws,
        st,
        dependents=dependents,
        feedback=feedback,
        feedback_ref=ref,
        base=str(base) if base else None,
        changed_files=changed,
        commits=commits,
    )
    return _deliver(
        mission, wp_id, "review", who, ws, st, review_prompt(ctx), base=base, changed_files=changed
    )
