"""`kitty next` when the answer is the arbiter's or a reviewer's to give: a review loop at
its cap, a review panel's HALT, a review whose lane changed under it, a stalled review
someone else may take over. Pure, like the rest of kitty.core.decide.
"""

from __future__ import annotations

from typing import Any

from kitty.core.decide.context import (
    Context,
    cycle_label,
    lane_changed,
    quote,
    since,
    stalled,
    state_of,
)
from kitty.core.decide.decision import (
    ARBITER,
    REVIEW,
    Decision,
    choice,
)
from kitty.core.transitions import arbiter_choices, cycle_count, halted


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
