"""What the boards keep of a mission's history, bounded by the board, not the log.

* **The events, read a block at a time** (`events_in_order`): each block's transitions
  and annotations in replay order, while the log is in time order (what kitty's clock
  writes); a repeated event id or an event older than one already given raises
  `NotInOrder`, and the caller replays the whole log instead.
* **The timeline of each WP** (`Timeline`): its last `KEEP` entries, and how many came
  before them (shown as one line), so a WP with a million notes is one page, not a GB.
* **The moves cycle times need** (`Moves`): each WP's first start and first finish only.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kitty.core.log.events import Annotation, Transition, actor_tool

#: Timeline entries kept per WP (the newest; earlier ones are counted).
KEEP = 200
#: Bytes of the log parsed at a time.
BLOCK = 1 << 20
#: Annotation keys too chatty for a timeline (a running agent beats once a minute).
_QUIET = frozenset({"heartbeat"})


class NotInOrder(Exception):
    """The log's lines are not in time order (a merge) or repeat an id: replay it whole."""


def events_in_order(path: Path) -> Iterator[list[Transition | Annotation]]:
    """The log's transitions and annotations, one block of lines at a time, in replay
    order; raises NotInOrder (possibly after some blocks) when only a replay orders it."""
    from kitty.adapters.eventlog import open_log
    from kitty.core.log.read import ORDER, parse_log

    fd = open_log(path)
    if fd is None:
        return
    seen: set[int] = set()
    newest: int | None = None
    line = 1
    with os.fdopen(fd, "rb") as handle:
        carry = b""
        while True:
            chunk = handle.read(BLOCK)
            data = carry + chunk
            cut = data.rfind(b"\n") + 1 if chunk else len(data)
            block, carry = data[:cut], data[cut:]
            if block:
                parsed = parse_log(block, first_line=line)
                line += block.count(b"\n")
                fresh: list[Transition | Annotation] = []
                for ev in parsed.events:
                    if ev.event_id:
                        key = hash(ev.event_id)
                        if key in seen:
                            raise NotInOrder(ev.event_id)
                        seen.add(key)
                    if isinstance(ev, Transition | Annotation):
                        fresh.append(ev)
                fresh.sort(key=ORDER)
                if fresh and newest is not None and fresh[0].at_us <= newest:
                    raise NotInOrder(fresh[0].event_id)
                if fresh:
                    newest = fresh[-1].at_us
                    yield fresh
            if not chunk:
                return


def timeline_entry(ev: Transition | Annotation) -> dict[str, Any] | None:
    who = actor_tool(ev.actor)
    if isinstance(ev, Transition):
        reason = ev.data.get("reason")
        return {
            "at": ev.at,
            "who": who,
            "kind": "move",
            "from": ev.from_lane,
            "to": ev.to_lane,
            "force": ev.force,
            "note": reason if isinstance(reason, str) else None,
        }
    parts = []
    for key, value in ev.delta.items():
        if key in _QUIET:
            continue
        if key == "note" and isinstance(value, str):
            parts.append(value)
        elif key == "subtasks" and isinstance(value, dict):
            parts.append(", ".join(f"{t} {s}" for t, s in value.items()))
        elif not isinstance(value, dict | list):
            parts.append(f"{key}: {value}")
    if not parts:
        return None
    return {"at": ev.at, "who": who, "kind": "note", "note": "; ".join(parts)}


class Timeline:
    """Each WP's newest `KEEP` timeline entries and the count of those before them."""

    def __init__(self, ids: list[str]) -> None:
        self.kept: dict[str, deque[dict[str, Any]]] = {i: deque(maxlen=KEEP) for i in ids}
        self.total: dict[str, int] = dict.fromkeys(ids, 0)

    def add(self, wp_id: str, entry: dict[str, Any]) -> None:
        kept = self.kept.get(wp_id)
        if kept is None:
            kept = self.kept[wp_id] = deque(maxlen=KEEP)
        kept.append(entry)
        self.total[wp_id] = self.total.get(wp_id, 0) + 1

    def entries(self, wp_id: str) -> list[dict[str, Any]]:
        kept = list(self.kept.get(wp_id, ()))
        earlier = self.total.get(wp_id, 0) - len(kept)
        if earlier > 0:
            note = f"{earlier} earlier entries not shown (the board keeps the last {KEEP})"
            kept.insert(0, {"at": kept[0]["at"], "who": "kitty", "kind": "note", "note": note})
        return kept


class Moves(list[tuple[int, str, str]]):
    """The `(at_us, wp_id, to_lane)` moves cycle times read: each WP's first start and
    its first finish after it (what `flow.cycle_times` takes of all of them)."""

    def __init__(self) -> None:
        super().__init__()
        self.started: set[str] = set()
        self.finished: set[str] = set()

    def add(self, at_us: int, wp_id: str, to_lane: str) -> None:
        if to_lane in ("claimed", "in_progress") and wp_id not in self.started:
            self.started.add(wp_id)
            self.append((at_us, wp_id, to_lane))
        elif (
            to_lane in ("approved", "done") and wp_id in self.started and wp_id not in self.finished
        ):
            self.finished.add(wp_id)
            self.append((at_us, wp_id, to_lane))
