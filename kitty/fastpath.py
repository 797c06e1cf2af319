"""The hot read commands without click: `kitty status` and `kitty next --json`.

Agents run `kitty next` and people run `kitty status` all day; click alone costs
more to import than the rest of those commands. This module recognises only
their plain spellings:

    kitty [-C DIR] status [--json] [--mission M | -m M | --mission=M]
    kitty [-C DIR] next --json [--agent A | -a A | --agent=A] [--mission M]

and runs the same service calls and output functions as the click commands.
Anything else (--help, --claim, an unknown or repeated option, a -C that is not a
directory, any error other than kitty's own) returns None before printing
anything, and the full click CLI handles the command as usual.
tests/cli/test_fastpath.py checks that both routes print the same bytes.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

_VALUED = {"--mission": "mission", "-m": "mission", "--agent": "agent", "-a": "agent"}
_ALLOWED = {"status": {"mission", "json"}, "next": {"mission", "agent", "json"}}


def parse(argv: list[str]) -> tuple[str, Path, dict[str, Any]] | None:
    """(command, directory, options) for a plain status/next command line, else None."""
    args = list(argv)
    directory = None
    if args[:1] == ["-C"] and len(args) >= 2:
        directory = args[1]
        args = args[2:]
        if not directory or not os.path.isdir(directory):
            return None  # click reports it
    if not args or args[0] not in _ALLOWED:
        return None
    command, rest = args[0], args[1:]
    options: dict[str, Any] = {}
    index = 0
    value: str | bool
    while index < len(rest):
        word = rest[index]
        index += 1
        if word == "--json":
            name, value = "json", True
        elif "=" in word and word.split("=", 1)[0] in ("--mission", "--agent"):
            flag, value = word.split("=", 1)
            name = _VALUED[flag]
        elif word in _VALUED and index < len(rest) and not rest[index].startswith("-"):
            name, value = _VALUED[word], rest[index]
            index += 1
        else:
            return None
        if name not in _ALLOWED[command] or name in options or value == "":
            return None
        options[name] = value
    if command == "next" and not options.get("json"):
        return None  # its text rendering lives with the click command
    return command, Path(directory or os.getcwd()), options


def run(argv: list[str]) -> int | None:
    """Run a plain status/next; None when the full CLI must handle `argv`."""
    parsed = parse(argv)
    if parsed is None:
        return None
    command, cwd, options = parsed
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
        else:
            from kitty.services.schedule import next_step

            view = next_step(mission, options.get("agent")).to_json()
            text, warnings = "", []
    except KittyError as exc:
        return error(exc, as_json)
    except Exception:
        return None  # nothing printed yet: the full CLI redoes it and reports it
    try:
        warn(warnings)
        emit(view, text, as_json)
    except BrokenPipeError:
        return 0
    return 0
