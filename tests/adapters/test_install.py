"""Which `kitty` PATH finds: `kitty doctor` warns about another one, the sprint avoids it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kitty.adapters.install import (
    is_kitty_script,
    own_bin_dir,
    path_warnings,
    path_with_own_bin_first,
)
from kitty.agents.run import agent_env
from tests.helpers import git, kitty, make_mission

EMULATOR = b"\x7fELF\x02\x01\x01\x00 the kitty terminal emulator"


@pytest.fixture
def here() -> Path:
    found = own_bin_dir()
    if found is None:  # e.g. run from an sdist without installing it
        pytest.skip("this kitty has no console script installed")
    return found


def emulator(tmp_path: Path) -> Path:
    bin_dir = tmp_path / "usr-bin"
    bin_dir.mkdir()
    (bin_dir / "kitty").write_bytes(EMULATOR)
    (bin_dir / "kitty").chmod(0o755)
    return bin_dir


def test_own_scripts_are_recognised(here: Path, tmp_path: Path) -> None:
    assert is_kitty_script(here / "kitty") and is_kitty_script(here / "kitty-kanban")
    assert not is_kitty_script(emulator(tmp_path) / "kitty")
    assert not is_kitty_script(tmp_path / "missing")


def test_path_warnings(here: Path, tmp_path: Path) -> None:
    shadow = emulator(tmp_path)
    (warning,) = path_warnings(f"{shadow}{os.pathsep}{here}")
    assert f"{shadow / 'kitty'}, which is not kitty-kanban" in warning
    assert f'export PATH="{here}:$PATH"' in warning and "kitty-kanban" in warning
    (missing,) = path_warnings(str(tmp_path / "empty"))
    assert missing.startswith("no `kitty` on PATH")
    assert path_warnings(f"{here}{os.pathsep}{shadow}") == []


def test_another_installation_is_named(here: Path, tmp_path: Path) -> None:
    other = tmp_path / "other-venv" / "bin"
    other.mkdir(parents=True)
    (other / "kitty").write_text("#!/opt/py/bin/python\nfrom kitty.cli import main\nmain()\n")
    (other / "kitty").chmod(0o755)
    (warning,) = path_warnings(f"{other}{os.pathsep}{here}")
    assert "another installation, Python /opt/py/bin/python" in warning


def test_own_bin_always_goes_first(here: Path, tmp_path: Path) -> None:
    shadow = emulator(tmp_path)
    path = path_with_own_bin_first(f"{shadow}{os.pathsep}{here}{os.pathsep}/bin")
    assert path.split(os.pathsep) == [str(here), str(shadow), "/bin"]


def test_agents_get_this_kitty_before_an_emulator(
    here: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"{emulator(tmp_path)}{os.pathsep}{here}")
    env = agent_env("claude")
    assert env["PATH"].split(os.pathsep)[0] == str(here)
    assert env["KITTY_AGENT"] == "claude"


def test_doctor_warns_about_the_emulator_without_failing(
    here: Path, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_mission(repo, wps=[{"wp_id": "WP01"}])
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plan")  # else doctor also (rightly) warns about that
    monkeypatch.setenv("PATH", f"{emulator(tmp_path)}{os.pathsep}{os.environ['PATH']}")
    run = kitty(repo, "doctor", "--json")
    assert run.code == 0
    (warning,) = run.json()["warnings"]
    assert "which is not kitty-kanban" in warning
    text = kitty(repo, "doctor")
    assert "warning: the `kitty` first on PATH" in text.err
    monkeypatch.setenv("PATH", f"{here}{os.pathsep}{os.environ['PATH']}")
    assert kitty(repo, "doctor", "--json").json()["warnings"] == []
