"""The hot commands' work between parsing and printing: one click-free function each.

The click commands (kitty/commands/tasks.py, schedule.py, mcp.py) and the fast path
(kitty/fastpath.py) both call these, so there is one body per command. Each takes
plain values, prints the command's output and returns its exit code; errors are
raised for the caller to report (`kitty.exits.failed`, or click's `kitty.cli.run`).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from kitty.mission.workspace import Mission


def _open(cwd: str, mission: str | None) -> Mission:
    from pathlib import Path

    from kitty.mission.workspace import Mission

    return Mission.open(Path(cwd), mission)


def put(out: str, err: str = "") -> None:
    """Write the command's diagnostics, then its output (as `warn` then `emit` do)."""
    if err:
        sys.stderr.write(err)
        sys.stderr.flush()
    sys.stdout.write(out)
    sys.stdout.flush()


def status(
    cwd: str,
    mission: str | None,
    as_json: bool,
    as_list: bool = False,
    show_all: bool = False,
    cache: bool = False,
) -> int:
    """`kitty status`; `cache`: keep the printed bytes for the next identical command
    (kitty/adapters/viewcache.py), when nothing it read may change under it."""
    from kitty.adapters import viewcache
    from kitty.adapters.eventlog import now_us
    from kitty.output import emit_text, terminal_width, use_colour, warn_text
    from kitty.workflow.board import status_view
    from kitty.workflow.rules.render import MAX_CARDS, board_text, list_text

    now = now_us()  # before anything is read: the racy window counts from here
    opened = _open(cwd, mission)
    project = opened.project
    cache = cache and viewcache.enabled() and not as_list and not show_all
    # Taken before the files are read: a change after this is seen at the next lookup;
    # one before it, but after `now` - 2 s, is not kept (viewcache.store).
    deps = (
        viewcache.dependencies(
            cwd, str(project.worktree), str(opened.dir), str(project.config_path)
        )
        if cache
        else []
    )
    changes: list[int] = []
    view = status_view(opened, now, changes)
    live: list[str] = []
    git = None
    if not as_json:  # for people; agents' --json reads pay for no git process
        from kitty.workflow.commits.pending import deferred_mark, warning_for

        auto = opened.config.auto_commit
        git = (str(project.root), opened.display, opened.slug, auto, deferred_mark(opened, auto))
        live = warning_for(*git)
    if as_json:
        text = ""
    elif as_list:
        text = list_text(view)
    else:
        text = board_text(view, terminal_width(), use_colour(), None if show_all else MAX_CARDS)
    styled = not as_list and use_colour()
    printed = (emit_text(view, text, as_json, styled), warn_text(view["warnings"]))
    if cache:
        viewcache.store(
            cwd, mission, as_json, str(project.git_common_dir), deps, (now, changes), printed, git
        )
    put(printed[0], printed[1] + warn_text(live))
    return 0


def cached_view(
    cwd: str, mission: str | None, as_json: bool, agent: str | None = None, next_: bool = False
) -> bool:
    """Print what the same `kitty status` (with `next_`: `kitty next --agent agent`)
    printed last, when nothing it read changed since; False (nothing printed) otherwise."""
    from kitty.adapters import viewcache

    command = viewcache.next_command(agent) if next_ else viewcache.STATUS
    record = viewcache.lookup(cwd, mission, as_json, command)
    if record is None:
        return False
    out, err, git = record["out"], record["err"], record["git"]
    if not isinstance(out, str) or not isinstance(err, str):
        return False
    if isinstance(git, tuple):
        from kitty.output import warn_text
        from kitty.workflow.commits.pending import warning_for

        err += warn_text(warning_for(*git))
    put(out, err)
    return True


def next_(
    cwd: str,
    mission: str | None,
    agent: str | None,
    as_json: bool,
    claim: bool = False,
    remote: str | None = None,
    cache: bool = False,
) -> int:
    """`kitty next` (with `claim`: `kitty next --claim`); `cache`: keep the printed bytes
    for the next identical read (kitty/adapters/viewcache.py), as `status` does."""
    from kitty.output import emit_text
    from kitty.workflow.nextstep import next_step
    from kitty.workflow.rules.render import next_text

    if claim or remote:
        cache = False
    if not cache:
        decision = next_step(_open(cwd, mission), agent, claim, remote).to_json()
        put(emit_text(decision, next_text(decision), as_json))
        return 0
    from kitty.adapters import viewcache
    from kitty.adapters.eventlog import now_us

    now = now_us()  # before anything is read (the racy window counts from here)
    opened = _open(cwd, mission)
    project = opened.project
    deps = viewcache.dependencies(
        cwd, str(project.worktree), str(opened.dir), str(project.config_path)
    )
    changes: list[int] = []
    decision = next_step(opened, agent, clock=(now, changes)).to_json()
    out = emit_text(decision, next_text(decision), as_json)
    if _storable_next(opened, agent):
        command = viewcache.next_command(agent)
        common = str(project.git_common_dir)
        window = (now, changes)
        viewcache.store(cwd, mission, as_json, common, deps, window, (out, ""), None, command)
    put(out)
    return 0


def _storable_next(opened: Mission, agent: str | None) -> bool:
    """A `next` depends only on the cache's inputs: its agent does not come from git's
    config, and it read no HALT file (files the log points at)."""
    import os

    from kitty.adapters.viewcache import AGENT_ENV

    named = (agent or "").strip() or os.environ.get(AGENT_ENV, "").strip()
    if not named and not opened.config.identity:
        return False
    return not any(st.scalars.get("review_halt") for st in opened.board.wps.values())


def move(cwd: str, mission: str | None, wp: str, to: str, as_json: bool, **opts: Any) -> int:
    """`kitty move` / `kitty agent tasks move-task`; `opts`: move_task's keywords."""
    from kitty.output import emit, warn
    from kitty.workflow.moves import move_task
    from kitty.workflow.rules.render import move_text

    result = move_task(_open(cwd, mission), wp, to, **opts)
    warn(result["warnings"])
    emit(result, move_text(result), as_json)
    return 0


def mark_status(
    cwd: str,
    mission: str | None,
    tasks: list[str],
    status_: str,
    as_json: bool,
    agent: str | None = None,
    wp: str | None = None,
) -> int:
    """`kitty agent tasks mark-status`."""
    from kitty.output import emit
    from kitty.workflow.moves import mark_status as run_mark
    from kitty.workflow.rules.render import mark_text

    result = run_mark(_open(cwd, mission), tasks, status_, agent=agent, wp_text=wp)
    emit(result, mark_text(result), as_json)
    return 0


def mcp(cwd: str) -> int:
    """`kitty mcp`: the MCP server over stdio."""
    from pathlib import Path

    from kitty.mcp.server import serve

    return serve(Path(cwd))
