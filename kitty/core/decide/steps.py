"""`kitty next`: the next step for one agent, decided from data alone.

Same board, specs, lanes, config and clock reading -> same decision. Priority:
resume your own work, review, fix, arbiter, implement, accept/merge/done, then
wait (something is moving) or blocked (nothing can move without a human).

The input and the per-WP facts are in kitty.core.decide.context, the answer in
kitty.core.decide.decision; the work queues in kitty.core.decide.queues; the
arbiter's answers in kitty.core.decide.arbiter, wait and blocked in
kitty.core.decide.waiting.
"""

from __future__ import annotations

from collections.abc import Callable

from kitty.core import lanes
from kitty.core.decide.arbiter import arbiter_decision, changed_review, takeover
from kitty.core.decide.context import (
    REVIEW_STALL_US,
    Context,
    cycle_label,
    describe,
    lane_changed,
    oldest,
    since,
    stalled,
    state_of,
)
from kitty.core.decide.decision import (
    ACCEPT,
    ARBITER,
    ARBITER_PERSON,
    BLOCKED,
    CLAIMABLE,
    DONE,
    FIX,
    IMPLEMENT,
    MERGE,
    REVIEW,
    WAIT,
    Decision,
    choice,
    work,
)
from kitty.core.decide.queues import Queues, unmarked_subtasks, work_queues
from kitty.core.decide.waiting import waiting
from kitty.core.gateview import view as gate_view
from kitty.core.log.conflicts import open_views
from kitty.core.log.snapshot import progress, sort_ids
from kitty.core.model import WorkPackage
from kitty.core.transitions import at_cycle_cap

__all__ = [
    "ACCEPT",
    "ARBITER",
    "ARBITER_PERSON",
    "BLOCKED",
    "CLAIMABLE",
    "DONE",
    "FIX",
    "IMPLEMENT",
    "MERGE",
    "REVIEW",
    "REVIEW_STALL_US",
    "WAIT",
    "Context",
    "Decision",
    "Queues",
    "WorkPackage",
    "cycle_label",
    "decide",
    "describe",
    "stalled",
    "unmarked_subtasks",
    "work_queues",
]


def _remark(ctx: Context, w: str) -> str:
    """The subtasks a rejection reset, which the fix must mark done again."""
    marks = state_of(ctx, w).subtasks
    reset = [t for t in ctx.wps[w].subtasks if marks.get(t) != "done"]
    if not reset:
        return ""
    return (
        f"; the rejection reset subtasks {', '.join(reset)}: mark them done again "
        "(mark-status) before moving it to for_review"
    )


def decide(ctx: Context) -> Decision:
    decision = _decide(ctx)
    decision.mission = ctx.mission
    if decision.wp_id is not None:
        decision.gate = gate_view(state_of(ctx, decision.wp_id).scalars)
    if ctx.board.conflicts:
        decision.conflicts = open_views(ctx.board, ctx.mission, ctx.agent)
    ids = [w for w in sort_ids(ctx.wps)]
    decision.progress = dict(
        progress(ctx.board, ids), total=len(ids), **{k: v for k, v in _counts(ctx, ids).items()}
    )
    return decision


def _counts(ctx: Context, ids: list[str]) -> dict[str, int]:
    approved = sum(1 for w in ids if ctx.board.lane(w) in lanes.SATISFIED)
    return {"approved_or_done": approved}


# The rules, in priority order: each returns its Decision, or None to pass.
ByLane = dict[str, list[str]]
LaneRule = Callable[[Context, ByLane], Decision | None]
QueueRule = Callable[[Context, Queues], Decision | None]


def _decide(ctx: Context) -> Decision:
    ids = sort_ids(ctx.wps)
    unfinalized = [w for w in ids if ctx.board.lane(w) is None]
    if len(unfinalized) == len(ids):
        return _not_started(ctx, unfinalized)
    live = [w for w in ids if w not in unfinalized]
    by_lane: ByLane = {}
    for w in live:
        by_lane.setdefault(ctx.board.lane(w) or "", []).append(w)
    lane_rules: tuple[LaneRule, ...] = (
        _resume_review,
        _resume_implementation,
        _review,
        _take_over_stalled,
    )
    for lane_rule in lane_rules:
        if decision := lane_rule(ctx, by_lane):
            return decision
    queues = work_queues(ctx, by_lane)
    queue_rules: tuple[QueueRule, ...] = (_fix, _arbitrate, _implement)
    for queue_rule in queue_rules:
        if decision := queue_rule(ctx, queues):
            return decision
    # 6. Whole-mission steps; 7. nothing to do now: why, and whether anything can move.
    return _mission_step(ctx, live, unfinalized) or waiting(ctx, live, unfinalized, by_lane)


def _not_started(ctx: Context, unfinalized: list[str]) -> Decision:
    """No work package at all, or none finalized yet."""
    if not unfinalized:
        return Decision(
            BLOCKED,
            "the mission has no work packages",
            choices=[
                choice(
                    "add a work package",
                    f'kitty wp add --mission {ctx.mission} --title "<title>"',
                    {"<title>": "the work package's title"},
                )
            ],
        )
    return Decision(
        BLOCKED,
        "the mission is not finalized",
        commands=[f"kitty finalize --mission {ctx.mission}"],
        blocked_by=[f"{w} has no state yet" for w in unfinalized],
    )


