"""Coordination through a git remote: the mission's log on a ref updated by compare-and-swap.

Each mission has a coordination branch `kitty/coord/<mission>` on the remote whose
tree holds exactly one file, the mission's event log. A transaction fetches that
ref, folds its events into the local log (under the local lock), decides on the
fresh board, and pushes a commit whose parent is the fetched tip with
`--force-with-lease=<ref>:<tip>`: git updates the ref only if it still points at
that tip, atomically, on any host. A rejected push means another machine moved
first: fetch, replay, decide again, retry with backoff. So exactly one machine
wins a WP, and every event pushed this way reaches every clone.

Unlike a coordination *worktree* holding planning artifacts, the ref carries no
WP files, specs or code (no add/add conflicts, nothing to check out), and the
primary branch stays the one authority for everything but lane events.
"""

from __future__ import annotations

import json
import os
import random
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kitty.adapters import eventlog
from kitty.adapters.git import Git
from kitty.core.clock import format_at, hybrid_at, ulid
from kitty.core.log.state import Board, link, replay
from kitty.errors import GitError, LockBusy
from kitty.mission.workspace import Mission

LOG_NAME = "status.events.jsonl"
#: What git says when a ref moved under a push: retry after fetching again.
RACE_WORDS = (
    "fetch first",
    "non-fast-forward",
    "stale info",
    "failed to update ref",
    "cannot lock ref",
)
ATTEMPTS_ENV = "KITTY_REMOTE_ATTEMPTS"
MACHINE_ENV = "KITTY_MACHINE"
DEFAULT_ATTEMPTS = 60
Build = Callable[[Board], list[dict[str, Any]]]


def coord_ref(slug: str) -> str:
    return f"refs/heads/kitty/coord/{slug}"


def tracking_ref(remote: str, slug: str) -> str:
    return f"refs/kitty/remotes/{remote}/{slug}"


def machine_id() -> str:
    """This machine's name in claims and leases: $KITTY_MACHINE, else the host name."""
    return os.environ.get(MACHINE_ENV) or socket.gethostname() or "unknown"


@dataclass
class Outcome:
    records: list[dict[str, Any]]
    attempts: int
    pushed: bool
    tip: str | None


def _event_id(line: str) -> str | None:
    try:
        data = json.loads(line)
    except ValueError:
        return None
    value = data.get("event_id") if isinstance(data, dict) else None
    return value if isinstance(value, str) and value else None


def _lines(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.strip()]


def fetch_tip(git: Git, remote: str, slug: str) -> str | None:
    """Fetch the coordination ref; None when the remote has none yet."""
    ref, local = coord_ref(slug), tracking_ref(remote, slug)
    code, out, err = git.status("fetch", "--quiet", "--no-tags", remote, f"+{ref}:{local}")
    if code != 0:
        if "couldn't find remote ref" in (err + out).lower():
            git.status("update-ref", "-d", local)
            return None
        detail = (err or out).strip().replace("\n", " ")[:300]
        raise GitError(
            f"cannot fetch {ref} from {remote}: {detail}",
            f"check `git remote -v` and that {remote} is reachable",
        )
    return git.rev(local)


def _commit(git: Git, content: bytes, parent: str | None, message: str) -> str:
    blob = git.run("hash-object", "-w", "--stdin", stdin=content).strip()
    tree = git.run("mktree", stdin=f"100644 blob {blob}\t{LOG_NAME}\n".encode()).strip()
    args = [*_identity(git), "commit-tree", tree, "-m", message]
    if parent:
        args += ["-p", parent]
    return git.run(*args).strip()


def _identity(git: Git) -> list[str]:
    """A committer for coordination commits when git has none configured (CI runners)."""
    if git.status("config", "user.email")[1].strip():
        return []
    return ["-c", "user.name=kitty", "-c", f"user.email=kitty@{machine_id()}"]


