"""`kitty mcp`: the Model Context Protocol over stdio (needs `pip install 'kitty-kanban[mcp]'`).

No `from __future__ import annotations` here: the SDK reads the tools' signatures, whose
types (CallToolResult) are imported inside build_server, so they must be real objects.
"""

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import click

from kitty.commands.base import cwd

INSTRUCTIONS = (
    "kitty tracks this repository's work packages (WPs). Loop: call `next` with your agent "
    "name and claim=true; do what `action` says (implement/review return your prompt and "
    "workspace); ask `next` again until the action is done or blocked. Every result is the "
    "JSON of the matching `kitty … --json` command; an error's text is kitty's error object "
    '{"schema": 1, "error": {"code", "message", "hint"}}: follow its hint.'
)


def crash_log(exc: BaseException) -> str:
    import os
    import tempfile
    import traceback

    from kitty import __version__

    fd, path = tempfile.mkstemp(prefix="kitty-crash-", suffix=".log")
    with os.fdopen(fd, "w") as handle:
        handle.write(f"kitty {__version__} mcp\n")
        traceback.print_exception(exc, file=handle)
    return path


def build_server(root: Path) -> Any:
    """An MCPServer whose tools call kitty.services.mcp_tools in `root`."""
    from mcp.server.mcpserver import MCPServer
    from mcp.types import CallToolResult, TextContent

    from kitty import SCHEMA, __version__
    from kitty.errors import KittyError
    from kitty.services import mcp_tools as tools

    server = MCPServer(name="kitty", version=__version__, instructions=INSTRUCTIONS)

    def answer(doc: dict[str, Any], is_error: bool = False) -> CallToolResult:
        """The document as the text the CLI prints with --json, and as structured content."""
        text = json.dumps(doc, sort_keys=True, ensure_ascii=False)
        return CallToolResult(
            content=[TextContent(type="text", text=text)],
            structured_content=doc,
            is_error=is_error,
        )

    def call(func: Callable[..., dict[str, Any]], **kwargs: Any) -> CallToolResult:
        try:
            return answer(func(root, **kwargs))
        except KittyError as exc:
            problem = exc.to_json()
        except Exception as exc:  # a bug: logged like the CLI's, reported as `internal`
            problem = {
                "code": "internal",
                "message": f"unexpected internal error (details in {crash_log(exc)})",
                "hint": "please report it with that log file",
            }
        return answer({"schema": SCHEMA, "error": problem}, is_error=True)

    @server.tool(name="next")
    def next_(agent: str, mission: str | None = None, claim: bool = False) -> CallToolResult:
        """The agent's exact next step (implement, review, fix, arbiter, accept, merge, done,
        wait, blocked) with the commands to run. claim=true atomically claims the WP.
        Same JSON as `kitty next --json`."""
        return call(tools.next_step, agent=agent, mission=mission, claim=claim)

    @server.tool(name="status")
    def status(mission: str | None = None) -> CallToolResult:
        """The board: every WP with its lane, agent, review cycles and what it waits for.
        Same JSON as `kitty status --json`."""
        return call(tools.status, mission=mission)

    @server.tool(name="move")
    def move(
        wp_id: str,
        to: str,
        agent: str | None = None,
        note: str | None = None,
        mission: str | None = None,
        force: bool = False,
        review_feedback_file: str | None = None,
    ) -> CallToolResult:
        """Move a WP to another lane (planned, claimed, in_progress, for_review, in_review,
        approved, blocked, canceled), checked against the transition table. Rejecting a WP
        in review needs review_feedback_file. Same JSON as `kitty move --json`."""
        return call(
            tools.move,
            wp_id=wp_id,
            to=to,
            agent=agent,
            note=note,
            mission=mission,
            force=force,
            review_feedback_file=review_feedback_file,
        )

    @server.tool(name="mark_status")
    def mark_status(
        task_ids: list[str],
        status: Literal["done", "planned", "in_progress"],
        agent: str | None = None,
        mission: str | None = None,
        wp_id: str | None = None,
    ) -> CallToolResult:
        """Mark subtasks (T001, T002, …) done, planned or in_progress.
        Same JSON as `kitty agent tasks mark-status --json`."""
        return call(
            tools.mark_status,
            task_ids=task_ids,
            status=status,
            agent=agent,
            mission=mission,
            wp_id=wp_id,
        )

    @server.tool(name="review_submit")
    def review_submit(
        wp_id: str,
        findings_files: list[str],
        agent: str | None = None,
        mission: str | None = None,
        format: Literal["kitty", "specdev", "persona", "addon"] | None = None,
    ) -> CallToolResult:
        """Record a review verdict from findings files (approve, or reject with a review
        cycle). Same JSON as `kitty review submit --json`."""
        return call(
            tools.review_submit,
            wp_id=wp_id,
            findings_files=findings_files,
            agent=agent,
            mission=mission,
            format=format,
        )

    @server.tool(name="implement")
    def implement(
        wp_id: str | None = None, agent: str | None = None, mission: str | None = None
    ) -> CallToolResult:
        """Claim a WP (or the one `next` would choose), prepare its lane worktree and return
        the workspace and the implementation prompt (prompt_text). Same JSON as
        `kitty agent action implement --json`, plus prompt_text."""
        return call(tools.implement, wp_id=wp_id, agent=agent, mission=mission)

    @server.tool(name="review")
    def review(
        wp_id: str | None = None, agent: str | None = None, mission: str | None = None
    ) -> CallToolResult:
        """Claim a WP in for_review for review; return the workspace and the review prompt
        (prompt_text). Same JSON as `kitty agent action review --json`, plus prompt_text."""
        return call(tools.review, wp_id=wp_id, agent=agent, mission=mission)

    return server


@click.command("mcp")
@click.pass_context
def mcp(ctx: click.Context) -> int:
    """Serve kitty's tools over the Model Context Protocol (stdio).

    Tools: next (with claim), status, move, mark_status, review_submit,
    implement and review (returning the prompt and workspace). Each returns
    the JSON of the matching --json command; errors carry kitty's code and
    hint. Needs the optional extra: pip install 'kitty-kanban[mcp]'.

    \b
    Example (an MCP client's server entry):
      {"command": "kitty", "args": ["-C", "/path/to/repo", "mcp"]}
    """
    from kitty.errors import UsageError

    try:
        import mcp.server.mcpserver  # noqa: F401
    except ImportError as exc:
        raise UsageError(
            "`kitty mcp` needs the MCP SDK, which is not installed",
            "pip install 'kitty-kanban[mcp]'",
        ) from exc
    from kitty.adapters.layout import find_project

    root = cwd(ctx)
    find_project(root)  # fail now, in plain words, rather than on the first tool call
    build_server(root).run("stdio")
    return 0


COMMANDS = [mcp]
