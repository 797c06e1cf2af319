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


def run(jobs: list[dict[str, Any]], tmp: Path) -> list[dict[str, Any]]:
    """Each job is {"log": text} or {"dir": a mission directory}; one process reads them
    all with Spec Kitty's reader and reducer and answers one result per job:
    {"error": str} when its reader refuses the log, else {"lanes", "agents"} per WP."""
    home = tmp / "oracle-home"
    home.mkdir(exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "SPEC_KITTY_NO_UPGRADE_CHECK": "1",
        "NO_COLOR": "1",
    }
    done = subprocess.run(
        [str(oracle_python()), str(DRIVER), str(tmp / "oracle-work")],
        input=json.dumps(jobs),
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results: list[dict[str, Any]] = json.loads(done.stdout)
    return results
