"""Whether replay applies a lane transition: the fork rule (see `kitty.core.log.state`).

History (no `kitty_after`) applies as Spec Kitty 3.2.7's reducer applies it, except a
forward move at the very `at` of the review rollback that set the lane. A linked
transition (kitty's own) is refused as a conflict when it forks (its predecessor was
already followed), descends from a refused move, breaks the transition table
unforced, is made by someone who does not hold the WP, or approves the WP's own
implementation without the self-review fallback; a repeated bootstrap and a replica
of the move that brought the WP into its lane are skipped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kitty.core import lanes
from kitty.core.log.events import Transition
from kitty.core.log.holders import NOT_HOLDER, holder_conflict

if TYPE_CHECKING:
    from kitty.core.log.records import WPState

_NO_POLICY: dict[str, Any] = {}  # read only

#: `admit` verdicts besides a conflict kind.
APPLY, SKIP = "apply", "skip"


def event_agent(ev: Transition) -> str | None:
    """The agent a transition speaks for: `policy_metadata.agent`, else the actor's tool."""
    agent = ev.policy.get("agent") if ev.policy else None
    return agent if isinstance(agent, str) and agent else ev.tool


def event_machine(ev: Transition) -> str | None:
    machine = ev.policy.get("machine") if ev.policy else None
    return machine if isinstance(machine, str) and machine else None


def admit(st: WPState, ev: Transition) -> tuple[str, str]:
    """Decide whether replay applies `ev`: (APPLY|SKIP, "") or (conflict kind, message)."""
    setter = st.setter
    if not ev.linked:
        # Spec Kitty's `_should_apply_event`: a forward move at the very `at` of the
        # rollback that set the lane does not replace it; anything else applies.
        if setter is not None and setter[2] and setter[1] == ev.at and not ev.rollback:
            return SKIP, ""
        return APPLY, ""
    lane = st.lane or lanes.GENESIS
    frm = ev.from_lane
    if lane == lanes.GENESIS and frm == lanes.PLANNED:
        lane = lanes.PLANNED  # Spec Kitty logs may start without the bootstrap
    if frm == lanes.GENESIS and ev.to_lane == lanes.PLANNED and st.lane is not None:
        return SKIP, ""  # a repeated bootstrap: finalize is idempotent
    after = ev.after or ""
    if after in st.lost:
        return "stale_from_lane", (
            f"{ev.wp_id} {frm} -> {ev.to_lane} by {event_agent(ev) or 'unknown'} was not applied: "
            f"it follows {after}, a move that was not applied"
        )
    current = setter[0] if setter is not None else ""
    if after in st.taken or (frm != lane and after == current):
        return _followed(st, ev, lane)
    return _checked(st, ev, lane)


def _followed(st: WPState, ev: Transition, lane: str) -> tuple[str, str]:
    """A linked move whose predecessor was already followed: a replica or a fork."""
    frm = ev.from_lane
    entry = st.entry
    if (
        entry is not None
        and ev.to_lane == lane
        and frm == entry[0]
        and (ev.at_us == entry[2] or (event_agent(ev) == entry[1] and entry[1] is not None))
        and (event_machine(ev) in (None, entry[3]) or entry[3] is None)
    ):
        return SKIP, ""  # a replica of the move that brought the WP here
    mover = event_agent(ev)
    message = (
        f"{ev.wp_id} {frm} -> {ev.to_lane} by {mover or 'unknown'} was not applied: "
        f"{ev.wp_id} was already {lane}"
    )
    reclaim = st.reclaim
    if mover and isinstance(reclaim, dict) and reclaim.get("previous_holder") == mover:
        message += (
            f"; {reclaim.get('by') or st.agent} reclaimed it when {mover}'s lease expired"
            f" at {reclaim.get('lease_expired_at')}, and this move would undo that"
        )
    return "stale_from_lane", message


def _checked(st: WPState, ev: Transition, lane: str) -> tuple[str, str]:
    """A linked move after its predecessor (or after history it did not link to: the
    later move wins, as in Spec Kitty), its edge checked from the lane its writer saw."""
    frm = ev.from_lane
    base = lane if frm == lane else frm
    if ev.to_lane == base:
        return APPLY, ""  # a self-loop (e.g. `doing` -> `in_progress`) changes nothing
    not_holder = holder_conflict(st, lane, ev, event_agent(ev))  # kitty-written moves only
    if not_holder is not None:
        return NOT_HOLDER, not_holder
    if not ev.force and ev.to_lane not in lanes.TRANSITIONS.get(base, frozenset()):
        return "illegal_edge", (
            f"{ev.wp_id} {base} -> {ev.to_lane} is not a legal move without --force "
            "and was not applied"
        )
    if ev.to_lane == lanes.APPROVED:
        agent = ev.tool or event_agent(ev)
        policy = ev.policy or _NO_POLICY
        if (
            st.implementer
            and agent == st.implementer
            and not isinstance(policy.get("self_review_fallback"), dict)
        ):
            return "self_review", (
                f"{agent} implemented {ev.wp_id} and approved it without the self-review "
                "fallback; the approval was not applied"
            )
    return APPLY, ""
