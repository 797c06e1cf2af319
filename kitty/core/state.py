"""Replay the event log onto an empty board: the only way lane state is computed.

`replay` is pure: events in, `Board` out. Ordering follows FORMAT.md: drop
repeated event ids (first wins), sort by (`at` as a time, `event_id`), then
fold transitions and annotations in that one order.

Two kinds of transition share the log. History (every line without kitty's
`kitty_after` key: what Spec Kitty, or an older kitty, wrote) is folded exactly
as Spec Kitty 3.2.7's reducer folds it: the last transition in replay order sets the
lane, whatever its `from_lane` and edge, except that a forward move never replaces
a review rollback stamped with the very same `at` (its "rollback-aware precedence").
History never raises a conflict: without a causal link the log cannot prove a fork.

kitty's own transitions carry `kitty_after`, the id of the WP's last applied
transition the writer saw (null for none). Replay checks them, so that merged
histories from several clones give the same board everywhere:
* two of them on one WP with the same predecessor are a fork: the first in
  replay order wins, the other is a `stale_from_lane` conflict;
* one whose predecessor was refused belongs to the losing branch: refused too;
* one that breaks the transition table (unforced) or approves the WP's own
  implementation without the self-review fallback is a conflict.
Refused events stay in the log; each becomes a `Conflict` on the board. Where a
linked event follows history it did not link to (a Spec Kitty user moved the WP on
another clone), the later one wins, as Spec Kitty decides; a repeated bootstrap
(`genesis -> planned` of a WP that already has a lane) and a replica of the move
that brought the WP into its lane (same edge, same agent or same instant: a retry)
are no-ops.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import suppress
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

from kitty.core import lanes
from kitty.core.events import LINK_KEY, Annotation, Event, LogWarning, Transition
from kitty.core.holders import NOT_HOLDER, holder_conflict

#: Annotation delta keys with a dedicated meaning; other scalars are kept latest-wins.
_STRUCTURED_DELTA = frozenset(
    {"subtasks", "note", "release_runtime_claim", "review", "conflicts_resolved", "review_status"}
)
#: `review_status` values (Spec Kitty's names): feedback waiting, and read by the implementer.
HAS_FEEDBACK, ACKNOWLEDGED = "has_feedback", "acknowledged"
#: Lanes in which a process holds the WP (for_review waits for a reviewer instead).
HELD = frozenset({lanes.CLAIMED, lanes.IN_PROGRESS, lanes.IN_REVIEW})
#: Annotation keys that describe the process holding a WP.
CLAIM_KEYS = ("shell_pid", "agent_pid", "agent_started_at", "sprint_run")
#: Spec Kitty's runtime slots: set by a `planned -> claimed` policy (besides `agent`),
#: replaced by annotations, cleared by `release_runtime_claim` (its reducer's tables).
SK_CLAIM_SLOTS = ("shell_pid", "shell_pid_created_at")
SK_NOTED_SLOTS = (
    "shell_pid",
    "shell_pid_created_at",
    "agent",
    "assignee",
    "role",
    "agent_profile",
    "agent_profile_version",
    "model",
    "provider",
)
SK_RELEASED_SLOTS = ("agent", "shell_pid", "shell_pid_created_at")
#: Policy keys of a claim made through a remote (see kitty.services.leases).
LEASE_KEYS = ("machine", "lease_seconds")


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


#: Annotation delta key that marks a WP's open conflicts as resolved.
RESOLVE_KEY = "conflicts_resolved"


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


@dataclass(slots=True)
class Board:
    wps: dict[str, WPState] = field(default_factory=dict)
    event_count: int = 0
    last_event_id: str | None = None
    newest_at_us: int | None = None
    warnings: list[LogWarning] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)

    def open_conflicts(self) -> list[Conflict]:
        return [c for c in self.conflicts if c.resolved_by is None]

    def get(self, wp_id: str) -> WPState:
        state = self.wps.get(wp_id)
        if state is None:
            state = self.wps[wp_id] = WPState(wp_id)
        return state

    def lane(self, wp_id: str) -> str | None:
        state = self.wps.get(wp_id)
        return state.lane if state else None


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def event_agent(ev: Transition) -> str | None:
    """The agent a transition speaks for: `policy_metadata.agent`, else the actor's tool."""
    agent = ev.policy.get("agent") if ev.policy else None
    return agent if isinstance(agent, str) and agent else ev.tool


def event_machine(ev: Transition) -> str | None:
    machine = ev.policy.get("machine") if ev.policy else None
    return machine if isinstance(machine, str) and machine else None


_NO_POLICY: dict[str, Any] = {}  # read only

#: `_admit` verdicts besides a conflict kind.
APPLY, SKIP = "apply", "skip"


def link_of(st: WPState | None) -> str | None:
    """The `kitty_after` a writer gives its next transition on the WP (the causal link)."""
    return st.setter[0] if st is not None and st.setter is not None else None


