"""`kitty doctor` streams the log: its peak memory does not grow with the log (issue 27.8).

A 1 GB log made doctor grow to 5.8 GB. Here a ~40 MB log (generated in a second) must
not raise doctor's peak RSS by more than a fraction of its size over a tiny log's run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kitty.core.clock import format_at
from tests.helpers import kitty_argv, make_mission, ok

LOG_MB = 30
#: Peak RSS growth allowed, as a fraction of the log's size (2.5 here before, 5.8 on 1 GB).
MAX_GROWTH = 0.75

MEASURE = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(usage.ru_maxrss, os.waitstatus_to_exitcode(status))
"""


def grow_log(mission: Path, megabytes: float) -> int:
    """Append valid annotations (subtask marks, notes) until the log has `megabytes`."""
    log = mission / "status.events.jsonl"
    template = json.loads(log.read_text().splitlines()[-1])
    at = time.time_ns() // 1000 + 1_000_000  # after every event so far: the log stays in order
    target = int(megabytes * 1_000_000)
    written = log.stat().st_size
    with log.open("a", encoding="utf-8") as handle:
        n = 0
        while written < target:
            chunk = []
            for _ in range(5000):
                n += 1
                at += 1000
                record = dict(template)
                record["event_id"] = f"01H{n:023d}"
                record["at"] = format_at(at)
                record["note"] = "x" * 150
                chunk.append(json.dumps(record, sort_keys=True) + "\n")
            text = "".join(chunk)
            handle.write(text)
            written += len(text.encode())
    return written


def peak_rss_kb(repo: Path, *args: str) -> int:
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, *kitty_argv(repo, *args), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "KITTY_NO_CACHE": "1"},
    )
    rss, code = done.stdout.split()[-2:]
    assert int(code) in (0, 1), done.stderr
    return int(rss)


def test_doctor_memory_does_not_grow_with_the_log(repo: Path) -> None:
    mission = make_mission(repo, wps=[{"wp_id": "WP01", "title": "A", "subtasks": ["T001"]}])
    ok(repo, "agent", "tasks", "mark-status", "T001", "--status", "done", "--agent", "claude")
    base = peak_rss_kb(repo, "doctor")
    size = grow_log(mission, LOG_MB)
    big = peak_rss_kb(repo, "doctor")
    growth = (big - base) * 1024
    assert growth < MAX_GROWTH * size, (
        f"doctor grew by {growth / 1e6:.0f} MB on a {size / 1e6:.0f} MB log"
    )


def test_doctor_reports_the_same_in_blocks_of_any_size(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Streaming changes nothing doctor says: corrupt and torn lines, a repeated id with
    other content, events out of order, field problems; any block size, the same report."""
    from kitty.adapters import eventlog
    from kitty.core.log.state import replay
    from kitty.mission.workspace import Mission
    from kitty.project import doctor

    mission = make_mission(
        repo, wps=[{"wp_id": "WP01", "title": "A"}, {"wp_id": "WP02", "title": "B"}]
    )
    ok(repo, "move", "WP01", "claimed", "--agent", "al")
    ok(repo, "move", "WP02", "claimed", "--agent", "bo")
    log = mission / "status.events.jsonl"
    lines = log.read_text().splitlines()
    last = json.loads(lines[-1])
    older = dict(last, at=json.loads(lines[0])["at"], event_id="01H0000000000000000000000X")
    older["to_lane"] = "in_progress"
    older["from_lane"] = "claimed"
    clash = dict(last, actor="mallory")  # the same event id, other content
    later = format_at(time.time_ns() // 1000 + 5_000_000)
    typed = dict(last, event_id="01H0000000000000000000000Y", force="yes", at=later)
    extra = ["{not json", json.dumps(older), json.dumps(clash), "[1]", json.dumps(typed)]

    def report(block: int) -> list[str]:
        monkeypatch.setattr(doctor, "STREAM_BLOCK", block)
        return list(doctor.diagnose(Mission.open(repo, None), now_us=0)["problems"])

    # In order, with a corrupt line and a field problem: the board is folded block by block.
    log.write_text("\n".join([*lines[:2], "{not json", *lines[2:], json.dumps(typed)]) + "\n")
    in_order = report(1 << 30)
    assert any("not valid JSON" in p for p in in_order)
    assert all(report(block) == in_order for block in (1, 50, 400))
    for block in (1, 400):
        monkeypatch.setattr(doctor, "STREAM_BLOCK", block)
        opened = Mission.open(repo, None)
        doctor.stream_log(opened, 0)
        streamed = opened.__dict__["board"]  # folded block by block
        assert streamed == replay(eventlog.read(opened.events_path).events)
    log.write_text("\n".join(lines + extra) + "\n" + '{"torn": ')
    whole = report(1 << 30)
    assert any("not valid JSON" in p for p in whole) and any("torn" in p for p in whole)
    assert any("repeats line" in p for p in whole), whole
    for block in (1, 7, 64, 300):
        assert report(block) == whole, block
