"""A disposable snapshot cache of the replayed board and the parsed WP files.

It lives in the git directory (`<git dir>/kitty/cache/<mission>/`), is never
tracked, and no result depends on it: a missing, stale or unreadable cache is
rebuilt from the files, and `KITTY_NO_CACHE=1` turns it off
(tests/adapters/test_snapshot_cache.py runs random operations with and without it
and compares every output byte for byte).

* The board snapshot is keyed by the log's device/inode and the byte offset it
  was replayed up to, with fingerprints of sampled 4 KiB blocks of that prefix
  (a rewritten log misses). When the log has grown, only the appended tail is
  parsed and folded onto the board, provided that it sorts after everything
  already folded and repeats no event id (otherwise: a full replay, as always).
* WP files are keyed by name, size, inode and mtime (ns); a file modified less
  than two seconds before the cache was written is not trusted (the racy-git
  rule: an edit within the filesystem's timestamp granularity keeps the mtime).
* Every snapshot is also keyed by the code that computed it (kitty's version and
  the stat of the modules that parse and replay), so an upgrade never reads an
  old layout.

The files are pickles: they are read only from the repository's own git
directory, which is trusted like `.git/hooks` and `.git/config` (both run code).
"""

from __future__ import annotations

import copyreg
import gc
import os
import pickle
import sys
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kitty.adapters import contain
from kitty.core.log.events import LogWarning
from kitty.core.log.idset import IdSet, pack
from kitty.core.log.read import scan_log
from kitty.core.log.state import Board, fold
from kitty.core.log.stream import fold_chunks, fold_tail
from kitty.core.record import Record

#: 3: records, not dataclasses (LogState and Config pickle as cls(*values));
#: 4: WPState.usage; 5: ids as a blob
FORMAT = 5
DISABLE_ENV = "KITTY_NO_CACHE"
#: Re-save the board snapshot once the unsaved tail is this big (bytes).
RESAVE_TAIL = 256 * 1024
BLOCK = 4096
SAMPLES = 16
RACY_NS = 2_000_000_000
#: Set by the `kitty` process entry point: after a bulk load, `gc.freeze()` what was
#: built (it lives until exit). Not in-process callers such as tests.
FREEZE = False


class LogState(Record):
    """The log folded onto a board, and what reading it found."""

    board: Board
    warnings: list[LogWarning]
    unterminated: bool

    def __init__(
        self, board: Board, warnings: list[LogWarning] | None = None, unterminated: bool = False
    ) -> None:
        self.board = board
        self.warnings = [] if warnings is None else warnings
        self.unterminated = unterminated


def enabled() -> bool:
    return os.environ.get(DISABLE_ENV, "") in ("", "0")


@contextmanager
def gc_paused() -> Iterator[None]:
    """Bulk parsing makes millions of objects that live on: collecting them is wasted work."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if FREEZE:
            # What was built lives until exit: keep it out of later collections
            # instead of scanning it again in every generation.
            gc.freeze()
        if was:
            gc.enable()


def _code_key() -> tuple[Any, ...]:
    from kitty import __version__
    from kitty.core import clock, frontmatter, lanes, model, record, wpfile
    from kitty.core.log import admit, apply, events, holders, records, state
    from kitty.core.log import read as logread

    stamps: list[tuple[int, int] | None] = []
    modules = (
        admit,
        apply,
        clock,
        events,
        frontmatter,
        holders,
        lanes,
        logread,
        model,
        record,
        records,
        state,
        wpfile,
    )
    for module in (*modules, sys.modules[__name__]):
        try:
            st = os.stat(module.__file__ or "")
            stamps.append((st.st_size, st.st_mtime_ns))
        except OSError:
            stamps.append(None)
    return (FORMAT, __version__, sys.version_info[:2], tuple(stamps))


def _read_pickle(path: Path) -> Any:
    try:
        with gc_paused():
            return pickle.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except Exception:  # a corrupt or foreign cache is a miss, never an error
        return None


def _positional(cls: type) -> Callable[[Any], tuple[Any, ...]] | None:
    """Pickle a slotted record as `cls(*values)` (what `Record.__reduce__` does) without
    the lookup of `__reduce_ex__` and `__reduce__` on every object."""
    if not issubclass(cls, Record) or "__slots__" not in vars(cls):
        return None
    values = cls._values

    def reduce(obj: Any) -> tuple[Any, ...]:
        return (cls, values(obj))

    return reduce


def _dispatch_table() -> dict[type, Any]:
    from kitty.core import model
    from kitty.core.log import apply, events, records, state

    table: dict[type, Any] = dict(copyreg.dispatch_table)
    for module in (apply, events, model, records, state):
        for value in vars(module).values():
            if isinstance(value, type) and value.__module__ == module.__name__:
                reduce = _positional(value)
                if reduce is not None:
                    table[value] = reduce
    return table


def _write_pickle(path: Path, value: Any) -> None:
    """Atomic, best effort: a read-only git dir just means no cache."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as handle, gc_paused():  # pickling allocates, collecting is waste
            pickler = pickle.Pickler(handle, protocol=pickle.HIGHEST_PROTOCOL)
            pickler.dispatch_table = _dispatch_table()
            pickler.dump(value)
        os.replace(tmp, path)
    except OSError:
        pass


