"""mission create/list, wp add/list, finalize."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from kitty.commands.base import cwd, json_option, mission_option, open_mission
from kitty.output import emit, warn

#: A click option decorator (what body_file_option and list_option return).
Option = Callable[[Callable[..., Any]], Callable[..., Any]]


def list_option(*decls: str, metavar: str, help: str) -> Option:
    """A repeatable option of the `kitty wp` commands (one definition for all of them)."""
    return click.option(*decls, multiple=True, metavar=metavar, help=help)


def body_file_option(help: str) -> Option:
    """`--body-file FILE` ('-': stdin) of `kitty wp add` and `kitty wp edit`."""
    return click.option(
        "--body-file",
        metavar="FILE",
        type=click.Path(dir_okay=False, allow_dash=True),
        help=help,
    )


@click.group()
def mission() -> None:
    """Create and list missions (one folder per mission under kitty-specs/)."""


@mission.command("create")
@click.argument("name")
@click.option("--title", help="Human-friendly title (default: NAME).")
@click.option(
    "--target-branch",
    metavar="BRANCH",
    help="Branch the mission merges into (default: the current branch).",
)
@click.option(
    "--initial-commit",
    is_flag=True,
    help="In a new repository, give the branch its first (empty) commit.",
)
@json_option
@click.pass_context
def mission_create(
    ctx: click.Context,
    name: str,
    title: str | None,
    target_branch: str | None,
    initial_commit: bool,
    as_json: bool,
) -> int:
    """Create kitty-specs/<name>-<id8>/ with meta.json and tasks/.

    \b
    Example:
      kitty mission create checkout-flow --title "Checkout flow" --target-branch main
    """
    from kitty.workflow.planning.missions import create_mission

    result = create_mission(cwd(ctx), name, title, target_branch, initial_commit)
    slug = result["mission"]
    emit(
        result,
        f"created mission {slug}\n  {result['path']}\n"
        f'next: kitty wp add --mission {slug} --title "..." --objective "..."',
        as_json,
    )
    return 0


@mission.command("list")
@json_option
@click.pass_context
def mission_list(ctx: click.Context, as_json: bool) -> int:
    """List the missions of this repository; `*` marks the default here.

    Commands without --mission use $KITTY_MISSION, else the mission of the
    lane worktree or branch you stand in, else the only mission.

    \b
    Example:
      kitty mission list --json
    """
    from kitty.workflow.planning.missions import list_view

    view = list_view(cwd(ctx))
    warn(view["warnings"])
    text = "\n".join(
        f"{'*' if m['slug'] == view['default'] else ' '} {m['slug']}  {m['title']}  "
        f"({m['work_packages']} WPs → {m['target_branch'] or '?'})"
        for m in view["missions"]
    )
    emit(view, text or "(no missions)", as_json)
    return 0


@click.group()
def wp() -> None:
    """Add, change, show and search work packages (tasks/WPnn-*.md files)."""


@wp.command("add")
@mission_option
@click.option("--title", "-t", required=True, help="What the WP delivers.")
@list_option(
    "--depends-on",
    "depends_on",
    metavar="WP01,WP02",
    help="Dependencies (comma-separated or repeated).",
)
@list_option(
    "--owns", metavar="GLOB", help="A path or glob this WP writes (repeatable): its write scope."
)
@click.option(
    "--subtasks",
    type=int,
    default=0,
    show_default=True,
    help="How many subtask ids (T001...) to allocate (at least one per --subtask).",
)
@click.option("--objective", metavar="TEXT", help="What the WP delivers (its Objectives section).")
@list_option(
    "--subtask",
    "subtask_texts",
    metavar="TEXT",
    help="A subtask, one line (repeatable): allocates the next T-id with this text.",
)
@body_file_option("The whole Markdown body from FILE ('-': stdin), instead of the template.")
@json_option
@click.pass_context
def wp_add(
    ctx: click.Context,
    mission: str | None,
    title: str,
    depends_on: tuple[str, ...],
    owns: tuple[str, ...],
    subtasks: int,
    objective: str | None,
    subtask_texts: tuple[str, ...],
    body_file: str | None,
    as_json: bool,
) -> int:
    """Write the next tasks/WPnn-<title>.md: front matter, objective, subtasks.

    Whatever you leave out gets the template's placeholder text, which
    `kitty finalize` refuses until you replace it (it is an agent's brief).

    \b
    Examples:
      kitty wp add --title "Cart API" --depends-on WP01 --owns 'src/cart/**' \\
          --objective "A REST endpoint that adds items to a cart" \\
          --subtask "POST /cart/items with validation" --subtask "Tests"
      kitty wp add --title "Search index" --body-file index.md --subtasks 2
    """
    from kitty.workflow.planning.missions import Content, add_wp, read_body

    content = Content(
        objective, tuple(subtask_texts), read_body(body_file) if body_file is not None else None
    )
    result = add_wp(
        open_mission(ctx, mission), title, list(depends_on), list(owns), subtasks, content
    )
    deps = ", ".join(result["dependencies"]) or "nothing"
    tasks = ", ".join(result["subtasks"]) or "none"
    emit(
        result,
        f"added {result['wp_id']}: {result['path']}\n  depends on {deps}; "
        f"subtasks {tasks}\n"
        + (
            f"write the objective and subtasks over the template text at "
            f"line{'s' if len(result['placeholders']) > 1 else ''} "
            f"{', '.join(map(str, result['placeholders']))} of that file (finalize refuses it)\n"
            if result["placeholders"]
            else ""
        )
        + "run `kitty finalize` when the plan is complete",
        as_json,
    )
    return 0


@wp.command("list")
@mission_option
@json_option
@click.pass_context
def wp_list(ctx: click.Context, mission: str | None, as_json: bool) -> int:
    """List the work packages with their dependencies and owned files.

    \b
    Example:
      kitty wp list --json
    """
    m = open_mission(ctx, mission)
    rows: list[dict[str, Any]] = [
        {
            "id": w.wp_id,
            "title": w.title,
            "dependencies": list(w.dependencies),
            "subtasks": list(w.subtasks),
            "owned_files": list(w.owned_files),
            "path": w.path,
        }
        for w in m.wps.values()
    ]
    rows.sort(key=lambda r: r["id"])
    warn([str(e) for e in m.specset.errors])
    text = (
        "\n".join(
            f"{r['id']}  {r['title']}  deps: {','.join(r['dependencies']) or '-'}" for r in rows
        )
        or "(no work packages)"
    )
    emit({"mission": m.slug, "work_packages": rows}, text, as_json)
    return 0


def _finalize_text(result: dict[str, Any]) -> str:
    lines = [f"finalized {result['mission']}: {result['work_packages']} work packages"]
    boot = result["bootstrapped"]
    lines.append(f"  planned now: {', '.join(boot)}" if boot else "  no new WPs (already final)")
    for lane in result["lanes"]:
        deps = f" after {', '.join(lane['depends_on_lanes'])}" if lane["depends_on_lanes"] else ""
        lines.append(
            f"  {lane['lane_id']} (group {lane['parallel_group']}): "
            f"{', '.join(lane['wp_ids'])}{deps}"
        )
    for pair in result["collapse_report"]:
        lines.append(
            f"  {' + '.join(pair['wps'])} share a lane ({pair['rule']}: "
            f"{' ~ '.join(pair['paths'])})"
        )
    for orphan in result["orphans"]:
        lines.append(f"  warning: {orphan} has events but no WP file")
    return "\n".join(lines)


@click.command()
@mission_option
@click.option(
    "--allow-placeholders",
    is_flag=True,
    help="Warn about template text `wp add` left in a WP instead of refusing.",
)
@json_option
@click.pass_context
def finalize(
    ctx: click.Context, mission: str | None, allow_placeholders: bool, as_json: bool
) -> int:
    """Validate every WP file, compute lanes.json and put new WPs in `planned`.

    Nothing is written when any file is invalid; every problem is listed with
    its file and line, including template text `kitty wp add` left untouched
    ("Describe what this work package delivers.", "T001: describe this
    subtask"). Safe to run again: it only adds WPs that have no state.

    \b
    Example:
      kitty finalize --mission checkout --json
    """
    from kitty.workflow.planning.missions import finalize as run_finalize

    result = run_finalize(open_mission(ctx, mission), allow_placeholders)
    warn(result["warnings"])
    emit(result, _finalize_text(result), as_json)
    return 0


COMMANDS = [mission, wp, finalize]
