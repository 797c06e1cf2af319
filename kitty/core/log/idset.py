"""The event ids already folded, as the snapshot cache keeps them: one sorted blob.

A log of a quarter of a million events has as many ids; a `set` of them costs
~50 ms to unpickle on every read that folds a tail, while the blob (the sorted ids,
each followed by a newline) and the offsets of its lines load as two strings of
bytes. A lookup is a binary search over them (microseconds).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterable, Iterator

#: This machine stores integers big-endian (the blob's offsets are kept little-endian).
_BIG_ENDIAN = array("H", [1]).tobytes()[0] == 0


def _encode(event_id: str) -> bytes:
    return event_id.encode("utf-8", "surrogatepass")


class _Sorted:
    """The i-th id of the blob, for `bisect` (no list of 250,000 strings is built)."""

    __slots__ = ("blob", "starts")

    def __init__(self, blob: bytes, starts: array[int]) -> None:
        self.blob, self.starts = blob, starts

    def __len__(self) -> int:
        return len(self.starts) - 1

    def __getitem__(self, index: int) -> bytes:
        return self.blob[self.starts[index] : self.starts[index + 1] - 1]


class IdSet:
    """`in` and `update` over the ids of a packed blob and those added since."""

    __slots__ = ("_added", "_sorted")

    def __init__(self, ids: Iterable[str] = (), packed: tuple[bytes, bytes] | None = None) -> None:
        self._added: set[str] = set(ids)
        blob, raw = packed or (b"", b"")
        starts = array("Q")
        starts.frombytes(raw)
        if _BIG_ENDIAN:  # kept little-endian, whatever the machine
            starts.byteswap()
        if not starts:
            starts.append(0)
        self._sorted = _Sorted(blob, starts)

    def __contains__(self, event_id: object) -> bool:
        if not isinstance(event_id, str):
            return False
        if event_id in self._added:
            return True
        key = _encode(event_id)
        index = bisect_left(self._sorted, key)
        return index < len(self._sorted) and self._sorted[index] == key

    def update(self, ids: Iterable[str]) -> None:
        self._added.update(ids)

    def __iter__(self) -> Iterator[str]:
        for index in range(len(self._sorted)):
            yield self._sorted[index].decode("utf-8", "surrogatepass")
        yield from self._added

    def packed(self) -> tuple[bytes, bytes]:
        """`pack` of every id (those of the blob and those added)."""
        return pack(self._added.union(self._old()) if len(self._sorted) else self._added)

    def _old(self) -> list[str]:
        return [self._sorted[i].decode("utf-8", "surrogatepass") for i in range(len(self._sorted))]


def pack(ids: Iterable[str]) -> tuple[bytes, bytes]:
    """(the ids sorted, each followed by a newline; the offsets of the lines). Built from
    one sorted list of the ids (UTF-8 keeps code-point order), no copy of the set."""
    keys = sorted(ids)
    blob = ("\n".join(keys) + "\n").encode("utf-8", "surrogatepass") if keys else b""
    starts = array("Q", [0])
    total = 0
    for key in keys:
        total += (len(key) if key.isascii() else len(_encode(key))) + 1
        starts.append(total)
    if _BIG_ENDIAN:
        starts.byteswap()
    return blob, starts.tobytes()
