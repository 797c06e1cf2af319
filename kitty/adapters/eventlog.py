"""The event log on disk: tolerant reads, and the one locked, fsynced append path."""

from __future__ import annotations

import math
import os
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kitty.adapters import contain
from kitty.core.log.events import ParsedLog, serialize
from kitty.core.log.read import parse_log
from kitty.errors import EnvironmentProblem, LockBusy, UsageError

LOCK_TIMEOUT_ENV = "KITTY_LOCK_TIMEOUT"
DEFAULT_LOCK_TIMEOUT = 15.0


def open_log(path: Path) -> int | None:
    """A read-only fd of the log (None when there is none yet); the caller closes it.

    A symlinked log (or directory above it, inside the repository) raises UnsafePath;
    a log that is a directory or unreadable raises EnvironmentProblem.
    """
    try:
        return contain.open_regular(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise EnvironmentProblem(
            f"cannot read the event log {path}: {exc.strerror or exc}",
            "it must be a readable regular file; restore it with `git checkout -- <path>`",
        ) from None


def read(path: Path) -> ParsedLog:
    """Parse the log; a missing file is an empty log. Never raises on bad lines (see open_log)."""
    fd = open_log(path)
    if fd is None:
        return ParsedLog()
    with os.fdopen(fd, "rb") as handle:
        data = handle.read()
    return parse_log(data)


def lock_timeout() -> float:
    raw = os.environ.get(LOCK_TIMEOUT_ENV)
    if raw is None or not raw.strip():
        return DEFAULT_LOCK_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise UsageError(
            f"{LOCK_TIMEOUT_ENV}={raw!r} is not a number of seconds",
            f"set it to a finite number ≥ 0 (e.g. {LOCK_TIMEOUT_ENV}=15) or unset it",
        )
    return value


#: Waits between attempts on a busy lock: short at first (the locked section of a
#: claim or move is a few milliseconds), then at most this long.
POLL_FIRST, POLL_MAX = 0.001, 0.02


@contextmanager
def locked(lock_path: Path, what: str, timeout: float | None = None) -> Iterator[None]:
    """Hold the inter-process lock (finite timeout; LockBusy -> exit 75).

    An exclusive `flock` on the lock file, the same kernel lock filelock's UnixFileLock
    takes (so the two exclude each other), without importing filelock: version 4 costs
    ~30 ms of start-up (logging, hashlib, platform) on every write. Where `fcntl` does
    not exist, filelock does the job.
    """
    wait = lock_timeout() if timeout is None else timeout
    contain.check(lock_path)
    try:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise EnvironmentProblem(
            f"cannot create the lock directory {lock_path.parent}: {exc.strerror or exc}",
            "it must be a writable directory; if a file is in the way, move it aside",
        ) from None
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        with _filelocked(lock_path, what, wait):
            yield
        return
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | contain.NOFOLLOW | contain.CLOEXEC, 0o644)
    except OSError as exc:
        raise _lock_problem(lock_path, exc) from None
    try:
        deadline = time.monotonic() + wait
        pause = POLL_FIRST
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise _busy(lock_path, what) from None
                time.sleep(min(pause, left))
                pause = min(pause * 2, POLL_MAX)
            except OSError as exc:
                raise _lock_problem(lock_path, exc) from None
        yield  # closing the descriptor releases the lock
    finally:
        os.close(fd)


@contextmanager
def _filelocked(lock_path: Path, what: str, wait: float) -> Iterator[None]:  # pragma: no cover
    from filelock import FileLock, Timeout

    lock = FileLock(str(lock_path), timeout=wait)
    try:
        lock.acquire()
    except Timeout:
        raise _busy(lock_path, what) from None
    except OSError as exc:
        raise _lock_problem(lock_path, exc) from None
    try:
        yield
    finally:
        lock.release()


def _busy(lock_path: Path, what: str) -> LockBusy:
    return LockBusy(
        f"{what} is locked by another kitty process ({lock_path})",
        "retry in a moment; if no kitty is running, the lock frees itself",
    )


def _lock_problem(lock_path: Path, exc: OSError) -> EnvironmentProblem:
    return EnvironmentProblem(
        f"cannot take the lock {lock_path}: {exc.strerror or exc}",
        "the git directory must be writable by you",
    )


def check_appendable(path: Path) -> None:
    """Refuse before anything is written: the log must be a writable regular file (or absent
    in a writable directory), reached without symlinks."""
    contain.check(path)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        folder = path.parent
        if folder.is_dir() and not os.access(folder, os.W_OK):
            raise EnvironmentProblem(
                f"cannot create the event log: {folder} is not writable",
                "make the mission directory writable (chmod u+w) and run the command again",
            ) from None
        return
    if stat.S_ISLNK(info.st_mode):
        contain.check_final(path)
    if not stat.S_ISREG(info.st_mode):
        raise EnvironmentProblem(
            f"the event log {path} is not a regular file",
            "move it aside and restore the log with `git checkout -- <path>`",
        )
    if not os.access(path, os.W_OK):
        raise EnvironmentProblem(
            f"the event log {path} is read-only",
            "make it writable (chmod u+w) and run the command again; nothing was written",
        )


def append(path: Path, records: list[dict[str, Any]]) -> None:
    """Append one line per record, then flush and fsync. Call only under `locked`.

    Opened with O_NOFOLLOW (after `contain.check` of the directories above), so a
    symlinked log is refused, never written through. If the file ends without a
    newline (a torn write), a newline is written first so the fragment stays a
    single skipped line instead of corrupting ours.
    """
    if not records:
        return
    payload = "".join(serialize(r) for r in records).encode("utf-8")
    check_appendable(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(
            path, os.O_RDWR | os.O_CREAT | os.O_APPEND | contain.NOFOLLOW | contain.CLOEXEC, 0o666
        )
    except OSError as exc:
        if os.path.islink(path):
            contain.check_final(path)
        raise EnvironmentProblem(
            f"cannot append to the event log {path}: {exc.strerror or exc}",
            "check the file's permissions; nothing was written",
        ) from None
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
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
