"""next, lanes."""

from __future__ import annotations

from typing import Any

import click

from kitty import grammar
from kitty.commands.base import declared, hot_call, json_option, mission_option, open_mission
from kitty.output import emit


@click.command("next")
@declared(grammar.NEXT)
@click.pass_context
def next_(ctx: click.Context, /, **params: Any) -> int:
    """Tell an agent its exact next step. Reads only, unless --claim.

    Actions: implement, review, fix, arbiter, accept, merge, done, wait, blocked.

    \b
    Examples:
      kitty next --agent claude --mission checkout
      kitty next --agent codex --claim --json
      kitty next --agent codex --claim --remote origin
    """
    if params["remote"] and not params["claim"]:
        raise click.UsageError("--remote needs --claim (a plain `kitty next` only reads)")
    return hot_call(ctx, grammar.NEXT, params)


@click.command("lanes")
@mission_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "mermaid", "dot"]),
    default="text",
    show_default=True,
    help="text: one line per lane; mermaid / dot: the dependency graph as a diagram source.",
)
@json_option
@click.pass_context
def lanes_cmd(ctx: click.Context, mission: str | None, fmt: str, as_json: bool) -> int:
    """Show execution lanes, their WPs, parallel groups and the critical path (◆).

    \b
    Examples:
      kitty lanes --mission checkout
      kitty lanes --format mermaid > lanes.mmd     # paste into a Markdown ```mermaid block
      kitty lanes --format dot | dot -Tsvg > lanes.svg
    """
    from kitty.web.rules import pictures
    from kitty.workflow.nextstep import lanes_view

    view = lanes_view(open_mission(ctx, mission))
    render = {
        "text": pictures.lanes_text,
        "mermaid": pictures.lanes_mermaid,
        "dot": pictures.lanes_dot,
    }[fmt]
    emit(view, render(view), as_json)
    return 0


COMMANDS = [next_, lanes_cmd]
