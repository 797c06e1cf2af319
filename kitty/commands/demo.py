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
    help="Create the demo repository under DIR, made if missing (default: the temp dir).",
)
@click.option("--parallel", default=3, show_default=True, help="Simulated agents at once.")
@click.option("--json", "as_json", is_flag=True, help="Print sprint events as JSON lines.")
def demo(parent: str | None, parallel: int, as_json: bool) -> int:
    """Run a whole sprint on a sample mission with simulated agents, then merge it.

    Creates a temporary git repository with an 8-WP mission (dependencies, and
    two WPs sharing a file), and runs `kitty sprint --merge` whose implementer
    and reviewer are kitty's simulated agents: real processes that edit and
    commit files, mark subtasks and move WPs. The reviewer rejects one WP once,
    so a fix cycle shows. Needs no network and no agent CLI.

    \b
    Example:
      kitty demo
    """
    import os
    from pathlib import Path

    from kitty.commands.sprint import SprintView
    from kitty.mission.workspace import Mission
    from kitty.project.demo import REJECT_ONCE, SIM_AGENTS, create_sample_repo, try_line
    from kitty.sprint.runner import Options, Sprint
    from kitty.workflow.board import status_view
    from kitty.workflow.rules.render import board_text

    if parent:
        try:
            Path(parent).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            from kitty.errors import UsageError

            raise UsageError(
                f"cannot create the demo's folder {parent}: {exc.strerror}",
                "pass --dir a folder you can write to, or leave it out (the temp dir)",
            ) from None
    repo, slug = create_sample_repo(Path(parent) if parent else None)
    if not as_json:
        click.echo(f"demo repository: {repo}\n")
        click.echo(
            board_text(status_view(Mission.open(repo, slug)), terminal_width(), use_colour())
        )
    os.environ["KITTY_SIM_REJECT"] = REJECT_ONCE
    opts = Options(
        [SIM_AGENTS[0]], [SIM_AGENTS[1]], parallel=parallel, timeout=120, merge=True, poll=0.05
    )
    result = Sprint(repo, slug, opts, SprintView(as_json, live=False)).run()
    if not as_json:
        click.echo(
            "\n" + board_text(status_view(Mission.open(repo, slug)), terminal_width(), use_colour())
        )
        click.echo(f"repository: {repo}\n{try_line(repo)}")
    return 0 if result.get("ok") else 1


COMMANDS = [demo]
