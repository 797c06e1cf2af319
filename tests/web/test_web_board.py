"""`kitty board --html/--serve` without a browser: the file, the server, the event stream.

The page itself is exercised in a real browser by tests/browser/.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from kitty.web import serve as webserve
from tests.helpers import git, kitty, kitty_argv, lane_commit, make_mission, ok

EVIL = '</script><img src=x onerror="alert(1)"> & "quotes"'
WPS = [
    {"wp_id": "WP01", "title": "Cart API", "owned": ["src/cart/**"], "subtasks": ["T001"]},
    {"wp_id": "WP02", "title": EVIL, "deps": ["WP01"], "owned": ["web/**"], "name": "WP02-x.md"},
    {"wp_id": "WP03", "title": "Checkout", "deps": ["WP02"], "owned": ["src/checkout/**"]},
    {"wp_id": "WP04", "title": "Docs", "owned": ["docs/**"]},
]


def page_data(html: str) -> dict[str, Any]:
    match = re.search(r'<script id="kitty-data" type="application/json">(.*?)</script>', html, re.S)
    assert match, "the page carries its data"
    data: dict[str, Any] = json.loads(match.group(1))
    return data


def tree_state(repo: Path) -> dict[str, tuple[int, int]]:
    """Every file under the repo (and .git) with its size and mtime, except the disposable
    snapshot cache in .git/kitty/cache (reads may refresh it; no result depends on it)."""
    state = {}
    cache = repo / ".git" / "kitty" / "cache"
    for path in sorted(repo.rglob("*")):
        if path.is_file() and cache not in path.parents:
            st = path.stat()
            state[str(path.relative_to(repo))] = (st.st_size, st.st_mtime_ns)
    return state


def test_html_export_is_one_self_contained_file(repo: Path, tmp_path: Path) -> None:
    make_mission(repo, wps=WPS)
    ok(repo, "move", "WP01", "claimed", "--agent", "claude")
    before = tree_state(repo)
    out = tmp_path / "board.html"
    run = ok(repo, "board", "--html", str(out), "--json").json()
    assert run["work_packages"] == 4 and run["html"] == str(out)
    assert tree_state(repo) == before, "exporting writes nothing in the repository"
    html = out.read_text()
    data = page_data(html)
    assert data["live"] is False
    assert [w["id"] for w in data["work_packages"]] == ["WP01", "WP02", "WP03", "WP04"]
    lanes = {w["id"]: w["lane"] for w in data["work_packages"]}
    assert lanes == {"WP01": "claimed", "WP02": "planned", "WP03": "planned", "WP04": "planned"}
    assert data["critical_path"] == ["WP01", "WP02", "WP03"]
    # Offline: nothing is loaded from anywhere (the SVG namespace is an identifier, not a fetch).
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)
    assert "@import" not in html and "url(http" not in html
    # The only executable script is the one the CSP hash allows.
    scripts = re.findall(r"<script>(.*?)</script>", html, re.S)
    assert len(scripts) == 1
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in html and "connect-src 'none'" in html
    # A hostile title stays text: never raw in the HTML, intact in the data.
    assert "<img src=x" not in html and data["work_packages"][1]["title"] == EVIL
    graph = data["graph_svg"]
    assert len(re.findall(r'class="node( critical)?"', graph)) == 4
    assert graph.count('class="node critical"') == 3
    assert graph.count('class="edge critical"') == 2
    assert "&lt;/script&gt;&lt;img" in graph
    assert 'class="band band-in-progress"' in data["flow_svg"]
    wp1 = data["work_packages"][0]
    assert wp1["timeline"][-1]["to"] == "claimed" and wp1["timeline"][-1]["who"] == "claude"
    assert wp1["dependents"] == ["WP02"] and wp1["subtasks"] == {"T001": "planned"}
    assert wp1["branch"] == "kitty/mission-demo-01ABCDEF-lane-a"
    assert wp1["worktree"] == ".worktrees/demo-01ABCDEF-lane-a"
    assert wp1["started_at"] and wp1["cycle_time_s"] is None


def test_html_to_stdout_and_terminal_board(repo: Path) -> None:
    make_mission(repo, wps=WPS)
    html = ok(repo, "board", "--html", "-").out
    assert html.startswith("<!doctype html>") and len(page_data(html)["work_packages"]) == 4
    text = ok(repo, "board").out
    assert text == ok(repo, "status").out
    assert ok(repo, "board", "--json").json()["critical_path"] == ["WP01", "WP02", "WP03"]


def test_board_options_are_checked(repo: Path) -> None:
    make_mission(repo, wps=WPS)
    both = kitty(repo, "board", "--html", "x.html", "--serve")
    assert both.code == 2 and "do not go together" in both.err
    stray = kitty(repo, "board", "--port", "9000")
    assert stray.code == 2 and "only apply to --serve" in stray.err
    remote = kitty(repo, "board", "--serve", "--host", "0.0.0.0")
    assert remote.code == 2 and "not a loopback address" in remote.err
    assert "--allow-remote" in remote.err
    assert not (repo / "x.html").exists()


def test_loopback_detection() -> None:
    for host in ("127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"):
        assert webserve.is_loopback(host), host
    for host in ("0.0.0.0", "::", "192.168.1.20", "10.0.0.1", "example.invalid"):
        assert not webserve.is_loopback(host), host


@contextmanager
def running(repo: Path, mission: str | None = None) -> Iterator[webserve.BoardServer]:
    server = webserve.make_server(repo, mission, "127.0.0.1", 0, allow_remote=False)
    thread = threading.Thread(target=webserve.serve, args=(server, lambda url: None), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.hub.stop.set()
        server.shutdown()
        thread.join(5)
        assert not thread.is_alive()


def get(
    server: webserve.BoardServer, path: str, method: str = "GET", host: str | None = None
) -> tuple[int, dict[str, str], str]:
    port = server.server_address[1]
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    headers = {"Host": host} if host else {}
    conn.request(method, path, headers=headers)
    resp = conn.getresponse()
    body = resp.read().decode()
    conn.close()
    return resp.status, {k.lower(): v for k, v in resp.getheaders()}, body


def test_server_routes_are_read_only_and_loopback_only(repo: Path) -> None:
    make_mission(repo, wps=WPS)
    before = tree_state(repo)
    with running(repo) as server:
        status, headers, body = get(server, "/")
        assert status == 200 and headers["content-type"].startswith("text/html")
        assert "script-src 'sha256-" in headers["content-security-policy"]
        assert "connect-src 'self'" in headers["content-security-policy"]
        data = page_data(body)
        assert data["live"] is True and data["version"]
        status, _, body = get(server, "/api/board")
        assert status == 200 and len(json.loads(body)["work_packages"]) == 4
        assert get(server, "/healthz")[0] == 200
        assert get(server, "/nope")[0] == 404
        assert get(server, "/", method="POST")[0] == 405
        assert get(server, "/", host="evil.example:80")[0] == 403  # DNS rebinding
        assert get(server, "/", host="localhost:1234")[0] == 200
        status, _, body = get(server, "/?mission=zzz")
        assert status == 404 and "no mission named 'zzz'" in body
    assert tree_state(repo) == before, "serving writes nothing in the repository"


def read_event(
    resp: http.client.HTTPResponse, deadline: float
) -> tuple[str, dict[str, Any]] | None:
    """The next event's name and data, or None at the deadline."""
    event = None
    while time.monotonic() < deadline:
        line = resp.fp.readline().decode()
        if not line:
            return None
        line = line.rstrip("\n")
        if line.startswith("event: "):
            event = line[len("event: ") :]
        elif line.startswith("data: ") and event:
            data: dict[str, Any] = json.loads(line[len("data: ") :])
            return event, data
    return None


