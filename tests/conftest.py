from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import init_repo
from tests.oracle import spec_kitty_reads_what_is_left  # noqa: F401  (a fixture)
from tests.reliability.figures import FIGURES, ORDER


def pytest_configure(config: pytest.Config) -> None:
    """Run as a background job (`make test &`, a CI runner without job control) the suite
    inherits SIGINT as ignored, and so would every kitty it starts: the ^C tests would
    wait forever. A handler (unlike SIG_IGN) is reset on exec, so kitty's children get
    what a terminal user's kitty gets."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


#: kitty's environment settings: none of the developer's (or CI's) reaches a test.
_OUTSIDE_SETTINGS = (
    "KITTY_AGENT",
    "KITTY_MISSION",
    "KITTY_MACHINE",
    "KITTY_NO_CACHE",
    "KITTY_REMOTE_ATTEMPTS",
    "KITTY_REVIEW_CONCURRENCY",
    "KITTY_SIM_REJECT",
    "KITTY_COMMIT_RETRY_SECONDS",
)


@pytest.fixture(autouse=True)
def hermetic(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test sees the developer's HOME, git config, agent identity or colours."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    # every XDG dir under this test's HOME: nothing a test or a tool it starts (git,
    # an agent CLI, Chromium) caches or stores is shared with a test beside it
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
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
        # (tests/workflow/commits/test_uncommitted.py checks the default: once per
        # change of the set)
        "KITTY_WARN_UNCOMMITTED": "always",
    }.items():
        monkeypatch.setenv(key, value)
    for key in _OUTSIDE_SETTINGS:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.delenv("COLUMNS", raising=False)  # boards render at 80 unless a test sets it


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return init_repo(tmp_path / "repo")


_SESSION_START = time.time()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """A pytest-xdist worker hands its reliability figures to the controller."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["reliability"] = dict(FIGURES)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """The controller adds up the figures of each worker (pytest-xdist's hook)."""
    FIGURES.update(getattr(node, "workeroutput", {}).get("reliability", {}))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print the reliability suite's figures (tests/reliability) and the browser tests'
    measured figures (tests/browser), when this run made them."""
    if FIGURES:
        keys = [*ORDER, *sorted(k for k in FIGURES if k not in ORDER)]
        terminalreporter.write_line(
            "reliability: " + ", ".join(f"{k} = {FIGURES.get(k, 0)}" for k in keys)
        )
    figures = Path(__file__).resolve().parents[1] / "build" / "browser" / "figures.json"
    if figures.is_file() and figures.stat().st_mtime >= _SESSION_START:
        terminalreporter.write_sep("-", "web board in a real browser (build/browser/)")
        terminalreporter.write_line(figures.read_text().rstrip())
