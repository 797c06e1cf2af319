"""`kitty next` when nobody has work yet: wait while something is in flight, blocked
when nothing can move without a human (the arbiter's answers are kitty.core.decide.arbiter).
Pure, like the rest of kitty.core.decide.
"""

from __future__ import annotations

from typing import Any

from kitty.core import lanes
from kitty.core.decide.context import (
    Context,
    describe,
    lane_holder,
    others_may_come,
    quote,
    stalled,
    state_of,
)
from kitty.core.decide.decision import (
    ARBITER_PERSON,
    BLOCKED,
    WAIT,
    Decision,
    choice,
)
from kitty.core.transitions import arbiter_choices, at_cycle_cap


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
