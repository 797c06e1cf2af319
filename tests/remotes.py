"""Real remotes for the team tests: a bare repo over file:// and `git daemon` on 127.0.0.1."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.helpers import git, init_repo, make_mission, ok

FIVE = [
    {"wp_id": f"WP0{i}", "title": f"Part {i}", "owned": [f"src/p{i}/**"], "subtasks": [f"T00{i}"]}
    for i in range(1, 6)
]


def publish(tmp: Path, config: str, wps: list[dict[str, object]] | None = None) -> Path:
    """A finalized mission pushed to a new bare repo; returns the bare repo."""
    seed = init_repo(tmp / "seed")
    ok(seed, "init")
    make_mission(seed, wps=wps if wps is not None else FIVE, config=config)
    git(seed, "add", "-A")
    git(seed, "commit", "-q", "-m", "mission")
    bare = tmp / "remote.git"
    git(tmp, "init", "-q", "--bare", "-b", "main", str(bare))
    git(seed, "push", "-q", str(bare), "main")
    return bare


def clone(url: str, path: Path) -> Path:
    git(path.parent, "clone", "-q", url, str(path))
    git(path, "config", "user.name", path.name)
    git(path, "config", "user.email", f"{path.name}@example.com")
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start_daemon(base: Path) -> tuple[subprocess.Popen[bytes], int] | None:
    """`git daemon` on a free port, once it accepts connections; None when it exited
    first (another process took the port between the OS handing it out and the bind)."""
    port = free_port()
    proc = subprocess.Popen(
        [
            "git",
            "daemon",
            "--reuseaddr",
            "--export-all",
            "--enable=receive-pack",
            "--listen=127.0.0.1",
            f"--port={port}",
            f"--base-path={base}",
            str(base),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=dict(os.environ),
        # `git daemon` runs git-daemon as a child: kill the whole group, or the server
        # outlives the test.
        start_new_session=True,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc, port
        except OSError:
            time.sleep(0.05)
    _stop(proc)
    return None


def _stop(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


@contextmanager
def git_daemon(base: Path) -> Iterator[str]:
    """Serve every bare repo under `base` (push enabled) on 127.0.0.1; yield the URL prefix."""
    for _ in range(5):
        started = _start_daemon(base)
        if started is not None:
            break
    else:
        raise RuntimeError("git daemon did not start")
    proc, port = started
    try:
        yield f"git://127.0.0.1:{port}"
    finally:
        _stop(proc)
