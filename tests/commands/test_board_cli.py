"""`kitty status` as a reader sees it: $COLUMNS honoured in pipes, --list, --all."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from kitty.workflow.rules.render import width_of
from tests.helpers import kitty_argv, make_mission, ok

TITLE = "Wire the payment provider into the checkout flow with retries"


def test_columns_is_honoured_in_a_pipe(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_mission(repo, wps=[{"wp_id": "WP01", "title": TITLE}])
    narrow = ok(repo, "status").out
    assert max(width_of(line) for line in narrow.splitlines()) <= 80
    monkeypatch.setenv("COLUMNS", "400")
    done = subprocess.run(
        kitty_argv(repo, "status"), capture_output=True, text=True, timeout=60, check=True
    )
    assert f"WP01 {TITLE}" in done.stdout  # one line at 400 columns, in a pipe
    monkeypatch.setenv("COLUMNS", "50")
    small = ok(repo, "status").out
    assert max(width_of(line) for line in small.splitlines()) <= 50


def test_status_list_and_all(repo: Path) -> None:
    wps = [{"wp_id": f"WP{i:02d}", "title": f"{TITLE} {i}"} for i in range(1, 31)]
    make_mission(repo, wps=wps)
    board = ok(repo, "status").out
    assert "Planned (30)" in board and "… 21 more" in board
    every = ok(repo, "agent", "tasks", "status", "--all").out
    assert "WP30" in every and "more" not in every
    listed = ok(repo, "status", "--list").out.splitlines()
    assert len(listed) == 30
    assert listed[0].split()[:3] == ["WP01", "planned", "-"]
    assert listed[29].endswith(f"{TITLE} 30")