def stream(server: webserve.BoardServer, since: str) -> tuple[Any, http.client.HTTPResponse]:
    conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10)
    conn.request("GET", f"/events?since={since}")
    resp = conn.getresponse()
    assert resp.status == 200
    assert resp.getheader("Content-Type", "").startswith("text/event-stream")
    return conn, resp


def test_a_move_in_another_process_reaches_the_stream_as_a_diff(repo: Path) -> None:
    make_mission(repo, wps=WPS)
    with running(repo) as server:
        board = json.loads(get(server, "/api/board")[2])
        conn, resp = stream(server, board["version"])
        time.sleep(0.6)  # a few polls with nothing changed: no event may be sent for them
        subprocess.run(
            kitty_argv(repo, "move", "WP01", "claimed", "--agent", "codex"),
            check=True,
            capture_output=True,
        )
        moved = time.monotonic()
        got = read_event(resp, moved + 5)
        latency = time.monotonic() - moved
        resp.close()
        conn.close()
        # A client one version behind is sent the diff; one further behind, the board.
        conn, resp = stream(server, board["version"])
        again = read_event(resp, time.monotonic() + 5)
        resp.close()
        conn.close()
        conn, resp = stream(server, "an-older-version")
        whole = read_event(resp, time.monotonic() + 5)
        resp.close()
        conn.close()
    assert got is not None
    name, diff = got
    assert name == "diff", "the first event is the change, not a repeat"
    assert diff["from"] == board["version"] and diff["version"] != board["version"]
    # Only the moved WP changed (its dependents wait for it as before).
    assert [w["id"] for w in diff["work_packages"]] == ["WP01"]
    wp1 = diff["work_packages"][0]
    assert wp1["lane"] == "claimed" and wp1["agent"] == "codex"
    assert wp1["timeline"][-1]["to"] == "claimed"
    assert diff["top"]["summary"]["claimed"] == 1 and "flow_svg" in diff["top"]
    assert "graph_svg" not in diff["top"] and "work_packages" not in diff["top"]
    assert latency < 2.0, f"update took {latency:.2f}s"
    assert again == got
    assert whole is not None and whole[0] == "board"
    assert whole[1]["version"] == diff["version"]
    assert {w["id"]: w["lane"] for w in whole[1]["work_packages"]}["WP01"] == "claimed"


