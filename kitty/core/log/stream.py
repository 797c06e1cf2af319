"""The fold of a whole log read a block at a time: memory for the board and the event ids,
never for every line's record (a 1 GB log is read within the board's size).

Each block of whole lines is parsed (`read.parse_log`), its transitions and annotations
sorted by `read.ORDER` and folded onto the board (`state.extend`) as long as the log
is in time order (what kitty's own clock writes): a block whose first event sorts at or
before the newest folded one, or an event id seen before, stops the stream (`feed`
returns False) and the caller replays the whole log instead, exactly as before. The
board, warnings, ids and line count are those of `state.fold(scan_log(data))`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kitty.core.log.events import Annotation, LogWarning, Other, Transition
from kitty.core.log.idset import IdSet
from kitty.core.log.read import ORDER, parse_log
from kitty.core.log.state import Board, extend

_LEAN: dict[str, Any] = {}  # a folded event's `data`: the fold read what it needs


class StreamFold:
    """The board folded so far, the log's warnings, its event ids and its lines. Without
    `keep_ids` only a hash of each id is kept (a collision only costs the full replay)
    and `ids` stays empty."""

    __slots__ = ("board", "ids", "keep_ids", "lines", "seen", "size", "unterminated", "warnings")

    def __init__(self, keep_ids: bool = True) -> None:
        self.board = Board()
        self.warnings: list[LogWarning] = []
        self.ids: set[str] = set()
        self.seen: set[Any] = self.ids if keep_ids else set()
        self.keep_ids = keep_ids
        self.lines = 0
        self.size = 0  # bytes fed
        self.unterminated = False

    def feed(self, block: bytes) -> bool:
        """Fold the next block of lines (only the last one may lack its newline); False
        when only a full replay can fold the log (the board is then incomplete)."""
        parsed = parse_log(block, first_line=self.lines + 1)
        self.size += len(block)
        self.lines += block.count(b"\n") + (0 if block.endswith(b"\n") else 1)
        self.unterminated = not block.endswith(b"\n")
        self.warnings += parsed.warnings
        seen, keep = self.seen, self.keep_ids
        fresh: list[Transition | Annotation] = []
        for event in parsed.events:
            event_id = event.event_id
            if event_id:
                key = event_id if keep else hash(event_id)
                if key in seen:
                    return False  # a repeat: the full read dedupes (and reports) it
                seen.add(key)
            if isinstance(event, Transition | Annotation):
                event.data = _LEAN
                fresh.append(event)
        if not fresh:
            return True
        fresh.sort(key=ORDER)
        newest = self.board.newest_at_us
        if newest is not None and fresh[0].at_us <= newest:
            return False  # sorts into what is folded: only a replay orders it
        extend(self.board, fresh)
        return True


def fold_chunks(chunks: Iterable[bytes], keep_ids: bool = True) -> StreamFold | None:
    """The StreamFold of a log given as consecutive chunks of its bytes (cut anywhere: they
    are re-cut at line ends), or None when only a full replay can fold it."""
    stream = StreamFold(keep_ids)
    carry = b""
    for chunk in chunks:
        data = carry + chunk if carry else chunk
        cut = data.rfind(b"\n") + 1
        block, carry = data[:cut], data[cut:]
        if block and not stream.feed(block):
            return None
    if carry and not stream.feed(carry):
        return None
    return stream


def fold_tail(
    board: Board, seen: set[str] | IdSet, tail: bytes, first_line: int
) -> tuple[list[Transition | Annotation], list[LogWarning]] | None:
    """Fold whole log lines appended after `board` was built onto it (in place), adding
    their event ids to `seen` (the ids already folded): the new events in replay order
    and the tail's warnings, or None (nothing changed) when only a full replay can fold
    them: a torn last line, a repeated event id, or an event older than the board."""
    if not tail.endswith(b"\n"):
        return None
    parsed = parse_log(tail, first_line=first_line)
    fresh: list[Transition | Annotation] = []
    new_ids: set[str] = set()
    for ev in parsed.events:
        event_id = ev.event_id
        if event_id:
            if event_id in seen or event_id in new_ids:
                return None  # replay drops or flags a repeat: let it
            new_ids.add(event_id)
        if not isinstance(ev, Other):
            fresh.append(ev)
    fresh.sort(key=ORDER)
    if fresh and board.newest_at_us is not None and fresh[0].at_us <= board.newest_at_us:
        return None  # sorts into the middle of the history: only a replay orders it
    seen.update(new_ids)
    extend(board, fresh)
    return fresh, parsed.warnings
