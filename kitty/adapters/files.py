"""Small file helpers: atomic replace for derived files, tolerant JSON reads."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from kitty.adapters import contain
from kitty.core.printable import utf8
from kitty.errors import EnvironmentProblem, SpecError, UsageError

_UMASK: list[int] = []


def umask() -> int:
    """The process umask (read once; os.umask can only be read by setting it)."""
    if not _UMASK:
        current = os.umask(0o022)
        os.umask(current)
        _UMASK.append(current)
    return _UMASK[0]


def new_file_mode() -> int:
    """The mode `open()` would give a new file: 0o666 minus the umask."""
    return 0o666 & ~umask()


def check_writable(path: Path) -> None:
    """Refuse before writing: no symlink on the way, a regular file (or nothing) at `path`,
    a writable directory. Raises UnsafePath or EnvironmentProblem; writes nothing."""
    contain.check(path)
    if path.is_symlink():
        contain.check_final(path)
    if path.exists() and not path.is_file():
        raise EnvironmentProblem(
            f"{path} is not a regular file",
            "move it aside; kitty writes this file itself (`kitty rebuild` recreates it)",
        )
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not os.access(folder, os.W_OK):
        raise EnvironmentProblem(
            f"cannot write {path}: {folder} is not writable",
            "make the directory writable (chmod u+w) and run the command again",
        )


def atomic_write(path: Path, text: str | bytes) -> None:
    """Write `text` to `path` via a temp file + fsync + os.replace: never half-written.

    Refuses (UnsafePath) when a directory on the way inside the repository is a
    symlink; the new file gets the umask's mode, like any file a tool creates.
    """
    check_writable(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # What tempfile.mkstemp does (a new 0600 file, O_EXCL), without its ~5 ms of imports.
        tmp = path.parent / f".{path.name}.{os.getpid()}.{os.urandom(6).hex()}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | contain.NOFOLLOW | contain.CLOEXEC
        fd = os.open(tmp, flags, 0o600)
    except OSError as exc:
        raise EnvironmentProblem(
            f"cannot write {path}: {exc.strerror or exc}",
            "check the directory's permissions and free space",
        ) from None
    try:
        os.fchmod(fd, new_file_mode())
        with os.fdopen(fd, "wb") as handle:
            handle.write(utf8(text) if isinstance(text, str) else text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise EnvironmentProblem(
                f"cannot write {path}: {exc.strerror or exc}",
                "check the directory's permissions and free space",
            ) from None
        raise


def dump_json(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def read_text(path: Path, display: str) -> str | None:
    """A mission file's text (None when absent); symlinks refused, other failures explained."""
    try:
        data = contain.read_bytes(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SpecError(
            display,
            None,
            f"cannot read: {exc.strerror or exc}",
            "it must be a readable regular file; restore it from git",
        ) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise SpecError(display, None, "not UTF-8 text", "re-save it as UTF-8") from None


#: Top-level directories of the kernel's pseudo-files (their entries stat as regular).
_PSEUDO = frozenset({"proc", "sys", "dev"})


def read_user_file(
    path: Path,
    what: str,
    max_bytes: int,
    allowed: list[Path] | None = None,
    limit_hint: str = "shorten it, or raise review.max_feedback_bytes in .kittify/config.yaml",
) -> bytes:
    """Bytes of a file named on the command line that kitty copies into the repository.

    Only a regular file (a device, FIFO or directory is refused before reading, and
    opening never blocks), of at most `max_bytes`, and, when `allowed` is given,
    inside one of those directories after resolving symlinks. Raises UsageError.
    """
    real = Path(os.path.realpath(path))
    if real.parts[1:2] and real.parts[1] in _PSEUDO:
        raise UsageError(
            f"{what} {path} is not a regular file (it is under /{real.parts[1]}, the "
            "kernel's files, whatever --force says)",
            "write the content into a file and pass that file",
        )
    if allowed is not None:
        roots = [Path(os.path.realpath(a)) for a in allowed]
        if not any(real == r or r in real.parents for r in roots):
            import tempfile

            raise UsageError(
                f"{what} {path} is outside the repository and the temp directory",
                "kitty copies it into the repository; move it into the repository or "
                f"{tempfile.gettempdir()}, or pass --force (with --note) to use it anyway",
            )
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | contain.CLOEXEC)
    except OSError as exc:
        raise UsageError(
            f"cannot read {what} {path}: {exc.strerror or exc}", "pass a readable regular file"
        ) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UsageError(
                f"{what} {path} is not a regular file (a device, FIFO or directory)",
                "write the content into a file and pass that file",
            )
        data = b""
        while info.st_size <= max_bytes and len(data) <= max_bytes:
            chunk = os.read(fd, max_bytes + 1 - len(data))
            if not chunk:
                break
            data += chunk
        if info.st_size > max_bytes or len(data) > max_bytes:
            raise UsageError(f"{what} {path} is larger than {max_bytes} bytes", limit_hint)
        if len(data) > info.st_size:  # a pseudo-file (procfs, sysfs) claims a size of 0
            raise UsageError(
                f"{what} {path} is not a regular file (a kernel pseudo-file: its size is "
                f"{info.st_size} but it reads {len(data)} bytes)",
                "write the content into a file and pass that file",
            )
        return data
    finally:
        os.close(fd)


def read_json(path: Path, display: str) -> Any:
    text = read_text(path, display)
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError as exc:
        line = getattr(exc, "lineno", None)
        raise SpecError(
            display, line, f"not valid JSON: {exc}", "fix the file by hand or restore it from git"
        ) from None
