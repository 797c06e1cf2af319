"""`kitty next` when the answer is someone's decision: the arbiter's (a review loop at its
cap, a review panel's HALT), or nobody's work yet — wait while something is in flight,
blocked when nothing can move without a human. Pure, like the rest of kitty.core.decide.
"""

from __future__ import annotations

from typing import Any

from kitty.core import lanes
from kitty.core.decide.context import (
    Context,
    cycle_label,
    describe,
    lane_changed,
    lane_holder,
    others_may_come,
    quote,
    since,
    stalled,
    state_of,
)
from kitty.core.decide.decision import (
    ARBITER,
    ARBITER_PERSON,
    BLOCKED,
    REVIEW,
    WAIT,
    Decision,
    choice,
)
from kitty.core.transitions import arbiter_choices, at_cycle_cap, cycle_count, halted


def arbiter_decision(ctx: Context, w: str) -> Decision:
    """`w` was rejected up to the cap (or its review panel HALTed): the arbiter decides."""
    st = state_of(ctx, w)
    if halted(st):
        return _halt_decision(ctx, w)
    return Decision(
        ARBITER,
        f"{w} was rejected {cycle_count(st)} (cap {ctx.max_cycles}) and "
        f"{st.implementer or 'its implementer'} cannot decide on its own work: as the "
        "arbiter, choose to approve with a recorded override or to escalate",
        w,
        cycle_label(st, ctx.max_cycles),
        lane=ctx.wp_lane.get(w),
        choices=arbiter_choices(w, ctx.mission, ctx.agent),
    )


