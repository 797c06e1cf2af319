"""status, move / move-task, mark-status."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from kitty.commands.base import agent_option, cwd, json_option, mission_option
from kitty.core.lanes import SUBTASK_STATUSES


@click.command()
@mission_option
@click.option("--list", "as_list", is_flag=True, help="One line per WP with its full title.")
@click.option("--all", "show_all", is_flag=True, help="Every card (no `… N more`).")
@json_option
@click.pass_context
def status(
    ctx: click.Context, mission: str | None, as_list: bool, show_all: bool, as_json: bool
) -> int:
    """Show the kanban board of every work package. Reads only.

    The board fits $COLUMNS (else the terminal, else 80 columns), wraps titles
    to two lines and collapses a column past 10 cards into `… N more`.

    \b
    Examples:
      kitty status
      kitty status --list
      COLUMNS=200 kitty status --all | less -S
      kitty status --mission checkout --json
    """
    from kitty import hot

    return hot.status(str(cwd(ctx)), mission, as_json, as_list, show_all)


def _move_options(func: Any) -> Any:
    for option in reversed(
        [
            mission_option,
            agent_option,
            click.option("--note", metavar="TEXT", help="Why; required with --force."),
            click.option("--force", is_flag=True, help="Take any edge (needs --note)."),
            click.option(
                "--review-feedback-file",
                "feedback",
                metavar="FILE",
                type=click.Path(dir_okay=False, path_type=Path),
                help="Review feedback; to reject a WP in review pass this or --note.",
            ),
            click.option(
                "--self-review-fallback",
                is_flag=True,
                help="Approve your own WP after a reviewer failed (needs --force).",
            ),
            click.option(
                "--intended-reviewer",
                metavar="AGENT",
                help="With --self-review-fallback: the reviewer that failed.",
            ),
            click.option(
                "--reviewer-failure-reason",
                metavar="TEXT",
                help="With --self-review-fallback: how the reviewer failed.",
            ),
            json_option,
        ]
    ):
        func = option(func)
    return func


def _do_move(ctx: click.Context, wp_id: str, to: str, opts: dict[str, Any]) -> int:
    from kitty import hot

    return hot.move(
        str(cwd(ctx)),
        opts.pop("mission"),
        wp_id,
        to,
        opts.pop("as_json"),
        agent=opts["agent"],
        note=opts["note"],
        force=opts["force"],
        feedback_file=opts["feedback"],
        self_review_fallback=opts["self_review_fallback"],
        intended_reviewer=opts["intended_reviewer"],
        reviewer_failure_reason=opts["reviewer_failure_reason"],
    )


@click.command("move-task")
@click.argument("wp_id", metavar="WP")
@click.option("--to", "to", required=True, metavar="LANE", help="Target lane.")
@_move_options
@click.pass_context
def move_task(ctx: click.Context, /, wp_id: str, to: str, **opts: Any) -> int:
    """Move a work package to another lane, checked against the transition table.

    Lanes: planned claimed in_progress (doing) for_review in_review approved
    done blocked canceled. An illegal move exits 1 and names the legal targets.
    From planned, --to doing claims and starts (two events), as in Spec Kitty.

    \b
    Examples:
      kitty agent tasks move-task WP03 --to for_review --note "Ready for review"
      kitty agent tasks move-task WP03 --to planned --review-feedback-file fb.md --agent codex
      kitty agent tasks move-task WP03 --to approved --force --agent lead \\
          --note "Arbiter decision: meets the acceptance criteria"
    """
    return _do_move(ctx, wp_id, to, opts)


@click.command("move")
@click.argument("wp_id", metavar="WP")
@click.argument("lane", metavar="LANE", required=False)
@click.option("--to", "to", metavar="LANE", help="Target lane (instead of the LANE argument).")
@_move_options
@click.pass_context
def move(ctx: click.Context, /, wp_id: str, lane: str | None, to: str | None, **opts: Any) -> int:
    """Short form of `kitty agent tasks move-task WP --to LANE`; LANE or --to LANE.

    \b
    Examples:
      kitty move WP3 in_progress --agent claude
      kitty move WP3 --to in_progress --agent claude
    """
    if lane is not None and to is not None:
        raise click.UsageError(
            "give the lane once: `kitty move WP LANE` or `kitty move WP --to LANE`"
        )
    target = lane if lane is not None else to
    if target is None:
        raise click.UsageError("Missing argument 'LANE' (or --to LANE).")
    return _do_move(ctx, wp_id, target, opts)


@click.command("mark-status")
@click.argument("task_ids", nargs=-1, metavar="T001 [T002 ...]")
@click.option(
    "--status",
    "status_",
    required=True,
    type=click.Choice(SUBTASK_STATUSES),
    help="New subtask status.",
)
@click.option("--wp", "wp_id", metavar="WP", help="Only look in this WP's subtasks.")
@mission_option
@agent_option
@json_option
@click.pass_context
def mark_status(
    ctx: click.Context,
    task_ids: tuple[str, ...],
    status_: str,
    wp_id: str | None,
    mission: str | None,
    agent: str | None,
    as_json: bool,
) -> int:
    """Mark subtasks done (or planned) with one annotation event.

    \b
    Example:
      kitty agent tasks mark-status T001 T002 --status done
    """
    from kitty import hot

    return hot.mark_status(
        str(cwd(ctx)), mission, list(task_ids), status_, as_json, agent=agent, wp=wp_id
    )


COMMANDS = [status, move]
