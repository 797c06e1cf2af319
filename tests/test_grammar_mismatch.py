"""The checkers of tests/grammar_check.py report a deliberate mismatch of each kind,
and one declared parameter reaches every route."""

from __future__ import annotations

from typing import Any

import click
import pytest

from kitty import fastpath, grammar
from kitty.commands.base import declared as declared_options
from kitty.mcp import catalog, hints
from tests.grammar_check import (
    TOOLS,
    command_at,
    declared_names,
    fast_disagreements,
    fills,
    spellings,
    tool_disagreements,
)


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
    found = fast_disagreements(command_at(declared.words), fastpath.table(wrong), fills(declared))
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
    names = declared_names(declared)  # what click's parameters are called over MCP
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
    found = tool_disagreements(command, tool, declared_names(grammar.MARK_STATUS))
    assert any("status checks" in line for line in found), found
    colour = {"colour": catalog._text("x")}
    handmade = catalog.Tool("mark_status", "x", "x", {**tool.params, **colour}, tool.required)
    found = tool_disagreements(real, handmade, declared_names(grammar.MARK_STATUS))
    assert found == ["tool mark_status: colour is no parameter of click's"]


def test_one_declared_option_reaches_every_route() -> None:
    """Adding an option to a hot command is one line in kitty/grammar.py: click's option,
    the fast path's table, the tool's schema and the printed command's call follow."""
    colour = grammar.Param("colour", ("--colour", "-c"), grammar.TEXT, "Paint it --force.", "C")
    declared = grammar.Command(
        grammar.MOVE_TASK.words, (*grammar.MOVE_TASK.params, colour), "move", True, "move"
    )
    command = click.command("move-task")(declared_options(declared)(lambda **kw: 0))
    option = spellings(command)["--colour"]
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
    assert tool_disagreements(command, tool, declared_names(declared)) == []
    row = hints._declared(declared)
    assert row[3]["--colour"] == ("colour", "value")
    assert fastpath.parse(["move", "WP01", "claimed", "-c", "red"]) is None  # (not real)
