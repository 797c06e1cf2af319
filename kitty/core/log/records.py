"""The fold's records: what replay keeps per WP (WPState), a review verdict
(ReviewRecord) and a transition replay refused (Conflict). Plain data: the fold's
rules (admit.py, apply.py) and the fold itself (state.py) import them from here.
"""

from __future__ import annotations

from typing import Any

from kitty.core.record import Record


class ReviewRecord(Record):
    """One review verdict carried by a transition out of review."""

    __slots__ = (
        "at",
        "cycle",
        "event_id",
        "feedback_path",
        "note",
        "reference",
        "reviewer",
        "to_lane",
        "verdict",
    )

    verdict: str
    reviewer: str | None
    at: str
    reference: str | None
    feedback_path: str | None
    to_lane: str
    event_id: str
    cycle: int | None  # the rejection number, for changes_requested verdicts
    note: str | None

    def __init__(
        self,
        verdict: str,
        reviewer: str | None,
        at: str,
        reference: str | None,
        feedback_path: str | None,
        to_lane: str,
        event_id: str,
        cycle: int | None = None,
        note: str | None = None,
    ) -> None:
        self.verdict = verdict
        self.reviewer = reviewer
        self.at = at
        self.reference = reference
        self.feedback_path = feedback_path
        self.to_lane = to_lane
        self.event_id = event_id
        self.cycle = cycle
        self.note = note


class Conflict(Record):
    """A transition kept in the log but not applied by replay (see the module doc)."""

    __slots__ = (
        "agent",
        "at",
        "event_id",
        "from_lane",
        "holder",
        "kind",
        "lane",
        "line",
        "machine",
        "message",
        "resolved_by",
        "to_lane",
        "wp_id",
    )

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
    holder: str | None  # who held the WP then (the winner of a race)
    resolved_by: str | None  # event id of the resolution, if any

    def __init__(
        self,
        event_id: str,
        wp_id: str,
        line: int,
        at: str,
        agent: str | None,
        machine: str | None,
        from_lane: str,
        to_lane: str,
        lane: str,
        kind: str,
        message: str,
        holder: str | None = None,
        resolved_by: str | None = None,
    ) -> None:
        self.event_id = event_id
        self.wp_id = wp_id
        self.line = line
        self.at = at
        self.agent = agent
        self.machine = machine
        self.from_lane = from_lane
        self.to_lane = to_lane
        self.lane = lane
        self.kind = kind
        self.message = message
        self.holder = holder
        self.resolved_by = resolved_by

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