def push_cas(git: Git, remote: str, slug: str, commit: str, expected: str | None) -> bool:
    """Move the remote ref from `expected` (None: absent) to `commit`; False if it moved."""
    ref = coord_ref(slug)
    _, out, err = git.status(
        "push",
        "--porcelain",
        f"--force-with-lease={ref}:{expected or ''}",
        remote,
        f"{commit}:{ref}",
    )
    flags = [
        line.split("\t", 1)[0]
        for line in out.splitlines()
        if line[:1] in " +-*=!" and "\t" in line and line.split("\t")[1].endswith(f":{ref}")
    ]
    if flags and flags[0] in (" ", "+", "*"):
        # Accepted by the remote (a non-zero exit can only be a local ref update).
        git.status("update-ref", tracking_ref(remote, slug), commit)
        return True
    text = (out + err).strip().replace("\n", " ")
    if lost_race(text):
        return False
    raise GitError(
        f"cannot push {ref} to {remote}: {text[:300]}", f"check that you may push to {remote}"
    )


def lost_race(text: str) -> bool:
    """True when a failed push only means another writer moved the ref first."""
    return any(word in text for word in RACE_WORDS)


def _stamp(records: list[dict[str, Any]], newest: int | None) -> None:
    now = eventlog.now_us()
    for rec in records:
        at = hybrid_at(now, newest)
        newest = at
        rec["at"] = format_at(at)
        rec.setdefault("event_id", ulid(at // 1000, eventlog.random_bytes()))


def transact(
    mission: Mission, remote: str, build: Build, message: str, attempts: int | None = None
) -> Outcome:
    """Fetch, fold in, decide with `build`, push by compare-and-swap; retry when beaten."""
    git = Git(mission.project.root)
    limit = attempts or int(os.environ.get(ATTEMPTS_ENV, DEFAULT_ATTEMPTS))
    lock = mission.project.lock_path(mission.slug)
    for attempt in range(1, limit + 1):
        # The local lock covers the fetch too: processes of one clone share its refs.
        with eventlog.locked(lock, f"mission {mission.slug}"):
            tip = fetch_tip(git, remote, mission.slug)
            remote_text = git.blob(tip, LOG_NAME).decode("utf-8", "replace") if tip else ""
            remote_lines = _lines(remote_text)
            remote_ids = {_event_id(line) or line for line in remote_lines}
            local_text = _read_text(mission)
            local_lines = _lines(local_text)
            local_ids = {_event_id(line) or line for line in local_lines}
            incoming = [line for line in remote_lines if (_event_id(line) or line) not in local_ids]
            if incoming:
                _append_lines(mission, incoming)
            board = replay(eventlog.read(mission.events_path).events)
            records = build(board)
            _stamp(records, board.newest_at_us)
            link(records, board)
            outgoing = [line for line in local_lines if (_event_id(line) or line) not in remote_ids]
            fresh = [eventlog_line(r) for r in records]
            if not outgoing and not fresh:
                _rewrite_status(mission)
                return Outcome([], attempt, False, tip)
            body = "".join(line + "\n" for line in [*remote_lines, *outgoing]) + "".join(fresh)
            commit = _commit(git, body.encode("utf-8"), tip, f"kitty: {message}")
            if push_cas(git, remote, mission.slug, commit, tip):
                if records:
                    eventlog.append(mission.events_path, records)
                _rewrite_status(mission)
                return Outcome(records, attempt, True, commit)
        # Another machine moved the ref first: back off (with jitter), then decide again.
        time.sleep(min(1.0, 0.02 * (2 ** min(attempt, 6))) * random.uniform(0.5, 1.5))
    raise LockBusy(
        f"{coord_ref(mission.slug)} on {remote} kept moving: gave up after {limit} attempts",
        "retry in a moment",
    )


def eventlog_line(record: dict[str, Any]) -> str:
    from kitty.core.log.events import serialize

    return serialize(record)


def _read_text(mission: Mission) -> str:
    try:
        return mission.events_path.read_bytes().decode("utf-8", "replace")
    except FileNotFoundError:
        return ""


def _append_lines(mission: Mission, lines: list[str]) -> None:
    records = []
    for line in lines:
        try:
            data = json.loads(line)
        except ValueError:
            continue  # a torn remote line stays out of the local log
        if isinstance(data, dict):
            records.append(data)
    eventlog.append(mission.events_path, records)


def _rewrite_status(mission: Mission) -> None:
    mission.refresh()
    mission.store_status(mission.board)
