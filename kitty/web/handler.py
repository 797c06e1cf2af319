"""The web board's HTTP requests: the page, the board as JSON, the event stream, and
with `--edit` the page's own moves and new WPs (its token, its Origin, JSON only)."""

from __future__ import annotations

import hashlib
import hmac
import json
import sys
from collections.abc import Callable
from email.message import Message
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from kitty.core.printable import printable, utf8
from kitty.errors import KittyError, UsageError
from kitty.mission.workspace import Mission
from kitty.web import board as webboard
from kitty.web.address import host_is_loopback

if TYPE_CHECKING:
    from typing import Protocol

    from kitty.web.hub import Hub
    from kitty.web.streams import Streams

    class Served(Protocol):
        """What a request needs of the server it came to (web/serve.py's BoardServer)."""

        hub: Hub
        streams: Streams
        edit_token: str | None
        allow_remote: bool
        quiet: bool
        idle_timeout: float
        server_port: int
        max_streams: int


#: What a client going away looks like (normal: a tab closed, a laptop slept).
GONE = (ConnectionError, TimeoutError)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "kitty-board"
    sys_version = ""

    @property
    def board(self) -> Served:
        """The server this request came to (a BoardServer)."""
        return self.server  # type: ignore[return-value]

    def setup(self) -> None:
        super().setup()
        # A socket that never sends (or finishes) a request is closed after this long.
        self.connection.settimeout(self.board.idle_timeout)

    def log_message(self, format: str, *args: Any) -> None:
        if self.board.quiet:
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
        data = utf8(body)
        self._headers(status, ctype, len(data), extra or {})
        if self.command != "HEAD":
            self.wfile.write(data)

    def _error(self, status: int, message: str) -> None:
        self._send(status, "text/plain; charset=utf-8", message + "\n")

    def _host_ok(self) -> bool:
        """Refuse other Host names on a loopback server (DNS rebinding)."""
        return self.board.allow_remote or host_is_loopback(self.headers.get("Host") or "")

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
            "/api/server": lambda _m, _q: self._json(HTTPStatus.OK, {"instance": self._instance()}),
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
        if self.board.edit_token is None:
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

    def _edit(self) -> None:
        url = urlsplit(self.path)
        routes: dict[str, Callable[[Mission, dict[str, Any]], dict[str, Any]]] = {
            "/api/move": _edit_move,
            "/api/wp": _edit_add,
            "/api/wp/edit": _edit_wp,
        }
        route = routes.get(url.path)
        if route is None:
            self._error(HTTPStatus.NOT_FOUND, "not found")
            return
        why = edit_refusal(self.headers, self.board.edit_token or "", self.board.server_port)
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
        hub = self.board.hub
        try:
            mission = Mission.open(hub.root, hub.resolve(_text(body, "mission", required=False)))
            result = route(mission, body)
        except KittyError as exc:
            status = _STATUS.get(exc.code, HTTPStatus.CONFLICT)
            self._json(status, exc.to_json())
            return
        self._json(HTTPStatus.OK, result)

    def _page(self, name: str | None, _query: dict[str, list[str]]) -> None:
        hub = self.board.hub
        snap = hub.snapshot(hub.resolve(name))
        model = snap.model
        if self.board.edit_token is not None:
            model = dict(model, edit={"token": self.board.edit_token, "instance": self._instance()})
        page = webboard.render_page(model, live=True)
        csp = webboard.content_security_policy(live=True)
        self._send(200, "text/html; charset=utf-8", page, {"Content-Security-Policy": csp})

    def _instance(self) -> str | None:
        """Which server this is (a new one after a restart), without telling its token: the
        page offers to reload when the server it talks to is not the one that served it."""
        token = self.board.edit_token
        return hashlib.sha256(token.encode()).hexdigest()[:16] if token else None

    def _api(self, name: str | None, _query: dict[str, list[str]]) -> None:
        hub = self.board.hub
        snap = hub.snapshot(hub.resolve(name))
        self._send(200, "application/json; charset=utf-8", snap.payload)

    def _events(self, name: str | None, query: dict[str, list[str]]) -> None:
        """Answer with the stream's headers, then hand the socket to the server's one
        broadcaster thread: an open stream costs no thread."""
        hub = self.board.hub
        slug = hub.resolve(name)
        seen = (query.get("since") or [""])[0]
        if len(self.board.streams) >= self.board.max_streams:
            self._send(
                HTTPStatus.SERVICE_UNAVAILABLE,
                "text/plain; charset=utf-8",
                "too many event streams open on the board; close a tab or try again\n",
                {"Retry-After": "2"},
            )
            return
        self._headers(200, "text/event-stream; charset=utf-8", None, {"Connection": "keep-alive"})
        self.close_connection = True
        self.wfile.write(b"retry: 1000\n\n")
        self.wfile.flush()
        if self.command == "GET":
            self.board.streams.add(self.connection, slug, seen)


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
    from kitty.workflow.moves import move_task

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
    from kitty.workflow.planning.missions import Content, add_wp

    title = _text(body, "title")
    assert title is not None
    deps = body.get("depends_on") or []
    if not isinstance(deps, list) or not all(isinstance(d, str) for d in deps):
        raise UsageError("`depends_on` must be a list of WP ids", 'send ["WP01", "WP02"]')
    objective = _text(body, "objective", required=False) or None
    subtasks = tuple(s for s in _strings(body, "subtasks") if s.strip())
    content = Content(objective.strip() if objective else None, subtasks)
    result = add_wp(mission, title, deps, _strings(body, "owns"), 0, content)
    result["path"] = mission.project.rel(Path(result["path"]))
    return result


