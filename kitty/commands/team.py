"""Teams across machines: conflicts from merged histories, sync, remote claims."""

from __future__ import annotations

import click

from kitty.commands.base import agent_option, json_option, mission_option, open_mission
from kitty.output import emit


@click.command()
@click.argument("wp_id")
@mission_option
@agent_option
@click.option("--note", metavar="TEXT", help="Why the current lane is right (required).")
@json_option
@click.pass_context
def resolve(
    ctx: click.Context,
    wp_id: str,
    mission: str | None,
    agent: str | None,
    note: str | None,
    as_json: bool,
) -> int:
    """Close a WP's open conflicts, keeping the lane the board shows.

    A conflict is a move that replay did not apply (two clones moved the WP
    offline, an illegal edge, a self-approval). To choose the other outcome
    instead, force that move: `kitty move WP03 LANE --force --agent X --note ...`.

    \b
    Example:
      kitty resolve WP03 --note "keep in_progress: alice claimed it first"
    """
    from kitty.services.conflicts import resolve as resolve_conflicts

    result = resolve_conflicts(open_mission(ctx, mission), wp_id, note, agent)
    emit(
        result,
        f"{result['wp_id']}: {len(result['resolved'])} conflict(s) resolved, "
        f"lane stays {result['lane']}",
        as_json,
    )
    return 0


COMMANDS = [resolve]
