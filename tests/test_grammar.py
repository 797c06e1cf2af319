"""Each hot command's grammar is declared once (kitty/grammar.py), and the routes agree.

click's commands are walked and compared option by option with what the fast path parses
(kitty/fastpath.py `table`), the MCP tools' schemas (kitty/mcp/catalog.py, lifecycle.py)
and the mapping from a printed command line to its tool call (kitty/mcp/hints.py), with
the checkers of tests/grammar_check.py (test_grammar_mismatch.py shows each kind of
mismatch reported).
"""

from __future__ import annotations

import inspect
import shlex

import click
import pytest

from kitty import fastpath, grammar, hot
from kitty.mcp import hints
from tests.grammar_check import (
    HOT,
    TOOLS,
    command_at,
    declared_names,
    fast_disagreements,
    fills,
    hint_names,
    spellings,
    tool_disagreements,
)


@pytest.mark.parametrize("declared", HOT, ids=lambda c: " ".join(c.words))
def test_the_fast_path_parses_what_click_parses(declared: grammar.Command) -> None:
    command = command_at(declared.words)
    table = fastpath.table(declared)
    assert fast_disagreements(command, table, fills(declared)) == []


@pytest.mark.parametrize("declared", HOT, ids=lambda c: " ".join(c.words))
def test_both_routes_call_the_same_body_with_click_s_names(declared: grammar.Command) -> None:
    """click passes its parameters by name (kitty/commands/base.py `hot_call`), the fast
    path the ones it parses: the same names, each a keyword the body takes."""
    command = command_at(declared.words)
    clicked = {str(p.name) for p in command.params} - set(fills(declared))
    fast = set(fastpath._arguments(declared, {})) - {"cache"}
    assert fast <= clicked
    body = inspect.signature(getattr(hot, declared.body))
    body.bind("cwd", **dict.fromkeys(clicked))  # raises on a keyword the body lacks


@pytest.mark.parametrize("declared", [c for c in HOT if c.tool], ids=lambda c: " ".join(c.words))
def test_the_mcp_tool_takes_what_click_takes(declared: grammar.Command) -> None:
    command = command_at(declared.words)
    tool = TOOLS[str(declared.tool)]
    assert tool_disagreements(command, tool, declared_names(declared)) == []


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
    spelled = spellings(command)
    assert [flag for flag in row[3] if flag not in spelled] == []
    tool = TOOLS[row[1]]
    wrong = tool_disagreements(command, tool, hint_names(row, command))
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


#: the tools no printed command maps (hints.py has no row for them): their command, and
#: click's parameters the tool names otherwise
UNPRINTED = {
    "wp_depend": (("wp", "depend"), {"on": "add"}),
    "wp_split": (("wp", "split"), {}),
    "wp_search": (("wp", "search"), {}),
}


def test_every_tool_is_checked_against_its_command() -> None:
    printed = {row[1] for row in hints.COMMANDS}
    assert set(TOOLS) == printed | set(UNPRINTED)


@pytest.mark.parametrize("tool", sorted(UNPRINTED))
def test_the_unprinted_tools_take_what_click_takes(tool: str) -> None:
    words, renamed = UNPRINTED[tool]
    command = command_at(words)
    names = {
        str(p.name): renamed.get(str(p.name), str(p.name))
        for p in command.params
        if p.name != "as_json"
    }
    assert tool_disagreements(command, TOOLS[tool], names) == []
