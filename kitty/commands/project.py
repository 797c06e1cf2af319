"""init, doctor, rebuild."""

from __future__ import annotations

import click

from kitty.commands.base import cwd, json_option, mission_option, open_mission, split_csv
from kitty.output import emit


@click.command()
@click.option("--agents", metavar="LIST", help="Comma-separated agent tools, e.g. claude,codex.")
@click.option(
    "--no-agent-files", is_flag=True, help="Leave AGENTS.md, CLAUDE.md and GEMINI.md alone."
)
@click.option(
    "--initial-commit",
    is_flag=True,
    help="In a new repository, give the branch its first (empty) commit.",
)
@json_option
@click.pass_context
def init(
    ctx: click.Context,
    agents: str | None,
    no_agent_files: bool,
    initial_commit: bool,
    as_json: bool,
) -> int:
    """Make this git repository a kitty project (safe to run again).

    Writes .kittify/config.yaml (keeping keys already there), a .gitattributes
    rule so status logs merge with git's union driver, .gitignore entries for
    kitty's runtime files, and a short kitty section for coding agents in
    AGENTS.md (and CLAUDE.md / GEMINI.md when they exist), between
    `<!-- kitty:begin -->` and `<!-- kitty:end -->` lines: the rest of those
    files is never touched. `kitty prime` prints the full agent guide.

    When the config has no `verify:` yet and kitty recognises the project
    (pytest, ruff, package.json's test script, Cargo, go.mod, a Makefile
    `test:` target), it writes the verification commands agents may run,
    and says which (`verify` in --json).

    \b
    Example:
      kitty init --agents claude,codex
    """
    from kitty.adapters.git import INITIAL_COMMIT
    from kitty.project import verify_setup
    from kitty.project.setup import init_project

    result = init_project(
        cwd(ctx),
        split_csv(agents) if agents is not None else None,
        not no_agent_files,
        initial_commit,
    )
    changed = ", ".join(result["changed"]) or "nothing (already initialized)"
    unborn = result["unborn_branch"]
    emit(
        result,
        f"kitty project at {result['root']}\nchanged: {changed}\n"
        f"agents: {', '.join(result['agents']) or '(none)'}\n"
        + _auto_commit_line(bool(result["auto_commit"]))
        + (
            f"\nnote: branch {unborn} has no commit yet, and missions need one; run "
            f"`{INITIAL_COMMIT}` (or `kitty init --initial-commit`)"
            if unborn
            else ""
        )
        + "\n"
        + verify_setup.describe(result["verify"])
        + "\n"
        + _init_next(result),
        as_json,
    )
    return 0


def _auto_commit_line(auto: bool) -> str:
    """Which agents.auto_commit this project has, and why that is the default."""
    if auto:
        return (
            "auto_commit: true (kitty commits its own files after each change; "
            "agents.auto_commit in .kittify/config.yaml)"
        )
    return (
        "auto_commit: false (the default: kitty never commits on its own, so its files in "
        "kitty-specs/ wait for your next commit, and `kitty status` says so once;\n"
        "  for agents working unattended set `agents.auto_commit: true` in "
        ".kittify/config.yaml: each move is then committed)"
    )


def _init_next(result: dict[str, object]) -> str:
    """What `agents: (none)` means, and the command to run next."""
    from pathlib import Path

    from kitty.adapters import layout

    lines = []
    if not result["agents"]:
        lines.append(
            "  (none) is fine: a sprint names its agents, "
            "`kitty sprint --implementer AGENT --reviewer AGENT`\n"
            "  (two different agents); `kitty init --agents claude,codex` records the list\n"
            "  that `kitty next` and review panels choose reviewers from"
        )
    missions = layout.list_missions(layout.find_project(Path(str(result["root"]))))
    if len(missions) == 1:
        lines.append(f'next: kitty wp add --mission {missions[0]} --title "..." --objective "..."')
    elif missions:
        lines.append("next: kitty mission list")
    else:
        lines.append(
            "next: kitty demo                 (a whole sprint by simulated agents, temp repo)\n"
            "      kitty mission create NAME  (then: kitty wp add --title ... --objective ...)"
        )
    return "\n".join(lines)


@click.command()
@mission_option
@click.option(
    "--fix",
    is_flag=True,
    help="Repair what is safe: quarantine corrupt log lines, regenerate status.json.",
)
@json_option
@click.pass_context
def doctor(ctx: click.Context, mission: str | None, fix: bool, as_json: bool) -> int:
    """Check a mission's files, status log, config and links; exit 1 if anything is wrong.

    Without --fix it reads only and lists every problem as `file:line: what`
    with a hint; symlinks inside the repository are reported as `security:`.
    It warns (without failing) when the `kitty` first on PATH is not this
    program, e.g. the kitty terminal emulator, and when the config defines
    commands (agents.commands, review.test_command) you have not trusted yet.
    It prints each configured agent CLI's version (`X --version`) and warns when
    it is outside the range kitty was tested with, or cannot be read.
    With --fix it first moves corrupt or torn log lines to
    status.events.jsonl.quarantine (never deleting them; a marker line takes
    their place), rewrites the sprint's old `kitty_dispatch` records (Spec Kitty
    refuses a log holding one) as envelopes Spec Kitty skips, rewrites
    status.json, prints what it did, then checks again.

    \b
    Examples:
      kitty doctor --mission checkout
      kitty doctor --fix
    """
    from kitty.adapters.install import path_warnings
    from kitty.commands.sprint import version_lines
    from kitty.output import warn
    from kitty.project.doctor import agent_versions, diagnose, repair, trust_warnings

    opened = open_mission(ctx, mission)
    repaired = repair(opened) if fix else None
    if repaired is not None:
        opened = open_mission(ctx, opened.slug)
    result = diagnose(opened)
    from kitty.workflow.commits.pending import uncommitted_warning

    result["agents"] = agent_versions(opened)
    result["warnings"] = (
        path_warnings()
        + trust_warnings(opened)
        + uncommitted_warning(opened)
        + [row["warning"] for row in result["agents"] if row["warning"]]
    )
    warn(result["warnings"])
    lines = [line for line in version_lines(result["agents"]) if not line.startswith("warning:")]
    if repaired is not None:
        result["fixed"] = repaired["actions"]
        lines += [f"fixed: {action}" for action in repaired["actions"]]
        if repaired["refused"]:
            lines.append("not repaired: remove the symbolic links first (see below)")
    lines += result["problems"] or [f"{result['mission']}: no problems found"]
    emit(result, "\n".join(lines), as_json)
    return 1 if result["problems"] else 0


@click.command()
@mission_option
@json_option
@click.pass_context
def rebuild(ctx: click.Context, mission: str | None, as_json: bool) -> int:
    """Rewrite the derived status.json from the event log.

    \b
    Example:
      kitty rebuild --mission checkout
    """
    from kitty.project.doctor import rebuild_status

    result = rebuild_status(open_mission(ctx, mission))
    emit(result, f"rebuilt {result['path']} from {result['event_count']} events", as_json)
    return 0


COMMANDS = [init, doctor, rebuild]
