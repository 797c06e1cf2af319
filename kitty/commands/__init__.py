"""Click commands, grouped by topic. `register` attaches them to the root group."""

from __future__ import annotations

import click


def register(root: click.Group) -> None:
    from kitty.commands import (
        actions,
        agent,
        board,
        demo,
        mcp,
        missions,
        onboard,
        planning,
        project,
        review,
        schedule,
        sprint,
        tasks,
        team,
        trust,
    )
    from kitty.commands.completion import attach

    modules = (
        project,
        missions,
        tasks,
        board,
        schedule,
        actions,
        review,
        sprint,
        demo,
        team,
        trust,
    )
    for module in (*modules, onboard, mcp, planning):
        for command in module.COMMANDS:
            root.add_command(command)
    root.add_command(agent.agent)
    attach(root)
