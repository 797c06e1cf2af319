"""`status.json`'s encoded WP parts, kept between writes (disposable, in the git dir).

After an append only the WPs the new events name change their entry in
`status.json` (`kitty.core.log.statustext`), so a write that knows the log's size
before its append and the WPs it touched re-encodes those parts alone and reuses
the rest. The parts are stored for one log position: the log's device/inode, its
size and fingerprints of sampled blocks of that prefix (as the snapshot cache keys
the board, `kitty.adapters.snapshots`), and the code that encoded them. Anything
else (no parts, parts of another position, a rewritten log, `KITTY_NO_CACHE=1`)
encodes every WP, which is what the file is without this cache.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from kitty.adapters import contain, snapshots
from kitty.core.log.snapshot import status_header
from kitty.core.log.state import Board
from kitty.core.log.statustext import assemble, part

STORE = "status-parts.pickle"


def _code() -> tuple[Any, ...]:
    """The snapshot cache's code key and the stat of the modules that encode a part."""
    import sys

    from kitty.core.log import snapshot, statustext

    stamps: list[tuple[int, int] | None] = []
    for module in (snapshot, statustext, sys.modules[__name__]):
        try:
            st = os.stat(module.__file__ or "")
            stamps.append((st.st_size, st.st_mtime_ns))
        except OSError:
            stamps.append(None)
    return (snapshots.code_key(), tuple(stamps))


class Since:
    """What a write knows of the log it appended to: the size before its append (the
    log then ended with a whole line) and the WPs its events name."""

    __slots__ = ("start", "touched")

    def __init__(self, start: int, touched: Collection[str]) -> None:
        self.start = start
        self.touched = touched


def since(log: Path, records: list[dict[str, Any]]) -> Since | None:
    """Before an append under the mission lock: the log's size and the WPs `records`
    name, when the log ends with a whole line (the board read is the fold of exactly
    those bytes); None otherwise (every part is encoded again)."""
    try:
        with open(log, "rb") as handle:
            start = os.fstat(handle.fileno()).st_size
            if start:
                handle.seek(start - 1)
                if handle.read(1) != b"\n":
                    return None
    except OSError:
        return None
    return Since(start, {str(rec.get("wp_id")) for rec in records})


def _position(log: Path, end: int) -> tuple[Any, ...] | None:
    """(device, inode, end, fingerprint of the first `end` bytes) of the log now."""
    try:
        fd = contain.open_regular(log)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(handle.fileno())
        if st.st_size < end:
            return None
        return (st.st_dev, st.st_ino, end, snapshots.fingerprint(handle, end))


def render(
    cache_dir: Path | None,
    log: Path,
    board: Board,
    slug: str,
    meta: Mapping[str, Any],
    end: int | None,
    since: Since | None = None,
) -> str:
    """The text of `status.json` for `board`, the fold of the log's first `end` bytes
    (None: unknown, nothing is kept); with `since`, the parts kept for the log's
    position before the append are reused for every WP it did not touch."""
    usable = cache_dir is not None and snapshots.enabled() and end is not None
    if usable and cache_dir is not None and contain.symlink_problem(cache_dir):
        usable = False
    parts: dict[str, str] | None = None
    path = cache_dir / STORE if cache_dir is not None else None
    if usable and since is not None and path is not None:
        parts = _kept(path, log, since.start)
    if parts is None or not parts.keys() <= board.wps.keys():
        parts = {wp_id: part(st) for wp_id, st in board.wps.items()}
    else:
        for wp_id in since.touched if since is not None else ():
            if wp_id in board.wps:
                parts[wp_id] = part(board.wps[wp_id])
        for wp_id in board.wps.keys() - parts.keys():  # a WP the tail brought
            parts[wp_id] = part(board.wps[wp_id])
    text = assemble(status_header(board, slug, meta, list(board.wps)), parts)
    if usable and path is not None and end is not None:
        position = _position(log, end)
        if position is not None:
            snapshots.write_pickle(path, {"code": _code(), "at": position, "parts": parts})
    return text


def _kept(path: Path, log: Path, start: int) -> dict[str, str] | None:
    """The parts kept for the log's first `start` bytes, if that is what they are of."""
    kept = snapshots.read_pickle(path)
    if not isinstance(kept, dict) or kept.get("code") != _code():
        return None
    at = kept.get("at")
    if not isinstance(at, tuple) or len(at) != 4 or at[2] != start:
        return None
    if _position(log, start) != at:
        return None
    parts = kept.get("parts")
    return parts if isinstance(parts, dict) else None
