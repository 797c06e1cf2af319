"""A disposable cache of the finished output of `kitty status` and `kitty next`, for warm reads.

`kitty status [--json] [--mission M]` and `kitty next [--json] [--agent A]
[--mission M]` (without --claim) on the fast path (kitty/fastpath.py) first look
here: when every input of the last identical command is unchanged, the bytes it
printed are printed again, without importing or reading anything else.
The record lives in the git directory (`<git dir>/kitty/cache/.status-views/`),
is never tracked, is never written under `KITTY_NO_CACHE=1`, and no result
depends on it: a missing, corrupt, symlinked or foreign record is a miss.

A record is served only when all of these are what they were when it was written:

* the command: which one, the directory it ran in, `--mission`, `$KITTY_MISSION`,
  `--json`, the terminal width, colour and whether stdout is a terminal; for `next`,
  `--agent` and `$KITTY_AGENT` (a `next` whose agent comes from git's user.name is
  never stored: git's config is not among the inputs);
* kitty's code (its version, Python's, the size and mtime of every module);
* the lstat (type, inode, size, mtime, ctime) of every file and folder the
  output was read from: the mission's folder and each file in it, `tasks/` and
  each WP file, `kitty-specs/` and each mission folder in it (which mission is
  meant), `.kittify/config.yaml`, the checkout's `.git` and HEAD;
* the clock is inside the window the output holds for: a lease expires, a review
  turns silent or STALLED, a printed age (`2d4h`, `for 12m`) ticks over; output that
  depends on whether an agent's process is alive is never stored, nor a `next` that
  read a HALT's questions (files the log points at).

A record is not written when any of those files changed in the last two seconds
(the racy-git rule: a change within the filesystem's timestamp granularity can
keep the mtime). Text status's warning about uncommitted files asks git every
time (it depends on the index), so it is never stored.

Only `os`, `sys`, `stat`, `marshal`, `time` and `zlib` are imported: this runs
before anything else on a warm `kitty status`.
"""

from __future__ import annotations

import marshal
import os
import stat
import sys
import time
import zlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

FORMAT = 3  # 3: each WP row carries its agent runs' usage
DISABLE_ENV = "KITTY_NO_CACHE"
MISSION_ENV = "KITTY_MISSION"
FOLDER = ".status-views"  # not a mission slug: slugs start with a letter or digit
MAGIC = b"KSV1"
RACY_NS = 2_000_000_000
#: Records kept (the newest): one per spelling, mission, terminal width and colour.
KEEP = 8
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
CLOEXEC = getattr(os, "O_CLOEXEC", 0)
Sig = tuple[int, ...] | None


def enabled() -> bool:
    return os.environ.get(DISABLE_ENV, "") in ("", "0")


def columns() -> int:
    """shutil.get_terminal_size((80, 24)).columns, without importing shutil."""
    try:
        width = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        width = 0
    if width <= 0:
        try:
            width = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            width = 0
    return width or 80


def terminal() -> tuple[int, bool, bool]:
    """(width, colour, stdout is a terminal): what the printed bytes depend on."""
    tty = sys.stdout.isatty()
    return max(40, columns()), tty and "NO_COLOR" not in os.environ, tty


#: The command a record is for: ("status",) or ("next", --agent, $KITTY_AGENT).
Command = tuple[str | None, ...]
STATUS: Command = ("status",)
AGENT_ENV = "KITTY_AGENT"


def next_command(agent: str | None) -> Command:
    return ("next", agent, os.environ.get(AGENT_ENV))


def key(
    start: str, mission: str | None, as_json: bool, command: Command = STATUS
) -> tuple[object, ...]:
    return (
        *command,
        os.path.realpath(start),
        mission,
        os.environ.get(MISSION_ENV),
        as_json,
        *terminal(),
    )


