"""`kitty doctor` (checks, and `--fix` repairs) and `kitty rebuild` (re-derive status.json).

doctor sees what the readers see: everything a command would refuse (a symlink,
a config or meta.json of the wrong type, an unreadable log) is a problem here,
plus the strict per-key type checks readers are lenient about. `--fix` repairs
only what is safe to repair: corrupt or torn log lines move to a quarantine file
beside the log (never deleted) and are replaced by a marker event in place, and
status.json is regenerated. Everything else is reported with what to do.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

from kitty.adapters import config as config_adapter
from kitty.adapters import contain, eventlog
from kitty.adapters.files import atomic_write
from kitty.core.clock import FUTURE_BOUND_US, format_at, is_implausible, ulid
from kitty.core.log.conflicts import open_views
from kitty.core.log.events import Annotation, Transition, field_problems, serialize
from kitty.core.log.skcompat import refusal
from kitty.errors import KittyError, SpecErrors
from kitty.mission.gitcheck import git_problems
from kitty.mission.workspace import Mission
from kitty.project.doctor_checks import (
    agent_versions,
    git_leftover_problems,
    remove_stale_git_locks,
    render_problem,
    security_problems,
    stale_status_problems,
    trust_warnings,
    write_link_problems,
)
from kitty.workflow.dispatches import DISPATCH, LEGACY_DISPATCH

#: The checks beside the log's (kitty.project.doctor_checks), importable from here.
__all__ = [
    "agent_versions",
    "diagnose",
    "rebuild_status",
    "repair",
    "security_problems",
    "stream_log",
    "trust_warnings",
]

QUARANTINE_SUFFIX = ".quarantine"
#: The `event_type` of the line that takes a quarantined line's place. A lifecycle
#: envelope: kitty keeps it as an `Other` record, and Spec Kitty skips every line
#: carrying `event_type` (an annotation would need a WP id the corrupt line lacks).
QUARANTINE_EVENT = "KittyLineQuarantined"


#: doctor reads the log in blocks of this many bytes (plus the line that straddles one).
STREAM_BLOCK = 1 << 20


@dataclass
class LogScan:
    """What doctor's one streaming pass over the log found."""

    line_problems: list[str] = field(default_factory=list)  # unusable lines
    event_problems: list[str] = field(default_factory=list)  # field types, implausible times
    fixable: int = 0


def stream_log(mission: Mission, now: int) -> LogScan:
    """Check every line of the log, reading it a block at a time, so memory holds one
    block, the board and a 64-bit hash per event id (not every decoded record).

    When the log is in time order (what kitty's own clock writes), each block's events
    are folded onto the board as they come (`state.extend`: the board `replay` gives)
    and that board becomes `mission.board`. A log whose blocks overlap in time (after
    a merge) or that repeats an event id is left to the full replay (`mission.board`),
    whose memory grows with the number of events."""
    fd = eventlog.open_log(mission.events_path)
    if fd is None:
        return LogScan()
    stream = _Stream(f"{mission.display}/status.events.jsonl", now)
    with os.fdopen(fd, "rb") as handle:
        line, carry = 1, b""
        while chunk := handle.read(STREAM_BLOCK):
            data = carry + chunk if carry else chunk
            cut = data.rfind(b"\n") + 1
            block, carry = data[:cut], data[cut:]
            if block:
                stream.check(block, line)
                line += block.count(b"\n")
        if carry:
            stream.check(carry, line)  # an unterminated last line: reported as torn
    if stream.streaming:
        mission.__dict__["board"] = stream.board  # the cached_property's value
    return stream.found


