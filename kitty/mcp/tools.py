"""The tools `kitty mcp` serves: each a thin call into the services `--json` uses.

Every tool returns exactly what the matching command prints with `--json` (implement and
review add the prompt's text as `prompt_text`), and every failure is kitty's error object.
Nothing here imports the `mcp` SDK: kitty/mcp/server.py serves these, with the
schemas of kitty/mcp/catalog.py (which checks every argument's name and type
first, so `**given` here only ever holds the parameters a tool's schema names).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from kitty import SCHEMA
from kitty.mission.workspace import Mission


def _open(root: Path, mission: str | None) -> Mission:
    return Mission.open(root, mission)


def _doc(data: dict[str, Any]) -> dict[str, Any]:
    return {**data, "schema": data.get("schema", SCHEMA)}


def _run(
    service: Callable[..., dict[str, Any]], root: Path, mission: str | None, *args: Any, **kw: Any
) -> dict[str, Any]:
    """The service's answer for the mission, as its `--json` command prints it."""
    return _doc(service(_open(root, mission), *args, **kw))


def next_step(
    root: Path, agent: str | None = None, mission: str | None = None, claim: bool = False
) -> dict[str, Any]:
    from kitty.mcp.hints import next_answer
    from kitty.workflow.nextstep import next_step as decide

    return _doc(next_answer(decide(_open(root, mission), agent, claim).to_json()))


def status(root: Path, mission: str | None = None) -> dict[str, Any]:
    from kitty.adapters.eventlog import now_us
    from kitty.workflow.board import status_view

    return _run(status_view, root, mission, now_us())


def move(
    root: Path,
    wp_id: str,
    to: str,
    mission: str | None = None,
    review_feedback_file: str | None = None,
    **given: Any,
) -> dict[str, Any]:
    """`kitty move`; `given`: agent, note, force."""
    from kitty.workflow.moves import move_task

    feedback = _path(root, review_feedback_file)
    return _run(move_task, root, mission, wp_id, to, feedback_file=feedback, **given)


def mark_status(
    root: Path,
    task_ids: list[str],
    status: str,
    mission: str | None = None,
    wp_id: str | None = None,
    **given: Any,
) -> dict[str, Any]:
    """`kitty agent tasks mark-status`; `given`: agent."""
    from kitty.workflow.moves import mark_status as mark

    return _run(mark, root, mission, list(task_ids), status, wp_text=wp_id, **given)


def review_submit(
    root: Path,
    wp_id: str,
    findings_files: list[str],
    agent: str | None = None,
    mission: str | None = None,
    format: str | None = None,
) -> dict[str, Any]:
    from kitty.workflow.reviews import submit

    files = [p for p in (_path(root, f) for f in findings_files) if p is not None]
    return _run(submit, root, mission, wp_id, files, agent, format)


def implement(
    root: Path, wp_id: str | None = None, agent: str | None = None, mission: str | None = None
) -> dict[str, Any]:
    from kitty.workflow.actions import implement as run

    return _with_prompt(_run(run, root, mission, wp_id, agent, None, None, None))


def review(
    root: Path,
    wp_id: str | None = None,
    agent: str | None = None,
    mission: str | None = None,
    takeover: bool = False,
    note: str | None = None,
) -> dict[str, Any]:
    from kitty.workflow.actions import review as run

    return _with_prompt(_run(run, root, mission, wp_id, agent, None, False, takeover, note))


def _with_prompt(doc: dict[str, Any]) -> dict[str, Any]:
    prompt = doc.get("prompt")
    doc["prompt_text"] = Path(prompt).read_text(encoding="utf-8") if prompt else None
    return doc


def _path(root: Path, value: str | None) -> Path | None:
    """A file argument: absolute, or relative to the directory the server runs in."""
    if not value:
        return None
    path = Path(value)
    return path if path.is_absolute() else root / path


# -- planning: the same services as `kitty wp …` and `kitty finalize` ----------------------


def wp_add(root: Path, title: str, mission: str | None = None, **given: Any) -> dict[str, Any]:
    """`kitty wp add`; `given`: objective, subtasks, body, depends_on, owns."""
    from kitty.workflow.planning.add import Content, add_wp

    content = Content(given.get("objective"), tuple(given.get("subtasks") or ()), given.get("body"))
    deps, owns = list(given.get("depends_on") or []), list(given.get("owns") or [])
    return _run(add_wp, root, mission, title, deps, owns, 0, content)