def test_the_live_model_grows_into_the_board_a_rebuild_gives(repo: Path) -> None:
    """Every diff, applied in turn, gives what a full rebuild of the mission gives."""
    from kitty.mission.workspace import Mission
    from kitty.web import board as webboard

    make_mission(repo, wps=WPS)
    lane_commit(repo, "WP01")  # WP01's work, on its lane branch: it may enter review
    now = 1_900_000_000_000_000
    live = webboard.LiveModel(Mission.open(repo, "demo"), now)
    page = json.loads(webboard.page_json(live.model))
    steps = [
        ("move", "WP01", "claimed", "--agent", "claude"),
        ("agent", "tasks", "mark-status", "T001", "--status", "done", "--mission", "demo"),
        ("move", "WP01", "in_progress", "--agent", "claude"),
        ("move", "WP01", "for_review", "--agent", "claude"),
        ("move", "WP01", "in_review", "--agent", "codex"),
        ("move", "WP01", "approved", "--agent", "codex"),
        ("move", "WP04", "blocked", "--agent", "lead", "--note", "needs a decision"),
        ("move", "WP02", "claimed", "--agent", "gemini"),
    ]
    for step in steps:
        ok(repo, *step)
        grown = live.grow(now)
        assert grown is not None, step
        top, changed = grown
        page.update(json.loads(webboard.page_json(top)))
        by_id = {w["id"]: w for w in json.loads(webboard.page_json(changed))}
        page["work_packages"] = [by_id.get(w["id"], w) for w in page["work_packages"]]
        rebuilt = webboard._Builder(Mission.open(repo, "demo"), stateless_graph=True).model(now)
        assert page == json.loads(webboard.page_json(rebuilt)), step
    assert {w["id"]: w["lane"] for w in page["work_packages"]} == {
        "WP01": "approved",
        "WP02": "claimed",
        "WP03": "planned",
        "WP04": "blocked",
    }
    # A rewritten log cannot be grown: the caller rebuilds.
    log = repo / "kitty-specs" / "demo-01ABCDEF" / "status.events.jsonl"
    log.write_bytes(log.read_bytes()[:-200])
    assert live.grow(now) is None


def test_the_mission_switcher_serves_every_mission(repo: Path) -> None:
    make_mission(repo, wps=WPS)
    make_mission(repo, slug="other-01ABCDEG", wps=[{"wp_id": "WP01", "title": "Other"}])
    with running(repo, "demo") as server:
        data = page_data(get(server, "/")[2])
        assert data["mission"]["slug"] == "demo-01ABCDEF"
        assert data["missions"] == ["demo-01ABCDEF", "other-01ABCDEG"]
        other = page_data(get(server, "/?mission=other")[2])
        assert [w["title"] for w in other["work_packages"]] == ["Other"]
    # Without --mission the most recently changed mission opens first.
    ok(repo, "move", "WP01", "claimed", "--agent", "claude", "--mission", "other")
    assert webserve.default_mission(repo, None) == "other-01ABCDEG"


