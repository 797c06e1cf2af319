"""`kitty status` marks a WP STALLED when its sprint agent is gone or silent.

The sprint writes a heartbeat annotation at most once a minute while an agent
runs; 15 minutes of silence (README: "Liveness and resume") is a stall even
when the process still exists.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from kitty.adapters import eventlog
from kitty.mission.workspace import Mission
from tests.helpers import make_mission, ok

MIN_US = 60 * 1_000_000


def heartbeat(repo: Path, pid: int) -> None:
    """What the sprint records for a running agent (sprint/runner.py heartbeat)."""
    mission = Mission.open(repo, "demo-01ABCDEF")
    record = mission.annotation("WP01", "claude", {"heartbeat": "now", "agent_pid": pid})
    mission.record(lambda board: [record])


def status_at(repo: Path, monkeypatch: pytest.MonkeyPatch, now: int) -> dict[str, Any]:
    monkeypatch.setattr(eventlog, "now_us", lambda: now)
    view: dict[str, Any] = ok(repo, "status", "--json").json()["work_packages"][0]
    return view


def test_heartbeat_silence_marks_stalled_and_a_new_beat_clears_it(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_mission(repo, wps=[{"wp_id": "WP01"}])
    ok(repo, "move", "WP01", "claimed", "--agent", "claude")
    start = eventlog.now_us()
    heartbeat(repo, os.getpid())  # a live process: only silence can stall it
    beat_at = Mission.open(repo, "demo-01ABCDEF").board.wps["WP01"].runtime_claim["heartbeat"]  # type: ignore[index]

    assert status_at(repo, monkeypatch, start + 14 * MIN_US)["stalled"] is None
    stalled = status_at(repo, monkeypatch, start + 16 * MIN_US)
    assert stalled["stalled"] == f"no heartbeat since {beat_at}"
    assert "STALLED" in ok(repo, "status").out

    heartbeat(repo, os.getpid())  # recorded at the (patched) current time
    assert status_at(repo, monkeypatch, start + 17 * MIN_US)["stalled"] is None
    assert "STALLED" not in ok(repo, "status").out


def test_a_wp_without_a_sprint_agent_is_never_stalled(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_mission(repo, wps=[{"wp_id": "WP01"}])
    ok(repo, "move", "WP01", "claimed", "--agent", "claude")  # a human-driven claim: no pid
    assert status_at(repo, monkeypatch, eventlog.now_us() + 60 * MIN_US)["stalled"] is None
