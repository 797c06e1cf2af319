"""Each hot command's grammar is declared once (kitty/grammar.py), and the routes agree.

click's commands are walked and compared option by option with what the fast path parses
(kitty/fastpath.py `table`), the MCP tool's schema (kitty/mcp/catalog.py) and the mapping
from a printed command line to its tool call (kitty/mcp/hints.py); the checkers are shown
to report a deliberate mismatch of each kind.
"""

from __future__ import annotations

import inspect
import shlex
from typing import Any

import click
import pytest

from kitty import fastpath, grammar, hot
from kitty.cli import cli
from kitty.commands.base import declared as declared_options
from kitty.mcp import catalog, hints
from kitty.mcp.lifecycle import LIFECYCLE

HOT = list(grammar.COMMANDS.values())
TOOLS = {tool.name: tool for tool in (*catalog.TOOLS, *LIFECYCLE)}


def command_at(words: tuple[str, ...]) -> click.Command:
    command: click.Command = cli
    for word in words:
        assert isinstance(command, click.Group), words
        command = command.commands[word]
    return command


def _choices(param: click.Parameter) -> list[str] | None:
    return list(param.type.choices) if isinstance(param.type, click.Choice) else None


def _spellings(command: click.Command) -> dict[str, click.Option]:
    return {
        flag: param
        for param in command.params
        if isinstance(param, click.Option)
        for flag in param.opts
    }


def fast_disagreements(
    command: click.Command, table: fastpath.Table, fills: dict[str, str]
) -> list[str]:
    """Where the fast path's parse table and click's command differ: each spelling the
    fast path takes is click's, with click's name, kind, choices and requirement."""
    spelled, positional, required = table
    options = _spellings(command)
    wrong = []
    for flag, (name, valued) in spelled.items():
        param = options.get(flag)
        if param is None:
            wrong.append(f"fast path: {flag} is no option of click's")
            continue
        if param.name != name:
            wrong.append(f"fast path: {flag} gives {name}, click's {param.name}")
        if param.is_flag == valued:
            wrong.append(f"fast path: {flag} {'takes a value' if valued else 'is a flag'}")
        missing = [other for other in param.opts if other not in spelled]
        if missing:
            wrong.append(f"fast path: {flag} without {', '.join(missing)}")
        choices = _choices(param)
        if choices is not None and list(required.get(name) or ()) != choices:
            wrong.append(f"fast path: {flag} checks {required.get(name)}, click {choices}")
        if param.required and name not in required:
            wrong.append(f"fast path: {flag} is not required")
    names = {param.name for param in command.params}
    wrong += [f"fast path: requires {n}, not click's" for n in required if n not in names]
    arguments = [
        ("*" if param.nargs == -1 else "") + fills.get(str(param.name), str(param.name))
        for param in command.params
        if isinstance(param, click.Argument)
    ]
    if list(positional) != arguments:
        wrong.append(f"fast path: arguments {list(positional)}, click's {arguments}")
    return wrong


def tool_disagreements(
    command: click.Command, tool: catalog.Tool, names: dict[str, str]
) -> list[str]:
    """Where the MCP tool's schema and click's command differ: `names` maps click's
    parameter names to the tool's; each has the same type, choices and help."""
    wrong = []
    for param in command.params:
        name = names.get(str(param.name))
        if name is None:
            continue
        schema = tool.params.get(name)
        if schema is None:
            wrong.append(f"tool {tool.name}: no {name} for click's {param.name}")
            continue
        is_flag = isinstance(param, click.Option) and param.is_flag
        many = param.nargs == -1 or getattr(param, "multiple", False)
        kind = "boolean" if is_flag else "array" if many else "string"
        if schema["type"] != kind:
            wrong.append(f"tool {tool.name}: {name} is {schema['type']}, click's a {kind}")
        choices = _choices(param)
        checked = "enum" in schema and name not in tool.lenient
        if choices != (schema["enum"] if checked else None):
            wrong.append(f"tool {tool.name}: {name} checks {schema.get('enum')}, click {choices}")
        if param.required and name not in tool.required:
            wrong.append(f"tool {tool.name}: {name} is not required")
    unknown = sorted(set(tool.params) - set(names.values()))
    wrong += [f"tool {tool.name}: {name} is no parameter of click's" for name in unknown]
    return wrong


def _declared_names(command: grammar.Command) -> dict[str, str]:
    return {p.name: p.tool_name for p in command.on(grammar.TOOL)}


def _fills(command: grammar.Command) -> dict[str, str]:
    return {p.name: p.fills for p in command.params if p.fills}