def _strings(body: dict[str, Any], key: str) -> list[str]:
    value = body.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"`{key}` must be a list of strings", f'send {{"{key}": ["..."]}}')
    return [v.strip() for v in value if v.strip()]


def _edit_wp(mission: Mission, body: dict[str, Any]) -> dict[str, Any]:
    """A card edited on the page: `kitty wp edit WP [--title] [--objective] [--owns]
    [--subtask]`, same checks; a field left out (or empty) is not changed."""
    from kitty.workflow.planning.edit import edit
    from kitty.workflow.rules.subtasks import SubtaskEdit

    wp_id = _text(body, "wp")
    assert wp_id is not None
    title = _text(body, "title", required=False) or None
    objective = _text(body, "objective", required=False) or None
    owns = _strings(body, "owns") if body.get("owns") is not None else None
    subtasks = SubtaskEdit(_strings(body, "subtasks"))
    return edit(mission, wp_id, title=title, objective=objective, owns=owns, subtasks=subtasks)


def edit_refusal(headers: Message, expected: str, port: int) -> str | None:
    """Why this POST is not the board's own page writing (None when it is).

    The page sends the server's random token in `X-Kitty-Token` (a header no other
    site can set on a request to us without a CORS preflight, which we never
    grant), its own origin in `Origin` (which a browser always sets on a POST),
    and JSON. Another local page, a form or a DNS-rebound name fails one of these.
    """
    token = headers.get("X-Kitty-Token") or ""
    if not hmac.compare_digest(token.encode(), expected.encode()):
        return "missing or wrong edit token"
    origin = headers.get("Origin")
    host = (headers.get("Host") or "").strip()
    if origin != f"http://{host}" or not host.endswith(f":{port}"):
        return f"foreign origin {origin!r}" if origin else "no Origin header"
    site = headers.get("Sec-Fetch-Site")
    if site not in (None, "same-origin"):
        return f"cross-site request ({site})"
    ctype = (headers.get("Content-Type") or "").split(";")[0].strip().lower()
    if ctype != "application/json":
        return f"content type {ctype or 'none'} (JSON only)"
    return None
