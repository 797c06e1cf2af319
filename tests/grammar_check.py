"""The checkers of tests/test_grammar.py: where click's commands and the other routes
(the fast path's parse table, an MCP tool's schema) disagree, option by option."""

from __future__ import annotations

import click

from kitty import fastpath, grammar
from kitty.cli import cli
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


def choices_of(param: click.Parameter) -> list[str] | None:
    return list(param.type.choices) if isinstance(param.type, click.Choice) else None


def spellings(command: click.Command) -> dict[str, click.Option]:
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
    options = spellings(command)
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
        choices = choices_of(param)
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
        choices = choices_of(param)
        checked = "enum" in schema and name not in tool.lenient
        if choices != (schema["enum"] if checked else None):
            wrong.append(f"tool {tool.name}: {name} checks {schema.get('enum')}, click {choices}")
        if param.required and name not in tool.required:
            wrong.append(f"tool {tool.name}: {name} is not required")
    unknown = sorted(set(tool.params) - set(names.values()))
    wrong += [f"tool {tool.name}: {name} is no parameter of click's" for name in unknown]
    return wrong


def declared_names(command: grammar.Command) -> dict[str, str]:
    return {p.name: p.tool_name for p in command.on(grammar.TOOL)}


def fills(command: grammar.Command) -> dict[str, str]:
    return {p.name: p.fills for p in command.params if p.fills}


def hint_names(row: hints.Row, command: click.Command) -> dict[str, str]:
    """click's parameter names -> the tool's, as hints.py maps a printed command."""
    _, _, positional, options = row
    spelled = spellings(command)
    names = {
        str(spelled[flag].name): name for flag, (name, _) in options.items() if flag in spelled
    }
    arguments = [p for p in command.params if isinstance(p, click.Argument)]
    for param, name in zip(arguments, positional, strict=False):
        names[str(param.name)] = name.lstrip("*")
    return names