def test_serve_prints_the_url_and_stops_cleanly_on_ctrl_c(repo: Path) -> None:
    make_mission(repo, wps=WPS)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "mission")
    proc = subprocess.Popen(
        kitty_argv(repo, "board", "--serve", "--port", "0"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/\?mission=demo-01ABCDEF", line)
        assert match, line
        conn = http.client.HTTPConnection("127.0.0.1", int(match.group(1)), timeout=10)
        conn.request("GET", "/events")
        stream = conn.getresponse()
        assert stream.status == 200
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=10)
        stream.close()
        conn.close()
    finally:
        if proc.poll() is None:
            proc.kill()
        _, err = proc.communicate(timeout=10)  # also closes the pipes
    assert code == 0, err
    assert "stopped" in err and "Traceback" not in err
    assert git(repo, "status", "--porcelain") == ""


PROBE = """
import sys
from kitty.cli import cli, run
code = run(cli, sys.argv[1:])
web = sorted(m for m in ("http.server", "kitty.web.board", "kitty.web.serve",
                         "kitty.web.rules.svg", "socketserver") if m in sys.modules)
print("WEB=" + ",".join(web), file=sys.stderr)
sys.exit(code)
"""


@pytest.mark.parametrize("args", [["--help"], ["board", "--help"], ["status"], ["board"]])
def test_the_web_board_is_imported_only_when_used(repo: Path, args: list[str]) -> None:
    make_mission(repo, wps=WPS)
    argv = args if args[-1] == "--help" else ["-C", str(repo), *args]
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
    )
    assert done.returncode == 0, done.stderr
    assert "WEB=\n" in done.stderr, done.stderr


# -- a server under abuse: resets, idle sockets, many streams (real sockets on 127.0.0.1) --


