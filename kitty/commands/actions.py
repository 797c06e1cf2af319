"""agent action implement/review, safe-commit, accept, verify, merge."""

from __future__ import annotations

from typing import Any

import click

from kitty.commands.base import agent_option, cwd, json_option, mission_option, open_mission
from kitty.output import emit


def _workspace_text(result: dict[str, Any], role: str) -> str:
    lines = [f"{role} {result['wp_id']} ({result['mission']}) as {result['agent']}"]
    if result.get("cycle"):
        lines.append(
            f"This is cycle {result['cycle']}"
            + (
                " (fix mode: the prompt starts with the review feedback)"
                if result.get("fix_mode")
                else ""
            )
        )
    if result.get("branch"):
        lines.append(f"Branch: {result['branch']}")
    if result.get("merged_lanes"):
        lines.append(f"Merged dependency lanes: {', '.join(result['merged_lanes'])}")
    lines += [f"Workspace: cd {result['workspace']}", "Prompt:", f"cat {result['prompt']}"]
    return "\n".join(lines)


@click.command("implement")
@click.argument("wp_id", metavar="[WP]", required=False)
@mission_option
@agent_option
@click.option("--profile", metavar="PROFILE", help="Agent profile that runs it (recorded).")
@click.option("--model", metavar="MODEL", help="Model that runs it (needs --invocation-id).")
@click.option("--invocation-id", metavar="ID", help="Dispatch id correlating --model.")
@json_option
@click.pass_context
def implement(
    ctx: click.Context,
    wp_id: str | None,
    mission: str | None,
    agent: str | None,
    profile: str | None,
    model: str | None,
    invocation_id: str | None,
    as_json: bool,
) -> int:
    """Claim a WP, prepare its lane worktree and write the implementation prompt.

    Without WP, takes the WP `kitty next` would choose for the agent. Prints
    `Workspace: cd <path>` and `cat <prompt>` lines for scripts to extract.

    \b
    Example:
      kitty agent action implement WP01 --mission checkout --agent claude --profile python-pedro
    """
    from kitty.workflow.actions import implement as run_implement

    if model and not invocation_id:
        raise click.UsageError("--model needs --invocation-id")
    result = run_implement(open_mission(ctx, mission), wp_id, agent, profile, model, invocation_id)
    emit(result, _workspace_text(result, "Implementing"), as_json)
    return 0


@click.command("review")
@click.argument("wp_id", metavar="[WP]", required=False)
@mission_option
@agent_option
@click.option("--profile", metavar="PROFILE", help="Reviewer profile (recorded).")
@click.option(
    "--allow-self-review",
    is_flag=True,
    help="Let the WP's implementer review it (not recommended).",
)
@click.option(
    "--takeover",
    is_flag=True,
    help="Take over a WP in_review by another reviewer (needs --note; recorded).",
)
@click.option("--note", metavar="TEXT", help="Why you take the review over (with --takeover).")
@json_option
@click.pass_context
def review(
    ctx: click.Context,
    wp_id: str | None,
    mission: str | None,
    agent: str | None,
    profile: str | None,
    allow_self_review: bool,
    takeover: bool,
    note: str | None,
    as_json: bool,
) -> int:
    """Claim a WP in for_review for review and write the review prompt.

    A WP in_review by another reviewer is taken over (recorded, forced, with the
    reason) when that reviewer's process is gone, or with --takeover --note.

    \b
    Examples:
      kitty agent action review WP01 --mission checkout --agent codex
      kitty agent action review WP01 --agent gemini --takeover --note "codex hung"
    """
    from kitty.workflow.actions import review as run_review

    result = run_review(
        open_mission(ctx, mission), wp_id, agent, profile, allow_self_review, takeover, note
    )
    emit(result, _workspace_text(result, "Reviewing"), as_json)
    return 0