@pytest.mark.parametrize("declared", HOT, ids=lambda c: " ".join(c.words))
def test_the_fast_path_parses_what_click_parses(declared: grammar.Command) -> None:
    command = command_at(declared.words)
    table = fastpath.table(declared)
    assert fast_disagreements(command, table, _fills(declared)) == []


@pytest.mark.parametrize("declared", HOT, ids=lambda c: " ".join(c.words))
def test_both_routes_call_the_same_body_with_click_s_names(declared: grammar.Command) -> None:
    """click passes its parameters by name (kitty/commands/base.py `hot_call`), the fast
    path the ones it parses: the same names, each a keyword the body takes."""
    command = command_at(declared.words)
    clicked = {str(p.name) for p in command.params} - set(_fills(declared))
    fast = set(fastpath._arguments(declared, {})) - {"cache"}
    assert fast <= clicked
    body = inspect.signature(getattr(hot, declared.body))
    body.bind("cwd", **dict.fromkeys(clicked))  # raises on a keyword the body lacks


@pytest.mark.parametrize("declared", [c for c in HOT if c.tool], ids=lambda c: " ".join(c.words))
def test_the_mcp_tool_takes_what_click_takes(declared: grammar.Command) -> None:
    command = command_at(declared.words)
    tool = TOOLS[str(declared.tool)]
    assert tool_disagreements(command, tool, _declared_names(declared)) == []


def _hint_names(row: hints.Row, command: click.Command) -> dict[str, str]:
    """click's parameter names -> the tool's, as hints.py maps a printed command."""
    _, _, positional, options = row
    spelled = _spellings(command)
    names = {
        str(spelled[flag].name): name for flag, (name, _) in options.items() if flag in spelled
    }
    arguments = [p for p in command.params if isinstance(p, click.Argument)]
    for param, name in zip(arguments, positional, strict=False):
        names[str(param.name)] = name.lstrip("*")
    return names


#: where a tool differs from its command on purpose: (tool, parameter) -> why
KNOWN = {
    ("wp_add", "body"): "the command line reads the body from a file (--body-file)",
    ("wp_edit", "body"): "the command line reads the body from a file (--body-file)",
    ("safe_commit", "workspace"): "the command line commits in the directory it runs in",
    ("init", "agents"): "one comma-separated word on the command line, a list over MCP",
}


@pytest.mark.parametrize("row", hints.COMMANDS, ids=lambda r: " ".join(r[0]))
def test_every_printed_command_s_tool_takes_what_click_takes(row: hints.Row) -> None:
    """The commands kitty prints are tool calls over MCP (kitty/mcp/hints.py): each
    option they map is click's, and the tool's schema agrees with click's command."""
    command = command_at(row[0])
    spelled = _spellings(command)
    assert [flag for flag in row[3] if flag not in spelled] == []
    tool = TOOLS[row[1]]
    wrong = tool_disagreements(command, tool, _hint_names(row, command))
    assert [w for w in wrong if not any(f"{t}: {p} " in w for t, p in KNOWN)] == []


def _examples(command: click.Command) -> list[list[str]]:
    text = (command.help or "").replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines()]
    return [
        shlex.split(line.split("|")[0].split(">")[0])[1:]
        for line in lines
        if line.startswith("kitty ") or " kitty " in line.split("|")[0]
    ]


@pytest.mark.parametrize("declared", HOT, ids=lambda c: " ".join(c.words))
def test_every_option_has_an_example_that_click_parses(declared: grammar.Command) -> None:
    command = command_at(declared.words)
    examples = [args[args.index(declared.words[-1]) + 1 :] for args in _examples(command)]
    for args in examples:
        command.make_context(declared.words[-1], list(args), obj=None)  # raises if wrong
    used = {word.split("=")[0] for args in examples for word in args}
    unseen = [p.opts[0] for p in command.params if isinstance(p, click.Option)]
    assert [flag for flag in unseen if flag not in used] == []
    assert not declared.params or examples


# -- the checkers report a deliberate mismatch -------------------------------------------


def _tampered(command: grammar.Command, name: str, changes: dict[str, Any]) -> grammar.Command:
    """`command` declared with one parameter changed."""
    params = tuple(p.but(**changes) if p.name == name else p for p in command.params)
    return grammar.Command(command.words, params, command.body, command.writes, command.tool)


