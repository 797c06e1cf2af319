"""`kitty completion SHELL` and what completes: commands, missions, WP ids, lanes, agents."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.shell_completion import ShellComplete

from kitty.cli import cli
from tests.helpers import make_mission, ok


def complete(repo: Path, *words: str, incomplete: str = "") -> list[str]:
    comp = ShellComplete(cli, {}, "kitty", "_KITTY_COMPLETE")
    return [c.value for c in comp.get_completions(["-C", str(repo), *words], incomplete)]


@pytest.fixture
def planned(repo: Path) -> Path:
    make_mission(
        repo,
        wps=[
            {"wp_id": "WP01", "title": "Cart API", "subtasks": ["T001", "T002"]},
            {"wp_id": "WP02", "title": "Cart UI", "deps": ["WP01"]},
        ],
        config="agents:\n  available: [claude, codex]\n",
    )
    return repo


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_scripts(shell: str, repo: Path) -> None:
    text = ok(repo, "completion", shell).out
    assert "_KITTY_COMPLETE" in text and f"{shell}_complete" in text


def test_values_complete(planned: Path) -> None:
    assert "status" in complete(planned, incomplete="sta")
    assert complete(planned, "move", incomplete="WP") == ["WP01", "WP02"]
    assert complete(planned, "move", "WP01", incomplete="for") == ["for_review"]
    assert complete(planned, "agent", "tasks", "move-task", "WP01", "--to", incomplete="d") == [
        "done",
        "doing",
    ]
    assert complete(planned, "next", "--agent", incomplete="c") == ["claude", "codex"]
    assert complete(planned, "sprint", "--implementer", incomplete="claude,co") == ["claude,codex"]
    assert complete(planned, "status", "--mission", incomplete="") == ["demo-01ABCDEF"]
    assert complete(planned, "agent", "tasks", "mark-status", incomplete="T") == ["T001", "T002"]
    assert complete(planned, "review", "show", incomplete="wp02") == ["WP02"]


def test_completion_outside_a_repo_offers_nothing(tmp_path: Path) -> None:
    assert complete(tmp_path, "move", incomplete="WP") == []


def test_the_shell_protocol_end_to_end(planned: Path) -> None:
    env = dict(
        os.environ,
        _KITTY_COMPLETE="bash_complete",
        COMP_WORDS=f"kitty -C {planned} move WP",
        COMP_CWORD="4",
    )
    done = subprocess.run(
        [sys.executable, "-m", "kitty"], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["plain,WP01", "plain,WP02"]
