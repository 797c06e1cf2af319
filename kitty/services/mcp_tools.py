"""The tools `kitty mcp` serves: each a thin call into the services `--json` uses.

Every tool returns exactly what the matching command prints with `--json` (implement and
review add the prompt's text as `prompt_text`), and every failure is kitty's error object.
Nothing here imports the `mcp` SDK: kitty/commands/mcp.py wires these into a server.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kitty import SCHEMA
from kitty.services.workspace import Mission


def _open(root: Path, mission: str | None) -> Mission:
    return Mission.open(root, mission)


def _doc(data: dict[str, Any]) -> dict[str, Any]:
    return {**data, "schema": data.get("schema", SCHEMA)}


def next_step(
    root: Path, agent: str | None = None, mission: str | None = None, claim: bool = False
) -> dict[str, Any]:
    from kitty.services.schedule import next_step as decide

    return _doc(decide(_open(root, mission), agent, claim).to_json())


def status(root: Path, mission: str | None = None) -> dict[str, Any]:
    from kitty.adapters.eventlog import now_us
    from kitty.services.board import status_view

    return _doc(status_view(_open(root, mission), now_us()))


def move(
    root: Path,
    wp_id: str,
    to: str,
    agent: str | None = None,
    note: str | None = None,
    mission: str | None = None,
    force: bool = False,
    review_feedback_file: str | None = None,
) -> dict[str, Any]:
    from kitty.services.moves import move_task

    return _doc(
        move_task(
            _open(root, mission),
            wp_id,
            to,
            agent=agent,
            note=note,
            force=force,
            feedback_file=_path(root, review_feedback_file),
            self_review_fallback=False,
            intended_reviewer=None,
            reviewer_failure_reason=None,
        )
    )


def mark_status(
    root: Path,
    task_ids: list[str],
    status: str,
    agent: str | None = None,
    mission: str | None = None,
    wp_id: str | None = None,
) -> dict[str, Any]:
    from kitty.services.moves import mark_status as mark

    return _doc(mark(_open(root, mission), list(task_ids), status, agent=agent, wp_text=wp_id))


def review_submit(
    root: Path,
    wp_id: str,
    findings_files: list[str],
    agent: str | None = None,
    mission: str | None = None,
    format: str | None = None,
) -> dict[str, Any]:
    from kitty.services.reviews import submit

    files = [p for p in (_path(root, f) for f in findings_files) if p is not None]
    return _doc(submit(_open(root, mission), wp_id, files, agent, format))


def implement(
    root: Path, wp_id: str | None = None, agent: str | None = None, mission: str | None = None
) -> dict[str, Any]:
    from kitty.services.actions import implement as run

    return _with_prompt(run(_open(root, mission), wp_id, agent, None, None, None))


def review(
    root: Path, wp_id: str | None = None, agent: str | None = None, mission: str | None = None
) -> dict[str, Any]:
    from kitty.services.actions import review as run

    return _with_prompt(run(_open(root, mission), wp_id, agent, None, False))


def _with_prompt(result: dict[str, Any]) -> dict[str, Any]:
    doc = _doc(result)
    prompt = result.get("prompt")
    doc["prompt_text"] = Path(prompt).read_text(encoding="utf-8") if prompt else None
    return doc


def _path(root: Path, value: str | None) -> Path | None:
    """A file argument: absolute, or relative to the directory the server runs in."""
    if not value:
        return None
    path = Path(value)
    return path if path.is_absolute() else root / path


# -- planning: the same services as `kitty wp …` and `kitty finalize` ----------------------


def wp_add(
    root: Path,
    title: str,
    objective: str | None = None,
    subtasks: list[str] | None = None,
    body: str | None = None,
    depends_on: list[str] | None = None,
    owns: list[str] | None = None,
    mission: str | None = None,
) -> dict[str, Any]:
    from kitty.services.missions import Content, add_wp

    content = Content(objective, tuple(subtasks or ()), body)
    return _doc(
        add_wp(_open(root, mission), title, list(depends_on or []), list(owns or []), 0, content)
    )


def wp_edit(
    root: Path,
    wp_id: str,
    title: str | None = None,
    objective: str | None = None,
    owns: list[str] | None = None,
    depends_on: list[str] | None = None,
    body: str | None = None,
    mission: str | None = None,
) -> dict[str, Any]:
    from kitty.services.planning import edit

    return _doc(
        edit(
            _open(root, mission),
            wp_id,
            title=title,
            objective=objective,
            owns=owns,
            depends_on=depends_on,
            body=body,
        )
    )


def wp_depend(
    root: Path,
    wp_id: str,
    add: list[str] | None = None,
    remove: list[str] | None = None,
    mission: str | None = None,
) -> dict[str, Any]:
    from kitty.services.planning import depend

    return _doc(depend(_open(root, mission), wp_id, add, remove))


def wp_split(
    root: Path,
    wp_id: str,
    title: str,
    move: list[str] | None = None,
    objective: str | None = None,
    owns: list[str] | None = None,
    mission: str | None = None,
) -> dict[str, Any]:
    from kitty.services.planning import split

    return _doc(split(_open(root, mission), wp_id, title, move, objective, owns))


def wp_show(root: Path, wp_id: str, mission: str | None = None) -> dict[str, Any]:
    from kitty.services.planning import show

    return _doc(show(_open(root, mission), wp_id))


def wp_search(
    root: Path, query: str, lane: str | None = None, mission: str | None = None
) -> dict[str, Any]:
    from kitty.services.planning import search

    return _doc(search(_open(root, mission), query, lane))


def finalize(
    root: Path, mission: str | None = None, allow_placeholders: bool = False
) -> dict[str, Any]:
    from kitty.services.missions import finalize as run

    return _doc(run(_open(root, mission), allow_placeholders))
