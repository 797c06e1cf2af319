"""Replay the event log onto an empty board: the only way lane state is computed.

`replay` is pure: events in, `Board` out. Ordering follows FORMAT.md: drop
repeated event ids (first wins), sort by (`at` as a time, `event_id`), then
fold transitions and annotations in that one order. `_fold` is the one fold:
`replay`, `fold` (the snapshot cache's full read) and `extend` (a tail of newer
events: the write path, the cache's growth, doctor's streaming read, the live web
board) all run it. Reading the log (the decode of each line, the dedupe, the
order) is `kitty.core.log.read`; the rules are `kitty.core.log.admit` (whether a
transition applies) and `kitty.core.log.apply` (what an applied event changes).

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
from typing import Any

from kitty.core import lanes
from kitty.core.log.admit import APPLY, SKIP, admit, event_agent, event_machine
from kitty.core.log.apply import (
    ACKNOWLEDGED,
    CLAIM_KEYS,
    HAS_FEEDBACK,
    HELD,
    LEASE_KEYS,
    apply_annotation,
    apply_transition,
)
from kitty.core.log.events import LINK_KEY, Annotation, Event, LogWarning, Transition
from kitty.core.log.read import ORDER, replay_order
from kitty.core.log.records import Conflict, ReviewRecord, WPState
from kitty.core.record import Record

#: Names that moved out with the fold's rules (kitty.core.log.admit, kitty.core.log.apply).
__all__ = [
    "ACKNOWLEDGED",
    "APPLY",
    "CLAIM_KEYS",
    "HAS_FEEDBACK",
    "HELD",
    "LEASE_KEYS",
    "SKIP",
    "Board",
    "Conflict",
    "ReviewRecord",
    "WPState",
    "as_dict",
    "event_agent",
    "event_machine",
    "extend",
    "fold",
    "link",
    "link_of",
    "replay",
]


#: Annotation delta key that marks a WP's open conflicts as resolved.
RESOLVE_KEY = "conflicts_resolved"


class Board(Record):
    __slots__ = ("conflicts", "event_count", "last_event_id", "newest_at_us", "warnings", "wps")
    wps: dict[str, WPState]
    event_count: int
    last_event_id: str | None
    newest_at_us: int | None
    warnings: list[LogWarning]
    conflicts: list[Conflict]

    def __init__(
        self,
        wps: dict[str, WPState] | None = None,
        event_count: int = 0,
        last_event_id: str | None = None,
        newest_at_us: int | None = None,
        warnings: list[LogWarning] | None = None,
        conflicts: list[Conflict] | None = None,
    ) -> None:
        self.wps = {} if wps is None else wps
        self.event_count = event_count
        self.last_event_id = last_event_id
        self.newest_at_us = newest_at_us
        self.warnings = [] if warnings is None else warnings
        self.conflicts = [] if conflicts is None else conflicts

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


def replay(events: Iterable[Event]) -> Board:
    """Fold parsed events into a board: each event id's first line, in replay order
    (`logread.replay_order`); repeated ids with other content become warnings."""
    ordered, repeats = replay_order(events)
    board = Board(warnings=repeats)
    _fold(board, ordered)
    return board


def fold(events: list[Transition | Annotation], repeats: list[LogWarning]) -> Board:
    """The board of events whose repeated ids were already dropped and reported in
    `repeats` (`logread.scan_log`): the same board as `replay` of the whole log.
    Sorts `events` in place."""
    board = Board(warnings=list(repeats))
    events.sort(key=ORDER)
    _fold(board, events)
    return board


def extend(board: Board, events: Iterable[Event]) -> Board:
    """Apply events that sort after everything already folded into `board`.

    The write path uses this after an append: kitty's hybrid clock guarantees its
    own events are the newest, so the board need not be replayed from scratch.
    """
    fresh = sorted((e for e in events if isinstance(e, Transition | Annotation)), key=ORDER)
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
            verdict, message = admit(st, ev)
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
            apply_transition(st, ev)
        else:
            if ev.delta.get(RESOLVE_KEY) and st.conflicts:
                _resolve(st, ev.event_id)
            apply_annotation(st, ev)
        st.last_event_id = ev.event_id
        st.last_activity_us = ev.at_us
    board.event_count += len(ordered)
    if ordered:
        board.last_event_id = ordered[-1].event_id
        board.newest_at_us = ordered[-1].at_us
