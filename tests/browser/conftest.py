"""Real-browser tests: Debian's Chromium driven by Playwright for Python.

Playwright is pointed at the system Chromium (`/usr/bin/chromium`, or
$KITTY_CHROMIUM); `playwright install` is never used. Without a browser or the
`playwright` package these tests are skipped on a developer's machine, but FAIL
in CI (CI=true), where .ci/run installs both: a browser test must never vanish
silently from the suite that is supposed to run it.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import kitty_argv

ROOT = Path(__file__).resolve().parents[2]
#: Screenshots and measured figures land here (ignored by git: build/).
ARTIFACTS = Path(os.environ.get("KITTY_BROWSER_ARTIFACTS", ROOT / "build" / "browser"))
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: This run's id: pytest-xdist gives all its workers one; a serial run makes its own.
RUN = os.environ.get("PYTEST_XDIST_TESTRUNUID") or uuid.uuid4().hex


def _unavailable(why: str) -> None:
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"browser tests cannot run in CI: {why}", pytrace=False)
    pytest.skip(f"browser tests need {why}")


def chromium_path() -> str:
    candidates = [os.environ.get("KITTY_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium")]
    for path in candidates:
        if path and Path(path).is_file() and os.access(path, os.X_OK):
            return path
    _unavailable("Chromium (apt-get install chromium, or set KITTY_CHROMIUM)")
    raise AssertionError("unreachable")


@pytest.fixture(scope="session")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright package (pip install -e '.[test]')")
    executable = chromium_path()
    profile = tmp_path_factory.mktemp("chromium-profile")
    # This browser's own HOME and XDG dirs (NSS database, fontconfig and crash caches):
    # it starts before any test's hermetic HOME, and every pytest-xdist worker has one.
    home = tmp_path_factory.mktemp("chromium-home")
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
    }
    with sync_playwright() as pw:
        # A persistent context is how Playwright takes a fresh --user-data-dir.
        context = pw.chromium.launch_persistent_context(
            str(profile),
            executable_path=executable,
            headless=True,
            chromium_sandbox=False,
            args=CHROMIUM_FLAGS,
            env=env,
        )
        try:
            yield context
        finally:
            context.close()


class Watched:
    """A page with every console error and uncaught exception recorded."""

    def __init__(self, context: Any) -> None:
        self.page = context.new_page()
        self.errors: list[str] = []
        self.page.on(
            "console", lambda msg: self.errors.append(msg.text) if msg.type == "error" else None
        )
        self.page.on("pageerror", lambda exc: self.errors.append(f"uncaught: {exc}"))


@pytest.fixture
def watched(browser: Any) -> Iterator[Watched]:
    w = Watched(browser)
    try:
        yield w
    finally:
        w.page.close()


class Served:
    def __init__(self, proc: subprocess.Popen[str], url: str) -> None:
        self.proc = proc
        self.url = url


def serve(repo: Path, *args: str) -> Served:
    proc = subprocess.Popen(
        kitty_argv(repo, "board", "--serve", "--port", "0", *args),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    match = re.search(r"(http://127\.0\.0\.1:\d+/\S*)", line)
    if not match:
        proc.kill()
        _, err = proc.communicate()
        raise AssertionError(f"kitty board --serve printed {line!r}\n{err}")
    return Served(proc, match.group(1))


def stop(served: Served) -> str:
    if served.proc.poll() is None:
        served.proc.send_signal(signal.SIGINT)
    try:
        _, err = served.proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        served.proc.kill()
        _, err = served.proc.communicate()
        raise AssertionError("kitty board --serve ignored ^C") from None
    assert served.proc.returncode == 0, err
    return err


def record(name: str, value: Any) -> None:
    """Keep a measured figure in build/browser/figures.json (printed at the end of the run).
    The file holds this run's figures only (`figures.run` names the run), and the
    pytest-xdist workers of one run add theirs to it one at a time (a lock beside it)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path, run = ARTIFACTS / "figures.json", ARTIFACTS / "figures.run"
    with (ARTIFACTS / "figures.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        same_run = run.is_file() and run.read_text() == RUN
        figures = json.loads(path.read_text()) if same_run and path.is_file() else {}
        figures[name] = value
        path.write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n")
        run.write_text(RUN)
