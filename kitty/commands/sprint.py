"""sprint, keep-awake, agent config list."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from kitty.commands.base import cwd, json_option, mission_option, open_mission, split_csv
from kitty.commands.sprint_view import SprintView, describe, version_lines
from kitty.output import emit

if TYPE_CHECKING:
    from kitty.sprint.runner import Options, Sprint

# The view lives in sprint_view; these names stay importable from here.
__all__ = [
    "COMMANDS",
    "SprintView",
    "config_list",
    "describe",
    "keep_awake",
    "sprint",
    "version_lines",
]


@click.command()
@mission_option
@click.option(
    "--implementer",
    "implementers",
    multiple=True,
    required=True,
    metavar="A[,B]",
    help="Agents that implement (comma-separated or repeated).",
)
@click.option(
    "--reviewer",
    "reviewers",
    multiple=True,
    required=True,
    metavar="R[,S]",
    help="Agents that review; never a WP's own implementer.",
)
@click.option("--parallel", default=2, show_default=True, help="Agents running at once.")
@click.option(
    "--timeout",
    default=1800,
    show_default=True,
    metavar="SECONDS",
    help="Kill an agent run after this long.",
)
@click.option(
    "--max-cycles",
    type=int,
    default=None,
    metavar="K",
    help="Review cycles before the arbiter (default: review.max_cycles).",
)
@click.option(
    "--retries",
    default=2,
    show_default=True,
    help="Re-runs of an implementer that exits without moving its WP.",
)
@click.option(
    "--arbiter",
    type=click.Choice(["escalate", "approve"]),
    default="escalate",
    show_default=True,
    help="What to do with a WP at the cycle cap.",
)
@click.option(
    "--review-panel",
    metavar="P1,P2",
    help="Review with a persona panel (`kitty review run`) on the --reviewer agents "
    "instead of one reviewer: rounds, fixes, HALT.",
)
@click.option(
    "--implementer-model",
    metavar="MODEL",
    help="Model the implementers run on, in each CLI's own flag (opencode: provider/model; "
    "default: agents.models.<agent>.implement in .kittify/config.yaml, else the CLI's).",
)
@click.option(
    "--reviewer-model",
    metavar="MODEL",
    help="Model the reviewers run on (default: agents.models.<agent>.review, else the CLI's).",
)
@click.option(
    "--budget",
    "budget_usd",
    type=click.FloatRange(min=0),
    metavar="USD",
    help="Start no new agent run once the runs' reported cost reaches this (running ones finish).",
)
@click.option(
    "--max-tokens",
    type=click.IntRange(min=0),
    metavar="N",
    help="Start no new agent run once the runs' input+output tokens reach this.",
)
@click.option(
    "--rate-limit-wait",
    type=click.FloatRange(min=0),
    default=30.0,
    show_default=True,
    metavar="SECONDS",
    help="First wait after an agent hits a rate limit or an overloaded service (doubling, "
    "up to 5 waits of at most 10 minutes; a retry-after the agent reports wins).",
)
@click.option("--merge", "do_merge", is_flag=True, help="Merge the mission when all is approved.")
@click.option("--no-caffeinate", is_flag=True, help="Do not hold an idle-sleep inhibitor.")
@click.option("--dry-run", is_flag=True, help="Print the schedule and commands; run nothing.")
@click.option(
    "--remote",
    metavar="REMOTE",
    help="Share the mission with sprints on other machines through this git remote.",
)
@json_option
@click.pass_context
def sprint(
    ctx: click.Context,
    /,
    mission: str | None,
    implementers: tuple[str, ...],
    reviewers: tuple[str, ...],
    parallel: int,
    timeout: int,
    max_cycles: int | None,
    retries: int,
    arbiter: str,
    review_panel: str | None,
    do_merge: bool,
    no_caffeinate: bool,
    dry_run: bool,
    remote: str | None,
    as_json: bool,
    **spending: Any,
) -> int:
    """Run the whole implement-review loop with agent CLIs, in parallel, unattended.

    Exits 0 when every WP is approved (and merged with --merge), 1 when work
    stopped (blocked WPs, a failed reviewer); re-run it to resume.

    Built-in agents whose command line was run against the real CLI from
    the npm registry (tests/agents; `kitty doctor` shows the versions):
    claude, codex, gemini, qwen, opencode, auggie. Not verified (their
    command line comes from the implement-review skill's dispatch table):
    llxprt, kilocode, cursor. Any other CLI: agents.commands.<name> in
    .kittify/config.yaml, after `kitty trust`.

    \b
    Examples:
      kitty sprint --implementer claude --reviewer codex --parallel 3
      kitty sprint --implementer claude,gemini --reviewer codex --merge --json
      kitty sprint --implementer claude --reviewer codex --dry-run
      kitty sprint --implementer claude --reviewer codex,gemini --review-panel correctness,security
      kitty sprint --implementer claude --reviewer codex --remote origin --merge
      kitty sprint --implementer claude --reviewer codex --reviewer-model gpt-5-mini
      kitty sprint --implementer claude --reviewer codex --budget 5 --max-tokens 2000000
    """
    from kitty.sprint.runner import Options

    opts = Options(
        split_csv(implementers), split_csv(reviewers), parallel, timeout, max_cycles, do_merge,
        not no_caffeinate, dry_run, retries, arbiter=arbiter,
        review_panel=split_csv(review_panel) or None,
        remote=remote,
        **spending,  # models per role, --budget, --max-tokens, --rate-limit-wait
    )  # fmt: skip
    view = SprintView(as_json, sys.stdout.isatty())
    runner = _runner(ctx, mission, opts, view)
    if view.live:
        view.mission = open_mission(ctx, runner.slug)
    result = runner.run()
    return 0 if dry_run or result.get("ok") else 1


def _runner(ctx: click.Context, mission: str | None, opts: Options, view: SprintView) -> Sprint:
    """The sprint for `opts`: shared through a git remote with --remote."""
    from kitty.sprint.runner import Sprint

    if opts.remote:
        from kitty.sprint.team import RemoteSprint

        return RemoteSprint(cwd(ctx), mission, opts, view)
    return Sprint(cwd(ctx), mission, opts, view)


@click.command("keep-awake", context_settings={"ignore_unknown_options": True})
@click.option("--why", default="kitty keep-awake", show_default=True, help="Reason shown.")
@json_option
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def keep_awake(why: str, as_json: bool, command: tuple[str, ...]) -> int:
    """Run COMMAND while the machine is kept from idle sleep; exit with its code.

    With --json (before the `--`), COMMAND's output goes to stderr and stdout
    carries one object: {"schema", "command", "exit_code"}.

    \b
    Examples:
      kitty keep-awake -- ./my-sprint.sh --all
      kitty keep-awake --json -- make test
    """
    import subprocess

    from kitty.agents.awake import prevent_idle_sleep
    from kitty.errors import CannotRun
    from kitty.output import error

    with prevent_idle_sleep(True, why, lambda msg: click.echo(msg, err=True)):
        try:
            # With --json the child's stdout joins stderr (fd 2) so stdout stays one object.
            code = subprocess.call(list(command), stdout=2 if as_json else None)
        except OSError as exc:
            problem = CannotRun(
                f"cannot run {command[0]}: {exc.strerror}", "check the command and your PATH"
            )
            return error(problem, as_json)
    if as_json:
        emit({"command": list(command), "exit_code": code}, "", True)
    return code


@click.command("list")
@json_option
@click.pass_context
def config_list(ctx: click.Context, as_json: bool) -> int:
    """Show the configured agents, their backend and whether the CLI is on PATH.

    \b
    Example:
      kitty agent config list
    """
    from kitty.adapters import config as config_adapter
    from kitty.adapters.layout import find_project
    from kitty.agents.clis import backend_for, configured
    from kitty.errors import AgentError

    project = find_project(cwd(ctx))
    raw = config_adapter.load(project.config_path).raw
    rows = []
    for name in configured(raw):
        try:
            backend = backend_for(name, raw)
            rows.append(
                {
                    "agent": name,
                    "backend": backend.kind,
                    "tier": backend.tier,
                    "executable": backend.executable(),
                    "on_path": backend.available(),
                    "error": None,
                }
            )
        except AgentError as exc:
            rows.append(
                {
                    "agent": name,
                    "backend": None,
                    "tier": None,
                    "executable": None,
                    "on_path": False,
                    "error": exc.message,
                }
            )
    text = (
        "\n".join(
            f"{r['agent']:<14} {r['backend'] or '?':<9} tier {r['tier'] or '-'}  "
            + ("on PATH" if r["on_path"] else f"NOT FOUND ({r['executable'] or r['error']})")
            for r in rows
        )
        or "(no agents configured: kitty init --agents claude,codex)"
    )
    emit({"agents": rows}, text, as_json)
    return 0


COMMANDS = [sprint, keep_awake]
