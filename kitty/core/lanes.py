"""Lanes and the transition table: the single authority on which moves exist.

Guards (subtasks done, review evidence, ...) live in `kitty.core.transitions`;
this module only says which edges exist without `--force`.
"""

from __future__ import annotations

GENESIS = "genesis"
PLANNED = "planned"
CLAIMED = "claimed"
IN_PROGRESS = "in_progress"
FOR_REVIEW = "for_review"
IN_REVIEW = "in_review"
APPROVED = "approved"
DONE = "done"
BLOCKED = "blocked"
CANCELED = "canceled"

#: Every lane a WP can be in, in board order.
LANES: tuple[str, ...] = (
    PLANNED,
    CLAIMED,
    IN_PROGRESS,
    FOR_REVIEW,
    IN_REVIEW,
    APPROVED,
    DONE,
    BLOCKED,
    CANCELED,
)
ALIASES = {"doing": IN_PROGRESS}

#: Legal moves without --force. `genesis` only ever appears as a from_lane.
TRANSITIONS: dict[str, frozenset[str]] = {
    GENESIS: frozenset({PLANNED, CANCELED}),
    PLANNED: frozenset({CLAIMED, BLOCKED, CANCELED}),
    CLAIMED: frozenset({IN_PROGRESS, BLOCKED, CANCELED}),
    IN_PROGRESS: frozenset({FOR_REVIEW, APPROVED, PLANNED, BLOCKED, CANCELED}),
    FOR_REVIEW: frozenset({IN_REVIEW, BLOCKED, CANCELED}),
    IN_REVIEW: frozenset({APPROVED, DONE, IN_PROGRESS, PLANNED, BLOCKED, CANCELED}),
    APPROVED: frozenset({DONE, IN_PROGRESS, PLANNED, BLOCKED, CANCELED}),
    BLOCKED: frozenset({IN_PROGRESS, PLANNED, CANCELED}),
    DONE: frozenset(),
    CANCELED: frozenset(),
}

#: Lanes that satisfy a dependency: approval unblocks dependents at once.
SATISFIED = frozenset({APPROVED, DONE})
#: Lanes in which somebody is actively working on the WP.
IN_FLIGHT = frozenset({CLAIMED, IN_PROGRESS, FOR_REVIEW, IN_REVIEW})
TERMINAL = frozenset({DONE, CANCELED})
#: What `agent tasks mark-status --status` sets a subtask to.
SUBTASK_STATUSES = (DONE, PLANNED, IN_PROGRESS)

#: Weighted readiness per lane for the progress bar.
WEIGHTS = {
    PLANNED: 0.0,
    CLAIMED: 0.05,
    IN_PROGRESS: 0.3,
    FOR_REVIEW: 0.6,
    IN_REVIEW: 0.7,
    APPROVED: 0.8,
    DONE: 1.0,
    BLOCKED: 0.0,
    CANCELED: 0.0,
}


def canonical(name: str) -> str | None:
    """Return the canonical lane for `name` (accepting aliases), or None if unknown."""
    lane = ALIASES.get(name, name)
    return lane if lane in TRANSITIONS else None


def hops(from_lane: str | None, to_lane: str) -> tuple[str, ...]:
    """The lanes an unforced move to `to_lane` passes through, in order.

    Spec Kitty's move-task walks forward lane by lane; the one walk its transition
    table makes legal is planned -> claimed -> in_progress (`--to doing` from
    planned: claiming and starting in one command). Every other move is one step.
    """
    if from_lane == PLANNED and to_lane == IN_PROGRESS:
        return (CLAIMED, IN_PROGRESS)
    return (to_lane,)


def legal_targets(from_lane: str) -> list[str]:
    """Lanes reachable from `from_lane` without --force, in board order."""
    allowed = TRANSITIONS.get(from_lane, frozenset())
    return [lane for lane in LANES if lane in allowed]
