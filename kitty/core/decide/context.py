"""What `kitty next` decides from: the input (Context), and the facts about one WP that
every rule reads (where it is, who holds it, how long, stalled).

Pure, like the rest of kitty.core.decide: the answer is `decision`, the order of the
steps `steps`, the arbiter's, wait and blocked answers `waiting`.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from functools import cached_property
from typing import Any

from kitty.core import lanes, transitions
from kitty.core.clock import duration_ticks_at, humanize_duration
from kitty.core.log.state import Board, WPState
from kitty.core.model import WorkPackage, wp_number
from kitty.core.record import Record

#: Agent ids may hold spaces and parentheses (Spec Kitty histories do): quoted in
#: every printed command so it runs as printed.
quote = shlex.quote

#: Silence (no event on the WP, no heartbeat) after which a review is STALLED (the
#: default of review.stall_minutes; README).
REVIEW_STALL_US = 30 * 60 * 1_000_000
#: The annotation a refused approval leaves when its reviewer changed the lane:
#: `<review_head>|<what changed>` (kitty.workflow.lanecheck).
LANE_CHANGED = "review_lane_changed"


class Context(Record, frozen=True, uncompared=("changes",)):
    mission: str
    agent: str
    wps: Mapping[str, WorkPackage]
    board: Board
    wp_lane: Mapping[str, str]
    max_cycles: int
    accepted: bool
    now_us: int
    panel: bool  # review.panel is configured: reviews run `kitty review run`
    #: The configured agents (agents.available); empty when unknown.
    agents: tuple[str, ...]
    #: Open questions of a panel's blocker HALT, by WP: [{id, question, options: [label]}]
    #: (read from the HALT file by the service; the answered ones left out).
    halt_questions: Mapping[str, list[dict[str, Any]]]
    #: A review with no activity for this long is STALLED: `next` offers the takeover.
    stall_us: int
    #: When given, receives each time (µs) at which the decision may change by the clock
    #: alone: a printed duration ticks over, a review turns STALLED (a cached `next`
    #: holds until the earliest of them).
    changes: list[int] | None

    def __init__(
        self,
        mission: str,
        agent: str,
        wps: Mapping[str, WorkPackage],
        board: Board,
        wp_lane: Mapping[str, str],
        max_cycles: int = 3,
        accepted: bool = False,
        now_us: int = 0,
        panel: bool = False,
        agents: tuple[str, ...] = (),
        halt_questions: Mapping[str, list[dict[str, Any]]] | None = None,
        stall_us: int = REVIEW_STALL_US,
        changes: list[int] | None = None,
    ) -> None:
        object.__setattr__(self, "mission", mission)
        object.__setattr__(self, "agent", agent)
        object.__setattr__(self, "wps", wps)
        object.__setattr__(self, "board", board)
        object.__setattr__(self, "wp_lane", wp_lane)
        object.__setattr__(self, "max_cycles", max_cycles)
        object.__setattr__(self, "accepted", accepted)
        object.__setattr__(self, "now_us", now_us)
        object.__setattr__(self, "panel", panel)
        object.__setattr__(self, "agents", agents)
        object.__setattr__(self, "halt_questions", {} if halt_questions is None else halt_questions)
        object.__setattr__(self, "stall_us", stall_us)
        object.__setattr__(self, "changes", changes)

    @cached_property
    def lane_holders(self) -> dict[str, list[str]]:
        """Execution lane -> its WPs in flight (computed once: `next` asks per planned WP)."""
        holders: dict[str, list[str]] = {}
        for wp_id, lane in self.wp_lane.items():
            if self.board.lane(wp_id) in lanes.IN_FLIGHT:
                holders.setdefault(lane, []).append(wp_id)
        return holders


def state_of(ctx: Context, wp_id: str) -> WPState:
    return ctx.board.wps.get(wp_id) or WPState(wp_id)


def since(ctx: Context, st: WPState) -> str:
    """` for 12m`: how long the WP has been in its lane ("" without a clock reading)."""
    if st.lane_since_us is None or not ctx.now_us:
        return ""
    elapsed = ctx.now_us - st.lane_since_us
    if ctx.changes is not None:
        ctx.changes.append(st.lane_since_us + duration_ticks_at(elapsed))
    return f" for {humanize_duration(elapsed / 1e6)}"


def describe(ctx: Context, wp_id: str) -> str:
    """`in_review by codex for 12m` — where a WP is and who holds it."""
    st = state_of(ctx, wp_id)
    lane = st.lane or "not finalized"
    who = st.reviewer if st.lane == lanes.IN_REVIEW else st.agent
    by = f" by {who}" if who and st.lane in lanes.IN_FLIGHT else ""
    return f"{lane}{by}{since(ctx, st)}"


def deps_ready(ctx: Context, wp_id: str) -> bool:
    return all(ctx.board.lane(d) in lanes.SATISFIED for d in ctx.wps[wp_id].dependencies)


def lane_holder(ctx: Context, wp_id: str) -> str | None:
    """Another WP of the same execution lane that is in flight, if any."""
    holders = ctx.lane_holders.get(ctx.wp_lane.get(wp_id, ""), [])
    return next((other for other in holders if other != wp_id), None)


def cycle_label(st: WPState, max_cycles: int) -> str | None:
    """`1/3` after one rejection (kitty.core.transitions.cycle_label)."""
    return transitions.cycle_label(st, max_cycles)


def oldest(ctx: Context, ids: list[str]) -> list[str]:
    """`ids`, the longest in their lane first."""
    return sorted(ids, key=lambda w: (state_of(ctx, w).lane_since_us or 0, wp_number(w) or 0, w))


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
        if ctx.changes is not None:
            ctx.changes.append(last + ctx.stall_us + 1)
        return None
    if ctx.changes is not None:
        ctx.changes.append(last + duration_ticks_at(silent))
    return f"no activity for {humanize_duration(silent / 1e6)}"


def _heartbeat_us(value: Any) -> int:
    if not isinstance(value, str) or not value:
        return 0
    from kitty.core.clock import parse_at

    try:
        return parse_at(value)
    except ValueError:
        return 0


def lane_changed(st: WPState) -> str | None:
    """What its reviewer changed in the lane of a WP in review (an approval was refused
    for it), or None; a new review (another review_head) starts clean."""
    value = st.scalars.get(LANE_CHANGED)
    if st.lane != lanes.IN_REVIEW or not isinstance(value, str):
        return None
    head, _, changed = value.partition("|")
    return changed if head and head == st.scalars.get("review_head") else None


def others_may_come(ctx: Context, implementer: str | None) -> bool:
    """Whether an agent other than `implementer` may come (unknown roster: assume so)."""
    return not ctx.agents or any(a != implementer for a in ctx.agents)
