"""The one write path of a mission: lock, re-read, validate, append, fsync, then
status.json. `Mission.record`, `.transition`, `.store_status` and `.publish_status`
call these (split out of mission/workspace.py to keep Mission small)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from kitty.adapters import eventlog, snapshots
from kitty.adapters.files import atomic_write, check_writable, dump_json
from kitty.core.clock import format_at, hybrid_at, is_implausible, ulid
from kitty.core.limits import check_record
from kitty.core.log.events import Annotation, LogWarning, ParsedLog, Transition, parse_record
from kitty.core.log.snapshot import materialize
from kitty.core.log.state import Board, extend, link, replay
from kitty.errors import KittyError

if TYPE_CHECKING:
    from kitty.mission.workspace import Builder, Mission


def transition(
    mission: Mission, wp_id: str, from_lane: str, to_lane: str, actor: Any, **fields: Any
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "actor": actor,
        "evidence": None,
        "execution_mode": "worktree",
        "force": False,
        "from_lane": from_lane,
        "mission_id": mission.mission_id,
        "mission_slug": mission.slug,
        "policy_metadata": None,
        "reason": None,
        "review_ref": None,
        "review_result": None,
        "to_lane": to_lane,
        "wp_id": wp_id,
    }
    record.update(fields)
    return record


def record(mission: Mission, build: Builder) -> list[dict[str, Any]]:
    """Lock, re-read, let `build` validate against the fresh board, append, fsync.

    `build` raises to refuse (nothing is written) or returns the records to append.
    What can be checked is checked first (no symlinks, a writable regular log, a
    regular status.json), so a refusal writes nothing. status.json is then rewritten
    from the log, after the lock is released (the locked section is the tail, the
    decision and the append: other writers wait for nothing else); once the events
    are appended they are recorded, so a failure there is only a warning with the
    `kitty rebuild` hint.
    """
    _ = mission.meta, mission.config  # read before the lock: the locked section stays short
    with eventlog.locked(mission.project.lock_path(mission.slug), f"mission {mission.slug}"):
        eventlog.check_appendable(mission.events_path)
        check_writable(mission.status_path)
        # Only the tail appended since the last snapshot is parsed under the lock.
        board = snapshots.read_log(mission.events_path, mission.cache_dir).board
        records = build(board)
        for rec in records:  # nothing oversized enters the log, whoever built it
            check_record(rec, mission.config.max_text_bytes)
        if not records:
            mission.__dict__["board"] = board  # fresh: no second read after a no-op
            return []
        newest, now = board.newest_at_us, eventlog.now_us()
        implausible = newest is not None and is_implausible(newest, now)
        parsed = eventlog.read(mission.events_path) if implausible else ParsedLog()
        if implausible:  # a far-future event in the log: the clock ignores it
            newest = max(
                (
                    e.at_us
                    for e in parsed.events
                    if isinstance(e, Transition | Annotation) and not is_implausible(e.at_us, now)
                ),
                default=None,
            )
        for rec in records:
            at = hybrid_at(now, newest)
            newest = at
            rec["at"] = format_at(at)
            rec.setdefault("event_id", ulid(at // 1000, eventlog.random_bytes()))
        link(records, board)
        eventlog.append(mission.events_path, records)
        end = os.stat(mission.events_path).st_size
        new_events = [
            e for rec in records if not isinstance(e := parse_record(dict(rec)), LogWarning)
        ]
        fresh = replay([*parsed.events, *new_events]) if implausible else extend(board, new_events)
        mission.__dict__.pop("log", None)
        mission.__dict__.pop("log_state", None)
        mission.__dict__["board"] = fresh
    publish_status(mission, fresh, end)
    return records


def publish_status(mission: Mission, board: Board, end: int) -> bool:
    """`store_status` after an append: a failure is a warning (the events are recorded)
    with the `kitty rebuild` hint; False when skipped or failed."""
    try:
        return store_status(mission, board, end)
    except (KittyError, OSError) as exc:
        from kitty.output import warn

        warn(
            [
                f"the event was recorded, but {mission.display}/status.json could not be "
                f"refreshed ({exc}); run `kitty rebuild --mission {mission.slug}`"
            ]
        )
        return False


def store_status(mission: Mission, board: Board, end: int | None = None) -> bool:
    """Rewrite the derived status.json from `board` under the status lock, the one way
    kitty writes that file, so writers never interleave. With `end` (the log's size
    `board` was replayed from) it is skipped, returning False, when the log has grown
    since: a later writer's board is newer, and that writer rewrites it in turn, so
    status.json never goes back to an older board. Errors propagate."""
    what = f"status.json of {mission.slug}"
    with eventlog.locked(mission.project.lock_path(f"status-{mission.slug}"), what):
        if end is not None and os.stat(mission.events_path).st_size != end:
            return False
        atomic_write(mission.status_path, dump_json(materialize(board, mission.slug, mission.meta)))
    return True
