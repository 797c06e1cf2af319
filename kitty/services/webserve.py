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
import hmac
import ipaddress
import json
import secrets
import signal
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from kitty.adapters import eventlog, layout
from kitty.core.printable import printable
from kitty.errors import KittyError, UsageError
from kitty.services import webboard
from kitty.services.workspace import Mission

POLL_S = 0.1
PING_S = 15.0
FILES_EVERY_S = 2.0
#: Open connections at once (requests being served + event streams); more get a 503.
MAX_CONNECTIONS = 128
#: Seconds a connection may stay silent while a request is expected (then it is closed).
IDLE_TIMEOUT_S = 10.0
#: A stream whose unsent backlog exceeds this many bytes is dropped (it reconnects).
MAX_BACKLOG = 64 * 1024 * 1024
#: What a client going away looks like (normal: a tab closed, a laptop slept).
GONE = (ConnectionError, TimeoutError)
LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


def is_loopback(host: str) -> bool:
    """True when every address `host` names is a loopback address."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(i[4][0]).is_loopback for i in infos)


@dataclass
class Snapshot:
    """One version of a mission's board; and, when it grew from the previous version
    by appended log lines alone, what changed since (`diff`, from `diff_from`)."""

    version: str
    model: dict[str, Any]
    diff_from: str | None = None
    diff: dict[str, Any] | None = None

    @cached_property
    def payload(self) -> str:
        """page_json(model), built once (only when a client needs the whole board)."""
        return webboard.page_json(self.model)

    @cached_property
    def board_event(self) -> bytes:
        return f"event: board\nid: {self.version}\ndata: {self.payload}\n\n".encode()

    @cached_property
    def diff_event(self) -> bytes:
        data = webboard.page_json(self.diff or {})
        return f"event: diff\nid: {self.version}\ndata: {data}\n\n".encode()


@dataclass
class Hub:
    """One live model per mission, grown by the lines appended to its log (a diff per
    version), rebuilt only when another of its files changes."""

    root: Path
    default_mission: str
    lock: threading.Lock = field(default_factory=threading.Lock)
    cache: dict[str, Snapshot] = field(default_factory=dict)
    lives: dict[str, tuple[str, webboard.LiveModel]] = field(default_factory=dict)
    version_lock: threading.Lock = field(default_factory=threading.Lock)
    versions: dict[str, tuple[float, str, float, str, str]] = field(default_factory=dict)
    stop: threading.Event = field(default_factory=threading.Event)

    @cached_property
    def project(self) -> layout.Project:
        return layout.find_project(self.root)

    def resolve(self, name: str | None) -> str:
        return layout.resolve_mission(self.project, name or self.default_mission)

    def version(self, slug: str) -> str:
        """The mission's signature, computed at most once per poll for all clients.

        The log and the small files are stat'ed every poll; the WP files (one stat
        each, 1,000 on a big mission) only every `FILES_EVERY_S`.
        """
        return self._version(slug)[0]

    def _version(self, slug: str) -> tuple[str, str]:
        """(the version, the signature of every file but the log)."""
        now = time.monotonic()
        with self.version_lock:
            cached = self.versions.get(slug)
            if cached is not None and now - cached[0] < POLL_S * 0.8:
                return cached[1], cached[4]
            if cached is None or now - cached[2] >= FILES_EVERY_S:
                files, files_at = webboard.wp_files_signature(self.project, slug), now
            else:
                files, files_at = cached[3], cached[2]
            others = webboard.signature(self.project, slug, with_log=False, with_wp_files=False)
            log = webboard.signature(self.project, slug, with_log=True, with_wp_files=False)
            version = log + files
            self.versions[slug] = (now, version, files_at, files, others + files)
            return version, others + files

    def snapshot(self, slug: str) -> Snapshot:
        with self.lock:
            version, files = self._version(slug)
            cached = self.cache.get(slug)
            if cached is not None and cached.version == version:
                return cached
            now = eventlog.now_us()
            live = self.lives.get(slug)
            grown = None
            if live is not None and live[0] == files:
                try:
                    grown = live[1].grow(now)
                except BaseException:
                    del self.lives[slug]  # half grown: never grow it again
                    raise
            if grown is not None and cached is not None and live is not None:
                top, changed = grown
                model = dict(live[1].model, version=version, live=True)
                diff: dict[str, Any] = {"from": cached.version, "version": version}
                diff |= {"top": top, "work_packages": changed}
                snap = Snapshot(version, model, cached.version, diff)
            else:
                mission = Mission.open(self.root, slug)
                if live is not None and live[0] == files:
                    # Only the log changed: keep the parsed WP files.
                    old = live[1].mission.__dict__
                    mission.__dict__.update({k: old[k] for k in _FILE_READS if k in old})
                fresh = webboard.LiveModel(mission, now)
                self.lives[slug] = (files, fresh)
                snap = Snapshot(version, dict(fresh.model, version=version, live=True))
            self.cache[slug] = snap
            return snap

    def message(self, slug: str, seen: str) -> tuple[bytes, str]:
        """What a stream that shows version `seen` is sent next (the diff from it when
        there is one, else the whole board), and the version it then shows."""
        snap = self.snapshot(slug)
        if snap.diff is not None and seen == snap.diff_from:
            return snap.diff_event, snap.version
        return snap.board_event, snap.version


#: What a Mission reads from files other than the log (reused while their stats hold).
_FILE_READS = ("meta", "config", "specset", "lanes_doc", "wp_paths")


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


class Handler(BaseHTTPRequestHandler):
    server: BoardServer
    protocol_version = "HTTP/1.1"
    server_version = "kitty-board"
    sys_version = ""

    def setup(self) -> None:
        super().setup()
        # A socket that never sends (or finishes) a request is closed after this long.
        self.connection.settimeout(self.server.idle_timeout)

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.quiet:
            return
        super().log_message(format, *args)

    # -- helpers -----------------------------------------------------------------------
    def _headers(self, status: int, ctype: str, length: int | None, extra: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("X-Frame-Options", "DENY")
        for key, value in extra.items():
            self.send_header(key, value)
        if length is not None:
            self.send_header("Content-Length", str(length))
        self.end_headers()

    def _send(
        self, status: int, ctype: str, body: str, extra: dict[str, str] | None = None
    ) -> None:
        data = body.encode("utf-8")
        self._headers(status, ctype, len(data), extra or {})
        if self.command != "HEAD":
            self.wfile.write(data)

    def _error(self, status: int, message: str) -> None:
        self._send(status, "text/plain; charset=utf-8", message + "\n")

    def _host_ok(self) -> bool:
        """Refuse other Host names on a loopback server (DNS rebinding)."""
        if self.server.allow_remote:
            return True
        host = (self.headers.get("Host") or "").strip()
        if host.startswith("["):
            name = host[1 : host.find("]")] if "]" in host else host
        else:
            name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
        return name.lower() in LOOPBACK_NAMES or _is_ip_loopback(name)

    # -- routes --------------------------------------------------------------------------
    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        if not self._host_ok():
            self._error(HTTPStatus.FORBIDDEN, "forbidden host")
            return
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        names = query.get("mission")
        mission_name = names[0] if names else None
        routes: dict[str, Callable[[str | None, dict[str, list[str]]], None]] = {
            "/": self._page,
            "/index.html": self._page,
            "/api/board": self._api,
            "/events": self._events,
            "/healthz": lambda _m, _q: self._send(200, "text/plain; charset=utf-8", "ok\n"),
        }
        route = routes.get(url.path)
        if route is None:
            self._error(HTTPStatus.NOT_FOUND, "not found")
            return
        try:
            route(mission_name, query)
        except KittyError as exc:
            self._error(HTTPStatus.NOT_FOUND, f"{exc.message}\n{exc.hint or ''}".strip())
        except GONE:
            self.close_connection = True

    def do_POST(self) -> None:
        if self.server.edit_token is None:
            self._error(
                HTTPStatus.METHOD_NOT_ALLOWED,
                "the board is read-only (`kitty board --serve --edit` allows edits)",
            )
            return
        if not self._host_ok():
            self._error(HTTPStatus.FORBIDDEN, "forbidden host")
            return
        try:
            self._edit()
        except GONE:
            self.close_connection = True

    def do_PUT(self) -> None:
        self._error(HTTPStatus.METHOD_NOT_ALLOWED, "the board takes GET, and POST with --edit")

    do_DELETE = do_PATCH = do_PUT

    # -- edits (--edit) ----------------------------------------------------------------
    def _json(self, status: int, value: dict[str, Any]) -> None:
        self._send(status, "application/json; charset=utf-8", json.dumps(value) + "\n")

    def _refusal(self) -> str | None:
        """Why this POST is not the board's own page writing (None when it is).

        The page sends the server's random token in `X-Kitty-Token` (a header no other
        site can set on a request to us without a CORS preflight, which we never
        grant), its own origin in `Origin` (which a browser always sets on a POST),
        and JSON. Another local page, a form or a DNS-rebound name fails one of these.
        """
        token = self.headers.get("X-Kitty-Token") or ""
        expected = self.server.edit_token or ""
        if not hmac.compare_digest(token.encode(), expected.encode()):
            return "missing or wrong edit token"
        origin = self.headers.get("Origin")
        host = (self.headers.get("Host") or "").strip()
        if origin != f"http://{host}" or not host.endswith(f":{self.server.server_port}"):
            return f"foreign origin {origin!r}" if origin else "no Origin header"
        site = self.headers.get("Sec-Fetch-Site")
        if site not in (None, "same-origin"):
            return f"cross-site request ({site})"
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if ctype != "application/json":
            return f"content type {ctype or 'none'} (JSON only)"
        return None

    def _edit(self) -> None:
        url = urlsplit(self.path)
        routes: dict[str, Callable[[Mission, dict[str, Any]], dict[str, Any]]] = {
            "/api/move": _edit_move,
            "/api/wp": _edit_add,
        }
        route = routes.get(url.path)
        if route is None:
            self._error(HTTPStatus.NOT_FOUND, "not found")
            return
        why = self._refusal()
        if why is not None:
            # `why` repeats request headers: shown inert on the terminal running the server
            print(f"kitty board: refused an edit: {printable(why)}", file=sys.stderr)
            self.close_connection = True
            self._json(HTTPStatus.FORBIDDEN, {"code": "forbidden", "message": why, "hint": ""})
            return
        try:
            length = int(self.headers.get("Content-Length") or "0")
        except ValueError:
            length = -1
        if not 0 < length <= MAX_EDIT_BYTES:
            self.close_connection = True
            self._json(
                HTTPStatus.BAD_REQUEST,
                {"code": "usage", "message": f"a body of 1 to {MAX_EDIT_BYTES} bytes", "hint": ""},
            )
            return
        try:
            body = json.loads(self.rfile.read(length))
        except ValueError:
            body = None
        if not isinstance(body, dict):
            self._json(
                HTTPStatus.BAD_REQUEST,
                {"code": "usage", "message": "the body must be a JSON object", "hint": ""},
            )
            return
        hub = self.server.hub
        try:
            mission = Mission.open(hub.root, hub.resolve(_text(body, "mission", required=False)))
            result = route(mission, body)
        except KittyError as exc:
            status = _STATUS.get(exc.code, HTTPStatus.CONFLICT)
            self._json(status, exc.to_json())
            return
        self._json(HTTPStatus.OK, result)

    def _page(self, name: str | None, _query: dict[str, list[str]]) -> None:
        hub = self.server.hub
        snap = hub.snapshot(hub.resolve(name))
        model = snap.model
        if self.server.edit_token is not None:
            model = dict(model, edit={"token": self.server.edit_token})
        page = webboard.render_page(model, live=True)
        csp = webboard.content_security_policy(live=True)
        self._send(200, "text/html; charset=utf-8", page, {"Content-Security-Policy": csp})

    def _api(self, name: str | None, _query: dict[str, list[str]]) -> None:
        hub = self.server.hub
        snap = hub.snapshot(hub.resolve(name))
        self._send(200, "application/json; charset=utf-8", snap.payload)

    def _events(self, name: str | None, query: dict[str, list[str]]) -> None:
        """Answer with the stream's headers, then hand the socket to the server's one
        broadcaster thread: an open stream costs no thread."""
        hub = self.server.hub
        slug = hub.resolve(name)
        seen = (query.get("since") or [""])[0]
        self._headers(200, "text/event-stream; charset=utf-8", None, {"Connection": "keep-alive"})
        self.close_connection = True
        self.wfile.write(b"retry: 1000\n\n")
        self.wfile.flush()
        if self.command == "GET":
            self.server.streams.add(self.connection, slug, seen)


#: The largest edit request accepted (a move or a new WP is a few hundred bytes).
MAX_EDIT_BYTES = 64 * 1024
_STATUS = {
    "usage": HTTPStatus.BAD_REQUEST,
    "not_found": HTTPStatus.NOT_FOUND,
    "ambiguous": HTTPStatus.BAD_REQUEST,
    "lock_busy": HTTPStatus.SERVICE_UNAVAILABLE,
}


def _text(body: dict[str, Any], key: str, required: bool = True) -> str | None:
    value = body.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value.strip()):
        raise UsageError(f"`{key}` must be a non-empty string", f"send {{{key!r}: ...}}")
    return value


def _edit_move(mission: Mission, body: dict[str, Any]) -> dict[str, Any]:
    """A move from the page: `kitty move WP LANE [--agent A] [--note N]`, same checks."""
    from kitty.services.moves import move_task

    wp_id, lane = _text(body, "wp"), _text(body, "to")
    assert wp_id is not None and lane is not None
    return move_task(
        mission,
        wp_id,
        lane,
        agent=_text(body, "agent", required=False) or None,
        note=_text(body, "note", required=False) or None,
    )


def _edit_add(mission: Mission, body: dict[str, Any]) -> dict[str, Any]:
    """A new WP from the page: `kitty wp add --title T [--depends-on ...]`, same checks."""
    from kitty.services.missions import add_wp

    title = _text(body, "title")
    assert title is not None
    deps = body.get("depends_on") or []
    if not isinstance(deps, list) or not all(isinstance(d, str) for d in deps):
        raise UsageError("`depends_on` must be a list of WP ids", 'send ["WP01", "WP02"]')
    result = add_wp(mission, title, deps, [], 0)
    result["path"] = mission.project.rel(Path(result["path"]))
    return result


def _is_ip_loopback(name: str) -> bool:
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


class BoardServer(ThreadingHTTPServer):
    """One thread per request being served, at most `max_connections` connections open
    (event streams included; they share one thread); silent sockets time out."""

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
    ):
        #: With --edit: the secret the page sends with every edit (None: read-only).
        self.edit_token = secrets.token_urlsafe(32) if edit else None
        self.hub = hub
        self.allow_remote = allow_remote
        self.quiet = quiet
        self.max_connections = max_connections
        self.idle_timeout = idle_timeout
        self.active = 0
        self.active_lock = threading.Lock()
        self.streams = Streams(hub)
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.active_lock:
            full = self.active + len(self.streams) >= self.max_connections
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


def _hung_up(sock: socket.socket) -> bool:
    """True when the client closed its end (a stream's client never sends anything)."""
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


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


@dataclass
class Stream:
    sock: socket.socket
    slug: str
    seen: str
    backlog: bytearray = field(default_factory=bytearray)


class Streams:
    """Every open event stream, fed by one thread: it polls each watched mission's
    version every `POLL_S`, builds what changed once, and queues it on every stream
    (non-blocking writes; a stream that cannot keep up is dropped and reconnects)."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self.lock = threading.Lock()
        self.streams: dict[int, Stream] = {}
        self.thread: threading.Thread | None = None
        self.last_ping = time.monotonic()

    def __len__(self) -> int:
        return len(self.streams)

    def owns(self, sock: socket.socket) -> bool:
        return id(sock) in self.streams

    def add(self, sock: socket.socket, slug: str, seen: str) -> None:
        sock.setblocking(False)
        with self.lock:
            self.streams[id(sock)] = Stream(sock, slug, seen)
            if self.thread is None:
                self.thread = threading.Thread(target=self.run, name="kitty-board-streams")
                self.thread.daemon = True
                self.thread.start()

    def run(self) -> None:
        while not self.hub.stop.is_set():
            try:
                self.tick()
            except Exception:  # one bad tick must not end every stream  # pragma: no cover
                traceback.print_exc()
            self.hub.stop.wait(POLL_S)

    def tick(self) -> None:
        with self.lock:
            streams = list(self.streams.values())
        ping = time.monotonic() - self.last_ping >= PING_S
        if ping:
            self.last_ping = time.monotonic()
        for slug in {s.slug for s in streams}:
            mine = [s for s in streams if s.slug == slug]
            try:
                version = self.hub.version(slug)
            except KittyError:
                version = ""
            if all(s.seen == version for s in mine):
                continue
            for stream in mine:
                if stream.seen != version:
                    try:
                        message, stream.seen = self.hub.message(slug, stream.seen)
                    except KittyError:  # the mission is gone or unreadable: the page
                        self._drop(stream)  # reconnects and is told why
                        continue
                    stream.backlog += message
        for stream in streams:
            if stream.sock.fileno() < 0:
                continue  # dropped above
            if _hung_up(stream.sock):
                self._drop(stream)
                continue
            if ping and not stream.backlog:
                stream.backlog += b": ping\n\n"
            if stream.backlog and not self._flush(stream):
                self._drop(stream)

    def _flush(self, stream: Stream) -> bool:
        try:
            while stream.backlog:
                sent = stream.sock.send(stream.backlog)
                del stream.backlog[:sent]
        except BlockingIOError:
            return len(stream.backlog) <= MAX_BACKLOG
        except OSError:
            return False
        return True

    def _drop(self, stream: Stream) -> None:
        with self.lock:
            self.streams.pop(id(stream.sock), None)
        with contextlib.suppress(OSError):
            stream.sock.close()

    def close(self) -> None:
        self.hub.stop.set()
        with self.lock:  # add() creates and starts the thread under this lock: never half-made
            thread = self.thread
        if thread is not None:
            thread.join(5)
        with self.lock:
            streams, self.streams = list(self.streams.values()), {}
        for stream in streams:
            with contextlib.suppress(OSError):
                stream.sock.close()


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