def sig(path: str, kind_only: bool = False) -> Sig:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if kind_only:
        return (stat.S_IFMT(st.st_mode),)
    return (st.st_mode, st.st_ino, st.st_dev, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def code() -> tuple[object, ...]:
    """kitty's version and the size and mtime of each of its modules (an upgrade misses)."""
    import kitty

    stamps: list[tuple[str, int, int]] = []
    pending = [os.path.dirname(os.path.abspath(kitty.__file__ or ""))]
    while pending:
        folder = pending.pop()
        try:
            with os.scandir(folder) as scan:
                for entry in scan:
                    if entry.is_dir(follow_symlinks=False) and entry.name != "__pycache__":
                        pending.append(entry.path)
                    elif entry.name.endswith(".py"):
                        st = entry.stat()
                        stamps.append((entry.path, st.st_size, st.st_mtime_ns))
        except OSError:
            continue
    stamps.sort()
    return (FORMAT, kitty.__version__, tuple(sys.version_info[:3]), tuple(stamps))


def git_dir(start: str) -> tuple[str, str] | None:
    """(folder holding `.git`, git common dir) for `start`, as layout.find_project finds them."""
    folder = os.path.realpath(start)
    while True:
        dot_git = os.path.join(folder, ".git")
        if os.path.isdir(dot_git):
            return folder, dot_git
        if os.path.isfile(dot_git):
            try:
                with open(dot_git, encoding="utf-8") as handle:
                    text = handle.read().strip()
                if not text.startswith("gitdir:"):
                    return None
                gitdir = os.path.join(folder, text[len("gitdir:") :].strip())
                common = os.path.join(gitdir, "commondir")
                if os.path.isfile(common):
                    with open(common, encoding="utf-8") as handle:
                        gitdir = os.path.join(gitdir, handle.read().strip())
            except (OSError, UnicodeDecodeError):
                return None
            return folder, os.path.realpath(gitdir)
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _folder(common: str, create: bool = False) -> str | None:
    """The records' folder, when no component below the git dir is a symlink."""
    path = common
    for part in ("kitty", "cache", FOLDER):
        path = os.path.join(path, part)
        try:
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                return None
        except FileNotFoundError:
            if not create:
                return None
            try:
                os.mkdir(path)
            except OSError:
                return None
        except OSError:
            return None
    return path


def _name(record_key: tuple[object, ...]) -> str:
    return f"{zlib.crc32(repr(record_key).encode('utf-8', 'surrogatepass')):08x}.view"


def lookup(
    start: str, mission: str | None, as_json: bool, command: Command = STATUS
) -> dict[str, object] | None:
    """The stored output of this command when every input is unchanged, else None."""
    if not enabled():
        return None
    try:
        found = git_dir(start)
        if found is None:
            return None
        folder = _folder(found[1])
        if folder is None:
            return None
        wanted = key(start, mission, as_json, command)
        record = _read(os.path.join(folder, _name(wanted)))
    except (OSError, ValueError):
        return None
    if record is None or record.get("key") != wanted:
        return None
    now_us = time.time_ns() // 1000
    window = record.get("from"), record.get("until")
    if not all(isinstance(t, int) for t in window) or not window[0] <= now_us < window[1]:  # type: ignore[operator]
        return None
    deps = record.get("deps")
    if not isinstance(deps, tuple) or record.get("code") != code():
        return None
    for dep in deps:
        if not isinstance(dep, tuple) or len(dep) != 3:
            return None
        path, kind_only, was = dep
        if not isinstance(path, str) or sig(path, bool(kind_only)) != was:
            return None
    return record


def _read(path: str) -> dict[str, object] | None:
    try:
        fd = os.open(path, os.O_RDONLY | NOFOLLOW | CLOEXEC)
    except OSError:
        return None  # absent, or a symlink (ELOOP): a miss
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return None
        data = handle.read()
    if data[:4] != MAGIC or len(data) < 8:
        return None
    if zlib.crc32(data[8:]) != int.from_bytes(data[4:8], "big"):
        return None  # corrupt
    try:
        record = marshal.loads(data[8:])
    except (EOFError, ValueError, TypeError):
        return None
    return record if isinstance(record, dict) else None


def dependencies(
    start: str, worktree: str, mission_dir: str, config: str
) -> list[tuple[str, bool, Sig]]:
    """The lstat of every file and folder a status read depends on."""
    gitdir = own_gitdir(worktree)
    chain = []
    folder = os.path.realpath(start)
    while True:  # which folder holds the repository: only the kind of each `.git`
        chain.append(os.path.join(folder, ".git"))
        if folder == worktree or os.path.dirname(folder) == folder:
            break
        folder = os.path.dirname(folder)
    dot_git = os.path.join(worktree, ".git")
    # a `.git` folder only by its kind (its mtime moves with every git command); a
    # linked worktree's `.git` file by its stat (it names the git dir)
    paths = [dot_git] if os.path.isfile(dot_git) else []
    paths.append(os.path.join(gitdir, "HEAD"))
    paths += [os.path.join(gitdir, "commondir"), os.path.dirname(config), config]
    specs = os.path.dirname(mission_dir)
    paths += [specs, *_entries(specs), mission_dir, *_entries(mission_dir)]
    paths += _entries(os.path.join(mission_dir, "tasks"))
    deps: list[tuple[str, bool, Sig]] = [(path, True, sig(path, True)) for path in chain]
    return deps + [(path, False, sig(path)) for path in paths]


def own_gitdir(worktree: str) -> str:
    """The git dir of the work tree itself (a linked worktree's own HEAD lives there)."""
    dot_git = os.path.join(worktree, ".git")
    if os.path.isdir(dot_git):
        return dot_git
    try:
        with open(dot_git, encoding="utf-8") as handle:
            text = handle.read().strip()
    except (OSError, UnicodeDecodeError):
        return dot_git
    if not text.startswith("gitdir:"):
        return dot_git
    return os.path.join(worktree, text[len("gitdir:") :].strip())


def _entries(folder: str) -> list[str]:
    try:
        with os.scandir(folder) as scan:
            return sorted(entry.path for entry in scan)
    except OSError:
        return []


def store(
    start: str,
    mission: str | None,
    as_json: bool,
    common: str,
    deps: list[tuple[str, bool, Sig]],
    window: tuple[int, Iterable[int]],
    printed: tuple[str, str],
    git: tuple[str, str, str, bool, str | None] | None,
    command: Command = STATUS,
) -> bool:
    """Keep what this command printed. `window`: the time (µs) taken before anything was
    read, which the view was computed for, and the times the view changes at; `deps`
    were taken after that time and before the files were read. A file changed after
    `deps` differs from them at the next lookup; one changed before them but within two
    seconds of `window[0]` may hold content `deps` cannot tell apart (the racy rule):
    then nothing is kept. Nor when the output holds for no time at all. Best effort: a
    read-only git dir just means no cache."""
    if not enabled():
        return False
    since, changes = window
    for _, kind_only, was in deps:
        if was is not None and not kind_only and max(was[4], was[5]) > since * 1000 - RACY_NS:
            return False
    until = min(changes, default=2**62)
    if until <= time.time_ns() // 1000:
        return False
    record = {
        "key": key(start, mission, as_json, command),
        "code": code(),
        "deps": tuple(deps),
        "from": since,
        "until": until,
        "out": printed[0],
        "err": printed[1],
        "git": git,
    }
    return _write(common, record)


def _write(common: str, record: dict[str, object]) -> bool:
    folder = _folder(common, create=True)
    if folder is None:
        return False
    body = marshal.dumps(record)
    data = MAGIC + zlib.crc32(body).to_bytes(4, "big") + body
    path = os.path.join(folder, _name(record["key"]))  # type: ignore[arg-type]
    tmp = os.path.join(folder, f".{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | NOFOLLOW | CLOEXEC, 0o644)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except OSError:
        return False
    _prune(folder, path)
    return True


def _prune(folder: str, written: str) -> None:
    """Keep the KEEP newest records, `written` among them (each spelling, mission,
    terminal width and colour has its own)."""
    try:
        with os.scandir(folder) as scan:
            found = [
                (e.stat().st_mtime_ns, e.path)
                for e in scan
                if e.name.endswith(".view") and e.path != written
            ]
        for _, path in sorted(found)[: max(0, len(found) - (KEEP - 1))]:
            os.unlink(path)
    except OSError:
        pass
