"""Containment: a repository someone else wrote cannot redirect kitty's reads and writes.

Every file kitty reads or writes as mission state lives under a *trusted root*
(the project's work tree or its git directory, registered by `layout.find_project`).
Below such a root no path component may be a symbolic link: a committed
`status.events.jsonl -> ~/.bashrc` would otherwise make `kitty move` append to
the user's shell start-up file. Paths outside every trusted root (the system
temp directory, a crash log) are not repository content and are not checked.

Only `errno`, `os` and `stat` are imported: this runs on every read path.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from kitty.errors import UnsafePath

_ROOTS: list[str] = []
#: Never follow a symlink in the last component; create files with the umask's mode.
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def trust(*roots: Path) -> None:
    """Register directories whose contents are checked by `check` (resolved once)."""
    for root in roots:
        real = os.path.realpath(root)
        if real not in _ROOTS:
            _ROOTS.append(real)
            _ROOTS.sort(key=len, reverse=True)  # the innermost root wins (.git in the tree)


def _root_of(path: str) -> str | None:
    for root in _ROOTS:
        if path == root or path.startswith(root + os.sep):
            return root
    return None


def symlink_problem(path: Path) -> str | None:
    """A one-line description of the first symlinked component below its root, or None."""
    full = os.path.abspath(path)
    root = _root_of(full)
    if root is None:
        return None
    current = root
    for part in os.path.relpath(full, root).split(os.sep):
        if part in ("", "."):
            continue
        if part == "..":
            return f"{full}, which leaves the repository ('..')"
        current = os.path.join(current, part)
        try:
            mode = os.lstat(current).st_mode
        except (FileNotFoundError, NotADirectoryError):
            return None  # the rest does not exist yet: kitty creates it, as real entries
        except OSError:
            return None  # unreadable: the caller's open reports it
        if stat.S_ISLNK(mode):
            try:
                target = os.readlink(current)
            except OSError:
                target = "?"
            return f"{current}, a symbolic link (to {target})"
    return None


def check(path: Path) -> Path:
    """Return `path`, or raise UnsafePath when a component inside the repository is a symlink."""
    problem = symlink_problem(path)
    if problem is not None:
        raise UnsafePath(
            f"refusing to use {problem}",
            "kitty never reads or writes mission state through symbolic links; "
            "replace the link with a regular file or directory (see `kitty doctor`)",
        )
    return path


def open_regular(path: Path) -> int:
    """A read-only fd of a regular file after `check`, never following a final symlink
    (FileNotFoundError if absent). The caller closes it."""
    check(path)
    try:
        fd = os.open(path, os.O_RDONLY | NOFOLLOW | CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP and os.path.islink(path):
            raise UnsafePath(
                f"refusing to use {path}, a symbolic link",
                "replace the link with a regular file (see `kitty doctor`)",
            ) from None
        raise
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(21, "Is a directory", str(path))
        if not stat.S_ISREG(info.st_mode):
            raise UnsafePath(
                f"refusing to read {path}: not a regular file",
                "mission files must be regular files; replace it",
            )
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_bytes(path: Path) -> bytes:
    """Read a file after `check`, never following a final symlink (FileNotFoundError if absent)."""
    fd = open_regular(path)
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_text(path: Path) -> str:
    return read_bytes(path).decode("utf-8")


def check_final(path: Path) -> None:
    """Raise UnsafePath when `path` itself is a symbolic link."""
    if os.path.islink(path):
        raise UnsafePath(
            f"refusing to use {path}, a symbolic link (to {os.readlink(path)})",
            "kitty never reads or writes mission state through symbolic links; "
            "replace the link with a regular file (see `kitty doctor`)",
        )


def check_link_inside(path: Path, root: Path, forbidden: tuple[Path, ...] = ()) -> Path:
    """The file to write for `path`: `path` itself (after `check`), or, when it is a
    symbolic link, its target, allowed only inside `root` and outside `forbidden` (the
    git directory). `CLAUDE.md -> AGENTS.md` is fine; `AGENTS.md -> ~/.gitconfig` or
    `-> .git/config` raise UnsafePath before anything is read or written."""
    check(path.parent)
    if not os.path.islink(path):
        return check(path)
    real = os.path.realpath(path)
    base = os.path.realpath(root)
    inside = real.startswith(base + os.sep) and not any(
        real == os.path.realpath(f) or real.startswith(os.path.realpath(f) + os.sep)
        for f in forbidden
    )
    if not inside:
        raise UnsafePath(
            f"refusing to write {path}, a symbolic link to {real}, outside the repository's "
            "work tree",
            "kitty writes only files inside the repository; replace the link with a regular "
            "file (e.g. `git rm` it), or point it at a file in the repository",
        )
    return Path(real)
