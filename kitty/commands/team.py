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
    from kitty.workflow.conflicts import resolve as resolve_conflicts

    result = resolve_conflicts(open_mission(ctx, mission), wp_id, note, agent)
    emit(
        result,
        f"{result['wp_id']}: {len(result['resolved'])} conflict(s) resolved, "
        f"lane stays {result['lane']}",
        as_json,
    )
    return 0


@click.command()
@click.option("--remote", default="origin", show_default=True, help="The git remote to sync with.")
@json_option
@click.pass_context
def sync(ctx: click.Context, remote: str, as_json: bool) -> int:
    """Exchange kitty's state with a git remote (safe from cron or after every command).

    Folds in the remote's claims, commits kitty's own files (nothing else),
    fetches and merges the branch's upstream (status logs merge by union),
    rebuilds status.json and pushes; a rejected push is retried with backoff.
    A merge that stops on another file is undone and reported: the checkout
    is never left mid-merge or mid-rebase.

    \b
    Examples:
      kitty sync
      kitty sync --remote origin --json
    """
    from kitty.commands.base import cwd
    from kitty.teams.sync import sync as run_sync

    result = run_sync(cwd(ctx), remote)
    emit(
        result,
        f"synced {result['branch']} with {remote} ({len(result['commits'])} kitty commit(s), "
        f"{'merged' if result['merged'] else 'no merge'}, {result['attempts']} attempt(s))",
        as_json,
    )
    return 0


COMMANDS = [resolve, sync]
