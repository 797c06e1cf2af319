"""The fold's records: what replay keeps per WP (WPState), a review verdict
(ReviewRecord) and a transition replay refused (Conflict). Plain data: the fold's
rules (admit.py, apply.py) and the fold itself (state.py) import them from here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class ReviewRecord:
    """One review verdict carried by a transition out of review."""

    verdict: str
    reviewer: str | None
    at: str
    reference: str | None
    feedback_path: str | None
    to_lane: str
    event_id: str
    cycle: int | None = None  # the rejection number, for changes_requested verdicts
    note: str | None = None


@dataclass(slots=True)
class Conflict:
    """A transition kept in the log but not applied by replay (see the module doc)."""

    event_id: str
    wp_id: str
    line: int
    at: str
    agent: str | None
    machine: str | None
    from_lane: str
    to_lane: str
    lane: str  # the lane the WP was in when the event came up in replay order
    kind: str  # stale_from_lane | illegal_edge | self_review | not_holder
    message: str
    holder: str | None = None  # who held the WP then (the winner of a race)
    resolved_by: str | None = None  # event id of the resolution, if any

    def to_json(self) -> dict[str, Any]:
        return {
            "event_id": self.event_id,
            "wp_id": self.wp_id,
            "line": self.line,
            "at": self.at,
            "agent": self.agent,
            "machine": self.machine,
            "from_lane": self.from_lane,
            "to_lane": self.to_lane,
            "lane": self.lane,
            "kind": self.kind,
            "message": self.message,
            "holder": self.holder,
            "resolved_by": self.resolved_by,
        }


@dataclass(slots=True)
class WPState:
    wp_id: str
    lane: str | None = None  # None: no transition yet (mission not finalized)
    agent: str | None = None
    actor: str | None = None
    implementer: str | None = None
    reviewer: str | None = None
    subtasks: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    force_count: int = 0
    review_cycles: int = 0
    last_transition_at: str | None = None
    lane_since_us: int | None = None
    last_event_id: str | None = None
    last_activity_us: int | None = None
    review_result: dict[str, Any] | None = None
    reviews: list[ReviewRecord] = field(default_factory=list)
    arbiter: dict[str, Any] | None = None
    self_review: dict[str, Any] | None = None
    scalars: dict[str, Any] = field(default_factory=dict)
    runtime_claim: dict[str, Any] | None = None
    last_reason: str | None = None
    #: None, `has_feedback` after a rejection, `acknowledged` once the implementer took it up.
    review_status: str | None = None
    #: The last applied transition: (from_lane, agent, at_us, machine), to spot replicas.
    entry: tuple[str, str | None, int, str | None] | None = None
    conflicts: list[Conflict] = field(default_factory=list)
    reclaim: dict[str, Any] | None = None  # the last lease takeover: previous holder
    #: The last applied transition: (event_id, at as written, a review rollback?).
    setter: tuple[str, str, bool] | None = None
    #: Predecessors (`kitty_after`, "" for none) of the applied linked transitions.
    taken: set[str] = field(default_factory=set)
    #: Ids of the transitions refused as conflicts: their descendants are refused too.
    lost: set[str] = field(default_factory=set)
    #: Spec Kitty's runtime slots (agent, shell_pid, ...) as its reducer records them:
    #: what `planned -> claimed` policies set, overlaid by what annotations set or
    #: released (Spec Kitty folds every annotation after every transition).
    claim_slots: dict[str, Any] = field(default_factory=dict)
    noted_slots: dict[str, Any] = field(default_factory=dict)

    @property
    def sk_slots(self) -> dict[str, Any]:
        return {**self.claim_slots, **self.noted_slots}

    @property
    def sk_agent(self) -> Any:
        return self.sk_slots.get("agent")

    #: Ids of the transitions applied since the current holder took the WP (core.holders).
    since_hold: set[str] = field(default_factory=set)