@pytest.mark.parametrize(
    ("declared", "name", "changes", "reported"),
    [
        (grammar.STATUS, "mission", {"flags": ("--mission",)}, "--mission without -m"),
        (grammar.STATUS, "as_json", {"kind": grammar.TEXT}, "--json takes a value"),
        (grammar.NEXT, "claim", {"flags": ("--claim", "--grab")}, "--grab is no option"),
        (grammar.NEXT, "agent", {"name": "who"}, "--agent gives who, click's agent"),
        (grammar.MARK_STATUS, "status_", {"choices": ("done",)}, "--status checks ('done',)"),
        (grammar.MARK_STATUS, "status_", {"required": False}, "--status is not required"),
        (grammar.MOVE_TASK, "wp", {"kind": grammar.LIST}, "arguments ['*wp'], click's ['wp']"),
        (grammar.SHORT_MOVE, "lane", {"fills": None}, "click's ['wp', 'to']"),
    ],
)
def test_the_fast_path_checker_reports_a_mismatch(
    declared: grammar.Command, name: str, changes: dict[str, Any], reported: str
) -> None:
    wrong = _tampered(declared, name, changes)
    # (what click's arguments fill is click's side: the real declaration says it)
    found = fast_disagreements(command_at(declared.words), fastpath.table(wrong), _fills(declared))
    assert any(reported in line for line in found), found


@pytest.mark.parametrize(
    ("declared", "name", "changes", "reported"),
    [
        (grammar.MARK_STATUS, "status_", {"choices": ("done", "planned")}, "status checks"),
        (grammar.MARK_STATUS, "tasks", {"kind": grammar.TEXT}, "task_ids is string"),
        (grammar.MOVE_TASK, "note", {"kind": grammar.FLAG}, "note is boolean"),
        (grammar.MOVE_TASK, "to", {"checked": True}, "to checks"),
        (grammar.MOVE_TASK, "to", {"tool_required": False}, "to is not required"),
        (grammar.NEXT, "claim", {"tool_name": "grab"}, "no claim for click's claim"),
    ],
)
def test_the_tool_checker_reports_a_mismatch(
    declared: grammar.Command, name: str, changes: dict[str, Any], reported: str
) -> None:
    wrong = _tampered(declared, name, changes)
    tool = catalog.declared(wrong, "a tampered tool", "nothing")
    names = _declared_names(declared)  # what click's parameters are called over MCP
    found = tool_disagreements(command_at(declared.words), tool, names)
    assert any(reported in line for line in found), found


def test_the_checkers_report_a_click_option_the_others_lack() -> None:
    """An option added to click by hand (not declared) is caught from click's side."""
    real = command_at(grammar.MARK_STATUS.words)
    extra = click.Option(["--status"], type=click.Choice(["done", "later"]), required=True)
    params = [extra if p.name == "status_" else p for p in real.params]
    extra.name = "status_"
    command = click.Command("mark-status", params=params)
    fast = fast_disagreements(command, fastpath.table(grammar.MARK_STATUS), {})
    assert any("checks ('done', 'planned', 'in_progress'), click" in w for w in fast), fast
    tool = TOOLS["mark_status"]
    found = tool_disagreements(command, tool, _declared_names(grammar.MARK_STATUS))
    assert any("status checks" in line for line in found), found
    colour = {"colour": catalog._text("x")}
    handmade = catalog.Tool("mark_status", "x", "x", {**tool.params, **colour}, tool.required)
    found = tool_disagreements(real, handmade, _declared_names(grammar.MARK_STATUS))
    assert found == ["tool mark_status: colour is no parameter of click's"]


def test_one_declared_option_reaches_every_route() -> None:
    """Adding an option to a hot command is one line in kitty/grammar.py: click's option,
    the fast path's table, the tool's schema and the printed command's call follow."""
    colour = grammar.Param("colour", ("--colour", "-c"), grammar.TEXT, "Paint it --force.", "C")
    declared = grammar.Command(
        grammar.MOVE_TASK.words, (*grammar.MOVE_TASK.params, colour), "move", True, "move"
    )
    command = click.command("move-task")(declared_options(declared)(lambda **kw: 0))
    option = _spellings(command)["--colour"]
    assert (option.name, option.opts, option.help, option.metavar) == (
        "colour",
        ["--colour", "-c"],
        "Paint it --force.",
        "C",
    )
    table = fastpath.table(declared)
    assert table[0]["-c"] == table[0]["--colour"] == ("colour", True)
    assert fast_disagreements(command, table, {}) == []
    tool = catalog.declared(declared, "a tool", "move")
    assert tool.params["colour"] == {"type": "string", "description": "Paint it force."}
    assert tool_disagreements(command, tool, _declared_names(declared)) == []
    row = hints._declared(declared)
    assert row[3]["--colour"] == ("colour", "value")
    assert fastpath.parse(["move", "WP01", "claimed", "-c", "red"]) is None  # (not real)
