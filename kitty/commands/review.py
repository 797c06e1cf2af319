"""review schema / submit / show."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from kitty.commands.base import agent_option, json_option, mission_option, open_mission
from kitty.output import emit


@click.group()
def review() -> None:
    """Structured review findings, verdicts and review history."""


@review.command("schema")
@json_option
def schema(as_json: bool) -> int:
    """Print the JSON schema of a findings file.

    With --json it is wrapped like every other answer:
    {"schema": 1, "findings_schema": {...}}.

    \b
    Examples:
      kitty review schema > findings.schema.json
      kitty review schema --json
    """
    import json

    from kitty.core.formats import schema_text

    text = schema_text()
    if as_json:
        emit({"findings_schema": json.loads(text)}, "", True)
    else:
        click.echo(text, nl=False)
    return 0


@review.command("submit")
@click.argument("wp_id", metavar="WP")
@click.option(
    "--findings",
    "files",
    multiple=True,
    required=True,
    metavar="FILE",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A reviewer's findings file (repeatable; merged and deduplicated).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["kitty", "specdev", "persona", "addon"]),
    default=None,
    help="The files' format; detected when omitted (kitty, seed 000/001 specdev, "
    "seed 002 persona, seed 003 addon JSON or markdown).",
)
@agent_option
@mission_option
@json_option
@click.pass_context
def submit(
    ctx: click.Context,
    wp_id: str,
    files: tuple[Path, ...],
    fmt: str | None,
    agent: str | None,
    mission: str | None,
    as_json: bool,
) -> int:
    """Record a review verdict from findings: approve, or reject with a review cycle.

    Findings at or above review.block_at (default P2) reject the WP back to
    planned with tasks/<WP>/review-cycle-N.md; otherwise it is approved and P3s
    are kept as advisory notes. Invalid files are refused with every problem
    listed; nothing is recorded. Besides kitty's format (`kitty review schema`)
    each seed's native format is accepted and mapped, keeping its own fields
    under `native`: specdev {round, scope, findings}, persona {reviewer,
    findings[file, line, confidence, ...]}, addon (RC<N>-<seq>, critical|major|
    minor, VALID|INVALID; JSON or the review-addon markdown).

    \b
    Example:
      kitty review submit WP03 --findings codex.json --findings gemini.json --agent codex
      kitty review submit WP03 --findings review-addon-1.md --format addon --agent claude
    """
    from kitty.services.reviews import submit as run_submit

    result = run_submit(open_mission(ctx, mission), wp_id, list(files), agent, fmt)
    text = (
        f"{result['wp_id']}: {result['verdict']} ({result['findings']} finding(s), "
        f"{result['blocking']} blocking at {result['block_at']}, "
        f"{result['advisory']} advisory) → {result['to_lane']}"
    )
    if result["review_ref"]:
        text += f"\nreview: {result['review_ref']}"
    if result["verdict"] == "changes_requested":
        text += f"\nrejections so far: {result['review_cycles']}"
    emit(result, text, as_json)
    return 0


def _show_text(data: dict[str, Any]) -> str:
    lines = [
        f"{data['wp_id']} ({data['lane']}): {data['review_cycles']} rejection(s), "
        f"cap {data['max_cycles']}"
    ]
    for review in data["reviews"]:
        label = f"rejection {review['rejection']}" if review["rejection"] else "verdict"
        lines.append(
            f"- {review['at']}  {label}: {review['verdict']} by {review['reviewer']}"
            + (f"  ({review['reference']})" if review["reference"] else "")
        )
        for finding in review["findings"] or []:
            lines.append(
                f"    [{finding['severity']}] {finding['location']} {finding['title']}"
                f" ({', '.join(finding['reviewers'])})"
            )
    if data["arbiter"]:
        arb = data["arbiter"]
        lines.append(
            f"arbiter decision: {arb.get('decision', arb.get('to_lane'))} by "
            f"{arb.get('by')}: {arb.get('note')}"
        )
    if data["self_review"]:
        sr = data["self_review"]
        lines.append(
            f"self-review fallback: approved by {sr.get('approved_by')} after "
            f"{sr.get('intended_reviewer')} failed ({sr.get('reviewer_failure_reason')})"
        )
    return "\n".join(lines)


@review.command("show")
@click.argument("wp_id", metavar="WP")
@mission_option
@json_option
@click.pass_context
def show(ctx: click.Context, wp_id: str, mission: str | None, as_json: bool) -> int:
    """Every review of a WP: verdicts, reviewers, dates, findings, arbiter decision.

    \b
    Example:
      kitty review show WP03 --json
    """
    from kitty.services.reviews import show as run_show

    data = run_show(open_mission(ctx, mission), wp_id)
    emit(data, _show_text(data), as_json)
    return 0


COMMANDS = [review]