# -- the log and its board -----------------------------------------------------------


def _fingerprint(handle: Any, end: int) -> tuple[int, ...]:
    """CRC-32s of sampled blocks of the first `end` bytes (the whole prefix when small,
    always its last block). Change detection, not security: zlib is built in, while
    hashlib loads OpenSSL (~20 ms on every read)."""
    if end <= BLOCK * (SAMPLES + 1):
        handle.seek(0)
        return (end, zlib.crc32(handle.read(end)))
    step = (end - BLOCK) // SAMPLES
    sums = [end]
    for index in range(SAMPLES):
        handle.seek(index * step)
        sums.append(zlib.crc32(handle.read(BLOCK)))
    handle.seek(end - BLOCK)
    sums.append(zlib.crc32(handle.read(BLOCK)))
    return tuple(sums)


def _full(data: bytes) -> tuple[LogState, set[str], int]:
    """The log's state, its event ids and its number of lines."""
    with gc_paused():
        scan = scan_log(data)
        board = fold(scan.events, scan.repeats)
    return LogState(board, scan.warnings, scan.unterminated), scan.ids, scan.lines


#: The full read folds the log this many bytes at a time (kitty.core.log.stream).
STREAM_BLOCK = 1 << 20
#: A tail past the snapshot bigger than this (a pull of a huge log) is not parsed whole
#: on top of it: the streamed full read folds it in bounded memory.
MAX_TAIL = 16 << 20


def _streamed(handle: Any, keep_ids: bool = True) -> tuple[LogState, set[str], int, int]:
    """`_full` of the whole file, read a block at a time while the log is in time order
    (memory for the board and the ids, not every line); a log that is not (a merge's
    interleaved lines, a repeated id) is read whole and replayed. Also the size read."""
    with gc_paused():
        stream = fold_chunks(iter(lambda: handle.read(STREAM_BLOCK), b""), keep_ids)
    if stream is not None:
        state = LogState(stream.board, stream.warnings, stream.unterminated)
        return state, stream.ids, stream.lines, stream.size
    handle.seek(0)
    data = handle.read()
    state, ids, lines = _full(data)
    return state, ids, lines, len(data)


def read_log(path: Path, cache_dir: Path | None, resave_tail: int = RESAVE_TAIL) -> LogState:
    """The replayed board of the log at `path`, from the snapshot when it is valid; the
    snapshot is saved again once the tail parsed on top of it exceeds `resave_tail`
    bytes (a long-running writer such as the sprint passes less)."""
    from kitty.adapters.eventlog import open_log

    fd = open_log(path)  # contained: no symlinks; the same errors as eventlog.read
    if fd is None:
        return LogState(Board())
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(handle.fileno())
        if cache_dir is None or not enabled() or contain.symlink_problem(cache_dir):
            return _streamed(handle, keep_ids=False)[0]
        meta_path, ids_path = cache_dir / "board.pickle", cache_dir / "ids.pickle"
        snap = _read_pickle(meta_path)
        if (
            isinstance(snap, dict)
            and snap.get("code") == _code_key()
            and snap.get("inode") == (st.st_dev, st.st_ino)
            and st.st_size >= snap["offset"]
        ):
            offset: int = snap["offset"]
            if st.st_size == offset and st.st_mtime_ns == snap["mtime"]:
                if _fingerprint(handle, offset) == snap["fingerprint"]:
                    return LogState(snap["board"], snap["warnings"])
            elif (
                0 < st.st_size - offset <= MAX_TAIL
                and _fingerprint(handle, offset) == snap["fingerprint"]
            ):
                handle.seek(offset)
                tail = handle.read()
                grown = _grow(snap, tail, ids_path)
                if grown is not None:
                    state, seen = grown
                    if len(tail) > resave_tail:
                        lines = snap["lines"] + tail.count(b"\n")
                        _save(meta_path, ids_path, state, seen, handle, st, st.st_size, lines)
                    return state
        handle.seek(0)
        state, ids, lines, size = _streamed(handle)
        if not state.unterminated:
            _save(meta_path, ids_path, state, ids, handle, st, size, lines)
        return state


