"""status, move / move-task, mark-status."""

from __future__ import annotations

from typing import Any

import click

from kitty import grammar
from kitty.commands.base import declared, hot_call


@click.command()
@declared(grammar.STATUS)
@click.pass_context
def status(ctx: click.Context, /, **params: Any) -> int:
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
    return hot_call(ctx, grammar.STATUS, params)


@click.command("move-task")
@declared(grammar.MOVE_TASK)
@click.pass_context
def move_task(ctx: click.Context, /, **params: Any) -> int:
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
      kitty agent tasks move-task WP03 --to approved --force --self-review-fallback \\
          --intended-reviewer codex --reviewer-failure-reason "codex timed out" \\
          --agent claude --note "Self-review: the reviewer could not run"
      kitty agent tasks move-task WP03 --to in_review --agent codex --mission checkout --json
    """
    return hot_call(ctx, grammar.MOVE_TASK, params)


@click.command("move")
@declared(grammar.SHORT_MOVE)
@click.pass_context
def move(ctx: click.Context, /, lane: str | None, to: str | None, **params: Any) -> int:
    """Short form of `kitty agent tasks move-task WP --to LANE`; LANE or --to LANE.

    \b
    Examples:
      kitty move WP3 in_progress --agent claude
      kitty move WP3 --to in_progress --agent claude
      kitty move WP3 for_review --agent claude --mission checkout --json
      kitty move WP3 planned --agent codex --review-feedback-file fb.md
      kitty move WP3 blocked --force --agent lead --note "Waits for the API keys"
      kitty move WP3 approved --force --self-review-fallback --intended-reviewer codex \\
          --reviewer-failure-reason "codex timed out" --agent claude --note "Self-review"
    """
    if lane is not None and to is not None:
        raise click.UsageError(
            "give the lane once: `kitty move WP LANE` or `kitty move WP --to LANE`"
        )
    target = lane if lane is not None else to
    if target is None:
        raise click.UsageError("Missing argument 'LANE' (or --to LANE).")
    return hot_call(ctx, grammar.SHORT_MOVE, {**params, "to": target})


@click.command("mark-status")
@declared(grammar.MARK_STATUS)
@click.pass_context
def mark_status(ctx: click.Context, /, **params: Any) -> int:
    """Mark subtasks done (or planned) with one annotation event.

    \b
    Examples:
      kitty agent tasks mark-status T001 T002 --status done
      kitty agent tasks mark-status T003 --status planned --wp WP02 --agent claude \\
          --mission checkout --json
    """
    return hot_call(ctx, grammar.MARK_STATUS, params)


COMMANDS = [status, move]
