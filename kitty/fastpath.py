"""The hot commands without click: the reads and writes agents run all day.

Agents run `kitty next`, `kitty agent tasks move-task` and `mark-status` dozens of
times per work package and people run `kitty status` all day; click alone costs more to import
than the rest of those commands. This module recognises only their plain
spellings:

    kitty [-C DIR] status [--json] [--mission M]
    kitty [-C DIR] next [--json] [--claim] [--agent A] [--mission M]
    kitty [-C DIR] move WP (LANE | --to LANE) [--agent A] [--mission M] [--note TEXT]
                   [--force] [--json]
    kitty [-C DIR] agent tasks move-task WP --to LANE [the options of move]
    kitty [-C DIR] agent tasks mark-status T001 [T002 ...] --status S [--wp WP]
                   [--agent A] [--mission M] [--json]
    kitty [-C DIR] mcp

(`--mission` also as `-m` or `--mission=M`, `--agent` as `-a` or `--agent=A`) and
runs the same service calls and output functions as the click commands.
Anything else (--help, --remote, --review-feedback-file, an unknown or repeated
option, a value that starts with `-`, a -C that is not a directory) returns None
before anything is read, and the full click CLI handles the command as usual.
A read whose error is not one of kitty's own also returns None (nothing was
printed or written: click redoes it and reports it); a write reports every
outcome itself through `kitty.exits`, exactly as the click CLI does, since it
must never run twice. tests/cli/test_fastpath.py checks that both routes print
the same bytes and append the same events.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

_VALUED = {
    "--mission": "mission",
    "-m": "mission",
    "--agent": "agent",
    "-a": "agent",
    "--note": "note",
    "--to": "to",
    "--status": "status",
    "--wp": "only",
}
_FLAGS = {"--json": "json", "--claim": "claim", "--force": "force"}
_MOVE = {"mission", "agent", "note", "force", "json"}
#: command words -> (positional argument names, option names); `*name`: any number of them
_COMMANDS: dict[tuple[str, ...], tuple[tuple[str, ...], set[str]]] = {
    ("status",): ((), {"mission", "json"}),
    ("next",): ((), {"mission", "agent", "json", "claim"}),
    ("move",): (("wp", "to"), _MOVE | {"to"}),  # the lane as LANE or as --to LANE
    ("agent", "tasks", "move-task"): (("wp",), _MOVE | {"to"}),
    ("mcp",): ((), set()),  # the MCP server: a client waits for its start-up
    ("agent", "tasks", "mark-status"): (
        ("*tasks",),
        {"status", "only", "mission", "agent", "json"},
    ),
}


def parse(argv: list[str]) -> tuple[str, Path, dict[str, Any]] | None:
    """(command, directory, options) for a plain command line of a hot command, else None."""
    args = list(argv)
    directory = None
    if args[:1] == ["-C"] and len(args) >= 2:
        directory = args[1]
        args = args[2:]
        if not directory or not os.path.isdir(directory):
            return None  # click reports it
    words = next((w for w in _COMMANDS if tuple(args[: len(w)]) == w), None)
    if words is None:
        return None
    positional, allowed = _COMMANDS[words]
    variadic = positional[:1] == ("*tasks",)
    rest = args[len(words) :]
    options: dict[str, Any] = {}
    values: list[str] = []
    index = 0
    value: str | bool
    while index < len(rest):
        word = rest[index]
        index += 1
        if word in _FLAGS:
            name, value = _FLAGS[word], True
        elif word.startswith("--") and "=" in word and word.split("=", 1)[0] in _VALUED:
            flag, value = word.split("=", 1)
            name = _VALUED[flag]
        elif word in _VALUED and index < len(rest) and not rest[index].startswith("-"):
            name, value = _VALUED[word], rest[index]
            index += 1
        elif word and not word.startswith("-") and (variadic or len(values) < len(positional)):
            values.append(word)
            continue
        else:
            return None  # --help, --, an unknown option or argument: click's to explain
        if name not in allowed or name in options or value == "":
            return None
        options[name] = value
    if variadic:
        options["tasks"] = values
        from kitty.core.lanes import SUBTASK_STATUSES

        if options.get("status") not in SUBTASK_STATUSES:
            return None  # missing or not one of the choices: click explains
    else:
        # A trailing positional may come as its option instead (`move WP --to LANE`), not both.
        wanted = [p for p in positional if p not in options]
        if wanted != list(positional[: len(wanted)]) or len(values) != len(wanted):
            return None
        options.update(zip(wanted, values, strict=True))
    if "wp" in options and "to" not in options:
        return None  # move-task without --to: click says it is required
    try:
        here = directory or os.getcwd()
    except OSError:
        return None  # the working directory is gone: click reports it
    return " ".join(words), Path(here), options


def run(argv: list[str]) -> int | None:
    """Run a hot command; None when the full CLI must handle `argv`."""
    parsed = parse(argv)
    if parsed is None:
        return None
    command, cwd, options = parsed
    if command == "mcp":
        return _mcp(argv, cwd)
    if command == "status" or (command == "next" and not options.get("claim")):
        return _read(command, cwd, options)
    return _write(argv, command, cwd, options)


def _read(command: str, cwd: Path, options: dict[str, Any]) -> int | None:
    as_json = bool(options.get("json"))
    from kitty.errors import KittyError
    from kitty.output import emit, error, terminal_width, use_colour, warn

    try:
        from kitty.adapters.eventlog import now_us
        from kitty.services.workspace import Mission

        mission = Mission.open(cwd, options.get("mission"))
        if command == "status":
            from kitty.core.render import board_text
            from kitty.services.board import status_view

            view = status_view(mission, now_us())
            text = "" if as_json else board_text(view, terminal_width(), use_colour())
            warnings: list[str] = view["warnings"]
            if not as_json:
                from kitty.services.uncommitted import uncommitted_warning

                warnings = warnings + uncommitted_warning(mission)
        else:
            from kitty.core.render import next_text
            from kitty.services.schedule import next_step

            view = next_step(mission, options.get("agent")).to_json()
            text, warnings = next_text(view), []
    except KittyError as exc:
        return error(exc, as_json)
    except KeyboardInterrupt as exc:
        from kitty.exits import failed

        return failed(exc, [], as_json)
    except Exception:
        return None  # nothing printed yet: the full CLI redoes it and reports it
    try:
        warn(warnings)
        emit(view, text, as_json, styled=command == "status" and use_colour())
    except BrokenPipeError:
        return 0
    return 0


def _mcp(argv: list[str], cwd: Path) -> int:
    try:
        from kitty.services.mcp_server import serve

        return serve(cwd)
    except (Exception, KeyboardInterrupt) as exc:
        from kitty.exits import failed

        return failed(exc, argv, False)


def _write(argv: list[str], command: str, cwd: Path, options: dict[str, Any]) -> int:
    as_json = bool(options.get("json"))
    try:
        from kitty.core.render import mark_text, move_text, next_text
        from kitty.output import emit, warn
        from kitty.services.workspace import Mission

        mission = Mission.open(cwd, options.get("mission"))
        if command == "next":
            from kitty.services.schedule import next_step

            view = next_step(mission, options.get("agent"), claim=True).to_json()
            text = next_text(view)
        elif command == "agent tasks mark-status":
            from kitty.services.moves import mark_status

            view = mark_status(
                mission,
                options["tasks"],
                options["status"],
                agent=options.get("agent"),
                wp_text=options.get("only"),
            )
            text = mark_text(view)
        else:
            from kitty.services.moves import move_task

            view = move_task(
                mission,
                options["wp"],
                options["to"],
                agent=options.get("agent"),
                note=options.get("note"),
                force=bool(options.get("force")),
            )
            text = move_text(view)
            warn(view["warnings"])
        emit(view, text, as_json)
        return 0
    except (Exception, KeyboardInterrupt) as exc:
        from kitty.exits import failed

        return failed(exc, argv, as_json)
