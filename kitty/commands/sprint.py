"""sprint, keep-awake, agent config list."""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import click

from kitty import SCHEMA
from kitty.commands.base import cwd, json_option, mission_option, open_mission, split_csv
from kitty.core.printable import printable
from kitty.output import echo, emit


class SprintView:
    """How sprint events reach the user: JSON lines, a live board on a TTY, or plain lines."""

    def __init__(self, as_json: bool, live: bool) -> None:
        self.as_json = as_json
        self.live = live and not as_json
        self.lines: list[str] = []
        self.last_draw = 0.0
        self.mission: Any = None
        self.running: dict[str, tuple[str, str, float]] = {}

    def __call__(self, event: dict[str, Any]) -> None:
        if self.as_json:
            click.echo(json.dumps({"schema": SCHEMA, **event}, sort_keys=True))
            return
        kind = event["event"]
        if kind == "dispatch":
            self.running[event["wp_id"]] = (event["role"], event["agent"], time.monotonic())
        elif kind == "finished":
            self.running.pop(event["wp_id"], None)
        text = describe(event)
        if text is None:
            return
        if not self.live:
            echo(text)  # control characters in titles and agent names shown, not obeyed
            return
        if kind == "end":
            self.draw(force=True)
            echo(text)
            return
        self.lines = (self.lines + text.splitlines())[-8:]
        self.draw(force=kind == "halt")

    def draw(self, force: bool = False) -> None:
        """Redraw the compact board, the running agents with elapsed time, recent events."""
        if self.mission is None or (not force and time.monotonic() - self.last_draw < 0.5):
            return
        self.last_draw = time.monotonic()
        from kitty.core.clock import humanize_duration
        from kitty.core.render import board_text
        from kitty.output import terminal_width, use_colour
        from kitty.services.board import status_view

        self.mission.refresh()
        view = status_view(self.mission)
        now = time.monotonic()
        running = [
            f"{wp} {role} by {agent} {humanize_duration(now - t0)}"
            for wp, (role, agent, t0) in sorted(self.running.items())
        ]
        sys.stdout.write("\x1b[H\x1b[2J")  # kitty's own: home, clear
        echo(
            board_text(view, terminal_width(), use_colour())
            + printable("running: " + (" | ".join(running) or "-") + "\n" + "\n".join(self.lines)),
            styled=True,  # the board's colours; its data is escaped (core.render.paint)
        )


def describe(event: dict[str, Any]) -> str | None:
    kind = event["event"]
    if kind == "start":
        return (
            f"sprint {event['run']} on {event['mission']}: implementers "
            f"{', '.join(event['implementers'])}, reviewers {', '.join(event['reviewers'])}, "
            f"parallel {event['parallel']}; keep-awake: {event['keep_awake']}"
        )
    if kind == "dispatch":
        return (
            f"→ {event['wp_id']} {event['role']} by {event['agent']} (cycle {event['cycle']}, "
            + (f"pid {event['pid']}" if event["pid"] is not None else "not started")
            + f")  log: {event['log']}"
        )
    if kind == "finished":
        mark = "✓" if event["ok"] else "✗"
        how = event["how"]
        if event.get("verdict") == "changes_requested":  # the reviewer's verdict, not its exit
            mark, how = "✗", f"rejected, review cycle {event.get('cycle')} ({how})"
        elif event.get("verdict") == "approved":
            how = f"approved ({how})"
        return (
            f"{mark} {event['wp_id']} {event['role']} by {event['agent']}: {how} "
            f"after {event['seconds']}s → {event['lane']}"
        )
    if kind in ("halt", "manual"):
        return str(event["message"])
    if kind == "retry":
        return f"↻ retrying {event['wp_id']} with {event['agent']} (attempt {event['attempt']})"
    if kind == "blocked":
        return f"■ {event['wp_id']} blocked: {event['reason']}"
    if kind == "arbiter":
        return f"⚖ {event['wp_id']}: {event['note']}"
    if kind == "takeover":
        return f"⟲ {event['agent']} takes over the review of {event['wp_id']}: {event['message']}"
    if kind == "adopt":
        return f"⟲ adopting {event['wp_id']} ({event['role']} by {event['agent']}): {event['how']}"
    if kind == "versions":
        return "\n".join(version_lines(event["agents"]))
    if kind in ("notice", "error"):
        return f"{kind}: {event.get('wp_id', '')} {event['message']}".replace("  ", " ")
    if kind == "accepted":
        return f"accepted {event['mission']}"
    if kind == "merged":
        return f"merged {event['mission']} ({event['commit'][:10]})"
    if kind == "end":
        return summary_text(event)
    if kind == "dry_run":
        return dry_run_text(event)
    return None


