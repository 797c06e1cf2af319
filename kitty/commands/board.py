"""`kitty board`: the kanban in a terminal, as one HTML file, or live in a browser."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from kitty.commands.base import cwd, json_option, mission_option, open_mission
from kitty.output import emit, terminal_width, use_colour, warn


def _serve_option(
    name: str, kind: Any, default: object, text: str
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """An option that applies only with --serve (its help says so), with its default shown."""
    return click.option(
        name, type=kind, default=default, show_default=True, help=f"With --serve: {text}"
    )


@click.command("board")
@mission_option
@click.option(
    "--html",
    "html_file",
    metavar="FILE",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the board, graph and charts as one self-contained HTML file ('-': stdout).",
)
@click.option(
    "--serve", is_flag=True, help="Serve a live web board until ^C (read-only unless --edit)."
)
@_serve_option("--port", click.IntRange(0, 65535), 8765, "the port (0 picks a free one).")
@_serve_option(
    "--host", None, "127.0.0.1", "the address to listen on (loopback unless --allow-remote)."
)
@click.option(
    "--allow-remote",
    is_flag=True,
    help="With --serve: allow a non-loopback --host (everyone who reaches it can read the board).",
)
@_serve_option(
    "--max-connections",
    click.IntRange(1, 10000),
    128,
    "connections served at once (event streams have their own cap of 128); more get a 503.",
)
@_serve_option(
    "--idle-timeout",
    click.FloatRange(0.1, 3600),
    10.0,
    "seconds a connection may stay silent before its request arrives.",
)
@click.option(
    "--edit",
    is_flag=True,
    help="With --serve: allow moving cards and adding WPs from the page (loopback only).",
)
@json_option
@click.pass_context
def board(
    ctx: click.Context,
    mission: str | None,
    html_file: Path | None,
    serve: bool,
    port: int,
    host: str,
    allow_remote: bool,
    max_connections: int,
    idle_timeout: float,
    edit: bool,
    as_json: bool,
) -> int:
    """Show the board: in the terminal, as an HTML file, or served live. Reads only
    (unless --serve --edit).

    Without options this is `kitty status`. --html writes one offline file (inline
    CSS, JS and SVG: kanban, WP details, dependency graph, cumulative flow, cycle
    times). --serve runs a local web server whose page updates within a second or
    two of any change to the mission's log, from any process or worktree. With
    --edit the page can move a card and add a WP (through the same checks and lock
    as `kitty move` and `kitty wp add`; loopback only, each request carrying the
    server's random token from its own page).

    \b
    Examples:
      kitty board
      kitty board --html board.html
      kitty board --serve                      # http://127.0.0.1:8765/
      kitty board --serve --port 0 --mission checkout
      kitty board --serve --edit
    """
    from kitty.errors import UsageError

    if html_file is not None and serve:
        raise UsageError("--html and --serve do not go together", "run one, then the other")
    served_only = (port != 8765, host != "127.0.0.1", allow_remote, edit)
    if not serve and (any(served_only) or max_connections != 128 or idle_timeout != 10.0):
        raise UsageError(
            "--port, --host, --allow-remote, --max-connections, --idle-timeout and --edit "
            "only apply to --serve",
            "add --serve",
        )
    if serve:
        return _serve(ctx, mission, host, port, allow_remote, max_connections, idle_timeout, edit)
    from kitty.adapters.eventlog import now_us

    if html_file is not None:
        return _html(ctx, mission, html_file, as_json)
    from kitty.workflow.board import status_view
    from kitty.workflow.rules.render import board_text

    view = status_view(open_mission(ctx, mission), now_us())
    warn(view["warnings"])
    colour = use_colour()
    emit(view, "" if as_json else board_text(view, terminal_width(), colour), as_json, colour)
    return 0


def _html(ctx: click.Context, mission: str | None, html_file: Path, as_json: bool) -> int:
    """--html: the board, graph and charts as one self-contained file (or stdout)."""
    from kitty.adapters.eventlog import now_us
    from kitty.adapters.files import atomic_write
    from kitty.core.printable import utf8
    from kitty.web.board import board_model, render_page

    opened = open_mission(ctx, mission)
    model = board_model(opened, now_us())
    warn(model["warnings"])
    page = render_page(model, live=False)
    if str(html_file) == "-":
        sys.stdout.flush()
        sys.stdout.buffer.write(utf8(page))
        sys.stdout.flush()
        return 0
    target = html_file if html_file.is_absolute() else cwd(ctx) / html_file
    atomic_write(target, page)
    result = {
        "mission": opened.slug,
        "html": str(target),
        "bytes": len(utf8(page)),
        "work_packages": len(model["work_packages"]),
    }
    emit(
        result,
        f"wrote {target} ({result['work_packages']} WPs, {result['bytes']} bytes)",
        as_json,
    )
    return 0


def _serve(
    ctx: click.Context,
    mission: str | None,
    host: str,
    port: int,
    allow_remote: bool,
    max_connections: int,
    idle_timeout: float,
    edit: bool,
) -> int:
    from kitty.web.serve import is_loopback, make_server, serve

    server = make_server(
        cwd(ctx),
        mission,
        host,
        port,
        allow_remote,
        max_connections=max_connections,
        idle_timeout=idle_timeout,
        edit=edit,
    )
    if not is_loopback(host):
        warn(
            [
                f"serving on {host}, which is not loopback: anyone who can reach it can read "
                "every mission in this repository (no authentication, no TLS)"
            ]
        )

    def ready(url: str) -> None:
        slug = server.hub.default_mission
        mode = "edits allowed from this page" if edit else "read-only"
        from kitty.core.printable import printable

        click.echo(printable(f"kitty board: {url}?mission={slug}  ({mode}, live; ^C stops)"))
        sys.stdout.flush()

    serve(server, ready)
    click.echo("kitty board: stopped", err=True)
    return 0


COMMANDS = [board]