@click.command("safe-commit")
@click.argument("paths", nargs=-1, metavar="PATH...")
@click.option("-m", "--message", required=True, help="Commit message.")
@click.option(
    "--force", is_flag=True, help="Commit here files a WP owns whose lane worktree exists."
)
@json_option
@click.pass_context
def safe_commit(
    ctx: click.Context, paths: tuple[str, ...], message: str, force: bool, as_json: bool
) -> int:
    """Commit exactly the listed paths of the current worktree, nothing else.

    Refuses paths outside the worktree, under .worktrees/, or unchanged, and
    (without --force) files a WP owns whose lane worktree exists elsewhere:
    those belong on the lane branch. Other staged changes stay staged and
    uncommitted.

    \b
    Example:
      kitty safe-commit src/cart.py tests/test_cart.py -m "feat(WP01): cart model"
    """
    from kitty.workflow.commits.safe import safe_commit as run_commit

    result = run_commit(cwd(ctx), list(paths), message, force)
    emit(
        result,
        f"committed {result['commit'][:10]} on {result['branch']}: " + ", ".join(result["paths"]),
        as_json,
    )
    return 0


@click.command("accept")
@mission_option
@agent_option
@json_option
@click.pass_context
def accept(ctx: click.Context, mission: str | None, agent: str | None, as_json: bool) -> int:
    """Check the mission is ready (listing every problem) and record its acceptance.

    \b
    Example:
      kitty accept --mission checkout
    """
    from kitty.workflow.merging.accept import accept as run_accept

    result = run_accept(open_mission(ctx, mission), agent)
    text = (
        f"{result['mission']} was already accepted at {result['accepted_at']}"
        if result["already"]
        else f"accepted {result['mission']} at {result['accepted_at']} by {result['accepted_by']}"
        f"\nnext: kitty merge --mission {result['mission']}"
    )
    emit(result, text, as_json)
    return 0


def _queue_text(result: dict[str, Any]) -> str:
    if result.get("aborted"):
        return f"merge queue aborted; {result['target']} untouched at {result['target_at'][:10]}"
    lines = []
    if result["merged"]:
        lines.append(
            f"merged {', '.join(result['done'])} into {result['target']} "
            f"({result['merge_commit'][:10]}): the test gate passed on that tree"
        )
    else:
        lines.append(f"nothing merged: {result['target']} is unchanged")
    for back in result["sent_back"]:
        with_ = f" merged with {', '.join(back['with'])}" if back.get("with") else ""
        lines.append(f"sent back to fix mode: {', '.join(back['wp_ids'])} ({back['why']}{with_})")
    for held in result["held"]:
        lines.append(f"waiting: {', '.join(held['wp_ids'])} needs {', '.join(held['waits_for'])}")
    lines.append(f"gate output: {result['gate_output']}")
    return "\n".join(lines)


def _merge_text(result: dict[str, Any]) -> str:
    if result.get("verified"):
        return _queue_text(result)
    if result.get("removed_worktree"):
        return f"merge aborted; removed {result['removed_worktree']} (nothing was merged yet)"
    if result.get("aborted"):
        return f"merge aborted; {result['mission_branch']} reset to {result['reset_to'][:10]}"
    lines = []
    for step in result["steps"]:
        what = (
            f"{step['lane_id']} ({', '.join(step['wp_ids'])}) → mission branch"
            if step["kind"] == "lane"
            else f"{step['branch']} → {step['target']}"
        )
        conflicts = step.get("predicted_conflicts")
        lines.append(f"  {what}" + (f"  CONFLICTS: {', '.join(conflicts)}" if conflicts else ""))
    if result.get("dry_run"):
        head = "dry run: " + ("conflicts predicted" if result["conflicts"] else "merges cleanly")
        return "\n".join([head, *lines])
    return "\n".join(
        [
            f"merged {result['mission']} into {result['target']} ({result['merge_commit'][:10]})",
            *lines,
            f"done: {', '.join(result['done']) or '-'}",
        ]
    )


