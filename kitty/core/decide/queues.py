"""The work `kitty next` and `kitty sprint` schedule, agent-agnostic: the queues of
reviews, fixes, capped and fresh WPs in priority order, and the approved WPs whose
subtasks a rejection reset.

Pure, like the rest of kitty.core.decide.
"""

from __future__ import annotations

from collections.abc import Mapping

from kitty.core import lanes
from kitty.core.decide.context import Context, deps_ready, lane_holder, oldest, state_of
from kitty.core.log.snapshot import sort_ids
from kitty.core.log.state import Board
from kitty.core.model import WorkPackage, wp_number
from kitty.core.record import Record
from kitty.core.schedule import chain_weights
from kitty.core.transitions import at_cycle_cap


class Queues(Record):
    """Schedulable work in priority order, agent-agnostic (shared by `next` and `sprint`)."""

    reviews: list[str]  # for_review, oldest first
    fixes: list[str]  # rejected and startable, oldest rejection first
    capped: list[str]  # rejected max_cycles times: need the arbiter
    fresh: list[str]  # never rejected and startable, longest chain first
    weights: dict[str, float]

    def __init__(
        self,
        reviews: list[str],
        fixes: list[str],
        capped: list[str],
        fresh: list[str],
        weights: dict[str, float],
    ) -> None:
        self.reviews = reviews
        self.fixes = fixes
        self.capped = capped
        self.fresh = fresh
        self.weights = weights


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
        if at_cycle_cap(state_of(ctx, w), ctx.max_cycles) and w not in exclude
    ]
    startable = [
        w for w in planned if w not in capped and deps_ready(ctx, w) and lane_holder(ctx, w) is None
    ]
    weights = chain_weights(ctx.wps)
    fixes = sorted(
        (w for w in startable if state_of(ctx, w).review_cycles),
        key=lambda w: (state_of(ctx, w).lane_since_us or 0, wp_number(w) or 0),
    )
    fresh = sorted(
        (w for w in startable if not state_of(ctx, w).review_cycles),
        key=lambda w: (-weights[w], wp_number(w) or 0, w),
    )
    reviews = oldest(ctx, [w for w in by_lane.get(lanes.FOR_REVIEW, []) if w not in exclude])
    return Queues(reviews, fixes, sorted(capped, key=lambda w: wp_number(w) or 0), fresh, weights)


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
