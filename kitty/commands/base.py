"""click's side of the declared parameters (kitty/grammar.py), and how a command finds
its mission."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from kitty import grammar

if TYPE_CHECKING:
    from kitty.mission.workspace import Mission

F = TypeVar("F", bound=Callable[..., Any])


def cwd(ctx: click.Context) -> Path:
    """The directory the command acts in: `kitty -C PATH` or the process cwd."""
    root = ctx.find_root()
    return Path(root.params.get("directory") or os.getcwd())


def click_param(param: grammar.Param) -> Callable[[F], F]:
    """click's argument or option for a declared parameter (kitty/grammar.py)."""
    if not param.flags:
        many = param.kind == grammar.LIST
        return click.argument(
            param.name, metavar=param.metavar, required=param.required, nargs=-1 if many else 1
        )
    given: dict[str, Any] = {"help": param.help}
    if param.kind == grammar.FLAG:
        given["is_flag"] = True
    else:
        given["metavar"] = param.metavar
    if param.required:
        given["required"] = True
    if param.kind == grammar.PATH:
        given["type"] = click.Path(dir_okay=False, path_type=Path)
    elif param.choices is not None and param.checked:
        given["type"] = click.Choice(param.choices)
    return click.option(*param.flags, param.name, **given)


def declared(command: grammar.Command) -> Callable[[F], F]:
    """Every parameter of a hot command the CLI takes, in its declared (help) order."""

    def apply(func: F) -> F:
        for param in reversed(command.on(grammar.CLI)):
            func = click_param(param)(func)
        return func

    return apply


def hot_call(ctx: click.Context, command: grammar.Command, params: dict[str, Any]) -> int:
    """Run the hot command's body (kitty/hot.py) with click's parsed parameters: the
    same keywords the fast path passes (a list of arguments as a list)."""
    from kitty import hot

    given = {name: list(v) if isinstance(v, tuple) else v for name, v in params.items()}
    return int(getattr(hot, command.body)(str(cwd(ctx)), **given))


json_option = click_param(grammar.JSON)
mission_option = click_param(grammar.MISSION)
agent_option = click_param(grammar.AGENT)


def open_mission(ctx: click.Context, name: str | None) -> Mission:
    from kitty.mission.workspace import Mission

    return Mission.open(cwd(ctx), name)


def split_csv(values: tuple[str, ...] | list[str] | str | None) -> list[str]:
    if not values:
        return []
    if isinstance(values, str):
        values = [values]
    return [part.strip() for value in values for part in value.split(",") if part.strip()]
