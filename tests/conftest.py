from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import init_repo
from tests.oracle import spec_kitty_reads_what_is_left  # noqa: F401  (a fixture)


def pytest_configure(config: pytest.Config) -> None:
    """Run as a background job (`make test &`, a CI runner without job control) the suite
    inherits SIGINT as ignored, and so would every kitty it starts: the ^C tests would
    wait forever. A handler (unlike SIG_IGN) is reset on exec, so kitty's children get
    what a terminal user's kitty gets."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def hermetic(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test sees the developer's HOME, git config, agent identity or colours."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    for key, value in {
        "GIT_AUTHOR_NAME": "Test",
        "GIT_AUTHOR_EMAIL": "test@example.com",
        "GIT_COMMITTER_NAME": "Test",
        "GIT_COMMITTER_EMAIL": "test@example.com",
        "NO_COLOR": "1",
        "KITTY_LOCK_TIMEOUT": "20",
        # the uncommitted-files warning on every `status`, so two runs print alike
        # (tests/workflow/test_uncommitted.py checks the default: once per change of the set)
        "KITTY_WARN_UNCOMMITTED": "always",
    }.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("KITTY_AGENT", raising=False)
    monkeypatch.delenv("KITTY_MISSION", raising=False)
    monkeypatch.delenv("COLUMNS", raising=False)  # boards render at 80 unless a test sets it


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return init_repo(tmp_path / "repo")


_SESSION_START = time.time()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print the browser tests' measured figures (tests/browser), when this run made them."""
    figures = Path(__file__).resolve().parents[1] / "build" / "browser" / "figures.json"
    if figures.is_file() and figures.stat().st_mtime >= _SESSION_START:
        terminalreporter.write_sep("-", "web board in a real browser (build/browser/)")
        terminalreporter.write_line(figures.read_text().rstrip())