def link(records: list[dict[str, Any]], board: Board) -> None:
    """Give each lane transition among `records` (event ids already set) its causal link:
    the WP's last applied transition on `board`, or the previous record of the batch."""
    last: dict[str, str | None] = {}
    for rec in records:
        if "from_lane" not in rec or "kind" in rec or "event_type" in rec or "type" in rec:
            continue
        wp_id = rec.get("wp_id")
        if not isinstance(wp_id, str):
            continue
        rec.setdefault(LINK_KEY, last[wp_id] if wp_id in last else link_of(board.wps.get(wp_id)))
        last[wp_id] = rec.get("event_id")


def _admit(st: WPState, ev: Transition) -> tuple[str, str]:
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
    # Linked to an earlier state with only history after it: the later move wins (as in
    # Spec Kitty); its edge is checked from the lane its writer saw.
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


def _apply_transition(st: WPState, ev: Transition) -> None:
    # Runs once per applied transition (hundreds of thousands in a big log): every
    # field of the event is read once, event_agent/event_machine are inlined.
    tool = ev.tool
    policy = ev.policy or _NO_POLICY
    said = policy.get("agent")
    agent = said if isinstance(said, str) else tool
    machine = policy.get("machine")
    to_lane, from_lane, at = ev.to_lane, ev.from_lane, ev.at
    force = ev.force
    previous = st.lane
    st.setter = (ev.event_id, at, ev.rollback)
    if ev.linked:
        st.taken.add(ev.after or "")
    if from_lane == lanes.PLANNED and to_lane == lanes.CLAIMED and policy:
        for key in SK_CLAIM_SLOTS:
            if policy.get(key) is not None:
                st.claim_slots[key] = policy[key]
        if said:  # an empty agent is no claim (Spec Kitty #2960)
            st.claim_slots["agent"] = said
    st.entry = (
        from_lane,
        said if isinstance(said, str) and said else tool,
        ev.at_us,
        machine if isinstance(machine, str) and machine else None,
    )
    st.lane = to_lane
    st.actor = tool
    st.last_transition_at = at
    st.lane_since_us = ev.at_us
    st.last_reason = ev.reason
    if force:
        st.force_count += 1
    if to_lane == lanes.CLAIMED or (
        to_lane == lanes.IN_PROGRESS and from_lane in (lanes.CLAIMED, lanes.PLANNED)
    ):
        st.implementer = agent
        st.agent = agent
        st.since_hold = set()
    elif to_lane == lanes.IN_REVIEW:
        st.reviewer = agent
        st.agent = agent
        st.since_hold = set()
    st.since_hold.add(ev.event_id)
    # The runtime claim says which process holds the WP; a new holder replaces it.
    if to_lane in HELD:
        if not (to_lane == lanes.IN_PROGRESS and previous == lanes.CLAIMED):
            st.runtime_claim = None
        if policy:
            if "shell_pid" in policy:
                st.runtime_claim = dict(
                    st.runtime_claim or {}, agent=agent, shell_pid=policy.get("shell_pid"), at=at
                )
            lease = {k: policy[k] for k in LEASE_KEYS if k in policy}
            if lease:
                st.runtime_claim = dict(st.runtime_claim or {}, agent=agent, at=at, **lease)
    else:
        st.runtime_claim = None
    result = ev.review_result
    if result is not None:
        st.review_result = result
        verdict = str(result.get("verdict") or "")
        reviewer = result.get("reviewer")
        record = ReviewRecord(
            verdict=verdict,
            reviewer=reviewer if isinstance(reviewer, str) else tool,
            at=at,
            reference=result.get("reference"),
            feedback_path=result.get("feedback_path"),
            to_lane=to_lane,
            event_id=ev.event_id,
            note=st.last_reason,
        )
        if verdict == "changes_requested" and to_lane in (lanes.PLANNED, lanes.IN_PROGRESS):
            st.review_cycles += 1
            record.cycle = st.review_cycles
            st.review_status = HAS_FEEDBACK
        elif verdict == "approved":
            st.review_status = None
        st.reviews.append(record)
    if not policy:
        arbiter = None
    else:
        arbiter = policy.get("arbiter")
        if isinstance(policy.get("self_review_fallback"), dict):
            st.self_review = dict(policy["self_review_fallback"], at=at)
        if isinstance(policy.get("reclaim"), dict):
            st.reclaim = dict(policy["reclaim"], at=at)
    # `cycles`: the rejections counted when it was decided (the cap restarts from there).
    if isinstance(arbiter, dict):
        st.arbiter = dict(arbiter, at=at, to_lane=to_lane, cycles=st.review_cycles)
    elif (
        force
        and to_lane in (lanes.APPROVED, lanes.BLOCKED, lanes.DONE)
        and ((st.last_reason or "").lower().startswith(("arbiter decision", "escalated")))
    ):
        st.arbiter = {
            "note": st.last_reason,
            "at": at,
            "to_lane": to_lane,
            "by": tool,
            "cycles": st.review_cycles,
        }


_NESTED = (dict, list)  # a tuple: isinstance is faster with it than with a union


