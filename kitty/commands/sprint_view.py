"""What a sprint shows: its events as JSON lines, a live board on a TTY, or plain lines."""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import click

from kitty import SCHEMA
from kitty.core.printable import printable
from kitty.output import echo


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
        from kitty.output import terminal_width, use_colour
        from kitty.workflow.board import status_view
        from kitty.workflow.rules.render import board_text

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
            f"→ {event['wp_id']} {event['role']} by {event['agent']}"
            + (f" on {event['model']}" if event.get("model") else "")
            + f" (cycle {event['cycle']}, "
            + (f"pid {event['pid']}" if event["pid"] is not None else "not started")
            + f")  log: {event['log']}"
        )
    if kind == "finished":
        return finished_text(event)
    if kind in ("halt", "manual"):
        return str(event["message"])
    if kind == "retry":
        return f"↻ retrying {event['wp_id']} with {event['agent']} (attempt {event['attempt']})"
    if kind in ("backoff", "budget"):
        return spending_text(event)
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


def finished_text(event: dict[str, Any]) -> str:
    """`✓ WP01 implement by claude: exit 0 after 3.1s → for_review [1234 tok, $0.0123]`."""
    from kitty.sprint.rules.spend import usage_text

    mark = "✓" if event["ok"] else "✗"
    how = event["how"]
    if event.get("verdict") == "changes_requested":  # the reviewer's verdict, not its exit
        mark, how = "✗", f"rejected, review cycle {event.get('cycle')} ({how})"
    elif event.get("verdict") == "approved":
        how = f"approved ({how})"
    if event.get("reason"):  # an implement run that left nothing committed (issue 41)
        mark, how = "✗", f"{how}; {event['reason']}"
    if event.get("verify_refused"):
        how += "; VERIFICATION REFUSED: " + ", ".join(event["verify_refused"])
    spent = usage_text(event.get("usage") or {})
    return (
        f"{mark} {event['wp_id']} {event['role']} by {event['agent']}: {how} "
        f"after {event['seconds']}s → {event['lane']}" + (f" [{spent}]" if spent != "-" else "")
    )


def spending_text(event: dict[str, Any]) -> str:
    """A back-off after a rate limit, or the budget reached."""
    if event["event"] == "budget":
        return f"$ {event['message']}: no new agent run starts"
    return (
        f"⏸ {event['wp_id']} {event['role']} by {event['agent']}: {event['reason']}; "
        f"re-running in {event['seconds']:g}s"
    )


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
    from kitty.core.clock import humanize_duration
    from kitty.sprint.rules.spend import usage_text

    lines = [
        f"sprint {'finished' if event['ok'] else 'stopped'}: {event['reason']}",
        "",
        f"{'WP':<6} {'lane':<12} {'cycles':>6}  {'implementers':<18} {'reviewers':<18} "
        f"{'agent time':>10} {'denied':>6}  spent",
    ]
    for row in event["summary"]:
        flag = "  VERIFICATION REFUSED" if row.get("verify_refused") else ""
        lines.append(
            f"{row['wp_id']:<6} {row['lane'] or '-':<12} {row['review_cycles']:>6}  "
            f"{','.join(row['implementers']) or '-':<18} "
            f"{','.join(row['reviewers']) or '-':<18} "
            f"{humanize_duration(row['agent_seconds']):>10} "
            f"{len(row.get('denials', [])):>6}  {usage_text(row.get('usage') or {})}{flag}"
        )
    for row in event["summary"]:
        if row.get("failed_run"):
            lines.append(f"{row['wp_id']}: its last implement run {row['failed_run']}")
        lines += run_lines(row)
    lines += usage_lines(event.get("usage") or {})
    models = {k: v for k, v in (event.get("models") or {}).items() if v}
    if models:
        lines.append("models: " + ", ".join(f"{k} {v}" for k, v in sorted(models.items())))
    for problem in event.get("problems", []):
        lines.append(f"problem: {problem}")
    if event.get("unverified"):
        lines.append(f"warning: {event['unverified']}")
    lines.append(f"logs: {event['logs']}")
    return "\n".join(lines)


def run_lines(row: dict[str, Any]) -> list[str]:
    """Under the end table: each refused call, a refused verification command, and each
    agent error in the agent's words."""
    wp = row["wp_id"]
    lines = [f"denied: {wp} {call}" for call in row.get("denials", [])]
    if row.get("verify_refused"):
        calls = ", ".join(row["verify_refused"])
        lines.append(f"{wp}: its implementer was refused a verification command: {calls}")
    for error in row.get("errors", []):
        lines.append(
            f"error: {wp} {error['role']} by {error['agent']} ({error['kind']}): {error['error']}"
        )
    return lines


def usage_lines(usage: dict[str, Any]) -> list[str]:
    """`spent: 1234 tok, $0.0123, 3 turns`, then per role and per agent."""
    from kitty.sprint.rules.spend import usage_text

    if not usage:
        return []
    lines = [f"spent: {usage_text(usage.get('total') or {})}"]
    for group in ("by_role", "by_agent"):
        for name, spent in sorted((usage.get(group) or {}).items()):
            lines.append(f"  {name}: {usage_text(spent)}")
    return lines + [f"  ({note})" for note in usage.get("not_reported", [])]


def dry_run_text(event: dict[str, Any]) -> str:
    import shlex

    lines = [f"dry run for {event['mission']} (parallel {event['parallel']}); nothing was run"]
    for title, items in (("first wave", event["first_wave"]), ("then", event["queue"])):
        if items:
            lines.append(f"{title}:")
        for item in items:
            lines.append(
                f"  {item['wp_id']} {item['role']} by {item['agent']}"
                + (f" on {item['model']}" if item.get("model") else "")
                + ("" if item["available"] else "  (CLI not on PATH)")
            )
            lines.append(f"    {item['claim']}")
            env = "".join(f"{k}={shlex.quote(v)} " for k, v in item.get("env", {}).items())
            lines.append(f"    {env}{shlex.join(item['command'])}"[: 400 + len(env)])
    for item in event["arbiter"]:
        lines.append(f"  {item['wp_id']} needs the arbiter (policy: {item['policy']})")
    guess = event.get("estimate")
    if guess:
        cost = f"${guess['cost_usd']:.4f}, " if guess.get("cost_usd") is not None else ""
        lines.append(
            f"estimate: {cost}{guess['tokens']} tokens for {guess['planned_runs']} more runs "
            f"(the mean of this mission's {guess['past_runs']} past runs)"
        )
    lines += [f"problem: {problem}" for problem in event.get("problems", [])]
    return "\n".join(lines)
