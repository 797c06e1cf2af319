"""Spec Kitty 3.2.7 as an oracle: its own reader and reducer, run by the Python of a
venv of its own (`make .oracle-venv/.installed`, which `make test` runs). Test setup
only: kitty never imports Spec Kitty. In CI (CI=true) a missing oracle fails the tests
that need it; elsewhere they are skipped."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / ".oracle-venv"
DRIVER = Path(__file__).with_name("driver.py")
VERSION = "3.2.7"


def oracle_python() -> Path:
    python = VENV / "bin" / "python"
    if not python.exists():
        message = f"Spec Kitty {VERSION} oracle missing: run `make .oracle-venv/.installed`"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return python


def _env(tmp: Path) -> dict[str, str]:
    home = tmp / "oracle-home"
    home.mkdir(parents=True, exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "SPEC_KITTY_NO_UPGRADE_CHECK": "1",
        "NO_COLOR": "1",
    }


class Server:
    """One oracle process answering job after job (a Hypothesis example each)."""

    def __init__(self, tmp: Path) -> None:
        self.proc = subprocess.Popen(
            [str(oracle_python()), str(DRIVER), str(tmp / "oracle-work"), "--serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=_env(tmp),
        )

    def ask(self, job: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, "the oracle process died"
        result: dict[str, Any] = json.loads(line)
        return result

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def run(jobs: list[dict[str, Any]], tmp: Path) -> list[dict[str, Any]]:
    """Each job is {"log": text} or {"dir": a mission directory}; one process reads them
    all with Spec Kitty's reader and reducer and answers one result per job:
    {"error": str} when its reader refuses the log, else {"lanes", "agents"} per WP."""
    done = subprocess.run(
        [str(oracle_python()), str(DRIVER), str(tmp / "oracle-work")],
        input=json.dumps(jobs),
        capture_output=True,
        text=True,
        env=_env(tmp),
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results: list[dict[str, Any]] = json.loads(done.stdout)
    return results
