"""demo."""

from __future__ import annotations

import click

from kitty.output import terminal_width, use_colour


@click.command()
@click.option(
    "--dir",
    "parent",
    type=click.Path(file_okay=False),
    metavar="DIR",
    help="Create the demo repository under DIR (default: the temp dir).",
)
@click.pass_context
def demo(ctx: click.Context, parent: str | None) -> int:
    """Create a sample mission in a temporary git repo and show its board.

    Needs no network and no agent CLI.

    \b
    Example:
      kitty demo
    """
    from pathlib import Path

    from kitty.commands.schedule import next_text
    from kitty.core.render import board_text
    from kitty.services.board import status_view
    from kitty.services.demo import create_sample_repo
    from kitty.services.schedule import next_step
    from kitty.services.workspace import Mission

    repo, slug = create_sample_repo(Path(parent) if parent else None)
    mission = Mission.open(repo, slug)
    click.echo(f"demo repository: {repo}\n")
    click.echo(board_text(status_view(mission), terminal_width(), use_colour()))
    for agent in ("claude", "codex"):
        decision = next_step(Mission.open(repo, slug), agent, claim=True).to_json()
        click.echo(f"$ kitty next --agent {agent} --claim\n{next_text(decision)}\n")
    click.echo(board_text(status_view(Mission.open(repo, slug)), terminal_width(), use_colour()))
    click.echo(f"try: cd {repo} && kitty status && kitty lanes")
    return 0


COMMANDS = [demo]
