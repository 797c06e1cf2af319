"""A model service on 127.0.0.1 for the real agent CLIs: records every request, and
answers it as the script says (by default 401: no valid credentials).

The CLIs are pointed at it through their documented base-URL settings, so a test
knows a CLI got past its argument parsing when a request arrives here, and no test
ever talks to anything but the loopback address.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body or b"null")


#: A responder gets the request and the handler, writes the whole answer; None means
#: "not mine": the next responder (finally the 401) answers.
Responder = Callable[[Request, BaseHTTPRequestHandler], bool]


@dataclass
class Loopback:
    port: int
    requests: list[Request] = field(default_factory=list)
    responders: list[Responder] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def wait_for(self, predicate: Callable[[list[Request]], bool], timeout: float) -> bool:
        import time

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate(list(self.requests)):
                return True
            time.sleep(0.05)
        return False


def unauthorized(handler: BaseHTTPRequestHandler) -> None:
    body = json.dumps(
        {
            "type": "error",
            "error": {
                "type": "authentication_error",
                "message": "invalid x-api-key (kitty's test double: no credentials here)",
                "code": 401,
                "status": "UNAUTHENTICATED",
            },
        }
    ).encode()
    handler.send_response(401)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


@contextmanager
def serve() -> Iterator[Loopback]:
    state = Loopback(0)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def handle_any(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            request = Request(self.command, self.path, dict(self.headers.items()), body)
            state.requests.append(request)
            for responder in state.responders:
                if responder(request, self):
                    return
            unauthorized(self)

        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = handle_any

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
