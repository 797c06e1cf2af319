"""The event log on disk: tolerant reads, and the one locked, fsynced append path."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kitty.core.events import ParsedLog, parse_lines, serialize
from kitty.errors import LockBusy

LOCK_TIMEOUT_ENV = "KITTY_LOCK_TIMEOUT"
DEFAULT_LOCK_TIMEOUT = 15.0


def read(path: Path) -> ParsedLog:
    """Parse the log; a missing file is an empty log. Never raises on bad lines."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return ParsedLog()
    text = data.decode("utf-8", errors="replace")
    unterminated = bool(text) and not text.endswith("\n")
    lines = text.split("\n")
    if not unterminated:
        lines.pop()  # the empty string after the final newline
    return parse_lines(lines, unterminated=unterminated)


def lock_timeout() -> float:
    try:
        return float(os.environ.get(LOCK_TIMEOUT_ENV, DEFAULT_LOCK_TIMEOUT))
    except ValueError:
        return DEFAULT_LOCK_TIMEOUT


@contextmanager
def locked(lock_path: Path, what: str, timeout: float | None = None) -> Iterator[None]:
    """Hold the inter-process lock (finite timeout; LockBusy -> exit 75)."""
    from filelock import FileLock, Timeout

    lock_path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(lock_path), timeout=lock_timeout() if timeout is None else timeout)
    try:
        lock.acquire()
    except Timeout:
        raise LockBusy(
            f"{what} is locked by another kitty process ({lock_path})",
            "retry in a moment; if no kitty is running, the lock frees itself",
        ) from None
    try:
        yield
    finally:
        lock.release()


def append(path: Path, records: list[dict[str, Any]]) -> None:
    """Append one line per record, then flush and fsync. Call only under `locked`.

    If the file ends without a newline (a torn write), a newline is written first
    so the fragment stays a single skipped line instead of corrupting ours.
    """
    if not records:
        return
    payload = "".join(serialize(r) for r in records).encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        size = os.fstat(fd).st_size
        if size:
            with open(path, "rb") as handle:
                handle.seek(size - 1)
                if handle.read(1) != b"\n":
                    payload = b"\n" + payload
        written = 0
        while written < len(payload):
            written += os.write(fd, payload[written:])
        os.fsync(fd)
    finally:
        os.close(fd)


def now_us() -> int:
    return time.time_ns() // 1000


def random_bytes(count: int = 10) -> bytes:
    return os.urandom(count)
