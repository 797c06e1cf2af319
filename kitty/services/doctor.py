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
from pathlib import Path
from typing import Any

from kitty.adapters import config as config_adapter
from kitty.adapters import contain, eventlog
from kitty.adapters.files import atomic_write
from kitty.core.clock import FUTURE_BOUND_US, format_at, is_implausible, ulid
from kitty.core.conflicts import open_views
from kitty.core.events import Annotation, Transition, field_problems, serialize
from kitty.core.skcompat import refusal
from kitty.errors import KittyError, SpecErrors, Untrusted
from kitty.services.actions import DISPATCH, LEGACY_DISPATCH
from kitty.services.gitcheck import git_problems
from kitty.services.workspace import Mission

QUARANTINE_SUFFIX = ".quarantine"
#: The `event_type` of the line that takes a quarantined line's place. A lifecycle
#: envelope: kitty keeps it as an `Other` record, and Spec Kitty skips every line
#: carrying `event_type` (an annotation would need a WP id the corrupt line lacks).
QUARANTINE_EVENT = "KittyLineQuarantined"


def _render(exc: KittyError) -> str:
    return exc.message + (f" ({exc.hint})" if exc.hint else "")


def security_problems(mission: Mission) -> list[str]:
    """Every symlink among the files kitty reads or writes for this mission."""
    project = mission.project
    found: list[str] = []
    tops = [project.kittify, project.config_path, project.specs_dir, mission.dir]
    tops.append(project.git_common_dir / "kitty")
    for path in tops:
        problem = contain.symlink_problem(path)
        if problem and problem not in found:
            found.append(problem)
    if not found and mission.dir.is_dir():
        for folder, dirs, files in os.walk(mission.dir):
            for name in sorted(dirs + files):
                full = Path(folder, name)
                if full.is_symlink():
                    found.append(f"{full}, a symbolic link (to {os.readlink(full)})")
    problems = [
        f"security: {p}: kitty refuses to read or write through it "
        "(replace the link with a real file or directory, e.g. `git rm` it)"
        for p in found
    ]
    lock_dir = project.git_common_dir / "kitty"
    if lock_dir.exists() and not lock_dir.is_dir() and not lock_dir.is_symlink():
        problems.append(
            f"{lock_dir} is not a directory: kitty keeps its locks there (move the file aside)"
        )
    return problems


def write_link_problems(mission: Mission) -> list[str]:
    """Symlinks where kitty creates or writes files outside mission state: the lane
    worktrees (`.worktrees`), agent run logs and prompts (`.kittify/runs`, `.kittify/prompts`)
    and the instructions files `kitty init` writes (AGENTS.md & co., allowed to link to
    a file inside the work tree, as CLAUDE.md -> AGENTS.md)."""
    from kitty.errors import UnsafePath
    from kitty.services.onboarding import ALWAYS, WHEN_PRESENT

    project = mission.project
    found = []
    for path in (
        project.root / ".worktrees",
        project.kittify / "runs",
        project.kittify / "prompts",
    ):
        problem = contain.symlink_problem(path)
        if problem:
            found.append(
                f"security: {problem}: kitty refuses to create files through it "
                "(replace the link with a real directory, e.g. `git rm` it)"
            )
    for name in (ALWAYS, *WHEN_PRESENT):
        try:
            contain.check_link_inside(project.root / name, project.root, (project.git_common_dir,))
        except UnsafePath as exc:
            found.append(f"security: {_render(exc)}")
    return found


def trust_warnings(mission: Mission) -> list[str]:
    """What `kitty sprint` and `kitty review run` would refuse for the config's untrusted
    commands, with its hint (a warning: reading the mission does not need them)."""
    from kitty.adapters import trust

    try:
        trust.require(mission.project.root, mission.config.raw)
    except Untrusted as exc:
        return [f"{_render(exc)}; `kitty sprint` and `kitty review run` refuse them until then"]
    except KittyError:
        return []  # an unreadable config or trust file is reported as a problem elsewhere
    return []