def _grow(snap: dict[str, Any], tail: bytes, ids_path: Path) -> tuple[LogState, IdSet] | None:
    """Fold the appended tail onto the snapshot, or None when a full replay is needed."""
    if not tail.endswith(b"\n"):
        return None  # a torn last line: a full read reports it
    ids = _read_pickle(ids_path)
    if not isinstance(ids, tuple) or len(ids) != 3 or ids[0] != snap["token"]:
        return None
    seen = IdSet(packed=(ids[1], ids[2]))
    board: Board = snap["board"]
    grown = fold_tail(board, seen, tail, snap["lines"] + 1)
    if grown is None:
        return None
    return LogState(board, snap["warnings"] + grown[1]), seen


def _save(
    meta_path: Path,
    ids_path: Path,
    state: LogState,
    ids: set[str] | IdSet,
    handle: Any,
    st: os.stat_result,
    offset: int,
    lines: int,
) -> None:
    token = os.urandom(8).hex()
    blob, starts = ids.packed() if isinstance(ids, IdSet) else pack(ids)
    _write_pickle(ids_path, (token, blob, starts))
    _write_pickle(
        meta_path,
        {
            "code": _code_key(),
            "token": token,
            "inode": (st.st_dev, st.st_ino),
            "offset": offset,
            "mtime": st.st_mtime_ns,
            "lines": lines,
            "fingerprint": _fingerprint(handle, offset),
            "board": state.board,
            "warnings": state.warnings,
        },
    )


# -- WP files -------------------------------------------------------------------------


def cached_parse(
    cache_dir: Path | None,
    files: list[tuple[str, os.stat_result]],
    parse: Callable[[str], Any],
    store: str = "wps.pickle",
) -> list[Any]:
    """`parse(file)` for each file, reusing results for files whose stat is unchanged."""
    if cache_dir is None or not enabled() or contain.symlink_problem(cache_dir):
        return [parse(name) for name, _ in files]
    cache_path = cache_dir / store
    snap = _read_pickle(cache_path)
    known: dict[str, tuple[Any, Any]] = {}
    if isinstance(snap, dict) and snap.get("code") == _code_key():
        known = snap["files"]
    results: list[Any] = []
    fresh: dict[str, tuple[Any, Any]] = {}
    changed = False
    trusted_before = time.time_ns() - RACY_NS
    for name, st in files:
        key = (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)
        hit = known.get(name)
        if hit is not None and hit[0] == key:
            stored = hit[1]
            result = _thaw(stored)
        else:
            with gc_paused():
                result = parse(name)
            stored = _freeze(result)
            changed = True
        results.append(result)
        if max(st.st_mtime_ns, st.st_ctime_ns) < trusted_before:
            fresh[name] = (key, stored)
    if changed or fresh.keys() != known.keys():
        _write_pickle(cache_path, {"code": _code_key(), "files": fresh})
    return results


def _freeze(result: Any) -> Any:
    """Exceptions do not pickle by their constructor: keep their class and state."""
    if isinstance(result, Exception):
        return ("exception", type(result), result.args, dict(result.__dict__))
    return result


def _thaw(stored: Any) -> Any:
    if isinstance(stored, tuple) and stored and stored[0] == "exception":
        _, cls, args, state = stored
        exc = cls.__new__(cls)
        exc.args = args
        exc.__dict__.update(state)
        return exc
    return stored


# -- for the other disposable caches of a mission (kitty.adapters.statusparts) --------

fingerprint = _fingerprint
code_key = _code_key
read_pickle = _read_pickle
write_pickle = _write_pickle