def _resume_review(ctx: Context, by_lane: ByLane) -> Decision | None:
    """1. Resume what this agent already holds: its review first."""
    mine = [w for w in by_lane.get(lanes.IN_REVIEW, []) if state_of(ctx, w).reviewer == ctx.agent]
    if not mine:
        return None
    w = oldest(ctx, mine)[0]
    if changed := lane_changed(state_of(ctx, w)):
        return changed_review(ctx, w, changed)
    return work(
        ctx,
        REVIEW,
        w,
        f"you are reviewing {w} (in_review{since(ctx, state_of(ctx, w))}): "
        "finish the review and record the verdict",
    )


def _resume_implementation(ctx: Context, by_lane: ByLane) -> Decision | None:
    """1. ... then its implementation (below the review cycle cap)."""
    mine = [
        w
        for lane in (lanes.CLAIMED, lanes.IN_PROGRESS)
        for w in by_lane.get(lane, [])
        if state_of(ctx, w).implementer == ctx.agent
        and not at_cycle_cap(state_of(ctx, w), ctx.max_cycles)
    ]
    if not mine:
        return None
    w = oldest(ctx, mine)[0]
    action = FIX if state_of(ctx, w).review_cycles else IMPLEMENT
    return work(
        ctx,
        action,
        w,
        f"you hold {w} ({describe(ctx, w)}): continue "
        + ("fixing the review feedback" if action == FIX else "the implementation"),
    )


def _review(ctx: Context, by_lane: ByLane) -> Decision | None:
    """2. Reviews unblock dependents: oldest first, never your own work."""
    reviewable = [
        w for w in by_lane.get(lanes.FOR_REVIEW, []) if state_of(ctx, w).implementer != ctx.agent
    ]
    if not reviewable:
        return None
    w = oldest(ctx, reviewable)[0]
    who = state_of(ctx, w).implementer or "another agent"
    return work(
        ctx,
        REVIEW,
        w,
        f"{w} is waiting for review{since(ctx, state_of(ctx, w))} (implemented by {who})",
    )


def _take_over_stalled(ctx: Context, by_lane: ByLane) -> Decision | None:
    """2b. A review nobody works on any more (silent past the stall limit), or whose
    reviewer changed the lane: take it over."""
    for w in oldest(ctx, by_lane.get(lanes.IN_REVIEW, [])):
        if decision := takeover(ctx, w):
            return decision
    return None


def _fix(ctx: Context, queues: Queues) -> Decision | None:
    """3. Fix rejected work, the original implementer first."""
    if not queues.fixes:
        return None
    fixes = sorted(queues.fixes, key=lambda w: state_of(ctx, w).implementer != ctx.agent)
    w = fixes[0]
    st = state_of(ctx, w)
    return work(
        ctx,
        FIX,
        w,
        f"{w} was sent back by {st.reviews[-1].reviewer if st.reviews else 'review'}"
        f" with feedback; fix it (cycle {cycle_label(st, ctx.max_cycles)})" + _remark(ctx, w),
    )


def _arbitrate(ctx: Context, queues: Queues) -> Decision | None:
    """4. Arbiter: the review loop hit its cap. Never the WP's own implementer."""
    arbitrable = [w for w in queues.capped if state_of(ctx, w).implementer != ctx.agent]
    return arbiter_decision(ctx, arbitrable[0]) if arbitrable else None


def _implement(ctx: Context, queues: Queues) -> Decision | None:
    """5. Implement: the longest chain of dependents first, then the lowest id."""
    if not queues.fresh:
        return None
    w = queues.fresh[0]
    return work(
        ctx,
        IMPLEMENT,
        w,
        f"{w} is ready (dependencies approved) and heads the "
        f"longest remaining chain (weight {queues.weights[w]:g})",
    )


def _mission_step(ctx: Context, live: list[str], unfinalized: list[str]) -> Decision | None:
    """6. Whole-mission steps, once every WP left is approved: accept, merge, done."""
    remaining = [w for w in live if ctx.board.lane(w) != lanes.CANCELED]
    if (
        not remaining
        or unfinalized
        or not all(ctx.board.lane(w) in lanes.SATISFIED for w in remaining)
    ):
        return None
    if all(ctx.board.lane(w) == lanes.DONE for w in remaining):
        return Decision(DONE, "every work package is done: the mission is merged")
    if ctx.accepted:
        return Decision(
            MERGE,
            "the mission is accepted: merge it",
            commands=[f"kitty merge --mission {ctx.mission}"],
        )
    accept = [f"kitty accept --mission {ctx.mission}"]
    unmarked = unmarked_subtasks(ctx.board, ctx.wps, remaining)
    if not unmarked:
        return Decision(
            ACCEPT, "every work package is approved: accept the mission", commands=accept
        )
    return Decision(
        ACCEPT,
        "every work package is approved: accept the mission; subtasks of "
        + ", ".join(unmarked)
        + " are not marked done (reset by a rejection, then approved without "
        "re-implementation): `kitty accept` records them done as actor accept, "
        "naming the approval, in the acceptance record",
        commands=accept,
        blocked_by=[f"{w} subtasks not done: {', '.join(t)}" for w, t in unmarked.items()],
    )
