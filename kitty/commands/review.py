"""review schema / submit / show."""

from __future__ import annotations

from pathlib import Path

import click

from kitty.commands.base import agent_option, json_option, mission_option, open_mission
from kitty.commands.review_text import loop_text, pending_text, progress, show_text
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

    from kitty.workflow.rules.formats import schema_text

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
    from kitty.workflow.reviews import submit as run_submit

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
    from kitty.workflow.reviews import show as run_show

    data = run_show(open_mission(ctx, mission), wp_id)
    emit(data, show_text(data), as_json)
    return 0


@review.command("run")
@click.argument("wp_id", metavar="WP")
@click.option(
    "--panel",
    "panel",
    metavar="P1,P2",
    help="Personas (default: review.panel, or "
    "chosen from the diff: lite roster for small diffs, full plus conditional ones).",
)
@click.option(
    "--agents",
    metavar="A,B",
    help="Reviewer agents, assigned to personas in turn "
    "(default: review.panel_agents or agents.available, never the implementer).",
)
@click.option(
    "--max-rounds",
    type=click.IntRange(min=1),
    help="HALT after this many rounds (default review.max_rounds, else review.max_cycles).",
)
@click.option(
    "--challenge",
    is_flag=True,
    default=None,
    help="A contrarian marks each finding "
    "VALID or INVALID (with a disproving path:line); INVALID never blocks.",
)
@click.option("--challenger", metavar="NAME", help="The contrarian's agent.")
@click.option("--implementer", metavar="NAME", help="Who fixes (default: the WP's implementer).")
@click.option(
    "--test-command",
    metavar="CMD",
    help="Run after each fix (default "
    "review.test_command); failing 4 times HALTs with tests_failing.",
)
@click.option(
    "--depth",
    type=click.Choice(["auto", "full"]),
    default=None,
    help="full: never the lite roster.",
)
@click.option("--timeout", type=click.IntRange(min=1), default=None, help="Seconds per agent run.")
@agent_option
@mission_option
@json_option
@click.pass_context
def run(
    ctx: click.Context,
    wp_id: str,
    panel: str | None,
    agents: str | None,
    max_rounds: int | None,
    challenge: bool | None,
    challenger: str | None,
    implementer: str | None,
    test_command: str | None,
    depth: str | None,
    timeout: int | None,
    agent: str | None,
    mission: str | None,
    as_json: bool,
) -> int:
    """Run the review panel on a WP: rounds of reviewers, fixes, until CONVERGED or HALT.

    Each round runs every persona as a fresh agent process on the full diff
    (waves of KITTY_REVIEW_CONCURRENCY, default 6) and writes
    tasks/<WP>/review/round-<R>/<persona>.json and merged.json. No blocking
    finding: CONVERGED, the WP is approved. Otherwise the round is recorded as
    changes requested (review-cycle-N.md, RC<round>-<n> ids), the implementer
    gets a fix dispatch and review.test_command runs; then the next round.
    HALT (max rounds, blocker questions, failing tests, a failed reviewer)
    writes tasks/<WP>/review-halt-<R>-<ts>.json, exits 1 and leaves the WP to
    the arbiter or `kitty review answer`.

    \b
    Example:
      kitty review run WP01 --panel correctness,testing,security --agents codex,gemini
      kitty review run WP01 --json
    """
    from dataclasses import replace

    from kitty.commands.base import cwd, split_csv
    from kitty.panel.rules.data import overridden
    from kitty.panel.runner import HALT, Loop, Settings

    repo = cwd(ctx)
    m = open_mission(ctx, mission)
    settings = overridden(
        Settings.from_config(m.config.raw, m.config.max_cycles),
        m.config.max_cycles,
        panel=split_csv(panel) if panel else None,
        agents=split_csv(agents) if agents else None,
        max_rounds=max_rounds,
        challenge=challenge,
        test_command=test_command or None,
        challenger=challenger,
        implementer=implementer,
        depth=depth,
        timeout=timeout,
    )
    if runner := m.actor(agent):
        settings = replace(settings, runner=runner)
    result = Loop(repo, m.slug, wp_id, settings, progress).run()
    emit(result, loop_text(result), as_json)
    return 1 if result["loop_verdict"] == HALT else 0


@review.command("answer")
@click.argument("wp_id", metavar="WP")
@click.option(
    "--answer",
    "answers",
    multiple=True,
    metavar="ID=LABEL",
    help="The chosen option for a blocker question (repeatable).",
)
@click.option("--note", "notes", multiple=True, metavar="ID=TEXT", help="A note for a question.")
@click.option("--abort", is_flag=True, help="After a soft warning: stop (HALT aborted_by_user).")
@click.option(
    "--continue", "keep_going", is_flag=True, help="After a soft warning: run one more round."
)
@agent_option
@mission_option
@json_option
@click.pass_context
def answer(
    ctx: click.Context,
    wp_id: str,
    answers: tuple[str, ...],
    notes: tuple[str, ...],
    abort: bool,
    keep_going: bool,
    agent: str | None,
    mission: str | None,
    as_json: bool,
) -> int:
    """Answer a HALTed panel's blocker questions (or continue after a soft warning).

    Without --answer it shows the open questions, at most four at a time.
    When every question is answered the fix is dispatched again with the
    answers and the loop goes on with the next round.

    \b
    Example:
      kitty review answer WP01 --answer q1=keep-api --note q1="callers depend on it"
      kitty review answer WP01 --continue
    """
    from kitty.commands.base import cwd
    from kitty.panel.answer import answer_given
    from kitty.panel.runner import HALT

    m = open_mission(ctx, mission)
    given = {"answers": answers, "notes": notes, "continue": keep_going, "abort": abort}
    names = ("--answer", "--note", "for example {name} q1=A")
    result = answer_given(cwd(ctx), m, wp_id, {**given, "agent": agent}, progress, names)
    if "pending" in result:
        emit(result, pending_text(result, m.slug), as_json)
        return 0
    emit(result, loop_text(result), as_json)
    return 1 if result["loop_verdict"] == HALT else 0


@review.command("personas")
@json_option
@click.pass_context
def personas(ctx: click.Context, as_json: bool) -> int:
    """The reviewer personas: built in, and overridden in .kittify/config.yaml.

    Always-on personas form the full roster; conditional ones join when the diff
    shows their trigger; a small low-risk diff gets the lite roster
    (correctness, project-standards). Override or add personas under
    review.personas (focus, prompt, when: always|conditional|off, trigger).

    \b
    Example:
      kitty review personas --json
    """
    from kitty.adapters import config as config_adapter
    from kitty.adapters.layout import find_project
    from kitty.commands.base import cwd
    from kitty.errors import NotARepo
    from kitty.panel.rules.personas import catalogue

    try:
        raw = config_adapter.load(find_project(cwd(ctx)).config_path).raw
    except NotARepo:  # outside a project: the built-in catalogue
        raw = {}
    review_cfg = raw.get("review") if isinstance(raw.get("review"), dict) else {}
    cat = catalogue((review_cfg or {}).get("personas"))
    data = {"personas": [p.to_json() for p in cat.values()]}
    lines = []
    for p in cat.values():
        tag = "lite " if p.name in ("correctness", "project-standards") else ""
        when = p.when if not p.trigger else f"{p.when}: {p.trigger}"
        lines.append(
            f"{p.name:<24} {tag}{when} — {p.focus}" + (" (config)" if p.source == "config" else "")
        )
    emit(data, "\n".join(lines), as_json)
    return 0


COMMANDS = [review]
