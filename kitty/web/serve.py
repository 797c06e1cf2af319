"""`kitty board --serve`: a local web board, live through server-sent events.

Standard library only (`http.server.ThreadingHTTPServer`): the board needs a few
routes, one long-lived event stream per tab and no templates beyond one page, so a
framework would add start-up cost and a dependency for nothing.

Routes: `/` (the page, `?mission=SLUG`), `/api/board` (the same data as JSON),
`/events` (an SSE stream: a `diff` event when the log grew, else a `board` event,
whenever the mission's files change, seen by polling their stat every `POLL_S`; a
comment line every `PING_S` keeps the connection honest; every stream is fed by
one thread) and `/healthz`. Read-only unless started with `edit=True` (`--edit`):
then `POST /api/move` and `POST /api/wp` write through the CLI's services, for the
server's own page only (its token, its Origin, JSON).
"""

from __future__ import annotations

import contextlib
import secrets
import signal
import socket
import sys
import threading
from collections.abc import Callable
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

from kitty.adapters import layout
from kitty.errors import UsageError
from kitty.web.address import is_loopback
from kitty.web.handler import GONE, Handler
from kitty.web.hub import Hub
from kitty.web.streams import Streams

#: The parts: `web.address` (which hosts are this machine), `web.hub` (one live model
#: per mission), `web.streams` (the event streams, one thread), `web.handler` (the
#: requests and the edits); this module binds, limits connections and serves.
__all__ = ["BoardServer", "default_mission", "is_loopback", "make_server", "serve", "url_of"]

#: Connections being served at once (event streams apart); more get a 503.
MAX_CONNECTIONS = 128
#: Event streams open at once (a tab each), capped apart from the requests; more get a 503.
MAX_STREAMS = 128
#: Seconds a connection may stay silent while a request is expected (then it is closed).
IDLE_TIMEOUT_S = 10.0


def default_mission(root: Path, name: str | None) -> str:
    """The mission to open first: the one asked for, the only one, or the latest changed."""
    project = layout.find_project(root)
    if name is not None:
        return layout.resolve_mission(project, name)
    missions = layout.list_missions(project)
    if len(missions) <= 1:
        return layout.resolve_mission(project, None)

    def changed(slug: str) -> float:
        try:
            return (project.specs_dir / slug / "status.events.jsonl").stat().st_mtime
        except OSError:
            return 0.0

    return max(missions, key=lambda s: (changed(s), s))


class BoardServer(ThreadingHTTPServer):
    """One thread per request being served, at most `max_connections` of them, and at
    most `max_streams` event streams besides (they share one thread, and never lock out
    a request: 128 open tabs leave /healthz and /api/board served); silent sockets time
    out."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128  # the listen backlog (5 by default delays a burst by seconds)

    def __init__(
        self,
        address: tuple[str, int],
        hub: Hub,
        allow_remote: bool,
        quiet: bool,
        max_connections: int = MAX_CONNECTIONS,
        idle_timeout: float = IDLE_TIMEOUT_S,
        edit: bool = False,
        max_streams: int = MAX_STREAMS,
    ):
        #: With --edit: the secret the page sends with every edit (None: read-only).
        self.edit_token = secrets.token_urlsafe(32) if edit else None
        self.hub = hub
        self.allow_remote = allow_remote
        self.quiet = quiet
        self.max_connections = max_connections
        self.max_streams = max_streams
        self.idle_timeout = idle_timeout
        self.active = 0
        self.active_lock = threading.Lock()
        self.streams = Streams(hub)
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.active_lock:
            full = self.active >= self.max_connections
            if not full:
                self.active += 1
        if full:
            _refuse(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            with self.active_lock:
                self.active -= 1
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self.active_lock:
                self.active -= 1

    def shutdown_request(self, request: Any) -> None:
        if self.streams.owns(request):
            return  # the broadcaster writes to it now, and closes it
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client going away is normal: one line at most, never a traceback."""
        exc = sys.exc_info()[1]
        if isinstance(exc, GONE):
            if not self.quiet:
                host, port = client_address[:2]
                print(f"kitty board: {host}:{port} went away ({exc})", file=sys.stderr)
            return
        super().handle_error(request, client_address)

    def server_close(self) -> None:
        self.streams.close()
        super().server_close()


def _refuse(request: socket.socket) -> None:
    """Too many connections: a short 503 (best effort, never blocking), then close."""
    body = b"too many connections to the board; try again in a moment\n"
    head = (
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Retry-After: 2\r\nConnection: close\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    with contextlib.suppress(OSError):
        request.setblocking(False)
        request.send(head.encode() + body)
    with contextlib.suppress(OSError):
        request.close()


def make_server(
    root: Path,
    mission: str | None,
    host: str,
    port: int,
    allow_remote: bool,
    quiet: bool = True,
    max_connections: int = MAX_CONNECTIONS,
    idle_timeout: float = IDLE_TIMEOUT_S,
    edit: bool = False,
) -> BoardServer:
    """Bind the board (nothing served yet). Refuses a non-loopback host unless allowed,
    and edits anywhere but on loopback."""
    if edit and (allow_remote or not is_loopback(host)):
        raise UsageError(
            "--edit serves on a loopback address only",
            "drop --allow-remote and --host (edits from the page are for this machine)",
        )
    if not is_loopback(host) and not allow_remote:
        raise UsageError(
            f"refusing to serve the board on {host}, which is not a loopback address",
            "anyone who can reach that address could read every mission in this repository; "
            "add --allow-remote if that is what you want",
        )
    hub = Hub(root, default_mission(root, mission))
    hub.snapshot(hub.default_mission)  # fail early on an unreadable mission
    try:
        return BoardServer(
            (host.strip("[]"), port),
            hub,
            allow_remote,
            quiet,
            max_connections,
            idle_timeout,
            edit,
        )
    except OSError as exc:
        raise UsageError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}",
            "pick another port with --port N (0 picks a free one)",
        ) from None


def url_of(server: BoardServer) -> str:
    raw, port = server.server_address[:2]
    host = raw.decode() if isinstance(raw, bytes) else str(raw)
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


def serve(server: BoardServer, on_ready: Callable[[str], None]) -> None:
    """Serve until ^C or SIGTERM (or `server.shutdown()`); then end every event stream
    and close the socket."""
    restore: dict[signal.Signals, Any] = {}
    if threading.current_thread() is threading.main_thread():
        # A shell starts background jobs with SIGINT ignored; ^C and `kill` must still stop us.
        for sig in (signal.SIGINT, signal.SIGTERM):
            restore[sig] = signal.signal(sig, _interrupt)
    on_ready(url_of(server))
    try:
        server.serve_forever(poll_interval=0.25)
    except KeyboardInterrupt:
        pass
    finally:
        server.hub.stop.set()
        server.server_close()
        for sig, handler in restore.items():
            signal.signal(sig, handler)


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt
