"""Every benchmark script runs (tiny sizes, seconds) so none can rot unnoticed.

Each `benchmarks/*.py` with a `__main__` block takes `--smoke`; the others are libraries
the scripts import. A script that no longer imports, or whose commands kitty no longer
accepts, fails here instead of on the day someone wants the numbers.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
SCRIPTS = sorted(p for p in BENCHMARKS.glob("*.py") if "__main__" in p.read_text())
LIBRARIES = sorted(p for p in BENCHMARKS.glob("*.py") if p not in SCRIPTS)


def _kitty() -> str:
    """This installation's kitty script (the editable one in .venv)."""
    script = Path(sys.executable).with_name("kitty")
    assert script.is_file(), f"no kitty script beside {sys.executable}"
    return str(script)


def test_the_scripts_and_libraries_are_known() -> None:
    assert {p.name for p in SCRIPTS} >= {"bench.py", "web_board.py", "remote_claims.py"}
    for library in LIBRARIES:  # imported by a script, so the scripts' runs cover it
        assert any(f"from {library.stem} import" in s.read_text() for s in SCRIPTS), library


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_benchmark_runs_in_smoke_mode(script: Path, tmp_path: Path) -> None:
    env = dict(os.environ, TMPDIR=str(tmp_path))
    done = subprocess.run(
        [sys.executable, str(script), "--smoke", "--kitty", _kitty()],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=tmp_path,
        env=env,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "|" in done.stdout  # the table was printed
    assert "Traceback" not in done.stderr
