"""The read path stays lean: no GitPython or networkx for --help, status and next (and no
msgspec for a small log: it decodes only big ones)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import kitty
from tests.helpers import make_mission

PROBE = """
import sys
from kitty.cli import cli, run
code = run(cli, sys.argv[1:])
heavy = sorted(
    m
    for m in ("git", "networkx", "filelock", "fastjsonschema", "mcp", "pydantic", "msgspec")
    if m in sys.modules
)
print("HEAVY=" + ",".join(heavy), file=sys.stderr)
sys.exit(code)
"""


def heavy_modules(*args: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    line = [x for x in done.stderr.splitlines() if x.startswith("HEAVY=")][-1]
    return [m for m in line[len("HEAVY=") :].split(",") if m]


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["status"],
        ["status", "--json"],
        ["next", "--agent", "claude", "--json"],
    ],
)
def test_read_path_imports_no_heavy_modules(repo: Path, args: list[str]) -> None:
    make_mission(repo, wps=[{"wp_id": "WP01"}, {"wp_id": "WP02", "deps": ["WP01"]}])
    argv = args if args == ["--help"] else ["-C", str(repo), *args]
    assert heavy_modules(*argv) == []


def test_every_module_imports_in_a_fresh_interpreter() -> None:
    root = Path(kitty.__file__).parent
    modules = sorted(
        "kitty." + ".".join(p.relative_to(root).with_suffix("").parts)
        for p in root.rglob("*.py")
        if p.name != "__main__.py"
    )
    code = "import importlib, sys\nfor m in sys.argv[1:]: importlib.import_module(m)"
    done = subprocess.run(
        [sys.executable, "-c", code, *modules], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr


ENTRY_PROBE = """
import sys
from kitty.entry import main
try:
    main()
finally:
    loaded = [m for m in ("dataclasses", "inspect") if m in sys.modules]
    print("LOADED=" + ",".join(loaded), file=sys.stderr)
"""


@pytest.mark.parametrize(
    "args",
    [
        ["agent", "tasks", "move-task", "WP01", "--to", "claimed", "--agent", "claude"],
        ["next", "--agent", "claude", "--json"],
        ["status", "--json"],
    ],
)
def test_the_hot_commands_start_without_dataclasses(
    repo: Path, args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A move, `next` and `status` read the log, the WPs and the config from scratch (no
    snapshot cache) without importing dataclasses or inspect: their start-up stays close
    to a bare interpreter's."""
    make_mission(repo, wps=[{"wp_id": "WP01"}, {"wp_id": "WP02", "deps": ["WP01"]}])
    monkeypatch.setenv("KITTY_NO_CACHE", "1")
    done = subprocess.run(
        [sys.executable, "-c", ENTRY_PROBE, "-C", str(repo), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()  # the command did its work
    assert done.stderr.splitlines()[-1] == "LOADED=", done.stderr
