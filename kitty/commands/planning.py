"""wp edit, wp depend, wp split, wp show, wp search: the plan after `wp add`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from kitty.commands.base import json_option, mission_option, open_mission
from kitty.commands.missions import Option, body_file_option, list_option, wp
from kitty.output import emit


def _wp_command(name: str, *options: Option) -> Callable[[Callable[..., int]], click.Command]:
    """`kitty wp NAME WP [--mission M] OPTIONS [--json]`: the shape edit, depend, split and
    show share (one definition; the options listed in the order given)."""

    def make(func: Callable[..., int]) -> click.Command:
        shape: tuple[Option, ...] = (
            click.argument("wp_id", metavar="WP"),
            mission_option,
            *options,
            json_option,
        )
        command: Callable[..., Any] = click.pass_context(func)
        for option in reversed(shape):
            command = option(command)
        return wp.command(name)(command)

    return make


def _next_line(result: dict[str, Any]) -> str:
    return f"\nnext: {result['next']} (recomputes the lanes)" if result.get("next") else ""


@_wp_command(
    "edit",
    click.option("--title", "-t", help="A new title."),
    click.option("--objective", metavar="TEXT", help="A new text for the Objectives section."),
    list_option("--owns", metavar="GLOB", help="Replace the owned files with these (repeatable)."),
    list_option(
        "--depends-on",
        "depends_on",
        metavar="WP01,WP02",
        help="Replace the dependencies with these ('' for none).",
    ),
    list_option(
        "--subtask",
        metavar="TEXT|T003=TEXT",
        help="Add a subtask (the next free T-id), or reword one: T003=TEXT (repeatable).",
    ),
    list_option("--remove-subtask", metavar="T003", help="Remove a subtask (repeatable)."),
    body_file_option("Replace the Markdown body (under the heading) with FILE ('-': stdin)."),
)
def wp_edit(
    ctx: click.Context,
    wp_id: str,
    mission: str | None,
    title: str | None,
    objective: str | None,
    owns: tuple[str, ...],
    depends_on: tuple[str, ...],
    subtask: tuple[str, ...],
    remove_subtask: tuple[str, ...],
    body_file: str | None,
    as_json: bool,
) -> int:
    """Change a WP's title, objective, owned files, dependencies, subtasks or body.

    The file is rewritten under the mission lock only if it still reads back
    as a valid WP and the dependencies stay acyclic. Front-matter comments are
    not kept. After finalize, run `kitty finalize` again to recompute lanes.

    \b
    Examples:
      kitty wp edit WP02 --title "Cart UI (web)" --objective "The cart page"
      kitty wp edit WP02 --owns 'web/cart/**' --owns 'web/shared/cart.css'
      kitty wp edit WP02 --depends-on WP01,WP03
      kitty wp edit WP02 --subtask "Empty-cart message" --subtask "T004=Totals with tax"
      kitty wp edit WP02 --remove-subtask T005
    """
    from kitty.workflow.planning.add import read_body
    from kitty.workflow.planning.edit import edit
    from kitty.workflow.rules.subtasks import SubtaskEdit

    result = edit(
        open_mission(ctx, mission),
        wp_id,
        title=title,
        objective=objective,
        owns=list(owns) if owns else None,
        depends_on=list(depends_on) if depends_on else None,
        body=read_body(body_file) if body_file is not None else None,
        subtasks=SubtaskEdit(subtask, remove_subtask),
    )
    emit(
        result,
        f"edited {result['wp_id']} ({', '.join(result['changed'])}): {result['path']}"
        + _next_line(result),
        as_json,
    )
    return 0


@_wp_command(
    "depend",
    list_option("--on", "on", metavar="WP01,WP02", help="Dependencies to add."),
    list_option("--remove", metavar="WP01", help="Dependencies to remove."),
)
def wp_depend(
    ctx: click.Context,
    wp_id: str,
    mission: str | None,
    on: tuple[str, ...],
    remove: tuple[str, ...],
    as_json: bool,
) -> int:
    """Add or remove dependencies of a WP (refusing unknown WPs and cycles).

    \b
    Examples:
      kitty wp depend WP04 --on WP02,WP03
      kitty wp depend WP04 --remove WP03
    """
    from kitty.workflow.planning.edit import depend

    result = depend(open_mission(ctx, mission), wp_id, list(on), list(remove))
    emit(
        result,
        f"{result['wp_id']} depends on {', '.join(result['dependencies']) or 'nothing'}"
        + _next_line(result),
        as_json,
    )
    return 0


@_wp_command(
    "split",
    click.option("--title", "-t", required=True, help="The new WP's title."),
    list_option(
        "--move", metavar="T004,T005", help="Subtasks that move to the new WP (with their text)."
    ),
    click.option("--objective", metavar="TEXT", help="The new WP's objective."),
    list_option(
        "--owns", metavar="GLOB", help="The new WP's owned files (default: the original's)."
    ),
)
def wp_split(
    ctx: click.Context,
    wp_id: str,
    mission: str | None,
    title: str,
    move: tuple[str, ...],
    objective: str | None,
    owns: tuple[str, ...],
    as_json: bool,
) -> int:
    """Cut a planned WP in two: a new WP takes the subtasks you move.

    The new WP gets the original's dependencies, and every WP that depended
    on the original now depends on both. Only a WP nobody works on (not yet
    finalized, planned or blocked) can be split.

    \b
    Example:
      kitty wp split WP03 --title "Pricing: discounts" --move T004,T005 \\
          --objective "Volume discounts" --owns 'src/pricing/discounts.py'
    """
    from kitty.workflow.planning.edit import split

    result = split(
        open_mission(ctx, mission),
        wp_id,
        title,
        list(move),
        objective,
        list(owns) if owns else None,
    )
    new = result["new"]
    moved = ", ".join(f"{a}→{b}" for a, b in result["moved_subtasks"].items()) or "none"
    emit(
        result,
        f"split {result['wp_id']}: new {new['wp_id']} {new['path']}\n"
        f"  subtasks moved: {moved}; dependents now also wait for {new['wp_id']}: "
        f"{', '.join(result['dependents_updated']) or 'none'}" + _next_line(result),
        as_json,
    )
    return 0


def tree_lines(nodes: list[dict[str, Any]], prefix: str = "") -> list[str]:
    """`├── WP02 Cart model [done]` lines, children indented under their parent."""
    out = []
    for index, node in enumerate(nodes):
        last = index == len(nodes) - 1
        label = f"{node['id']} {node['title'] or '(no file)'} [{node['lane'] or 'unfinalized'}]"
        out.append(
            prefix + ("└── " if last else "├── ") + label + (" ↺" if node.get("cycle") else "")
        )
        out += tree_lines(node["children"], prefix + ("    " if last else "│   "))
    return out


def show_text(view: dict[str, Any]) -> str:
    tasks = ", ".join(f"{t} {s}" for t, s in view["subtask_status"].items()) or "none"
    lines = [
        f"{view['wp_id']} {view['title']}  [{view['lane'] or 'not finalized'}]"
        + (f"  {view['agent']}" if view["agent"] else ""),
        f"file: {view['path']}",
        f"owns: {', '.join(view['owned_files']) or '-'}",
        f"subtasks: {tasks}",
        "Depends on:" if view["depends_on_tree"] else "Depends on: nothing",
        *tree_lines(view["depends_on_tree"]),
        "Dependents:" if view["dependents_tree"] else "Dependents: none",
        *tree_lines(view["dependents_tree"]),
    ]
    return "\n".join(lines) + "\n\n" + str(view["body"])


@_wp_command("show")
def wp_show(ctx: click.Context, wp_id: str, mission: str | None, as_json: bool) -> int:
    """Show one WP: lane, subtasks, owned files, body and its dependency tree both ways
    ("Depends on …" and "Dependents …"). Reads only.

    \b
    Example:
      kitty wp show WP04
    """
    from kitty.workflow.planning.edit import show

    view = show(open_mission(ctx, mission), wp_id)
    emit(view, show_text(view), as_json)
    return 0


@wp.command("search")
@click.argument("query")
@mission_option
@click.option("--lane", metavar="LANE", help="Only WPs in this lane.")
@json_option
@click.pass_context
def wp_search(
    ctx: click.Context, query: str, mission: str | None, lane: str | None, as_json: bool
) -> int:
    """Find WPs whose id, title, owned files or body hold every word of QUERY
    (any case), with the matching lines. Reads only.

    \b
    Examples:
      kitty wp search cart
      kitty wp search "discount rule" --lane planned --json
    """
    from kitty.workflow.planning.edit import search

    view = search(open_mission(ctx, mission), query, lane)
    lines = []
    for hit in view["results"]:
        lines.append(f"{hit['id']}  {hit['title']}  [{hit['lane'] or 'not finalized'}]")
        lines += [f"  {hit['path']}:{m['line']}: {m['text']}" for m in hit["matches"]]
    emit(view, "\n".join(lines) or f"no work package matches {query!r}", as_json)
    return 0


COMMANDS: list[click.Command] = []  # the commands above live in the `wp` group