def version_lines(rows: list[dict[str, Any]]) -> list[str]:
    """`agent claude: claude 2.1.332 (Claude Code) (tested 2.1.332 up to 2.2)`, and a
    `warning:` line under each CLI outside that range or whose version is unreadable."""
    lines = []
    for row in rows:
        shown = row["version"] or ("version unknown" if row["found"] else "not found on PATH")
        tested = f" (tested {row['tested']})" if row["tested"] else ""
        lines.append(f"agent {row['agent']}: {row['executable']} {shown}{tested}")
        if row["warning"]:
            lines.append(f"warning: {row['warning']}")
    return lines


def summary_text(event: dict[str, Any]) -> str:
    lines = [
        f"sprint {'finished' if event['ok'] else 'stopped'}: {event['reason']}",
        "",
        f"{'WP':<6} {'lane':<12} {'cycles':>6}  {'implementers':<18} {'reviewers':<18} "
        f"{'agent time':>10}",
    ]
    from kitty.core.clock import humanize_duration

    for row in event["summary"]:
        lines.append(
            f"{row['wp_id']:<6} {row['lane'] or '-':<12} {row['review_cycles']:>6}  "
            f"{','.join(row['implementers']) or '-':<18} "
            f"{','.join(row['reviewers']) or '-':<18} "
            f"{humanize_duration(row['agent_seconds']):>10}"
        )
    for problem in event.get("problems", []):
        lines.append(f"problem: {problem}")
    lines.append(f"logs: {event['logs']}")
    return "\n".join(lines)


def dry_run_text(event: dict[str, Any]) -> str:
    import shlex

    lines = [f"dry run for {event['mission']} (parallel {event['parallel']}); nothing was run"]
    for title, items in (("first wave", event["first_wave"]), ("then", event["queue"])):
        if items:
            lines.append(f"{title}:")
        for item in items:
            lines.append(
                f"  {item['wp_id']} {item['role']} by {item['agent']}"
                + ("" if item["available"] else "  (CLI not on PATH)")
            )
            lines.append(f"    {item['claim']}")
            lines.append(f"    {shlex.join(item['command'])}"[:400])
    for item in event["arbiter"]:
        lines.append(f"  {item['wp_id']} needs the arbiter (policy: {item['policy']})")
    lines += [f"problem: {problem}" for problem in event.get("problems", [])]
    return "\n".join(lines)


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
    """
    from kitty.services.sprint import Options, Sprint

    opts = Options(
        split_csv(implementers),
        split_csv(reviewers),
        parallel,
        timeout,
        max_cycles,
        do_merge,
        not no_caffeinate,
        dry_run,
        retries,
        arbiter=arbiter,
        review_panel=split_csv(review_panel) or None,
        remote=remote,
    )
    view = SprintView(as_json, sys.stdout.isatty())
    if remote:
        from kitty.services.teamsprint import RemoteSprint

        runner: Sprint = RemoteSprint(cwd(ctx), mission, opts, view)
    else:
        runner = Sprint(cwd(ctx), mission, opts, view)
    if view.live:
        view.mission = open_mission(ctx, runner.slug)
    result = runner.run()
    return 0 if dry_run or result.get("ok") else 1


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

    from kitty.adapters.awake import prevent_idle_sleep
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
    from kitty.adapters.agents import backend_for, configured
    from kitty.adapters.layout import find_project
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
