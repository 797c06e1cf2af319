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
        # the oracle's venv is shared (by every pytest-xdist worker, by worktrees that
        # link it): its processes only read it, never write bytecode into it
        "PYTHONDONTWRITEBYTECODE": "1",
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


def missions_left_in(root: Path) -> list[Path]:
    """Every mission folder with a status log under `root` (a test's temporary tree)."""
    return sorted(
        log.parent
        for log in root.rglob("kitty-specs/*/status.events.jsonl")
        if ".worktrees" not in log.parts
    )


@pytest.fixture
def spec_kitty_reads_what_is_left(tmp_path: Path, request: pytest.FixtureRequest) -> Any:
    """After the test: Spec Kitty 3.2.7's own reader reads every mission the test left
    behind (a sprint's log, dispatch records included) without refusing it, and gives
    every WP kitty's lane (but WPs where kitty refused a fork's losing branch, which
    Spec Kitty cannot tell from a sequence)."""
    yield
    if request.node.get_closest_marker("hand_written_log"):
        return  # the test wrote log lines itself (e.g. ids that are not ULIDs)
    missions = missions_left_in(tmp_path)
    if not missions:
        return
    from kitty.core.log.read import parse_log
    from kitty.core.log.state import replay

    results = run([{"dir": str(m)} for m in missions], tmp_path / "oracle-after")
    for mission, result in zip(missions, results, strict=True):
        assert "error" not in result, (mission, result)
        board = replay(parse_log((mission / "status.events.jsonl").read_bytes()).events)
        forked = {c.wp_id for c in board.conflicts}  # kitty refused a fork's branch there
        kitty_lanes = {
            wp: st.lane for wp, st in board.wps.items() if st.lane is not None and wp not in forked
        }
        assert {wp: result["lanes"].get(wp) for wp in kitty_lanes} == kitty_lanes, mission
