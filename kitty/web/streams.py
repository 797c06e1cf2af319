"""The live board's event streams: every open `/events` connection, fed by one thread."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
import traceback
from dataclasses import dataclass, field

from kitty.errors import KittyError
from kitty.web.hub import POLL_S, Hub

PING_S = 15.0
#: A stream whose unsent backlog exceeds this many bytes is dropped (it reconnects).
MAX_BACKLOG = 64 * 1024 * 1024


def _hung_up(sock: socket.socket) -> bool:
    """True when the client closed its end (a stream's client never sends anything)."""
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


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