class WPState(Record):
    __slots__ = (
        "actor",
        "agent",
        "arbiter",
        "claim_slots",
        "conflicts",
        "entry",
        "force_count",
        "implementer",
        "lane",
        "lane_since_us",
        "last_activity_us",
        "last_event_id",
        "last_reason",
        "last_transition_at",
        "lost",
        "noted_slots",
        "notes",
        "reclaim",
        "review_cycles",
        "review_result",
        "review_status",
        "reviewer",
        "reviews",
        "runtime_claim",
        "scalars",
        "self_review",
        "setter",
        "since_hold",
        "subtasks",
        "taken",
        "usage",
        "wp_id",
    )
    wp_id: str
    lane: str | None  # None: no transition yet (mission not finalized)
    agent: str | None
    actor: str | None
    implementer: str | None
    reviewer: str | None
    subtasks: dict[str, str]
    notes: list[str]
    force_count: int
    review_cycles: int
    last_transition_at: str | None
    lane_since_us: int | None
    last_event_id: str | None
    last_activity_us: int | None
    review_result: dict[str, Any] | None
    reviews: list[ReviewRecord]
    arbiter: dict[str, Any] | None
    self_review: dict[str, Any] | None
    scalars: dict[str, Any]
    runtime_claim: dict[str, Any] | None
    last_reason: str | None
    #: None, `has_feedback` after a rejection, `acknowledged` once the implementer took it up.
    review_status: str | None
    #: The last applied transition: (from_lane, agent, at_us, machine), to spot replicas.
    entry: tuple[str, str | None, int, str | None] | None
    conflicts: list[Conflict]
    reclaim: dict[str, Any] | None  # the last lease takeover: previous holder
    #: The last applied transition: (event_id, at as written, a review rollback?).
    setter: tuple[str, str, bool] | None
    #: Predecessors (`kitty_after`, "" for none) of the applied linked transitions.
    taken: set[str]
    #: Ids of the transitions refused as conflicts: their descendants are refused too.
    lost: set[str]
    #: Spec Kitty's runtime slots (agent, shell_pid, ...) as its reducer records them:
    #: what `planned -> claimed` policies set, overlaid by what annotations set or
    #: released (Spec Kitty folds every annotation after every transition).
    claim_slots: dict[str, Any]
    noted_slots: dict[str, Any]
    #: Ids of the transitions applied since the current holder took the WP (core.holders).
    since_hold: set[str]
    #: What the agent runs recorded for this WP cost, summed (`agent_run` annotations).
    usage: dict[str, Any] | None

    def __init__(
        self,
        wp_id: str,
        lane: str | None = None,
        agent: str | None = None,
        actor: str | None = None,
        implementer: str | None = None,
        reviewer: str | None = None,
        subtasks: dict[str, str] | None = None,
        notes: list[str] | None = None,
        force_count: int = 0,
        review_cycles: int = 0,
        last_transition_at: str | None = None,
        lane_since_us: int | None = None,
        last_event_id: str | None = None,
        last_activity_us: int | None = None,
        review_result: dict[str, Any] | None = None,
        reviews: list[ReviewRecord] | None = None,
        arbiter: dict[str, Any] | None = None,
        self_review: dict[str, Any] | None = None,
        scalars: dict[str, Any] | None = None,
        runtime_claim: dict[str, Any] | None = None,
        last_reason: str | None = None,
        review_status: str | None = None,
        entry: tuple[str, str | None, int, str | None] | None = None,
        conflicts: list[Conflict] | None = None,
        reclaim: dict[str, Any] | None = None,
        setter: tuple[str, str, bool] | None = None,
        taken: set[str] | None = None,
        lost: set[str] | None = None,
        claim_slots: dict[str, Any] | None = None,
        noted_slots: dict[str, Any] | None = None,
        since_hold: set[str] | None = None,
        usage: dict[str, Any] | None = None,
    ) -> None:
        self.wp_id, self.lane, self.agent, self.actor = wp_id, lane, agent, actor
        self.implementer, self.reviewer = implementer, reviewer
        self.subtasks = {} if subtasks is None else subtasks
        self.notes = [] if notes is None else notes
        self.force_count, self.review_cycles = force_count, review_cycles
        self.last_transition_at, self.lane_since_us = last_transition_at, lane_since_us
        self.last_event_id, self.last_activity_us = last_event_id, last_activity_us
        self.review_result = review_result
        self.reviews = [] if reviews is None else reviews
        self.arbiter, self.self_review = arbiter, self_review
        self.scalars = {} if scalars is None else scalars
        self.runtime_claim, self.last_reason = runtime_claim, last_reason
        self.review_status, self.entry = review_status, entry
        self.conflicts = [] if conflicts is None else conflicts
        self.reclaim, self.setter = reclaim, setter
        self.taken = set() if taken is None else taken
        self.lost = set() if lost is None else lost
        self.claim_slots = {} if claim_slots is None else claim_slots
        self.noted_slots = {} if noted_slots is None else noted_slots
        self.since_hold = set() if since_hold is None else since_hold
        self.usage = usage

    @property
    def sk_slots(self) -> dict[str, Any]:
        return {**self.claim_slots, **self.noted_slots}

    @property
    def sk_agent(self) -> Any:
        return self.sk_slots.get("agent")
