"""Keep-awake: the right inhibitor command, held for the run, released after, even on kill -9."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kitty.agents.awake import inhibitor_command
from kitty.teams.liveness import pid_alive
from tests.helpers import install_fakes, kitty_argv, trust

FAKE_INHIBIT = """#!/bin/sh
echo "$$ $*" >> "$FAKE_INHIBIT_LOG"
shift 2
exec "$@"
"""


@pytest.fixture
def inhibit_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    install_fakes(tmp_path / "bin", ("systemd-inhibit", "caffeinate"), FAKE_INHIBIT, monkeypatch)
    log = tmp_path / "inhibit.log"
    monkeypatch.setenv("FAKE_INHIBIT_LOG", str(log))
    return log


def test_commands_per_platform(inhibit_log: Path) -> None:
    assert inhibitor_command(42, "why", "linux") == [
        "systemd-inhibit",
        "--what=idle:sleep",
        "--why=why",
        "tail",
        "--pid",
        "42",
        "-f",
        "/dev/null",
    ]
    assert inhibitor_command(42, "why", "darwin") == ["caffeinate", "-i", "-w", "42"]
    assert inhibitor_command(42, "why", "sunos") is None


def test_keep_awake_runs_the_command_under_the_guard(inhibit_log: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kitty", "keep-awake", "--", "sh", "-c", "exit 7"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 7
    pid, *argv = inhibit_log.read_text().split()
    assert argv[:3] == ["--what=idle:sleep", "--why=kitty", "keep-awake"]
    assert argv[3:5] == ["tail", "--pid"]
    time.sleep(0.5)
    assert not pid_alive(int(pid))  # released when the command ended


def test_helper_dies_with_kitty_even_on_sigkill(inhibit_log: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "kitty", "keep-awake", "--", "sleep", "60"])
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not inhibit_log.exists():
        time.sleep(0.05)
    helper = int(inhibit_log.read_text().split()[0])
    assert pid_alive(helper)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and pid_alive(helper):
        time.sleep(0.1)
    assert not pid_alive(helper)


def test_sprint_holds_the_guard_and_no_caffeinate_skips_it(inhibit_log: Path, repo: Path) -> None:
    from tests.sprint.test_sprint import planned

    planned(repo, [{"wp_id": "WP01"}])
    (repo / ".kittify" / "config.yaml").write_text(
        "agents:\n  commands:\n    noop: ['true']\n    check: ['true']\n"
    )
    trust(repo)
    env = dict(os.environ)
    args = kitty_argv(  # both agents exist: the sprint's pre-flight refuses a missing CLI
        repo, "sprint", "--implementer", "noop", "--reviewer", "check", "--retries", "0", "--json"
    )
    done = subprocess.run(args, capture_output=True, text=True, timeout=60, env=env)
    start = json.loads(done.stdout.splitlines()[0])
    assert start["keep_awake"].startswith("systemd-inhibit --what=idle:sleep")
    helper = int(inhibit_log.read_text().split()[0])
    time.sleep(0.3)
    assert not pid_alive(helper)
    inhibit_log.unlink()
    done = subprocess.run(
        [*args, "--no-caffeinate"], capture_output=True, text=True, timeout=60, env=env
    )
    assert not inhibit_log.exists()
    assert json.loads(done.stdout.splitlines()[0])["keep_awake"] == "disabled (--no-caffeinate)"
