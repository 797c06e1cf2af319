"""`kitty doctor` (read-only checks) and `kitty rebuild` (re-derive status.json)."""

from __future__ import annotations

from typing import Any

from kitty.adapters import eventlog
from kitty.adapters.files import atomic_write, dump_json
from kitty.core.conflicts import open_views
from kitty.core.snapshot import materialize
from kitty.errors import KittyError, SpecErrors
from kitty.services.gitcheck import git_problems
from kitty.services.workspace import Mission


def diagnose(mission: Mission) -> dict[str, Any]:
    problems: list[str] = []
    shown = f"{mission.display}/status.events.jsonl"
    problems += [w.render(shown) for w in mission.log.warnings + mission.board.warnings]
    try:
        from kitty.services.missions import validate

        validate(mission)
    except SpecErrors as exc:
        problems += [e.message + (f" ({e.hint})" if e.hint else "") for e in exc.errors]
    except KittyError as exc:
        problems.append(exc.message + (f" ({exc.hint})" if exc.hint else ""))
    problems += git_problems(mission)
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
    return {"mission": mission.slug, "problems": problems}


def rebuild_status(mission: Mission) -> dict[str, Any]:
    with eventlog.locked(mission.project.lock_path(mission.slug), f"mission {mission.slug}"):
        board = mission.board
        atomic_write(mission.status_path, dump_json(materialize(board, mission.slug, mission.meta)))
    return {
        "mission": mission.slug,
        "path": str(mission.status_path),
        "event_count": board.event_count,
        "warnings": mission.warnings(),
    }
