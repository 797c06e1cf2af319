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
runs the same service calls and output functions as the click commands. The parse table
of each command is derived from its declaration in kitty/grammar.py (`table`), the one
place click's options and the MCP tool's schema come from too.
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

from kitty import grammar

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    #: a command's parse table: option spelling -> (name, takes a value); the positional
    #: arguments' names in order (`*name`: any number of them); the required options
    #: with their allowed values (None: any)
    Table = tuple[dict[str, tuple[str, bool]], tuple[str, ...], dict[str, Any]]


def table(command: grammar.Command) -> Table:
    """The fast path's parse table of `command`, from its declaration (kitty/grammar.py):
    only the parameters the fast route takes; anything else is left to click."""
    spelled: dict[str, tuple[str, bool]] = {}
    positional: list[str] = []
    required: dict[str, Any] = {}
    for param in command.on(grammar.FAST):
        if not param.flags:
            positional.append(
                ("*" if param.kind == grammar.LIST else "") + (param.fills or param.name)
            )
        for flag in param.flags:
            spelled[flag] = (param.name, param.kind != grammar.FLAG)
        if param.required:
            required[param.name] = param.choices if param.checked else None
        if param.fills:
            required[param.fills] = None  # the argument or its option: one of the two
    return spelled, tuple(positional), required


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
    words = next((w for w in grammar.COMMANDS if tuple(args[: len(w)]) == w), None)
    if words is None:
        return None
    spelled, positional, required = table(grammar.COMMANDS[words])
    options = _options(args[len(words) :], spelled, positional)
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
    rest: list[str], spelled: dict[str, tuple[str, bool]], positional: tuple[str, ...]
) -> dict[str, Any] | None:
    variadic = positional[:1] != () and positional[0].startswith("*")
    options: dict[str, Any] = {}
    values: list[str] = []
    index = 0
    value: str | bool
    while index < len(rest):
        word = rest[index]
        index += 1
        flag, _, inline = word.partition("=")
        name, valued = spelled.get(word, spelled.get(flag, ("", False)))
        if word in spelled and not valued:
            value = True
        elif word != flag and valued and flag.startswith("--"):
            value = inline
        elif word in spelled and index < len(rest) and not rest[index].startswith("-"):
            value = rest[index]
            index += 1
        elif word and not word.startswith("-") and (variadic or len(values) < len(positional)):
            values.append(word)
            continue
        else:
            return None  # --help, --, an unknown option or argument: click's to explain
        if name in options or value == "":
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
    command = grammar.COMMANDS[words]
    body, writes = command.body, command.writes
    as_json = bool(options.get("as_json"))
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

        return int(getattr(hot, body)(cwd, **_arguments(command, options)))
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


def _arguments(command: grammar.Command, options: dict[str, Any]) -> dict[str, Any]:
    """The body's keyword arguments: each parameter the fast route takes, given or its
    default; a read keeps its printed bytes for the next identical command."""
    given = {
        param.name: options.get(param.name, False if param.kind == grammar.FLAG else None)
        for param in command.on(grammar.FAST)
        if not param.fills
    }
    if isinstance(command.writes, str):  # a read unless that flag is given
        given["cache"] = not given[command.writes]
    elif command.writes is False:
        given["cache"] = True
    return given


def _kitty_error(exc: Exception) -> bool:
    from kitty.errors import KittyError

    return isinstance(exc, KittyError)


def _failed(exc: BaseException, argv: list[str], as_json: bool) -> int:
    from kitty.exits import failed

    return failed(exc, argv, as_json)