def start(repo: Path, *args: str) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen(
        kitty_argv(repo, "board", "--serve", "--port", "0", *args),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    if not match:
        proc.kill()
        raise AssertionError(f"{line!r} {proc.communicate()[1]}")
    return proc, int(match.group(1))


def finish(proc: subprocess.Popen[str]) -> str:
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        raise AssertionError(f"the server ignored ^C\n{err}") from None
    assert proc.returncode == 0, err
    return err


def reset(sock: socket.socket) -> None:
    """Close with SO_LINGER 0: the kernel sends RST instead of FIN (a browser that resets)."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def healthz(port: int) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/healthz")
    status = conn.getresponse().status
    conn.close()
    return status


def test_a_reset_connection_is_not_a_traceback(repo: Path) -> None:
    make_mission(repo, wps=WPS)
    proc, port = start(repo)
    try:
        # Reset in the middle of a request's headers (the server is reading).
        half = socket.create_connection(("127.0.0.1", port))
        half.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        time.sleep(0.3)
        reset(half)
        # Reset a keep-alive connection after its response (the server waits for the next).
        idle = socket.create_connection(("127.0.0.1", port))
        idle.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert idle.recv(4096).startswith(b"HTTP/1.1 200")
        time.sleep(0.3)
        reset(idle)
        # Reset an event stream, and a page download, while the server writes.
        for path in ("/events", "/"):
            sock = socket.create_connection(("127.0.0.1", port))
            sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
            assert sock.recv(64).startswith(b"HTTP/1.1 200")
            reset(sock)
        time.sleep(0.6)
        assert healthz(port) == 200, "the server keeps serving"
    finally:
        err = finish(proc)
    assert "Traceback" not in err and "ConnectionResetError" not in err, err
    assert len(err.strip().splitlines()) <= 1 + 4, err  # `stopped`, one line per reset at most


def threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def read_until(sock: socket.socket, marker: bytes, timeout: float = 10) -> bytes:
    sock.settimeout(timeout)
    data = b""
    while marker not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def test_connections_are_capped_and_idle_sockets_time_out(repo: Path) -> None:
    make_mission(repo, wps=WPS)
    proc, port = start(repo, "--max-connections", "20", "--idle-timeout", "1")
    socks: list[socket.socket] = []
    try:
        assert healthz(port) == 200
        baseline = threads(proc.pid)
        # 100 event streams: all served, by one thread (streams have a cap of their own).
        streams = []
        for _ in range(100):
            sock = socket.create_connection(("127.0.0.1", port))
            sock.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            streams.append(sock)
        for sock in streams:
            assert read_until(sock, b"event: board").startswith(b"HTTP/1.1 200")
        socks += streams
        time.sleep(0.3)
        assert threads(proc.pid) <= baseline + 2, "an event stream costs no thread"
        # 50 sockets that never send a request: 20 fit under the cap, 30 are refused
        # (the streams take none of its places).
        idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(50)]
        socks += idle
        time.sleep(0.5)
        assert threads(proc.pid) <= baseline + 2 + 20
        answers = [read_until(sock, b"\r\n\r\n", timeout=5) for sock in idle]
        refused = [a for a in answers if a.startswith(b"HTTP/1.1 503")]
        assert len(refused) == 30, answers
        assert all(a == b"" for a in answers if a not in refused), "idle sockets closed"
        time.sleep(0.3)
        assert threads(proc.pid) <= baseline + 2, "idle sockets time out and free their thread"
        # The streams still live: a move reaches every one of them.
        subprocess.run(
            kitty_argv(repo, "move", "WP04", "claimed", "--agent", "codex"),
            check=True,
            capture_output=True,
        )
        for sock in streams:
            assert b'"WP04"' in read_until(sock, b'"WP04"'), "the move reached every stream"
        for sock in streams[:50]:
            sock.close()
        time.sleep(0.8)
        assert healthz(port) == 200
        # Timed-out sockets free their place: 20 more connections fit under the cap.
        more = [socket.create_connection(("127.0.0.1", port)) for _ in range(20)]
        socks += more
        assert [read_until(sock, b"\r\n\r\n", timeout=5) for sock in more] == [b""] * 20
    finally:
        for sock in socks:
            sock.close()
        err = finish(proc)
    assert "Traceback" not in err, err


@pytest.mark.timeout(120)
def test_event_streams_have_their_own_cap_and_never_lock_out_requests(repo: Path) -> None:
    """issue 35.8: 128 open tabs (event streams, the default stream cap) leave /healthz
    and /api/board served; the next stream gets a 503 until one closes."""
    make_mission(repo, wps=WPS)
    proc, port = start(repo)
    streams: list[socket.socket] = []
    try:
        for _ in range(webserve.MAX_STREAMS):
            sock = socket.create_connection(("127.0.0.1", port))
            sock.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            streams.append(sock)
        for sock in streams:
            assert read_until(sock, b"event: board").startswith(b"HTTP/1.1 200")
        assert healthz(port) == 200
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/api/board")
        assert conn.getresponse().status == 200
        conn.close()
        extra = socket.create_connection(("127.0.0.1", port))
        streams.append(extra)
        extra.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert read_until(extra, b"\r\n\r\n", timeout=5).startswith(b"HTTP/1.1 503")
        streams.pop(0).close()
        time.sleep(0.8)
        again = socket.create_connection(("127.0.0.1", port))
        streams.append(again)
        again.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert read_until(again, b"event: board").startswith(b"HTTP/1.1 200")
    finally:
        for sock in streams:
            sock.close()
        err = finish(proc)
    assert "Traceback" not in err, err


# -- editing from the page (--edit) ------------------------------------------------------


def post(
    server: webserve.BoardServer,
    path: str,
    body: Any,
    token: str | None,
    origin: str | None = "same",
    ctype: str = "application/json",
) -> tuple[int, dict[str, Any]]:
    port = server.server_address[1]
    headers = {"Content-Type": ctype, "Host": f"127.0.0.1:{port}"}
    if token is not None:
        headers["X-Kitty-Token"] = token
    if origin is not None:
        headers["Origin"] = f"http://127.0.0.1:{port}" if origin == "same" else origin
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("POST", path, body=json.dumps(body), headers=headers)
    resp = conn.getresponse()
    data = json.loads(resp.read().decode() or "{}") if resp.status != 405 else {}
    conn.close()
    return resp.status, data


def test_edits_need_edit_the_token_the_origin_and_json(repo: Path) -> None:
    make_mission(repo, wps=WPS)
    log = repo / "kitty-specs" / "demo-01ABCDEF" / "status.events.jsonl"
    # Read-only by default: no token in the page, every POST refused.
    with running(repo) as server:
        assert server.edit_token is None
        assert "edit" not in page_data(get(server, "/")[2])
        assert post(server, "/api/move", {"wp": "WP01", "to": "claimed"}, "x")[0] == 405
    before = log.read_bytes()
    server = webserve.make_server(repo, None, "127.0.0.1", 0, allow_remote=False, edit=True)
    with running_server(server):
        token = page_data(get(server, "/")[2])["edit"]["token"]
        assert token == server.edit_token and len(token) >= 32
        assert "edit" not in json.loads(get(server, "/api/board")[2]), "only the page has it"
        move = {"wp": "WP04", "to": "claimed", "agent": "board-user"}
        forged = [
            post(server, "/api/move", move, None),
            post(server, "/api/move", move, "wrong-" + token),
            post(server, "/api/move", move, token, origin=None),
            post(server, "/api/move", move, token, origin="http://127.0.0.1:1"),
            post(server, "/api/move", move, token, origin="http://evil.example"),
            post(server, "/api/move", move, token, ctype="text/plain"),
            post(server, "/api/move", move, token, ctype="application/x-www-form-urlencoded"),
        ]
        assert [status for status, _ in forged] == [403] * len(forged), forged
        assert log.read_bytes() == before, "a refused edit writes nothing"
        # Bad requests from the page: clear errors, nothing written.
        status, err = post(server, "/api/move", {"wp": "WP04"}, token)
        assert status == 400 and "`to`" in err["message"]
        status, err = post(server, "/api/move", {"wp": "WP04", "to": "done"}, token)
        assert status == 409 and err["code"] == "invalid_transition", err
        status, err = post(server, "/api/move", {"wp": "WP99", "to": "claimed"}, token)
        assert status == 404 and "WP99" in err["message"]
        assert log.read_bytes() == before
        # The real thing: through move_task, as `kitty move` would.
        status, done = post(server, "/api/move", move, token)
        assert status == 200 and done["to_lane"] == "claimed", done
        status, added = post(
            server, "/api/wp", {"title": "From the page", "depends_on": ["WP01"]}, token
        )
        assert status == 200 and added["wp_id"] == "WP05", added
    wps = {w["id"]: w for w in ok(repo, "status", "--json").json()["work_packages"]}
    assert wps["WP04"]["lane"] == "claimed" and wps["WP04"]["agent"] == "board-user"
    assert wps["WP05"]["title"] == "From the page" and wps["WP05"]["dependencies"] == ["WP01"]
    # Edits are for this machine only.
    remote = kitty(repo, "board", "--serve", "--edit", "--host", "0.0.0.0", "--allow-remote")
    assert remote.code == 2 and "loopback" in remote.err
    stray = kitty(repo, "board", "--edit")
    assert stray.code == 2 and "only apply to --serve" in stray.err


@contextmanager
def running_server(server: webserve.BoardServer) -> Iterator[webserve.BoardServer]:
    thread = threading.Thread(target=webserve.serve, args=(server, lambda url: None), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.hub.stop.set()
        server.shutdown()
        thread.join(5)


def test_a_stream_of_a_mission_that_goes_away_is_closed_quietly(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    make_mission(repo, wps=WPS)
    make_mission(repo, slug="other-01ABCDEG", wps=[{"wp_id": "WP01", "title": "Other"}])
    with running(repo, "demo") as server:
        version = json.loads(get(server, "/api/board?mission=other")[2])["version"]
        conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10)
        conn.request("GET", f"/events?mission=other&since={version}")
        resp = conn.getresponse()
        assert resp.status == 200
        shutil.rmtree(repo / "kitty-specs" / "other-01ABCDEG")
        deadline = time.monotonic() + 5
        while resp.fp.readline() and time.monotonic() < deadline:
            pass
        assert time.monotonic() < deadline, "the stream is closed"
        resp.close()
        conn.close()
        assert get(server, "/healthz")[0] == 200
    assert "Traceback" not in capsys.readouterr().err


def test_a_refused_edit_is_logged_inert(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The refusal line repeats request headers (here Sec-Fetch-Site): a local page that
    sends escape sequences in them must not reach the terminal running the server raw."""
    make_mission(repo, wps=WPS)
    server = webserve.make_server(repo, None, "127.0.0.1", 0, allow_remote=False, edit=True)
    with running_server(server):
        port = server.server_address[1]
        token = page_data(get(server, "/")[2])["edit"]["token"]
        body = json.dumps({"wp": "WP01", "to": "claimed"}).encode()
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(
            b"POST /api/move HTTP/1.1\r\n"
            + f"Host: 127.0.0.1:{port}\r\nOrigin: http://127.0.0.1:{port}\r\n".encode()
            + f"X-Kitty-Token: {token}\r\nContent-Type: application/json\r\n".encode()
            + b"Sec-Fetch-Site: cross\x1b]0;pwned\x07\x1b[2J-site\r\n"
            + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
            + body
        )
        assert sock.recv(64).startswith(b"HTTP/1.1 403")
        sock.close()
    err = capsys.readouterr().err
    assert "refused an edit" in err
    assert "\x1b" not in err and "\x07" not in err
    assert "\\x1b" in err
