"""Options declared once, and how a command finds its mission."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from kitty.mission.workspace import Mission

F = TypeVar("F", bound=Callable[..., Any])


def cwd(ctx: click.Context) -> Path:
    """The directory the command acts in: `kitty -C PATH` or the process cwd."""
    root = ctx.find_root()
    return Path(root.params.get("directory") or os.getcwd())


def json_option(func: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON (schema 1).")(func)


def mission_option(func: F) -> F:
    return click.option(
        "--mission",
        "-m",
        metavar="MISSION",
        help="Mission slug or unique prefix (default: $KITTY_MISSION, else the mission of "
        "the lane worktree/branch you are in, else the only one).",
    )(func)


def agent_option(func: F) -> F:
    return click.option(
        "--agent",
        "-a",
        metavar="NAME",
        help="Who acts (default: $KITTY_AGENT, config `identity`, git user.name, `user`).",
    )(func)


def open_mission(ctx: click.Context, name: str | None) -> Mission:
    from kitty.mission.workspace import Mission

    return Mission.open(cwd(ctx), name)


def split_csv(values: tuple[str, ...] | list[str] | str | None) -> list[str]:
    if not values:
        return []
    if isinstance(values, str):
        values = [values]
    return [part.strip() for value in values for part in value.split(",") if part.strip()]