class _Stream:
    """stream_log's state between blocks: what it found, the board folded so far, the
    event ids seen (hashes: a collision only costs the full replay)."""

    def __init__(self, shown: str, now: int) -> None:
        from kitty.core.log.state import Board

        self.shown, self.now = shown, now
        self.found = LogScan()
        self.board = Board()
        self.seen: set[int] = set()
        self.streaming = True

    def check(self, block: bytes, first: int) -> None:
        from kitty.core.log.read import parse_log
        from kitty.core.log.state import extend

        parsed = parse_log(block, first_line=first)
        for w in parsed.warnings:
            fix = " — `kitty doctor --fix` quarantines it" if w.message in _CORRUPT else ""
            self.found.fixable += bool(fix)
            self.found.line_problems.append(w.render(self.shown) + fix)
        fresh: list[Transition | Annotation] = []
        for event in parsed.events:
            history = self._event(event)
            if event.event_id:
                key = hash(event.event_id)
                self.streaming = self.streaming and key not in self.seen
                self.seen.add(key)
            if isinstance(event, Transition | Annotation):
                if not history and is_implausible(event.at_us, self.now):
                    self.found.event_problems.append(
                        f"{self.shown}:{event.line}: at {event.at} is more than "
                        f"{FUTURE_BOUND_US // 3_600_000_000} hours ahead of this machine's "
                        "clock (kitty never dates new events after it; if it is a mistake, "
                        "correct the line's `at` by hand)"
                    )
                event.data = _EMPTY  # replay reads the parsed fields only
                fresh.append(event)
        if self.streaming and fresh:
            newest = self.board.newest_at_us
            if newest is not None and min(e.at_us for e in fresh) <= newest:
                self.streaming = False  # overlaps what is folded: only a full replay orders it
            else:
                extend(self.board, fresh)

    def _event(self, event: Any) -> bool:
        """Report what Spec Kitty would refuse at this event and its field problems;
        whether it is history Spec Kitty reads as it is (then nothing is reported)."""
        refused = refusal(event.data)
        if refused is not None:
            legacy = event.data.get("type") == LEGACY_DISPATCH
            self.found.fixable += legacy
            self.found.event_problems.append(
                f"{self.shown}:{event.line}: Spec Kitty 3.2.7 refuses the whole log at this "
                f"line ({refused})"
                + (
                    " — `kitty doctor --fix` rewrites it as a KittyDispatch envelope"
                    if legacy
                    else "; correct or remove the line"
                )
            )
        # history Spec Kitty reads (an unlinked transition it accepts) is read as it
        # reads it: nothing to report
        history = refused is None and isinstance(event, Transition) and not event.linked
        if not history:
            self.found.event_problems += [
                f"{self.shown}:{event.line}: {p}" for p in field_problems(event.data)
            ]
        return history


#: What a folded event's `data` becomes: replay reads the parsed fields only.
_EMPTY: dict[str, Any] = {}


def diagnose(mission: Mission, now_us: int | None = None) -> dict[str, Any]:
    problems = security_problems(mission) + write_link_problems(mission)
    result: dict[str, Any] = {"mission": mission.slug, "problems": problems, "fixable": 0}
    if problems:
        return result  # every read below would refuse; fix the links first
    for load in (
        lambda: config_adapter.load(mission.project.config_path),
        lambda: mission.meta,
        lambda: mission.lanes_doc,
        mission.policy,
    ):
        try:
            load()
        except KittyError as exc:
            problems.append(render_problem(exc))
    shown = f"{mission.display}/status.events.jsonl"
    now = eventlog.now_us() if now_us is None else now_us
    try:
        scan = stream_log(mission, now)
    except KittyError as exc:
        problems.append(render_problem(exc))
        return result
    result["fixable"] = scan.fixable
    problems += scan.line_problems
    problems += [w.render(shown) for w in mission.board.warnings]
    problems += scan.event_problems
    try:
        from kitty.workflow.planning.missions import validate

        validate(mission)
    except SpecErrors as exc:
        problems += [render_problem(e) for e in exc.errors]
    except KittyError as exc:
        problems.append(render_problem(exc))
    problems += git_problems(mission)
    problems += stale_status_problems(mission)
    problems += git_leftover_problems(mission)
    for conflict in open_views(mission.board, mission.slug):
        problems.append(
            f"{shown}:{conflict['line']}: conflict: {conflict['message']} "
            f"(resolve: {' | '.join(conflict['commands'])})"
        )
    unknown = sorted(i for i in mission.board.wps if i not in mission.wps)
    problems += [f"{shown}: {i} has events but no WP file" for i in unknown]
    unfinalized = sorted(i for i in mission.wps if mission.board.lane(i) is None)
    if unfinalized:
        problems.append(
            f"{mission.display}: {', '.join(unfinalized)} not finalized "
            f"(run `kitty finalize --mission {mission.slug}`)"
        )
    return result


#: Parser warnings for lines that are not a JSON object at all: safe to quarantine.
_CORRUPT = frozenset({"not valid JSON", "torn last line (write interrupted)", "not a JSON object"})


def _corruption(line: bytes) -> str | None:
    """Why a log line is not a JSON object (None when it is one)."""
    try:
        return None if isinstance(json.loads(line), dict) else "not a JSON object"
    except ValueError:
        return "not valid JSON"


