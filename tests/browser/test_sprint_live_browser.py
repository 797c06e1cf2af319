"""The running sprint on the web board (issue 38), in Chromium: a real `kitty sprint`
with fake agent CLIs runs while the board is open; the page shows each running agent
(WP, role, model, elapsed time ticking), then the last outcome line per WP and what was
spent, over the board's existing event stream."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.browser.conftest import Watched, serve, stop
from tests.browser.test_web_board_browser import wait_for
from tests.helpers import git, install_fakes, kitty_argv, make_mission

FAKE = Path(__file__).resolve().parents[1] / "fakes" / "agent.py"


@pytest.mark.timeout(120)
def test_the_board_shows_the_running_sprint_live(
    repo: Path, watched: Watched, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_mission(repo, wps=[{"wp_id": "WP01"}])
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plan")
    install_fakes(
        tmp_path / "bin", ("claude", "codex"), f"#!{sys.executable}\n{FAKE.read_text()}",
        monkeypatch,
    )  # fmt: skip
    (tmp_path / "agents.jsonl").touch()
    result = {"type": "result", "is_error": False, "total_cost_usd": 0.25,
              "usage": {"input_tokens": 100, "output_tokens": 20}}  # fmt: skip
    env = dict(
        os.environ, FAKE_AGENT_LOG=str(tmp_path / "agents.jsonl"), FAKE_CLAUDE_MODE="slow",
        FAKE_SLOW_SECONDS="4", FAKE_CLAUDE_RESULT=json.dumps(result),
        PYTHONPATH=str(Path(__file__).resolve().parents[2]),
    )  # fmt: skip
    served = serve(repo)
    page = watched.page
    try:
        page.goto(served.url)
        wait_for(page, "document.getElementById('live').textContent === 'live'", 10000)
        assert page.locator("#sprint").is_hidden()  # no sprint ran here yet
        sprint = subprocess.Popen(
            kitty_argv(repo, "sprint", "--no-caffeinate", "--json", "--implementer", "claude",
                       "--reviewer", "codex", "--implementer-model", "big"),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        try:
            wait_for(page, "!!document.querySelector('#sprint-running tr[data-wp=WP01]')", 20000)
            row = page.inner_text("#sprint-running tr[data-wp=WP01]")
            assert row.split("\t")[:4] == ["WP01", "implement", "claude", "big"], row
            assert "running, 1 agent" in page.inner_text("#sprint-state")
            first = page.inner_text("#sprint-running tr[data-wp=WP01] .elapsed")
            wait_for(
                page,
                "document.querySelector('#sprint-running .elapsed') && document.querySelector("
                f"'#sprint-running .elapsed').textContent !== {json.dumps(first)}",
                5000,
            )  # the elapsed time ticks between updates
            wait_for(page, "/ended/.test(document.getElementById('sprint-state').textContent)",
                     60000)  # fmt: skip
        finally:
            out, err = sprint.communicate(timeout=60)
        assert sprint.returncode == 0, out[-2000:] + err[-2000:]
        last = page.inner_text("#sprint-last li[data-wp=WP01]")
        assert last.startswith("WP01 review by codex: exit 0") and last.endswith("→ approved")
        spent = page.inner_text("#sprint-spent")
        assert spent == "spent so far: 120 tokens, $0.2500 over 2 finished runs", spent
        assert "no agent running" in page.inner_text("#sprint-running")
        # each WP's detail: what its agent runs cost (from the mission's log)
        page.click(".card[data-wp=WP01]")
        wait_for(page, "!!document.querySelector('#detail-body .usage')", 5000)
        assert page.inner_text("#detail-body .usage") == "120 tokens, $0.2500 over 2 finished runs"
    finally:
        stop(served)
    assert watched.errors == []