def _halt_decision(ctx: Context, w: str) -> Decision:
    """A review panel HALTed on `w`: answer its questions, or decide as the arbiter."""
    st = state_of(ctx, w)
    reason = st.scalars.get("review_halt_reason") or "halt"
    choices: list[dict[str, Any]] = []
    if reason == "blocker":
        choices += _answer_choices(ctx, w)
    elif reason == "soft_warn":
        choices.append(
            choice(
                "run one more panel round",
                f"kitty review answer {w} --mission {ctx.mission} --continue "
                f"--agent {quote(ctx.agent)}",
            )
        )
    choices += arbiter_choices(w, ctx.mission, ctx.agent)
    choices.append(
        choice(
            "run the review panel again from round 1",
            f"kitty review run {w} --mission {ctx.mission} --agent {quote(ctx.agent)}",
        )
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


def _answer_choices(ctx: Context, w: str) -> list[dict[str, Any]]:
    """One choice per option of each open blocker question, as a concrete command."""
    out = []
    for q in ctx.halt_questions.get(w, []):
        for label in q["options"]:
            pair = f"{q['id']}={label}"
            out.append(
                choice(
                    f"answer {q['id']} ({q['question']}): {label}",
                    f"kitty review answer {w} --mission {ctx.mission} "
                    f"--answer {quote(pair)} --agent {quote(ctx.agent)}",
                )
            )
    return out


def takeover(ctx: Context, w: str) -> Decision | None:
    """Take over `w`'s review: STALLED (silent past the limit), or at once when its
    reviewer changed the lane (its approval is refused; it may only reject)."""
    st = state_of(ctx, w)
    if st.implementer == ctx.agent or st.reviewer == ctx.agent:
        return None
    changed = lane_changed(st)
    why = f"its reviewer changed the lane: {changed}" if changed else stalled(ctx, st)
    if not why:
        return None
    note = f"{st.reviewer}'s review " + ("changed the lane" if changed else f"was STALLED: {why}")
    state = "its reviewer changed the lane" if changed else "STALLED"
    return Decision(
        REVIEW,
        f"{w} is in_review by {st.reviewer}{since(ctx, st)} and {state} ({why}): "
        "take the review over",
        w,
        cycle_label(st, ctx.max_cycles),
        [
            f"kitty agent action review {w} --mission {ctx.mission} "
            f'--agent {quote(ctx.agent)} --takeover --note "{note}"'
        ],
        lane=ctx.wp_lane.get(w),
    )


def changed_review(ctx: Context, w: str, changed: str) -> Decision:
    """You changed the lane you review (reviewers are read-only): your approval is
    refused, so reject it with your findings, or hand the review to another agent."""
    st = state_of(ctx, w)
    implementer = st.implementer or "its implementer"
    move = f"kitty agent tasks move-task {w} --mission {ctx.mission}"
    return Decision(
        REVIEW,
        f"your review of {w} changed its lane ({changed}), so your approval is refused "
        "(reviewer_failed): reject it with your findings (what you changed belongs in "
        "them), or hand the review to another agent (kitty next offers them the takeover "
        "now)",
        w,
        cycle_label(st, ctx.max_cycles),
        lane=ctx.wp_lane.get(w),
        choices=[
            choice(
                f"reject {w} with your findings",
                f"{move} --to planned --agent {quote(ctx.agent)} "
                "--review-feedback-file <feedback.md>",
                {"<feedback.md>": "a file with what must change (and what you changed)"},
            ),
            choice(
                f"hand the review of {w} to another agent",
                f"kitty agent action review {w} --mission {ctx.mission} --agent "
                f"'<another agent>' --takeover --note "
                + quote(f"{st.reviewer}'s review changed the lane"),
                {"<another agent>": f"an agent other than you and {implementer}"},
            ),
        ],
    )


def waiting(
    ctx: Context, live: list[str], unfinalized: list[str], by_lane: dict[str, list[str]]
) -> Decision:
    """Nothing to do now: why, and whether anything can still move (WAIT) or not (BLOCKED)."""
    blockers, movable = _in_flight(ctx, live)
    capped, choices, arbiter_may_come = _capped(ctx, by_lane)
    blockers += capped + _planned(ctx, by_lane)
    for w in by_lane.get(lanes.BLOCKED, []):
        reason = state_of(ctx, w).last_reason
        blockers.append(f"{w} is blocked" + (f": {reason}" if reason else ""))
    blockers += [f"{w} is not finalized" for w in unfinalized]
    commands = [f"kitty status --mission {ctx.mission}"]
    if movable or arbiter_may_come:
        commands.append(f"kitty next --agent {quote(ctx.agent)} --mission {ctx.mission}")
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
    choices += [
        choice(
            f"unblock {w} once a human has decided (back to planned)",
            f"kitty move {w} planned --mission {ctx.mission} --agent {quote(ctx.agent)}",
        )
        for w in by_lane.get(lanes.BLOCKED, [])
    ]
    return Decision(
        BLOCKED,
        "nothing can move without a human decision",
        blocked_by=blockers,
        commands=commands,
        choices=choices,
    )


def _in_flight(ctx: Context, live: list[str]) -> tuple[list[str], bool]:
    """Why each WP in flight holds things up, and whether any of them will still move (a
    review only the implementer could do never does)."""
    blockers: list[str] = []
    movable = False
    for w in live:
        st = state_of(ctx, w)
        if st.lane not in lanes.IN_FLIGHT:
            continue
        if st.lane != lanes.FOR_REVIEW:
            silent = stalled(ctx, st)
            blockers.append(
                f"{w} is {describe(ctx, w)}"
                + (f" (STALLED: {silent}; another agent takes it over)" if silent else "")
            )
        elif ctx.agents and all(a == st.implementer for a in ctx.agents):
            # Nobody configured can review it: waiting would never end.
            blockers.append(
                f"{w} awaits review, but its implementer {st.implementer} is the only "
                "configured agent: add a reviewer to agents.available in "
                ".kittify/config.yaml, or " + _alone(ctx, w, st.implementer)
            )
            continue
        else:
            blockers.append(
                f"{w} awaits review by another agent (you implemented it); working alone, "
                + _alone(ctx, w, st.implementer)
            )
        movable = True
    return blockers, movable


def _alone(ctx: Context, w: str, implementer: str | None) -> str:
    """How one person gets `w` reviewed: under a second identity (README, Quick start), or
    as a recorded self-review fallback. Both commands run as printed."""
    me = implementer or ctx.agent
    second = f"{me}:reviewer"
    intended = next((a for a in ctx.agents if a != me), second)
    review = f"kitty agent action review {w} --mission {ctx.mission} --agent {quote(second)}"
    fallback = (
        f"kitty agent tasks move-task {w} --mission {ctx.mission} --to approved --force "
        f"--agent {quote(me)} --self-review-fallback --intended-reviewer {quote(intended)} "
        "--reviewer-failure-reason 'one person works on this mission' "
        "--note 'Self-review fallback: no second reviewer'"
    )
    return (
        f"review it under a second identity: `{review}` "
        f"(then its verdict with --agent {quote(second)}), or approve it as a recorded "
        f"self-review: `{fallback}`"
    )


def _capped(
    ctx: Context, by_lane: dict[str, list[str]]
) -> tuple[list[str], list[dict[str, Any]], bool]:
    """WPs at the review cycle cap: who may arbitrate (another agent may come, or only a
    person can, with the choices to fill in), and whether an agent may still come."""
    blockers: list[str] = []
    choices: list[dict[str, Any]] = []
    movable = False
    for w in by_lane.get(lanes.PLANNED, []) + by_lane.get(lanes.IN_PROGRESS, []):
        st = state_of(ctx, w)
        if not at_cycle_cap(st, ctx.max_cycles):
            continue
        if others_may_come(ctx, st.implementer):
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
        for option in arbiter_choices(w, ctx.mission, ARBITER_PERSON):
            option["fill"] = {
                ARBITER_PERSON: f"your name (a person; not {st.implementer}, who implemented it)",
                **option["fill"],
            }
            choices.append(option)
    return blockers, choices, movable


def _planned(ctx: Context, by_lane: dict[str, list[str]]) -> list[str]:
    """What each planned WP (below the cap) waits for: its dependencies, or its lane."""
    blockers: list[str] = []
    for w in by_lane.get(lanes.PLANNED, []):
        if at_cycle_cap(state_of(ctx, w), ctx.max_cycles):
            continue
        deps = [d for d in ctx.wps[w].dependencies if ctx.board.lane(d) not in lanes.SATISFIED]
        if deps:
            blockers.append(
                f"{w} waits for " + ", ".join(f"{d} ({describe(ctx, d)})" for d in deps)
            )
            continue
        holder = lane_holder(ctx, w)
        if holder:
            blockers.append(
                f"{w} waits for its lane {ctx.wp_lane.get(w)} ({holder} {describe(ctx, holder)})"
            )
    return blockers
