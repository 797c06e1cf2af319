"""Shell completion: `kitty completion bash|zsh|fish`, and the values that complete.

Click generates the scripts; the callbacks below complete mission slugs, WP ids, lanes and
agent names from the repository the command line points at (`-C PATH` or the cwd). They
only read file names and the config, never the event log, so a TAB stays instant, and
they never fail: a completion that cannot be computed offers nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:  # click.shell_completion costs ~2 ms: imported only when a TAB asks
    from click.shell_completion import CompletionItem

SHELLS = ("bash", "zsh", "fish")
COMPLETE_VAR = "_KITTY_COMPLETE"
Completer = Callable[[click.Context, click.Parameter, str], list["CompletionItem"]]


def _project(ctx: click.Context) -> Any:
    from kitty.adapters.layout import find_project
    from kitty.commands.base import cwd

    return find_project(cwd(ctx))


def _mission_dir(ctx: click.Context) -> tuple[Any, Path]:
    from kitty.adapters.layout import resolve_mission

    project = _project(ctx)
    slug = resolve_mission(project, ctx.params.get("mission"))
    return project, project.specs_dir / slug


def _safe(func: Completer) -> Completer:
    def wrapper(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
        try:
            return func(ctx, param, incomplete)
        except Exception:  # a TAB must never print a traceback into the shell
            return []

    return wrapper


@_safe
def missions(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    from click.shell_completion import CompletionItem

    from kitty.adapters.layout import list_missions

    return [CompletionItem(m) for m in list_missions(_project(ctx)) if m.startswith(incomplete)]


@_safe
def wp_ids(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    from click.shell_completion import CompletionItem

    from kitty.adapters.specs import wp_files
    from kitty.core.model import wp_id_from_filename

    _, folder = _mission_dir(ctx)
    items = []
    for path in wp_files(folder / "tasks"):
        wp_id = wp_id_from_filename(path.name)
        if wp_id and wp_id.lower().startswith(incomplete.lower()):
            title = path.stem[len(wp_id) :].strip("-").replace("-", " ")
            items.append(CompletionItem(wp_id, help=title or None))
    return items


@_safe
def lanes(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    from click.shell_completion import CompletionItem

    from kitty.core.lanes import ALIASES, LANES

    return [CompletionItem(x) for x in (*LANES, *ALIASES) if x.startswith(incomplete)]


@_safe
def agents(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    import os

    from click.shell_completion import CompletionItem

    from kitty.adapters import config as config_adapter

    names = list(config_adapter.load(_project(ctx).config_path).agents)
    if os.environ.get("KITTY_AGENT"):
        names.append(os.environ["KITTY_AGENT"])
    # --implementer/--reviewer take comma-separated lists: complete the last item
    head, _, last = incomplete.rpartition(",")
    prefix = head + "," if head else ""
    seen = dict.fromkeys(names)
    return [CompletionItem(prefix + n) for n in seen if n.startswith(last)]


@_safe
def subtasks(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    from click.shell_completion import CompletionItem

    from kitty.adapters.specs import load_wps

    _, folder = _mission_dir(ctx)
    found = load_wps(folder, folder.name).wps
    items = []
    for wp in found.values():
        for task in wp.subtasks:
            if task.startswith(incomplete.upper()):
                items.append(CompletionItem(task, help=wp.wp_id))
    return items


#: Which parameters complete what, by their name in the click command.
BY_NAME: dict[str, Completer] = {
    "mission": missions,
    "wp_id": wp_ids,
    "wp": wp_ids,  # the hot commands' WP (kitty/grammar.py names it as kitty.hot does)
    "to": lanes,
    "lane": lanes,  # `kitty move WP LANE` (and `wp search --lane`)
    "agent": agents,
    "implementers": agents,
    "reviewers": agents,
    "arbiter": agents,
    "intended_reviewer": agents,
    "task_ids": subtasks,
    "tasks": subtasks,
}


def attach(group: click.Group) -> None:
    """Give every parameter named in BY_NAME its completer (new commands get them too)."""
    for command in group.commands.values():
        if isinstance(command, click.Group):
            attach(command)
            continue
        for param in command.params:
            completer = BY_NAME.get(param.name or "")
            if completer is not None and param._custom_shell_complete is None:
                param._custom_shell_complete = completer


def script(shell: str, root: click.Command, prog_name: str = "kitty") -> str:
    """The completion script of `root` (the command group being run: passed in, never
    imported from the cli module, which imports this package)."""
    from click.shell_completion import get_completion_class

    cls = get_completion_class(shell)
    if cls is None:  # pragma: no cover - SHELLS are all built into click
        raise click.BadParameter(shell)
    return cls(root, {}, prog_name, COMPLETE_VAR).source()
