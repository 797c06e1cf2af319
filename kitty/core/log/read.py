"""The one log reader: every way kitty reads `status.events.jsonl` goes through here.

* One decode per line (`decode_line`): msgspec for a big log, the json module for
  every line msgspec refuses (and for a small log), then `events.parse_record`; a bad
  line becomes a `LogWarning` naming its line, never an exception.
* One dedupe (`FirstWins`): the first line of an event id wins, whatever its kind; a
  later line with that id is dropped, and reported when its whole record differs.
* One order (`ORDER`): replay folds transitions and annotations by (`at` as a time,
  `event_id`); `state.fold` is the one fold over that order.

`parse_log` keeps every parsed line (doctor, the web board, the write path read them
whole); `scan_log` dedupes as it reads and keeps only what the fold reads (the
snapshot cache's full read); `replay_order` dedupes and orders parsed events
(`state.replay`, the web board's timeline).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from operator import attrgetter
from typing import Any

from kitty.core.log.events import Annotation, Event, LogWarning, Other, ParsedLog, Transition
from kitty.core.log.events import parse_record as _parse_record
from kitty.core.record import Record

#: A log (or tail) at least this big is decoded with msgspec, about 5x faster than the
#: json module (its import, ~10 ms, costs more than json spends on a short tail).
FAST_DECODE_BYTES = 512 * 1024
_NOTHING = object()
_fast: Callable[[bytes], Any] | None = None
_FOLDED = (Transition, Annotation)  # a tuple: isinstance is faster with it than with a union
#: Replay order: (`at` as a time, `event_id`).
ORDER = attrgetter("at_us", "event_id")
_LEAN: dict[str, Any] = {}  # the `data` of a scanned event (read only)


def _fast_decoder() -> Callable[[bytes], Any]:
    global _fast
    if _fast is None:
        import msgspec

        _fast = msgspec.json.Decoder().decode
    return _fast


def _object(
    decoded: Any, raw: str | bytes, number: int, torn_line: int, warnings: list[LogWarning]
) -> dict[str, Any] | None:
    """The JSON object on line `number`: `decoded` (msgspec's result) when there is one,
    else the json module's reading of `raw`; None for a blank line or after appending
    the line's warning (a torn last line, not valid JSON, not a JSON object)."""
    if decoded is _NOTHING:
        text = raw if isinstance(raw, str) else raw.decode("utf-8", errors="replace")
        if not text.strip():
            return None
        try:
            decoded = json.loads(text)
        except (ValueError, RecursionError):  # nested too deep is no event either
            why = "torn last line (write interrupted)" if number == torn_line else "not valid JSON"
            warnings.append(LogWarning(number, why))
            return None
    if not isinstance(decoded, dict):
        warnings.append(LogWarning(number, "not a JSON object"))
        return None
    return decoded


def decode_line(
    raw: str | bytes,
    number: int,
    torn_line: int,
    decode: Callable[[bytes], Any] | None,
    warnings: list[LogWarning],
) -> Event | None:
    """The event on log line `number`, or None after appending its warning (or for a
    blank line). `decode` (msgspec) is tried first when given: it accepts a subset of
    what the json module does (valid UTF-8, no NaN, no lone surrogates) and gives the
    same values for it; every line it refuses is the json module's to decide."""
    record: Any = _NOTHING
    if decode is not None:
        try:
            record = decode(raw)  # type: ignore[arg-type]
        except Exception:  # outside msgspec's subset: the json module decides
            record = _NOTHING
    if record.__class__ is not dict:  # the json module's turn, or a warning
        record = _object(record, raw, number, torn_line, warnings)
        if record is None:
            return None
    parsed = _parse_record(record, number)
    if isinstance(parsed, LogWarning):
        warnings.append(parsed)
        return None
    return parsed


class FirstWins:
    """The one dedupe rule (FORMAT.md): the first line of an event id wins; a later
    line with the same id is dropped, and reported in `repeats` when its whole record
    differs from the first one's. `same(first, current)` compares the two records and
    `line(first)` numbers the first line: what a reader keeps of a line decides how."""

    __slots__ = ("_line", "_same", "repeats", "seen")

    def __init__(self, same: Callable[[Any, Any], bool], line: Callable[[Any], int]) -> None:
        self.seen: dict[str, Any] = {}  # event id -> what `same` and `line` take
        self.repeats: list[LogWarning] = []
        self._same, self._line = same, line

    def first(self, event_id: str | None, number: int, ref: Any, current: Any) -> bool:
        """Whether the event on line `number` is kept: it has no id, or the id's first."""
        if not event_id:
            return True
        earlier = self.seen.get(event_id)
        if earlier is None:
            self.seen[event_id] = ref
            return True
        if not self._same(earlier, current):
            line = self._line(earlier)
            message = f"event_id {event_id} repeats line {line} with different content"
            self.repeats.append(LogWarning(number, message))
        return False


def replay_order(events: Iterable[Event]) -> tuple[list[Transition | Annotation], list[LogWarning]]:
    """Parsed events as replay folds them: each id's first line (`FirstWins`), the
    transitions and annotations among them sorted by `ORDER`; and the repeats."""
    dedupe = FirstWins(lambda a, b: a.data == b.data, attrgetter("line"))
    first = dedupe.first
    ordered = [
        ev for ev in events if first(ev.event_id, ev.line, ev, ev) and isinstance(ev, _FOLDED)
    ]
    ordered.sort(key=ORDER)
    return ordered, dedupe.repeats


class ScannedLog(Record):
    """A log read for the fold alone (`scan_log`)."""

    __slots__ = ("events", "ids", "lines", "repeats", "unterminated", "warnings")

    #: Transitions and annotations in file order, each event id once (its first line),
    #: keeping only what the fold reads (their `data` is empty).
    events: list[Transition | Annotation]
    #: Unusable lines, as in `ParsedLog.warnings`.
    warnings: list[LogWarning]
    #: Repeated event ids with different content (`FirstWins.repeats`).
    repeats: list[LogWarning]
    #: Every event id in the log.
    ids: set[str]
    unterminated: bool
    lines: int  # the number of lines, the unterminated one included

    def __init__(
        self,
        events: list[Transition | Annotation] | None = None,
        warnings: list[LogWarning] | None = None,
        repeats: list[LogWarning] | None = None,
        ids: set[str] | None = None,
        unterminated: bool = False,
        lines: int = 0,
    ) -> None:
        self.events = [] if events is None else events
        self.warnings = [] if warnings is None else warnings
        self.repeats = [] if repeats is None else repeats
        self.ids = set() if ids is None else ids
        self.unterminated = unterminated
        self.lines = lines


def _read(
    data: bytes, first_line: int, into: ParsedLog | ScannedLog, dedupe: FirstWins | None
) -> int:
    """Decode each line of `data` (numbered from `first_line`) once into `into`: every
    event, or with `dedupe` each id's first transition or annotation, keeping only what
    the fold reads. The number of the last line."""
    warnings = into.warnings
    #: A scan's list holds transitions and annotations only: the dedupe branch keeps no other.
    append: Callable[[Event], None] = into.events.append  # type: ignore[assignment]
    unterminated = bool(data) and not data.endswith(b"\n")
    torn_line = first_line + data.count(b"\n") if unterminated else 0
    decode = _fast_decoder() if len(data) >= FAST_DECODE_BYTES else None
    first = dedupe.first if dedupe is not None else None
    find = data.find
    start, size, number = 0, len(data), first_line - 1
    while start < size:
        stop = find(b"\n", start)
        if stop < 0:
            stop = size
        raw = data[start:stop]
        number += 1
        event = decode_line(raw, number, torn_line, decode, warnings)
        if event is not None:
            if first is None:
                append(event)
            elif first(event.event_id, number, start, raw) and event.__class__ is not Other:
                event.data = _LEAN
                append(event)
        start = stop + 1
    return number


def parse_log(data: bytes, *, first_line: int = 1) -> ParsedLog:
    """Every event of a log, or of the tail of one starting at line `first_line`, from
    its bytes, in file order (repeats included: `replay_order` drops them)."""
    result = ParsedLog(unterminated=bool(data) and not data.endswith(b"\n"))
    _read(data, first_line, result, None)
    return result


def parse_lines(
    lines: Iterable[str], *, unterminated: bool = False, first_line: int = 1
) -> ParsedLog:
    """`parse_log` of a log's text lines (numbered from `first_line`; blank ones ignored)."""
    lines = list(lines)
    result = ParsedLog(unterminated=unterminated)
    torn_line = first_line + len(lines) - 1 if unterminated else 0
    for number, raw in enumerate(lines, first_line):
        event = decode_line(raw, number, torn_line, None, result.warnings)
        if event is not None:
            result.events.append(event)
    return result


def scan_log(data: bytes) -> ScannedLog:
    """Read a log for the fold: `state.fold(scan.events, scan.repeats)` is the board of
    `replay(parse_log(data).events)`, and warnings, ids and `unterminated` are the same.

    Each record is dropped as soon as its event has taken what the fold reads, so the
    memory holds the events, not every decoded record (what the snapshot cache's full
    read of a 132 MB log spends most of its time allocating). The dedupe keeps where
    each id's first line starts and compares two lines whole only when their bytes differ.
    """
    result = ScannedLog(unterminated=bool(data) and not data.endswith(b"\n"))
    size = len(data)

    def same(first: int, raw: bytes) -> bool:
        end = data.find(b"\n", first)
        earlier = data[first : end if end >= 0 else size]
        return earlier == raw or _decoded(earlier) == _decoded(raw)

    dedupe = FirstWins(same, lambda first: data.count(b"\n", 0, first) + 1)
    result.lines = _read(data, 1, result, dedupe)
    result.repeats = dedupe.repeats
    result.ids = set(dedupe.seen)
    return result


def _decoded(raw: bytes) -> Any:
    """A line's whole record (a line that parsed)."""
    return json.loads(raw.decode("utf-8", errors="replace"))