def _migrated(line: bytes) -> bytes | None:
    """A legacy `kitty_dispatch` line as the envelope Spec Kitty skips (same id and `at`);
    None for any other line."""
    if LEGACY_DISPATCH.encode() not in line:
        return None
    data = json.loads(line)
    if not isinstance(data, dict) or data.get("type") != LEGACY_DISPATCH:
        return None
    envelope = {"event_type": DISPATCH}
    for key in ("at", "event_id"):
        if key in data:
            envelope[key] = data[key]
    payload = {k: v for k, v in data.items() if k not in ("type", "at", "event_id")}
    return serialize(dict(envelope, payload=payload)).rstrip("\n").encode("utf-8")


def repair(mission: Mission) -> dict[str, Any]:
    """`kitty doctor --fix`: quarantine corrupt lines, regenerate status.json; report actions."""
    security = security_problems(mission)
    if security:
        return {"mission": mission.slug, "actions": [], "refused": security}
    from kitty.workflow.commits.deferred import flush_now

    actions: list[str] = remove_stale_git_locks(mission) + flush_now(mission.project)
    path = mission.events_path
    quarantine = path.with_name(path.name + QUARANTINE_SUFFIX)
    with eventlog.locked(mission.project.lock_path(mission.slug), f"mission {mission.slug}"):
        try:
            raw = contain.read_bytes(path)
        except FileNotFoundError:
            raw = b""
        lines = raw.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        fix = _LineFix(mission, path.name, quarantine.name, eventlog.now_us(), actions)
        for index, line in enumerate(lines):
            lines[index] = fix.line(
                index, line, index == len(lines) - 1 and not raw.endswith(b"\n")
            )
        if fix.moved:
            # The quarantine copy is appended and fsynced before the log changes: a crash
            # in between leaves the line in both places, never in neither.
            eventlog.append(quarantine, fix.moved)
        if fix.moved or fix.rewrite:
            atomic_write(path, b"".join(line + b"\n" for line in lines))
        mission.refresh()
        board = mission.board
        mission.store_status(board)
        actions.append(f"rewrote {mission.display}/status.json from {board.event_count} events")
    return {"mission": mission.slug, "actions": actions, "refused": []}


class _LineFix:
    """repair's verdict per log line: kept, migrated (a legacy dispatch) or quarantined
    (replaced by a marker); the lines to quarantine and the actions to report."""

    def __init__(
        self, mission: Mission, name: str, quarantine: str, now: int, actions: list[str]
    ) -> None:
        self.display, self.shown = mission.display, f"{mission.display}/{name}"
        self.quarantine, self.now, self.actions = quarantine, now, actions
        self.moved: list[dict[str, Any]] = []
        self.rewrite = False

    def line(self, index: int, line: bytes, torn: bool) -> bytes:
        """The line as it stays in the log."""
        reason = _corruption(line) if line.strip() else None
        if reason is None:
            migrated = _migrated(line)
            if migrated is None:
                return line
            self.rewrite = True
            self.actions.append(
                f"{self.shown}:{index + 1}: a kitty_dispatch record (Spec Kitty refuses the "
                f"log at it): rewritten as a {DISPATCH} envelope, which it skips"
            )
            return migrated
        number = index + 1
        if torn:
            reason = "torn last line (write interrupted)"
        self.moved.append(
            {
                "line": number,
                "quarantined_at": format_at(self.now),
                "reason": reason,
                "source": self.shown,
                "text": line.decode("utf-8", errors="surrogateescape"),
            }
        )
        marker = {
            "at": format_at(self.now),
            "event_id": ulid(self.now // 1000, eventlog.random_bytes()),
            "event_type": QUARANTINE_EVENT,
            "payload": {"line": number, "quarantine": self.quarantine, "reason": reason},
        }
        self.actions.append(
            f"{self.shown}:{number}: {reason}: moved to {self.display}/{self.quarantine}, "
            f"replaced by a {QUARANTINE_EVENT} line"
        )
        return serialize(marker).rstrip("\n").encode("utf-8")


def rebuild_status(mission: Mission) -> dict[str, Any]:
    with eventlog.locked(mission.project.lock_path(mission.slug), f"mission {mission.slug}"):
        board = mission.board
        mission.store_status(board)
    return {
        "mission": mission.slug,
        "path": str(mission.status_path),
        "event_count": board.event_count,
        "warnings": mission.warnings(),
    }