def wp_edit(root: Path, wp_id: str, mission: str | None = None, **changes: Any) -> dict[str, Any]:
    """`kitty wp edit`; `changes`: title, objective, owns, depends_on, body, subtasks,
    remove_subtasks."""
    from kitty.workflow.planning.edit import edit
    from kitty.workflow.rules.subtasks import SubtaskEdit

    subtasks = SubtaskEdit(changes.pop("subtasks", ()), changes.pop("remove_subtasks", ()))
    return _run(edit, root, mission, wp_id, subtasks=subtasks, **changes)


def wp_depend(root: Path, wp_id: str, mission: str | None = None, **changes: Any) -> dict[str, Any]:
    """`kitty wp depend`; `changes`: add, remove."""
    from kitty.workflow.planning.edit import depend

    return _run(depend, root, mission, wp_id, **changes)


def wp_split(
    root: Path, wp_id: str, title: str, mission: str | None = None, **given: Any
) -> dict[str, Any]:
    """`kitty wp split`; `given`: move, objective, owns."""
    from kitty.workflow.planning.edit import split

    return _run(split, root, mission, wp_id, title, **given)


def wp_show(root: Path, wp_id: str, mission: str | None = None) -> dict[str, Any]:
    from kitty.workflow.planning.edit import show

    return _run(show, root, mission, wp_id)


def wp_search(
    root: Path, query: str, lane: str | None = None, mission: str | None = None
) -> dict[str, Any]:
    from kitty.workflow.planning.edit import search

    return _run(search, root, mission, query, lane)


def finalize(
    root: Path, mission: str | None = None, allow_placeholders: bool = False
) -> dict[str, Any]:
    from kitty.workflow.planning.missions import finalize as run

    return _run(run, root, mission, allow_placeholders)


# -- the mission's lifecycle: kitty.mcp.lifecycle ----------------------------------------


def init(
    root: Path, agents: list[str] | None = None, initial_commit: bool = False
) -> dict[str, Any]:
    from kitty.project.setup import init_project

    return _doc(init_project(root, list(agents) if agents is not None else None, True,
                             initial_commit))  # fmt: skip


def mission_create(root: Path, name: str, **given: Any) -> dict[str, Any]:
    """`kitty mission create`; `given`: title, target_branch, initial_commit."""
    from kitty.workflow.planning.missions import create_mission

    return _doc(
        create_mission(
            root,
            name,
            given.get("title"),
            given.get("target_branch"),
            bool(given.get("initial_commit")),
        )
    )


def safe_commit(
    root: Path, paths: list[str], message: str, workspace: str | None = None
) -> dict[str, Any]:
    from kitty.workflow.commits.safe import safe_commit as run

    return _doc(run(_path(root, workspace) or root, list(paths), message))


def review_answer(root: Path, wp_id: str, **given: Any) -> dict[str, Any]:
    """`kitty review answer`; `given`: answers, notes, continue, abort, agent, mission."""
    from kitty.panel.answer import answer_given

    mission = _open(root, given.get("mission"))
    names = ("answers", "notes", 'e.g. {name}=["q1=A"]')
    return _doc(answer_given(root, mission, wp_id, given, lambda _event: None, names))


def resolve(
    root: Path, wp_id: str, note: str, agent: str | None = None, mission: str | None = None
) -> dict[str, Any]:
    from kitty.workflow.conflicts import resolve as run

    return _run(run, root, mission, wp_id, note, agent)


def accept(root: Path, agent: str | None = None, mission: str | None = None) -> dict[str, Any]:
    from kitty.workflow.merging.accept import accept as run

    return _run(run, root, mission, agent)


def merge(root: Path, mission: str | None = None, **given: Any) -> dict[str, Any]:
    """`kitty merge`; `given`: dry_run, strategy, keep_worktrees, resume, abort."""
    from kitty.workflow.merging.merge import merge as run

    opts = {"dry": bool(given.pop("dry_run", False)), **given}
    return _run(run, root, mission, **opts)
