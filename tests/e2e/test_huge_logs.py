"""issue 35.9: `kitty status`, `kitty doctor` and `kitty board --html` read a log a block
at a time: their peak memory grows with the board, not with the log (a 1 GB log read
within 1 GB); any failure, MemoryError included, reaches kitty's error handler."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import kitty, make_mission, ok
from tests.project.test_doctor_memory import grow_log, peak_rss_kb

LOG_MB = 60
#: Peak RSS growth allowed, as a fraction of the log's size (doctor's bound, in
#: test_doctor_memory; status grew 4x the log and the HTML board 7x before). What is left
#: grows with the number of events (a hash of each id, ~100 bytes), not with their size.
MAX_GROWTH = 0.75


@pytest.fixture
def big(repo: Path) -> tuple[Path, dict[str, int], int]:
    mission = make_mission(repo, wps=[{"wp_id": "WP01", "title": "A", "subtasks": ["T001"]}])
    ok(repo, "agent", "tasks", "mark-status", "T001", "--status", "done", "--agent", "claude")
    commands = {
        "status": ("status",),
        "board": ("board", "--html", "b.html"),
        "doctor": ("doctor",),
    }
    base = {name: peak_rss_kb(repo, *args) for name, args in commands.items()}
    return repo, base, grow_log(mission, LOG_MB)


@pytest.mark.timeout(600)
@pytest.mark.parametrize("name", ["status", "board", "doctor"])
def test_a_full_read_grows_with_the_board_not_the_log(
    big: tuple[Path, dict[str, int], int], name: str
) -> None:
    repo, base, size = big
    args = {"status": ("status",), "board": ("board", "--html", "b.html"), "doctor": ("doctor",)}
    grown = (peak_rss_kb(repo, *args[name]) - base[name]) * 1024
    assert grown < MAX_GROWTH * size, f"{name} grew by {grown / 1e6:.0f} MB on {size / 1e6:.0f} MB"
    if name == "board":
        assert (repo / "b.html").stat().st_size > 0


@pytest.mark.timeout(600)
def test_a_pulled_huge_tail_is_folded_in_bounded_memory_with_the_cache_on(repo: Path) -> None:
    """A snapshot of the small log exists (the cache is on); a pull then brings a huge
    tail: it is streamed, not parsed whole on top of the snapshot."""
    import os
    import subprocess
    import sys

    from tests.helpers import kitty_argv
    from tests.project.test_doctor_memory import MEASURE

    def peak() -> int:
        done = subprocess.run(
            [sys.executable, "-c", MEASURE, *kitty_argv(repo, "status", "--json")],
            capture_output=True,
            text=True,
            timeout=300,
            env={k: v for k, v in os.environ.items() if k != "KITTY_NO_CACHE"},
        )
        rss, code = done.stdout.split()[-2:]
        assert int(code) == 0, done.stderr
        return int(rss)

    mission = make_mission(repo, wps=[{"wp_id": "WP01", "title": "A", "subtasks": ["T001"]}])
    ok(repo, "agent", "tasks", "mark-status", "T001", "--status", "done", "--agent", "claude")
    base = peak()  # saves the snapshot
    size = grow_log(mission, LOG_MB)
    grown = (peak() - base) * 1024
    assert grown < MAX_GROWTH * size, f"status grew by {grown / 1e6:.0f} MB on {size / 1e6:.0f} MB"


@pytest.mark.parametrize(
    "args", [("status",), ("status", "--json"), ("board", "--html", "b.html"), ("doctor",)]
)
def test_out_of_memory_reaches_the_error_handler(
    repo: Path, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...]
) -> None:
    make_mission(repo, wps=[{"wp_id": "WP01", "title": "A"}])
    monkeypatch.setenv("KITTY_NO_CACHE", "1")
    from kitty.core.log import state

    def exhausted(*_: object) -> None:
        raise MemoryError

    monkeypatch.setattr(state, "_fold", exhausted)
    run = kitty(repo, *args)
    assert run.code == 1, (run.code, run.out, run.err)
    text = run.out + run.err
    assert "out of memory" in text and "Traceback" not in text, text


def test_the_streamed_fold_reads_exactly_like_the_whole_read(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Any block size, in order or not (a repeat, an older event, bad and torn lines):
    the board, warnings, ids and line count of the whole read."""
    import io
    import json
    import time

    from kitty.adapters import snapshots
    from kitty.core.clock import format_at

    mission = make_mission(repo, wps=[{"wp_id": "WP01", "subtasks": ["T001"]}, {"wp_id": "WP02"}])
    ok(repo, "move", "WP01", "claimed", "--agent", "al")
    ok(repo, "move", "WP02", "claimed", "--agent", "bo")
    ok(repo, "move", "WP01", "in_progress", "--agent", "al", "--note", "going")
    lines = (mission / "status.events.jsonl").read_text().splitlines()
    last = json.loads(lines[-1])
    later = dict(last, event_id="01H0000000000000000000000Z")
    later["at"] = format_at(time.time_ns() // 1000 + 9_000_000)
    older = dict(last, event_id="01H0000000000000000000000X", at=json.loads(lines[0])["at"])
    logs = {
        "in order": lines,
        "bad lines": [*lines[:2], "{not json", "[1]", *lines[2:], json.dumps(later)],
        "repeat": [*lines, lines[1]],
        "older": [*lines, json.dumps(older)],
        "torn": [*lines, '{"torn": '],
    }
    for name, text in logs.items():
        data = ("\n".join(text) + ("" if name == "torn" else "\n")).encode()
        whole, ids, count = snapshots._full(data)
        for block in (1, 40, 333, 1 << 20):
            monkeypatch.setattr(snapshots, "STREAM_BLOCK", block)
            state, got_ids, got_lines, size = snapshots._streamed(io.BytesIO(data))
            assert state.board == whole.board, (name, block)
            assert state.warnings == whole.warnings, (name, block)
            assert state.unterminated == whole.unterminated, (name, block)
            assert (got_ids, got_lines, size) == (ids, count, len(data)), (name, block)


def test_the_html_board_streams_the_same_model_and_caps_each_timeline(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kitty.adapters import eventlog
    from kitty.mission.workspace import Mission
    from kitty.web import board as webboard
    from kitty.web import timeline

    monkeypatch.setattr(timeline, "KEEP", 5)
    monkeypatch.setattr(timeline, "BLOCK", 300)  # many blocks
    make_mission(repo, wps=[{"wp_id": "WP01", "subtasks": ["T001"]}, {"wp_id": "WP02"}])
    ok(repo, "move", "WP01", "claimed", "--agent", "al")
    for n in range(8):
        ok(repo, "move", "WP01", "in_progress" if n % 2 == 0 else "blocked", "--agent", "al",
           "--note", f"step {n}")  # fmt: skip
    ok(repo, "move", "WP02", "claimed", "--agent", "bo")
    streamed = webboard.board_model(Mission.open(repo, None), 1)
    whole = Mission.open(repo, None)
    whole.__dict__["log"] = eventlog.read(whole.events_path)  # the whole-log path
    assert webboard.board_model(whole, 1) == streamed
    wp1 = next(w for w in streamed["work_packages"] if w["id"] == "WP01")
    assert len(wp1["timeline"]) == 6 and "earlier entries not shown" in wp1["timeline"][0]["note"]
    assert wp1["timeline"][-1]["note"] == "step 7"
    assert wp1["cycle_time_s"] is None and wp1["started_at"]


def test_the_flow_keeps_a_bounded_number_of_points(monkeypatch: pytest.MonkeyPatch) -> None:
    from kitty.web.rules import flow

    monkeypatch.setattr(flow, "MAX_KEPT", 100)
    chart = flow.Flow(["WP01"])
    chart.add([(n, "WP01", "claimed" if n % 2 else "planned") for n in range(1, 10_001)])
    assert len(chart.points) <= 101
    assert chart.points[-1]["at_us"] == 10_000 and chart.points[0]["at_us"] == 1
    assert len(chart.series(50)) <= 50
