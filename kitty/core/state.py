"""Replay the event log onto an empty board: the only way lane state is computed.

`replay` is pure: events in, `Board` out. Ordering follows FORMAT.md: drop
repeated event ids (first wins), sort by (`at` as a time, `event_id`), then
fold transitions and annotations in that one order.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kitty.core import lanes
from kitty.core.events import Annotation, Event, LogWarning, Transition, actor_tool

#: Annotation delta keys with a dedicated meaning; other scalars are kept latest-wins.
_STRUCTURED_DELTA = frozenset({"subtasks", "note", "release_runtime_claim", "review"})
#: Lanes in which a process holds the WP (for_review waits for a reviewer instead).
HELD = frozenset({lanes.CLAIMED, lanes.IN_PROGRESS, lanes.IN_REVIEW})
#: Annotation keys that describe the process holding a WP.
CLAIM_KEYS = ("shell_pid", "agent_pid", "agent_started_at", "sprint_run")


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


@dataclass(slots=True)
class Board:
    wps: dict[str, WPState] = field(default_factory=dict)
    event_count: int = 0
    last_event_id: str | None = None
    newest_at_us: int | None = None
    warnings: list[LogWarning] = field(default_factory=list)

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


def _apply_transition(st: WPState, ev: Transition) -> None:
    data = ev.data
    tool = actor_tool(ev.actor)
    policy = as_dict(data.get("policy_metadata"))
    agent = policy.get("agent") if isinstance(policy.get("agent"), str) else tool
    previous = st.lane
    st.lane = ev.to_lane
    st.actor = tool
    st.last_transition_at = ev.at
    st.lane_since_us = ev.at_us
    st.last_reason = data.get("reason") if isinstance(data.get("reason"), str) else None
    if ev.force:
        st.force_count += 1
    if ev.to_lane == lanes.CLAIMED or (
        ev.to_lane == lanes.IN_PROGRESS and ev.from_lane in (lanes.CLAIMED, lanes.PLANNED)
    ):
        st.implementer = agent
        st.agent = agent
    elif ev.to_lane == lanes.IN_REVIEW:
        st.reviewer = agent
        st.agent = agent
    # The runtime claim says which process holds the WP; a new holder replaces it.
    if ev.to_lane in HELD:
        if not (ev.to_lane == lanes.IN_PROGRESS and previous == lanes.CLAIMED):
            st.runtime_claim = None
        if "shell_pid" in policy:
            st.runtime_claim = dict(
                st.runtime_claim or {}, agent=agent, shell_pid=policy.get("shell_pid"), at=ev.at
            )
    else:
        st.runtime_claim = None
    result = data.get("review_result")
    if isinstance(result, dict):
        st.review_result = result
        verdict = str(result.get("verdict") or "")
        record = ReviewRecord(
            verdict=verdict,
            reviewer=result.get("reviewer") if isinstance(result.get("reviewer"), str) else tool,
            at=ev.at,
            reference=result.get("reference"),
            feedback_path=result.get("feedback_path"),
            to_lane=ev.to_lane,
            event_id=ev.event_id,
            note=st.last_reason,
        )
        if verdict == "changes_requested" and ev.to_lane in (lanes.PLANNED, lanes.IN_PROGRESS):
            st.review_cycles += 1
            record.cycle = st.review_cycles
        st.reviews.append(record)
    if isinstance(policy.get("arbiter"), dict):
        st.arbiter = dict(policy["arbiter"], at=ev.at, to_lane=ev.to_lane)
    elif (
        ev.force
        and ev.to_lane in (lanes.APPROVED, lanes.BLOCKED, lanes.DONE)
        and ((st.last_reason or "").lower().startswith(("arbiter decision", "escalated")))
    ):
        st.arbiter = {"note": st.last_reason, "at": ev.at, "to_lane": ev.to_lane, "by": tool}
    if isinstance(policy.get("self_review_fallback"), dict):
        st.self_review = dict(policy["self_review_fallback"], at=ev.at)


def _apply_annotation(st: WPState, ev: Annotation) -> None:
    delta = ev.delta
    subtasks = delta.get("subtasks")
    if isinstance(subtasks, dict):
        for task, status in subtasks.items():
            st.subtasks[str(task)] = str(status)
    note = delta.get("note")
    if isinstance(note, str) and note:
        st.notes.append(note)
    if delta.get("release_runtime_claim") is True:
        st.runtime_claim = None
    for key, value in delta.items():
        if key in _STRUCTURED_DELTA or isinstance(value, dict | list):
            continue
        st.scalars[key] = value
        if key == "agent" and isinstance(value, str) and value:
            st.agent = value
    claim = {k: delta[k] for k in CLAIM_KEYS if k in delta}
    if claim and st.lane in HELD:
        st.runtime_claim = dict(st.runtime_claim or {}, **claim, at=ev.at)
    if "heartbeat" in delta and st.runtime_claim is not None:
        st.runtime_claim["heartbeat"] = ev.at


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
        if isinstance(ev, Transition | Annotation):
            ordered.append(ev)
    ordered.sort(key=lambda e: (e.at_us, e.event_id))
    _fold(board, ordered)
    return board


def extend(board: Board, events: Iterable[Event]) -> Board:
    """Apply events that sort after everything already folded into `board`.

    The write path uses this after an append: kitty's hybrid clock guarantees its
    own events are the newest, so the board need not be replayed from scratch.
    """
    fresh = sorted(
        (e for e in events if isinstance(e, Transition | Annotation)),
        key=lambda e: (e.at_us, e.event_id),
    )
    if fresh and board.newest_at_us is not None and fresh[0].at_us <= board.newest_at_us:
        raise ValueError("extend() needs events newer than the board")
    _fold(board, fresh)
    return board


def _fold(board: Board, ordered: list[Transition | Annotation]) -> None:
    for ev in ordered:
        st = board.get(ev.wp_id)
        if isinstance(ev, Transition):
            _apply_transition(st, ev)
        else:
            _apply_annotation(st, ev)
        st.last_event_id = ev.event_id
        st.last_activity_us = ev.at_us
    board.event_count += len(ordered)
    if ordered:
        board.last_event_id = ordered[-1].event_id
        board.newest_at_us = ordered[-1].at_us
