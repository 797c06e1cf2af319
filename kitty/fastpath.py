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
must never run twice. tests/test_fastpath.py checks that both routes print
the same bytes and append the same events.
"""

from __future__ import annotations

import os

from kitty.core.lanes import SUBTASK_STATUSES

TYPE_CHECKING = False
if TYPE_CHECKING:
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
#: command words -> (positional argument names (`*name`: any number of them), option
#: names, required options with their allowed values (None: any), the click-free body,
#: and whether it writes: False, True, or the option that makes it a write). A read
#: whose error is not one of kitty's own is redone by click; a write never runs twice.
_COMMANDS: dict[tuple[str, ...], tuple[Any, ...]] = {
    ("status",): ((), {"mission", "json"}, {}, "status", False),
    ("next",): ((), {"mission", "agent", "json", "claim"}, {}, "next_", "claim"),
    # the lane as LANE or as --to LANE
    ("move",): (("wp", "to"), _MOVE | {"to"}, {"to": None}, "move", True),
    ("agent", "tasks", "move-task"): (("wp",), _MOVE | {"to"}, {"to": None}, "move", True),
    ("mcp",): ((), set(), {}, "mcp", None),  # the MCP server: a client waits for its start-up
    ("agent", "tasks", "mark-status"): (
        ("*tasks",),
        {"status", "only", "mission", "agent", "json"},
        {"status": SUBTASK_STATUSES},
        "mark_status",
        True,
    ),
}


def parse(argv: list[str]) -> tuple[tuple[str, ...], str, dict[str, Any]] | None:
    """(command words, directory, options) for a plain command line of a hot command,
    else None."""
    for arg in argv:  # (kitty.core.printable.encodable, without importing it here)
        if not arg.isascii():
            try:
                arg.encode("utf-8")
            except UnicodeEncodeError:
                return None  # text UTF-8 cannot hold: the full CLI refuses it, naming it
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
    positional, allowed, required = _COMMANDS[words][:3]
    options = _options(args[len(words) :], positional, allowed)
    if options is None or any(
        options.get(name) is None or (choices is not None and options[name] not in choices)
        for name, choices in required.items()
    ):
        return None  # missing or not one of the choices: click explains
    try:
        here = directory or os.getcwd()
    except OSError:
        return None  # the working directory is gone: click reports it
    return words, here, options


def _options(
    rest: list[str], positional: tuple[str, ...], allowed: set[str]
) -> dict[str, Any] | None:
    variadic = positional[:1] == ("*tasks",)
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
        options[positional[0][1:]] = values
        return options
    # A trailing positional may come as its option instead (`move WP --to LANE`), not both.
    wanted = [p for p in positional if p not in options]
    if wanted != list(positional[: len(wanted)]) or len(values) != len(wanted):
        return None
    options.update(zip(wanted, values, strict=True))
    return options


def run(argv: list[str], freeze: bool = False) -> int | None:
    """Run a hot command; None when the full CLI must handle `argv`. `freeze`: this
    process exits after the command (kitty.adapters.snapshots.FREEZE)."""
    parsed = parse(argv)
    if parsed is None:
        return None
    words, cwd, options = parsed
    body, writes = _COMMANDS[words][3:]
    as_json = bool(options.get("json"))
    if body == "status" and _served(cwd, options, as_json):
        return 0
    if body == "next_" and not options.get("claim") and _served(cwd, options, as_json, True):
        return 0
    if freeze:
        from kitty.adapters import snapshots

        snapshots.FREEZE = True
    if isinstance(writes, str):
        writes = bool(options.get(writes))
    try:
        from kitty import hot

        return int(getattr(hot, body)(cwd, **_arguments(body, options)))
    except BrokenPipeError:
        return 0
    except Exception as exc:
        if writes is False and not _kitty_error(exc):
            return None  # nothing printed yet: the full CLI redoes it and reports it
        return _failed(exc, argv, as_json and writes is not None)
    except KeyboardInterrupt as exc:
        return _failed(exc, argv if writes else [], as_json)


def _served(cwd: str, options: dict[str, Any], as_json: bool, next_: bool = False) -> bool:
    try:
        from kitty import hot

        mission, agent = options.get("mission"), options.get("agent")
        return hot.cached_view(cwd, mission, as_json, agent, next_)
    except BrokenPipeError:
        return True
    except Exception:
        return False  # a cache problem is a miss


def _arguments(body: str, options: dict[str, Any]) -> dict[str, Any]:
    """The body's keyword arguments from the parsed options."""
    given = {"mission": options.get("mission"), "as_json": bool(options.get("json"))}
    if body == "status":
        return given | {"cache": True}
    if body == "next_":
        claim = bool(options.get("claim"))
        return given | {"agent": options.get("agent"), "claim": claim, "cache": not claim}
    if body == "mcp":
        return {}
    if body == "mark_status":
        return given | {
            "tasks": options["tasks"],
            "status_": options["status"],
            "agent": options.get("agent"),
            "wp": options.get("only"),
        }
    return given | {
        "wp": options["wp"],
        "to": options["to"],
        "agent": options.get("agent"),
        "note": options.get("note"),
        "force": bool(options.get("force")),
    }


def _kitty_error(exc: Exception) -> bool:
    from kitty.errors import KittyError

    return isinstance(exc, KittyError)


def _failed(exc: BaseException, argv: list[str], as_json: bool) -> int:
    from kitty.exits import failed

    return failed(exc, argv, as_json)