def agent_versions(mission: Mission) -> list[dict[str, Any]]:
    """The configured agents' CLI versions against the ranges kitty was tested with
    (`warning` says when one is outside it or cannot be read)."""
    from kitty.adapters.agents import backend_for, check_versions, configured

    try:
        raw = mission.config.raw
    except KittyError:
        return []  # an unreadable config is reported as a problem by `diagnose`
    backends = []
    for name in configured(raw):
        try:
            backends.append(backend_for(name, raw))
        except KittyError:
            continue  # an unknown agent name: `kitty agent config list` reports it
    return [v.as_dict() for v in check_versions(backends)]


def git_leftover_problems(mission: Mission) -> list[str]:
    """What a killed git (or `kitty sync`) left in the repository: a sync marker whose
    process is gone, a merge in progress, and git lock files no live git process owns."""
    from kitty.adapters import gitlocks
    from kitty.services.sync import MARKER, _pid_alive

    project = mission.project
    common = project.git_common_dir
    problems = []
    places = [project.root, common, project.worktree]
    marker = common / MARKER
    killed_sync = False
    try:
        state = json.loads(marker.read_text(encoding="utf-8"))
        pid = state.get("pid") if isinstance(state, dict) else None
        killed_sync = not _pid_alive(pid)
    except (OSError, ValueError):
        pass
    if killed_sync:
        left = [project.rel(p) for p in gitlocks.lock_files(common)]
        if (common / "MERGE_HEAD").exists():
            left.append(f"{project.rel(common / 'MERGE_HEAD')} (its merge)")
        problems.append(
            f"{project.rel(marker)}: a `kitty sync` was killed here"
            + (f" and left {', '.join(left)}" if left else "")
            + " (run `kitty sync`: it removes what the killed sync left, undoes its merge "
            "and keeps every log line)"
        )
    elif (common / "MERGE_HEAD").exists():
        problems.append(
            f"{project.rel(common / 'MERGE_HEAD')}: a merge is in progress (finish it with "
            "`git commit`, or `git merge --abort`; kitty sync refuses to run until then)"
        )
    for path in gitlocks.stale_locks(common, places):
        problems.append(
            f"{project.rel(path)}: stale git lock (no git process runs in this repository; "
            f"left by a killed git command): `kitty doctor --fix` removes it"
        )
    return problems


