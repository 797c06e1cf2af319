"""`agents.auto_commit_delay`: coalesce the auto-commits of a stream of moves.

With a delay of 0 (the default) every auto-committed command commits before it exits
(workflow/commits/auto.py). With a delay of D seconds a command whose only files are the
log and kitty's shared files (a plain move, a claim) does not commit: it marks its
mission pending (`.git/kitty/deferred/<slug>`, touched after the event is appended)
and makes sure one background committer runs. The committer waits until no mark has
been touched for D seconds (at most 10 D, or 5 s, after the oldest mark: a steady
stream still commits), commits every pending kitty file in one commit under kitty's
commit lock (the same rule and message as autocommit: `kitty: <first move> and N more
moves`, its body listing every event), removes the marks it committed and exits. So a
stream of N rapid moves stores the log once per pause instead of N times.

Why an event always ends committed:

* the committer holds `.git/kitty/committer.lock` (flock) while it runs; a command
  marks first, then tries that lock: if it is free no committer is running (or one is
  leaving) and it starts one; if it is held, the running committer sees the mark,
  because after releasing the lock it looks for marks once more and carries on if any
  are left;
* a mark touched after the committer read it is newer than what it saw, so it stays;
* a committer that died (kill -9, a reboot) leaves its marks: the next deferred
  command starts a new one, any command committing at once (delay 0, `kitty sync`)
  takes the files along, `kitty status` counts them as not committed yet, and
  `kitty doctor` reports marks with no committer while `kitty doctor --fix` commits
  them (the flush).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from kitty.adapters import eventlog, layout
from kitty.errors import KittyError

#: `.git/kitty/<MARKS>/<slug>`: a mission with deferred auto-commits
MARKS = "deferred"
LOCK = "committer"
#: a committer commits at the latest this long after the oldest mark: max(10 D, MIN_CAP)
MIN_CAP = 5.0
#: the committer's own output (warnings of a failed commit) goes here, in .git/kitty
LOG = "committer.log"


def marks_dir(project: layout.Project) -> Path:
    return project.git_common_dir / "kitty" / MARKS


def marks(project: layout.Project) -> dict[str, int]:
    """Marked missions -> the mark's mtime (ns)."""
    found: dict[str, int] = {}
    try:
        entries = list(os.scandir(marks_dir(project)))
    except OSError:
        return found
    for entry in entries:
        try:
            found[entry.name] = entry.stat(follow_symlinks=False).st_mtime_ns
        except OSError:
            continue
    return found


def defer(project: layout.Project, slug: str) -> None:
    """Mark `slug` pending (after its events are appended) and make sure a committer runs."""
    folder = marks_dir(project)
    folder.mkdir(parents=True, exist_ok=True)
    mark = folder / slug
    with open(mark, "ab"):
        pass
    os.utime(mark)
    if not committer_running(project):
        _start(project)


def committer_running(project: layout.Project) -> bool:
    """True while a committer holds the committer lock."""
    fd = _try_lock(project)
    if fd is None:
        return True
    os.close(fd)  # closing releases the flock
    return False


def _try_lock(project: layout.Project) -> int | None:
    """The committer lock's descriptor, held; None when another process holds it."""
    import fcntl

    path = project.lock_path(LOCK)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def _start(project: layout.Project) -> None:
    """Start a committer in its own session (it outlives this command; nobody waits for
    it: posix_spawn leaves no Popen object to warn about a child still running)."""
    log = str(project.git_common_dir / "kitty" / LOG)
    os.posix_spawn(
        sys.executable,
        [sys.executable, "-m", "kitty.workflow.commits.deferred", str(project.root)],
        os.environ,
        file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
            (os.POSIX_SPAWN_OPEN, 2, log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644),
        ],
        setsid=True,
    )


def flush(project: layout.Project) -> list[str]:
    """Commit every marked mission's pending kitty files now (one commit), under the
    commit lock; remove the marks seen before the commit. Returns the missions done."""
    from kitty.mission.workspace import Mission
    from kitty.workflow.commits.paths import commit_recorded, pending, repair_killed_commit

    seen = marks(project)
    if not seen:
        return []
    lock = project.lock_path("commit")
    with eventlog.locked(lock, "kitty's auto-commit", max(eventlog.lock_timeout(), 60.0)):
        repair_killed_commit(project)
        paths: set[str] = set()
        for slug in seen:
            if (project.root / layout.SPECS / slug).is_dir():
                paths.update(pending(Mission(project, slug)))
        if paths:
            commit_recorded(project, sorted(paths), None)
    for slug, mtime in seen.items():
        mark = marks_dir(project) / slug
        try:
            if mark.stat().st_mtime_ns == mtime:  # touched since: a newer event, keep it
                mark.unlink()
        except OSError:
            continue
    return sorted(seen)


def _delay(project: layout.Project) -> float:
    from kitty.adapters.config import load

    try:
        return load(project.root / ".kittify" / "config.yaml").commit_delay
    except KittyError:
        return 0.0


def _wait_quiet(project: layout.Project) -> None:
    """Until no mark was touched for the delay, or the oldest is older than the cap."""
    delay = _delay(project)
    cap = max(10 * delay, MIN_CAP)
    while True:
        seen = marks(project)
        if not seen:
            return
        now = time.time_ns()
        quiet = (now - max(seen.values())) / 1e9
        waited = (now - min(seen.values())) / 1e9
        if quiet >= delay or waited >= cap:
            return
        time.sleep(min(max(delay - quiet, 0.01), cap - waited, 0.25))


def run(root: Path) -> int:
    """The committer: commit after each pause until no mark is left."""
    project = layout.find_project(root)
    failures = 0
    while True:
        fd = _try_lock(project)
        if fd is None:
            return 0  # another committer runs; it sees every mark
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())  # who runs, for a person (and tests)
        try:
            while marks(project) and failures < 3:
                _wait_quiet(project)
                try:
                    flush(project)
                except KittyError as exc:
                    failures += 1
                    print(f"kitty committer: {exc.message}", file=sys.stderr)
                    time.sleep(1.0)
        finally:
            os.close(fd)
        if failures >= 3 or not marks(project):
            return 0  # marks left after failures: doctor reports them


def flush_now(project: layout.Project) -> list[str]:
    """`kitty doctor --fix`: commit the deferred auto-commits now (whether or not a
    committer runs: the commit lock keeps the two apart). What it did, for doctor."""
    try:
        done = flush(project)
    except KittyError as exc:
        return [f"deferred auto-commits are still pending: {exc.message}"]
    return [f"committed the deferred auto-commits of {', '.join(done)}"] if done else []


def leftover_problems(project: layout.Project) -> list[str]:
    """Marks no committer is working on (it died): what doctor reports."""
    seen = marks(project)
    if not seen or committer_running(project):
        return []
    oldest = (time.time_ns() - min(seen.values())) / 1e9
    if oldest < max(10 * _delay(project), MIN_CAP) + 5:
        return []  # a committer may be starting right now
    names = ", ".join(sorted(seen))
    return [
        f"{project.rel(marks_dir(project))}: deferred auto-commits of {names} are pending and "
        "no committer is running (it was killed): `kitty doctor --fix` commits them"
    ]


if __name__ == "__main__":
    sys.exit(run(Path(sys.argv[1])))