def _apply_annotation(st: WPState, ev: Annotation) -> None:
    delta = ev.delta
    noted = st.noted_slots
    if delta.get("release_runtime_claim"):
        noted.update(dict.fromkeys(SK_RELEASED_SLOTS))
    for key in SK_NOTED_SLOTS:
        value = delta.get(key)
        if value is not None and value != "":
            if key == "shell_pid" and not isinstance(value, bool):
                with suppress(TypeError, ValueError):
                    value = int(value)  # Spec Kitty reads it with int()
            noted[key] = value
    subtasks = delta.get("subtasks")
    if isinstance(subtasks, dict):
        for task, status in subtasks.items():
            st.subtasks[str(task)] = str(status)
    note = delta.get("note")
    if isinstance(note, str) and note:
        st.notes.append(note)
    if delta.get("release_runtime_claim") is True:
        st.runtime_claim = None
    if delta.get("review_status") == ACKNOWLEDGED and st.review_status == HAS_FEEDBACK:
        st.review_status = ACKNOWLEDGED
    scalars = st.scalars
    for key, value in delta.items():
        if key in _STRUCTURED_DELTA or isinstance(value, _NESTED):
            continue
        scalars[key] = value
        if key == "agent" and isinstance(value, str) and value:
            st.agent = value
    if st.lane in HELD:
        claim = {k: delta[k] for k in CLAIM_KEYS if k in delta}
        if claim:
            st.runtime_claim = dict(st.runtime_claim or {}, **claim, at=ev.at)
    if "heartbeat" in delta and st.runtime_claim is not None:
        st.runtime_claim["heartbeat"] = ev.at


_FOLDED = (Transition, Annotation)  # a tuple: isinstance is faster with it than with a union
#: Replay order: (`at` as a time, `event_id`).
_ORDER = attrgetter("at_us", "event_id")


def replay(events: Iterable[Event]) -> Board:
    """Fold the log into a board. Unknown or conflicting records become warnings."""
    board = Board()
    first_seen: dict[str, Event] = {}
    ordered: list[Transition | Annotation] = []
    for ev in events:
        event_id = ev.event_id
        if event_id:
            earlier = first_seen.get(event_id)
            if earlier is not None:
                if earlier.data != ev.data:
                    board.warnings.append(
                        LogWarning(
                            ev.line,
                            f"event_id {event_id} repeats line {earlier.line} "
                            "with different content",
                        )
                    )
                continue
            first_seen[event_id] = ev
        if isinstance(ev, _FOLDED):
            ordered.append(ev)
    ordered.sort(key=_ORDER)
    _fold(board, ordered)
    return board


def fold(events: list[Transition | Annotation], repeats: list[LogWarning]) -> Board:
    """The board of events whose repeated ids were already dropped and reported in
    `repeats` (`events.scan_log`): the same board as `replay` of the whole log.
    Sorts `events` in place."""
    board = Board(warnings=list(repeats))
    events.sort(key=_ORDER)
    _fold(board, events)
    return board


def extend(board: Board, events: Iterable[Event]) -> Board:
    """Apply events that sort after everything already folded into `board`.

    The write path uses this after an append: kitty's hybrid clock guarantees its
    own events are the newest, so the board need not be replayed from scratch.
    """
    fresh = sorted((e for e in events if isinstance(e, Transition | Annotation)), key=_ORDER)
    if fresh and board.newest_at_us is not None and fresh[0].at_us <= board.newest_at_us:
        raise ValueError("extend() needs events newer than the board")
    _fold(board, fresh)
    return board


def _resolve(st: WPState, event_id: str) -> None:
    for conflict in st.conflicts:
        if conflict.resolved_by is None:
            conflict.resolved_by = event_id


def _fold(board: Board, ordered: list[Transition | Annotation]) -> None:
    wps = board.wps
    for ev in ordered:
        st = wps.get(ev.wp_id)
        if st is None:
            st = wps[ev.wp_id] = WPState(ev.wp_id)
        if isinstance(ev, Transition):
            verdict, message = _admit(st, ev)
            if verdict == SKIP:
                continue
            if verdict != APPLY:
                holder = st.reviewer if st.lane == lanes.IN_REVIEW else st.agent
                conflict = Conflict(
                    ev.event_id,
                    ev.wp_id,
                    ev.line,
                    ev.at,
                    event_agent(ev),
                    event_machine(ev),
                    ev.from_lane,
                    ev.to_lane,
                    st.lane or lanes.GENESIS,
                    verdict,
                    message,
                    holder,
                )
                st.conflicts.append(conflict)
                board.conflicts.append(conflict)
                st.lost.add(ev.event_id)
                continue
            if ev.force and st.conflicts:
                _resolve(st, ev.event_id)  # a forced move states the intended lane
            _apply_transition(st, ev)
        else:
            if ev.delta.get(RESOLVE_KEY) and st.conflicts:
                _resolve(st, ev.event_id)
            _apply_annotation(st, ev)
        st.last_event_id = ev.event_id
        st.last_activity_us = ev.at_us
    board.event_count += len(ordered)
    if ordered:
        board.last_event_id = ordered[-1].event_id
        board.newest_at_us = ordered[-1].at_us
