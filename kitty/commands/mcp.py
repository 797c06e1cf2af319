"""`kitty mcp`: the Model Context Protocol over stdio (kitty/mcp/server.py).

The plain spelling `kitty [-C DIR] mcp` is started by kitty/fastpath.py without click;
this command is the same server for every other spelling (and for `--help`).
"""

from __future__ import annotations

import click

from kitty.commands.base import cwd


@click.command("mcp")
@click.pass_context
def mcp(ctx: click.Context) -> int:
    """Serve kitty's tools over the Model Context Protocol (stdio).

    Execution: next (with claim), status, move, mark_status, review_submit,
    implement and review (returning the prompt and workspace). Planning:
    wp_add, wp_edit, wp_depend, wp_split, wp_show, wp_search, finalize. Each
    returns the JSON of the matching --json command; errors carry kitty's code
    and hint. Needs no extra package: it answers `initialize` in about 0.2 s.

    \b
    Example (an MCP client's server entry):
      {"command": "kitty", "args": ["-C", "/path/to/repo", "mcp"]}
    """
    from kitty import hot

    return hot.mcp(str(cwd(ctx)))


COMMANDS = [mcp]
