"""`kitty next`: the next step for one agent, decided from data alone.

Same board, specs, lanes, config and clock reading -> same decision. Priority:
resume your own work, review, fix, arbiter, implement, accept/merge/done, then
wait (something is moving) or blocked (nothing can move without a human).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from kitty import SCHEMA
from kitty.core import lanes
from kitty.core.clock import humanize_duration
from kitty.core.conflicts import open_views
from kitty.core.model import WorkPackage, wp_number
from kitty.core.schedule import chain_weights
from kitty.core.snapshot import progress, sort_ids
from kitty.core.state import Board, WPState
from kitty.core.transitions import (
    arbiter_choices,
    at_cycle_cap,
    cycles_since_arbiter,
    halted,
)

#: Agent ids may hold spaces and parentheses (Spec Kitty histories do): quoted in
#: every printed command so it runs as printed.
_q = shlex.quote

IMPLEMENT, FIX, REVIEW, ARBITER = "implement", "fix", "review", "arbiter"
ACCEPT, MERGE, DONE, WAIT, BLOCKED = "accept", "merge", "done", "wait", "blocked"
CLAIMABLE = (IMPLEMENT, FIX, REVIEW)
#: The placeholder for a person's name in a choice only a person can make.
ARBITER_PERSON = "<arbiter>"
#: Silence (no event on the WP, no heartbeat) after which a review is STALLED (the
#: default of review.stall_minutes; README).
REVIEW_STALL_US = 30 * 60 * 1_000_000


@dataclass(frozen=True)
class Context:
    mission: str
    agent: str
    wps: Mapping[str, WorkPackage]
    board: Board
    wp_lane: Mapping[str, str]
    max_cycles: int = 3
    accepted: bool = False
    now_us: int = 0
    panel: bool = False  # review.panel is configured: reviews run `kitty review run`
    #: The configured agents (agents.available); empty when unknown.
    agents: tuple[str, ...] = ()
    #: Open questions of a panel's blocker HALT, by WP: [{id, question, options: [label]}]
    #: (read from the HALT file by the service; the answered ones left out).
    halt_questions: Mapping[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: A review with no activity for this long is STALLED: `next` offers the takeover.
    stall_us: int = REVIEW_STALL_US

    @cached_property
    def lane_holders(self) -> dict[str, list[str]]:
        """Execution lane -> its WPs in flight (computed once: `next` asks per planned WP)."""
        holders: dict[str, list[str]] = {}
        for wp_id, lane in self.wp_lane.items():
            if self.board.lane(wp_id) in lanes.IN_FLIGHT:
                holders.setdefault(lane, []).append(wp_id)
        return holders


@dataclass
class Decision:
    action: str
    reason: str
    wp_id: str | None = None
    cycle: str | None = None
    commands: list[str] = field(default_factory=list)
    blocked_by: list[str] = field(default_factory=list)
    progress: dict[str, Any] = field(default_factory=dict)
    mission: str = ""
    lane: str | None = None
    claimed: bool = False
    #: Open conflicts of this agent's own moves (strict replay), with resolving commands.
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    #: Alternatives, one of which is chosen: {label, commands, fill: {placeholder: meaning}}.
    #: `commands` is always a sequence to run in order, with nothing to fill in.
    choices: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "action": self.action,
            "wp_id": self.wp_id,
            "reason": self.reason,
            "cycle": self.cycle,
            "commands": self.commands,
            "blocked_by": self.blocked_by,
            "progress": self.progress,
            "mission": self.mission,
            "lane": self.lane,
            "claimed": self.claimed,
            "conflicts": self.conflicts,
            "choices": self.choices,
        }


def _state(ctx: Context, wp_id: str) -> WPState:
    return ctx.board.wps.get(wp_id) or WPState(wp_id)


def _since(ctx: Context, st: WPState) -> str:
    if st.lane_since_us is None or not ctx.now_us:
        return ""
    return f" for {humanize_duration((ctx.now_us - st.lane_since_us) / 1e6)}"


def describe(ctx: Context, wp_id: str) -> str:
    """`in_review by codex for 12m` — where a WP is and who holds it."""
    st = _state(ctx, wp_id)
    lane = st.lane or "not finalized"
    who = st.reviewer if st.lane == lanes.IN_REVIEW else st.agent
    by = f" by {who}" if who and st.lane in lanes.IN_FLIGHT else ""
    return f"{lane}{by}{_since(ctx, st)}"


def _deps_ready(ctx: Context, wp_id: str) -> bool:
    return all(ctx.board.lane(d) in lanes.SATISFIED for d in ctx.wps[wp_id].dependencies)


def _lane_holder(ctx: Context, wp_id: str) -> str | None:
    """Another WP of the same execution lane that is in flight, if any."""
    holders = ctx.lane_holders.get(ctx.wp_lane.get(wp_id, ""), [])
    return next((other for other in holders if other != wp_id), None)


def cycle_label(st: WPState, max_cycles: int) -> str | None:
    """`1/3` after one rejection: the WP's review cycles (rejections since the last arbiter
    decision) out of the cap."""
    return f"{cycles_since_arbiter(st)}/{max_cycles}" if st.review_cycles else None


def _cmd(ctx: Context, verb: str, wp_id: str) -> str:
    if verb == REVIEW and ctx.panel:
        return f"kitty review run {wp_id} --mission {ctx.mission} --agent {_q(ctx.agent)}"
    return f"kitty agent action {verb} {wp_id} --mission {ctx.mission} --agent {_q(ctx.agent)}"


def _remark(ctx: Context, w: str) -> str:
    """The subtasks a rejection reset, which the fix must mark done again."""
    spec = ctx.wps.get(w)
    marks = _state(ctx, w).subtasks
    reset = [t for t in (spec.subtasks if spec else ()) if marks.get(t) != "done"]
    if not reset:
        return ""
    return (
        f"; the rejection reset subtasks {', '.join(reset)}: mark them done again "
        "(mark-status) before moving it to for_review"
    )


def _oldest(ctx: Context, ids: list[str]) -> list[str]:
    return sorted(ids, key=lambda w: (_state(ctx, w).lane_since_us or 0, wp_number(w) or 0, w))


def _work(ctx: Context, action: str, wp_id: str, reason: str) -> Decision:
    st = _state(ctx, wp_id)
    verb = REVIEW if action == REVIEW else IMPLEMENT
    return Decision(
        action,
        reason,
        wp_id,
        cycle_label(st, ctx.max_cycles),
        [_cmd(ctx, verb, wp_id)],
        lane=ctx.wp_lane.get(wp_id),
    )


def decide(ctx: Context) -> Decision:
    decision = _decide(ctx)
    decision.mission = ctx.mission
    if ctx.board.conflicts:
        decision.conflicts = open_views(ctx.board, ctx.mission, ctx.agent)
    ids = [w for w in sort_ids(ctx.wps)]
    decision.progress = dict(
        progress(ctx.board, ids), total=len(ids), **{k: v for k, v in _counts(ctx, ids).items()}
    )
    return decision


def unmarked_subtasks(
    board: Board, wps: Mapping[str, WorkPackage], ids: list[str]
) -> dict[str, list[str]]:
    """WP -> its subtasks not done, for approved WPs (a rejection resets them; an arbiter
    approval does not re-mark them). `kitty accept` refuses while any is left."""
    found: dict[str, list[str]] = {}
    for w in ids:
        if board.lane(w) != lanes.APPROVED or w not in wps:
            continue
        marks = board.wps[w].subtasks
        left = [t for t in wps[w].subtasks if marks.get(t) != "done"]
        if left:
            found[w] = left
    return found


def _counts(ctx: Context, ids: list[str]) -> dict[str, int]:
    approved = sum(1 for w in ids if ctx.board.lane(w) in lanes.SATISFIED)
    return {"approved_or_done": approved}


@dataclass
class Queues:
    """Schedulable work in priority order, agent-agnostic (shared by `next` and `sprint`)."""

    reviews: list[str]  # for_review, oldest first
    fixes: list[str]  # rejected and startable, oldest rejection first
    capped: list[str]  # rejected max_cycles times: need the arbiter
    fresh: list[str]  # never rejected and startable, longest chain first
    weights: dict[str, float]


def work_queues(
    ctx: Context, by_lane: dict[str, list[str]] | None = None, exclude: frozenset[str] = frozenset()
) -> Queues:
    if by_lane is None:
        by_lane = {}
        for w in sort_ids(ctx.wps):
            by_lane.setdefault(ctx.board.lane(w) or "", []).append(w)
    planned = [w for w in by_lane.get(lanes.PLANNED, []) if w not in exclude]
    capped = [
        w
        for w in planned + by_lane.get(lanes.IN_PROGRESS, [])
        if at_cycle_cap(_state(ctx, w), ctx.max_cycles) and w not in exclude
    ]
    startable = [
        w
        for w in planned
        if w not in capped and _deps_ready(ctx, w) and _lane_holder(ctx, w) is None
    ]
    weights = chain_weights(ctx.wps)
    fixes = sorted(
        (w for w in startable if _state(ctx, w).review_cycles),
        key=lambda w: (_state(ctx, w).lane_since_us or 0, wp_number(w) or 0),
    )
    fresh = sorted(
        (w for w in startable if not _state(ctx, w).review_cycles),
        key=lambda w: (-weights[w], wp_number(w) or 0, w),
    )
    reviews = _oldest(ctx, [w for w in by_lane.get(lanes.FOR_REVIEW, []) if w not in exclude])
    return Queues(reviews, fixes, sorted(capped, key=lambda w: wp_number(w) or 0), fresh, weights)


def _answer_choices(ctx: Context, w: str) -> list[dict[str, Any]]:
    """One choice per option of each open blocker question, as a concrete command."""
    import shlex  # only when a blocker HALT is open

    out = []
    for q in ctx.halt_questions.get(w, []):
        for label in q["options"]:
            pair = f"{q['id']}={label}"
            out.append(
                {
                    "label": f"answer {q['id']} ({q['question']}): {label}",
                    "commands": [
                        f"kitty review answer {w} --mission {ctx.mission} "
                        f"--answer {shlex.quote(pair)} --agent {_q(ctx.agent)}"
                    ],
                    "fill": {},
                }
            )
    return out


def _halt_decision(ctx: Context, w: str, st: WPState) -> Decision:
    """A review panel HALTed on `w`: answer its questions, or decide as the arbiter."""
    reason = st.scalars.get("review_halt_reason") or "halt"
    choices: list[dict[str, Any]] = []
    if reason == "blocker":
        choices += _answer_choices(ctx, w)
    elif reason == "soft_warn":
        choices.append(
            {
                "label": "run one more panel round",
                "commands": [
                    f"kitty review answer {w} --mission {ctx.mission} --continue "
                    f"--agent {_q(ctx.agent)}"
                ],
                "fill": {},
            }
        )
    choices += arbiter_choices(w, ctx.mission, ctx.agent)
    choices.append(
        {
            "label": "run the review panel again from round 1",
            "commands": [f"kitty review run {w} --mission {ctx.mission} --agent {_q(ctx.agent)}"],
            "fill": {},
        }
    )
    return Decision(
        ARBITER,
        f"{w}: the review panel HALTed ({reason}) at round {st.scalars.get('review_round')}; "
        f"see {st.scalars.get('review_halt')}: choose one",
        w,
        cycle_label(st, ctx.max_cycles),
        lane=ctx.wp_lane.get(w),
        choices=choices,
    )


def stalled(ctx: Context, st: WPState) -> str | None:
    """Why a review is STALLED (silent past ctx.stall_us), or None."""
    last = max(
        st.last_activity_us or 0,
        st.lane_since_us or 0,
        _heartbeat_us((st.runtime_claim or {}).get("heartbeat")),
    )
    if st.lane != lanes.IN_REVIEW or not ctx.now_us or not last:
        return None
    silent = ctx.now_us - last
    if silent <= ctx.stall_us:
        return None
    return f"no activity for {humanize_duration(silent / 1e6)}"


def _heartbeat_us(value: Any) -> int:
    if not isinstance(value, str) or not value:
        return 0
    from kitty.core.clock import parse_at

    try:
        return parse_at(value)
    except ValueError:
        return 0


def _takeover(ctx: Context, w: str, why: str) -> Decision:
    st = _state(ctx, w)
    note = f"{st.reviewer}'s review was STALLED: {why}"
    return Decision(
        REVIEW,
        f"{w} is in_review by {st.reviewer}{_since(ctx, st)} and STALLED ({why}): "
        "take the review over",
        w,
        cycle_label(st, ctx.max_cycles),
        [
            f"kitty agent action review {w} --mission {ctx.mission} --agent {_q(ctx.agent)} "
            f'--takeover --note "{note}"'
        ],
        lane=ctx.wp_lane.get(w),
    )


def _arbiter_decision(ctx: Context, w: str) -> Decision:
    st = _state(ctx, w)
    if halted(st):
        return _halt_decision(ctx, w, st)
    return Decision(
        ARBITER,
        f"{w} was rejected {cycles_since_arbiter(st)} times (cap {ctx.max_cycles}) and "
        f"{st.implementer or 'its implementer'} cannot decide on its own work: as the "
        "arbiter, choose to approve with a recorded override or to escalate",
        w,
        cycle_label(st, ctx.max_cycles),
        lane=ctx.wp_lane.get(w),
        choices=arbiter_choices(w, ctx.mission, ctx.agent),
    )


def _others(ctx: Context, implementer: str | None) -> bool:
    """Whether an agent other than `implementer` may come (unknown roster: assume so)."""
    return not ctx.agents or any(a != implementer for a in ctx.agents)


def _decide(ctx: Context) -> Decision:
    ids = sort_ids(ctx.wps)
    if not ids:
        return Decision(
            BLOCKED,
            "the mission has no work packages",
            choices=[
                {
                    "label": "add a work package",
                    "commands": [f'kitty wp add --mission {ctx.mission} --title "<title>"'],
                    "fill": {"<title>": "the work package's title"},
                }
            ],
        )
    unfinalized = [w for w in ids if ctx.board.lane(w) is None]
    if len(unfinalized) == len(ids):
        return Decision(
            BLOCKED,
            "the mission is not finalized",
            commands=[f"kitty finalize --mission {ctx.mission}"],
            blocked_by=[f"{w} has no state yet" for w in unfinalized],
        )
    live = [w for w in ids if w not in unfinalized]
    by_lane: dict[str, list[str]] = {}
    for w in live:
        by_lane.setdefault(ctx.board.lane(w) or "", []).append(w)

    # 1. Resume what this agent already holds.
    mine_review = [
        w for w in by_lane.get(lanes.IN_REVIEW, []) if _state(ctx, w).reviewer == ctx.agent
    ]
    if mine_review:
        w = _oldest(ctx, mine_review)[0]
        return _work(
            ctx,
            REVIEW,
            w,
            f"you are reviewing {w} (in_review{_since(ctx, _state(ctx, w))}): "
            "finish the review and record the verdict",
        )
    mine_impl = [
        w
        for lane in (lanes.CLAIMED, lanes.IN_PROGRESS)
        for w in by_lane.get(lane, [])
        if _state(ctx, w).implementer == ctx.agent
        and not at_cycle_cap(_state(ctx, w), ctx.max_cycles)
    ]
    if mine_impl:
        w = _oldest(ctx, mine_impl)[0]
        st = _state(ctx, w)
        action = FIX if st.review_cycles else IMPLEMENT
        return _work(
            ctx,
            action,
            w,
            f"you hold {w} ({describe(ctx, w)}): continue "
            + ("fixing the review feedback" if action == FIX else "the implementation"),
        )

    # 2. Reviews unblock dependents: oldest first, never your own work.
    reviewable = [
        w for w in by_lane.get(lanes.FOR_REVIEW, []) if _state(ctx, w).implementer != ctx.agent
    ]
    if reviewable:
        w = _oldest(ctx, reviewable)[0]
        who = _state(ctx, w).implementer or "another agent"
        return _work(
            ctx,
            REVIEW,
            w,
            f"{w} is waiting for review{_since(ctx, _state(ctx, w))} (implemented by {who})",
        )

    # 2b. A review nobody works on any more (silent past the stall limit): take it over.
    for w in _oldest(ctx, by_lane.get(lanes.IN_REVIEW, [])):
        st = _state(ctx, w)
        why = stalled(ctx, st) if st.implementer != ctx.agent else None
        if why:
            return _takeover(ctx, w, why)

    queues = work_queues(ctx, by_lane)

    # 3. Fix rejected work, the original implementer first.
    fixes = list(queues.fixes)
    if fixes:
        fixes.sort(key=lambda w: _state(ctx, w).implementer != ctx.agent)  # stable
        w = fixes[0]
        st = _state(ctx, w)
        return _work(
            ctx,
            FIX,
            w,
            f"{w} was sent back by {st.reviews[-1].reviewer if st.reviews else 'review'}"
            f" with feedback; fix it (cycle {cycle_label(st, ctx.max_cycles)})" + _remark(ctx, w),
        )

    # 4. Arbiter: the review loop hit its cap. Never the WP's own implementer.
    arbitrable = [w for w in queues.capped if _state(ctx, w).implementer != ctx.agent]
    if arbitrable:
        return _arbiter_decision(ctx, arbitrable[0])

    # 5. Implement: the longest chain of dependents first, then the lowest id.
    if queues.fresh:
        w = queues.fresh[0]
        chain = queues.weights[w]
        return _work(
            ctx,
            IMPLEMENT,
            w,
            f"{w} is ready (dependencies approved) and heads the "
            f"longest remaining chain (weight {chain:g})",
        )

    # 6. Whole-mission steps.
    remaining = [w for w in live if ctx.board.lane(w) != lanes.CANCELED]
    if (
        remaining
        and not unfinalized
        and all(ctx.board.lane(w) in lanes.SATISFIED for w in remaining)
    ):
        if all(ctx.board.lane(w) == lanes.DONE for w in remaining):
            return Decision(DONE, "every work package is done: the mission is merged")
        if ctx.accepted:
            return Decision(
                MERGE,
                "the mission is accepted: merge it",
                commands=[f"kitty merge --mission {ctx.mission}"],
            )
        unmarked = unmarked_subtasks(ctx.board, ctx.wps, remaining)
        if unmarked:
            return Decision(
                ACCEPT,
                "every work package is approved: accept the mission; subtasks of "
                + ", ".join(unmarked)
                + " are not marked done (reset by a rejection, then approved without "
                "re-implementation): `kitty accept` records them done as actor accept, "
                "naming the approval, in the acceptance record",
                commands=[f"kitty accept --mission {ctx.mission}"],
                blocked_by=[f"{w} subtasks not done: {', '.join(t)}" for w, t in unmarked.items()],
            )
        return Decision(
            ACCEPT,
            "every work package is approved: accept the mission",
            commands=[f"kitty accept --mission {ctx.mission}"],
        )

    # 7. Nothing to do now: explain why, and whether anything can still move.
    return _waiting(ctx, live, unfinalized, by_lane)


def _waiting(
    ctx: Context, live: list[str], unfinalized: list[str], by_lane: dict[str, list[str]]
) -> Decision:
    blockers: list[str] = []
    movable = False
    for w in live:
        st = _state(ctx, w)
        if st.lane in lanes.IN_FLIGHT:
            movable_before, movable = movable, True
            if st.lane == lanes.FOR_REVIEW:
                if ctx.agents and all(a == st.implementer for a in ctx.agents):
                    # Nobody configured can review it: waiting would never end.
                    movable = movable_before
                    blockers.append(
                        f"{w} awaits review, but its implementer {st.implementer} is the only "
                        "configured agent: add a reviewer to agents.available in "
                        ".kittify/config.yaml, or an operator approves it with "
                        "--force --self-review-fallback"
                    )
                    continue
                blockers.append(f"{w} awaits review by another agent (you implemented it)")
            else:
                silent = stalled(ctx, st)
                blockers.append(
                    f"{w} is {describe(ctx, w)}"
                    + (f" (STALLED: {silent}; another agent takes it over)" if silent else "")
                )
    choices: list[dict[str, Any]] = []
    capped = [w for w in by_lane.get(lanes.PLANNED, []) + by_lane.get(lanes.IN_PROGRESS, [])]
    for w in capped:
        st = _state(ctx, w)
        if not at_cycle_cap(st, ctx.max_cycles):
            continue
        if _others(ctx, st.implementer):
            movable = True
            blockers.append(
                f"{w} waits for an arbiter decision (you implemented it): another agent "
                "or a person decides"
            )
            continue
        blockers.append(
            f"{w} needs an arbiter decision, and its implementer {st.implementer} is the only "
            "configured agent: a person decides (or add an agent to agents.available)"
        )
        for choice in arbiter_choices(w, ctx.mission, ARBITER_PERSON):
            choice["fill"] = {
                ARBITER_PERSON: f"your name (a person; not {st.implementer}, who implemented it)",
                **choice["fill"],
            }
            choices.append(choice)
    for w in by_lane.get(lanes.PLANNED, []):
        if at_cycle_cap(_state(ctx, w), ctx.max_cycles):
            continue
        deps = [d for d in ctx.wps[w].dependencies if ctx.board.lane(d) not in lanes.SATISFIED]
        if deps:
            blockers.append(
                f"{w} waits for " + ", ".join(f"{d} ({describe(ctx, d)})" for d in deps)
            )
        else:
            holder = _lane_holder(ctx, w)
            if holder:
                blockers.append(
                    f"{w} waits for its lane {ctx.wp_lane.get(w)} "
                    f"({holder} {describe(ctx, holder)})"
                )
    for w in by_lane.get(lanes.BLOCKED, []):
        reason = _state(ctx, w).last_reason
        blockers.append(f"{w} is blocked" + (f": {reason}" if reason else ""))
    blockers += [f"{w} is not finalized" for w in unfinalized]
    commands = [f"kitty status --mission {ctx.mission}"]
    if movable:
        commands.append(f"kitty next --agent {_q(ctx.agent)} --mission {ctx.mission}")
        return Decision(
            WAIT,
            "nothing is ready for you yet; other work is in flight",
            blocked_by=blockers,
            commands=commands,
        )
    if unfinalized:
        commands.insert(0, f"kitty finalize --mission {ctx.mission}")
    if ctx.agents:
        commands.append("kitty agent config list")
    for w in by_lane.get(lanes.BLOCKED, []):
        choices.append(
            {
                "label": f"unblock {w} once a human has decided (back to planned)",
                "commands": [
                    f"kitty move {w} planned --mission {ctx.mission} --agent {_q(ctx.agent)}"
                ],
                "fill": {},
            }
        )
    return Decision(
        BLOCKED,
        "nothing can move without a human decision",
        blocked_by=blockers,
        commands=commands,
        choices=choices,
    )