@click.command("merge")
@mission_option
@click.option("--dry-run", is_flag=True, help="Show the plan and predicted conflicts only.")
@click.option(
    "--strategy",
    type=click.Choice(["merge", "squash"]),
    default="merge",
    show_default=True,
    help="How the mission branch lands on the target.",
)
@click.option("--keep-worktrees", is_flag=True, help="Keep lane worktrees and branches.")
@click.option("--resume", is_flag=True, help="Continue after resolving a conflict.")
@click.option("--abort", is_flag=True, help="Give up a conflicted merge and go back.")
@click.option(
    "--no-verify",
    is_flag=True,
    help="Merge without the test gate (recorded on every merged WP as such).",
)
@json_option
@click.pass_context
def merge(
    ctx: click.Context,
    mission: str | None,
    dry_run: bool,
    strategy: str,
    keep_worktrees: bool,
    resume: bool,
    abort: bool,
    no_verify: bool,
    as_json: bool,
) -> int:
    """Merge every lane into the mission branch, then the mission into its target.

    Lanes merge with --no-ff in lane-graph order, in a separate worktree, so
    your checkout is never left mid-merge. Merged WPs move to done.

    With verify.* configured, the merge goes through the merge queue: the lanes
    merge into a temporary integration worktree, the gate runs there, and the
    target moves only to a tree whose gate passed. A lane that breaks it goes
    back to fix mode (named with the WPs it was merged with); the rest merge.
    After a kill, --resume continues and --abort leaves the target as it was.

    \b
    Examples:
      kitty merge --mission checkout --dry-run
      kitty merge --mission checkout
      kitty merge --mission checkout --resume
      kitty merge --mission checkout --no-verify
    """
    from kitty.workflow.gating.queue import merge as queued
    from kitty.workflow.merging.merge import merge as run_merge

    found = open_mission(ctx, mission)
    if dry_run:
        result = run_merge(found, dry=True, strategy=strategy)
    else:
        result = queued(
            found,
            strategy=strategy,
            keep_worktrees=keep_worktrees,
            resume=resume,
            abort=abort,
            no_verify=no_verify,
        )
    emit(result, _merge_text(result), as_json)
    return 1 if result.get("sent_back") else 0


def _verify_text(result: dict[str, Any]) -> str:
    from kitty.workflow.rules.gate import describe

    word = {"passed": "passed", "flaky": "passed (flaky)", "failed": "FAILED"}[result["result"]]
    lines = [f"{result['wp_id']}: tests {word} at {result['commit'][:10]} in {result['workspace']}"]
    lines += [f"  {describe(c)}" for c in result["commands"]]
    failed = [c for c in result["commands"] if not c["passed"]]
    if failed:
        lines += ["", failed[0].get("tail") or "", "", f"output: {failed[0]['output']}"]
    else:
        lines.append(f"output: {result['output']}")
    if result.get("left_behind"):
        lines.append(
            "warning: the commands left files in the worktree (ignore or remove them): "
            + ", ".join(result["left_behind"])
        )
    return "\n".join(lines)


@click.command("verify")
@click.argument("wp_id", metavar="WP")
@mission_option
@agent_option
@click.option(
    "--gate-timeout",
    type=click.IntRange(min=1),
    metavar="SECONDS",
    help="Seconds per command (default: gate.timeout in .kittify/config.yaml, else 900).",
)
@json_option
@click.pass_context
def verify(
    ctx: click.Context,
    wp_id: str,
    mission: str | None,
    agent: str | None,
    gate_timeout: int | None,
    as_json: bool,
) -> int:
    """Run the project's verification commands (verify.* in .kittify/config.yaml) in the
    WP's lane worktree, and record the result in the mission's log.

    Each command runs without a shell, with a timeout, and the gate stops at the first
    failure; a failing command is re-run once, and one that then passes is recorded as
    flaky. Exits 1 when the gate failed. `kitty sprint` runs the same gate after every
    implementer's run, before the WP may be reviewed.

    \b
    Example:
      kitty verify WP01 --mission checkout
    """
    from kitty.workflow.gating.gate import verify_wp

    found = open_mission(ctx, mission)
    result = verify_wp(found, found.resolve_wp(wp_id), found.actor(agent), timeout=gate_timeout)
    emit(result, _verify_text(result), as_json)
    return 0 if result["passed"] else 1


COMMANDS = [safe_commit, accept, verify, merge]
