"""`kitty agent ...`: the command paths agent skills written for Spec Kitty call."""

from __future__ import annotations

import click

from kitty.commands import actions, missions, sprint, tasks


@click.group()
def agent() -> None:
    """Commands for agents (same paths as `spec-kitty agent ...`)."""


@agent.group("tasks")
def agent_tasks() -> None:
    """Move work packages, mark subtasks, show the board."""


@agent.group("mission")
def agent_mission() -> None:
    """Mission-level agent commands."""


agent_tasks.add_command(tasks.move_task, "move-task")
agent_tasks.add_command(tasks.mark_status, "mark-status")
agent_tasks.add_command(tasks.status, "status")
agent_mission.add_command(missions.finalize, "finalize-tasks")


@agent.group("action")
def agent_action() -> None:
    """Start implementing or reviewing a work package."""


agent_action.add_command(actions.implement, "implement")
agent_action.add_command(actions.review, "review")


@agent.group("config")
def agent_config() -> None:
    """The agents configured in .kittify/config.yaml."""


agent_config.add_command(sprint.config_list, "list")
