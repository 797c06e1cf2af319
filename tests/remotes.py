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


@contextmanager
def git_daemon(base: Path) -> Iterator[str]:
    """Serve every bare repo under `base` (push enabled) on 127.0.0.1; yield the URL prefix."""
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
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                time.sleep(0.05)
        else:
            raise RuntimeError("git daemon did not start")
        yield f"git://127.0.0.1:{port}"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