def remove_stale_git_locks(mission: Mission) -> list[str]:
    """`kitty doctor --fix`: delete the git lock files no live git process can own (none
    runs in this repository, older than gitlocks.STALE_AFTER seconds)."""
    from kitty.adapters import gitlocks

    project = mission.project
    places = [project.root, project.git_common_dir, project.worktree]
    removed = gitlocks.remove(gitlocks.stale_locks(project.git_common_dir, places))
    return [
        f"removed {project.rel(p)}, a stale git lock (no git process was running)" for p in removed
    ]


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
    from kitty.core.logread import parse_log
    from kitty.core.state import Board, extend

    shown = f"{mission.display}/status.events.jsonl"
    found = LogScan()
    fd = eventlog.open_log(mission.events_path)
    if fd is None:
        return found
    board = Board()
    seen: set[int] = set()  # hashes: a collision only costs the full replay
    streaming = True
    empty: dict[str, Any] = {}

    def check(block: bytes, first: int) -> None:
        nonlocal streaming
        parsed = parse_log(block, first_line=first)
        for w in parsed.warnings:
            fix = " — `kitty doctor --fix` quarantines it" if w.message in _CORRUPT else ""
            found.fixable += bool(fix)
            found.line_problems.append(w.render(shown) + fix)
        fresh: list[Transition | Annotation] = []
        for event in parsed.events:
            refused = refusal(event.data)
            if refused is not None:
                legacy = event.data.get("type") == LEGACY_DISPATCH
                found.fixable += legacy
                found.event_problems.append(
                    f"{shown}:{event.line}: Spec Kitty 3.2.7 refuses the whole log at this "
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
                found.event_problems += [
                    f"{shown}:{event.line}: {p}" for p in field_problems(event.data)
                ]
            if event.event_id:
                key = hash(event.event_id)
                streaming = streaming and key not in seen
                seen.add(key)
            if isinstance(event, Transition | Annotation):
                if not history and is_implausible(event.at_us, now):
                    found.event_problems.append(
                        f"{shown}:{event.line}: at {event.at} is more than "
                        f"{FUTURE_BOUND_US // 3_600_000_000} hours ahead of this machine's "
                        "clock (kitty never dates new events after it; if it is a mistake, "
                        "correct the line's `at` by hand)"
                    )
                event.data = empty  # replay reads the parsed fields only
                fresh.append(event)
        if streaming and fresh:
            newest = board.newest_at_us
            if newest is not None and min(e.at_us for e in fresh) <= newest:
                streaming = False  # overlaps what is folded: only a full replay orders it
            else:
                extend(board, fresh)

    with os.fdopen(fd, "rb") as handle:
        line, carry = 1, b""
        while chunk := handle.read(STREAM_BLOCK):
            data = carry + chunk if carry else chunk
            cut = data.rfind(b"\n") + 1
            block, carry = data[:cut], data[cut:]
            if block:
                check(block, line)
                line += block.count(b"\n")
        if carry:
            check(carry, line)  # an unterminated last line: reported as torn
    if streaming:
        mission.__dict__["board"] = board  # the cached_property's value
    return found


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
            problems.append(_render(exc))
    shown = f"{mission.display}/status.events.jsonl"
    now = eventlog.now_us() if now_us is None else now_us
    try:
        scan = stream_log(mission, now)
    except KittyError as exc:
        problems.append(_render(exc))
        return result
    result["fixable"] = scan.fixable
    problems += scan.line_problems
    problems += [w.render(shown) for w in mission.board.warnings]
    problems += scan.event_problems
    try:
        from kitty.services.missions import validate

        validate(mission)
    except SpecErrors as exc:
        problems += [_render(e) for e in exc.errors]
    except KittyError as exc:
        problems.append(_render(exc))
    problems += git_problems(mission)
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
    actions: list[str] = remove_stale_git_locks(mission)
    path = mission.events_path
    quarantine = path.with_name(path.name + QUARANTINE_SUFFIX)
    shown = f"{mission.display}/{path.name}"
    with eventlog.locked(mission.project.lock_path(mission.slug), f"mission {mission.slug}"):
        try:
            raw = contain.read_bytes(path)
        except FileNotFoundError:
            raw = b""
        lines = raw.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        now = eventlog.now_us()
        moved: list[dict[str, Any]] = []
        rewrite = False
        for index, line in enumerate(lines):
            reason = _corruption(line) if line.strip() else None
            if reason is None:
                migrated = _migrated(line)
                if migrated is not None:
                    lines[index] = migrated
                    rewrite = True
                    actions.append(
                        f"{shown}:{index + 1}: a kitty_dispatch record (Spec Kitty refuses the "
                        f"log at it): rewritten as a {DISPATCH} envelope, which it skips"
                    )
                continue
            number = index + 1
            if index == len(lines) - 1 and not raw.endswith(b"\n"):
                reason = "torn last line (write interrupted)"
            moved.append(
                {
                    "line": number,
                    "quarantined_at": format_at(now),
                    "reason": reason,
                    "source": shown,
                    "text": line.decode("utf-8", errors="surrogateescape"),
                }
            )
            marker = {
                "at": format_at(now),
                "event_id": ulid(now // 1000, eventlog.random_bytes()),
                "event_type": QUARANTINE_EVENT,
                "payload": {"line": number, "quarantine": quarantine.name, "reason": reason},
            }
            lines[index] = serialize(marker).rstrip("\n").encode("utf-8")
            actions.append(
                f"{shown}:{number}: {reason}: moved to {mission.display}/{quarantine.name}, "
                f"replaced by a {QUARANTINE_EVENT} line"
            )
        if moved:
            # The quarantine copy is appended and fsynced before the log changes: a crash
            # in between leaves the line in both places, never in neither.
            eventlog.append(quarantine, moved)
        if moved or rewrite:
            atomic_write(path, b"".join(line + b"\n" for line in lines))
        mission.refresh()
        board = mission.board
        mission.store_status(board)
        actions.append(f"rewrote {mission.display}/status.json from {board.event_count} events")
    return {"mission": mission.slug, "actions": actions, "refused": []}


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
