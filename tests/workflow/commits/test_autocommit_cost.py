"""An auto-committed move costs the move and one `git commit`, not a string of git
commands: kitty asks git what is pending, the committed size of the log (for the
message), commits, and reads the new commit's id; nothing else when no file changed
while git committed (issue 37)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers import git, kitty_argv
from tests.workflow.commits.test_autocommit import _kitty_dirty, _planned

SHIM = """#!/bin/sh
printf '%s\\n' "$1" >> {log}
exec {git} "$@"
"""


def test_an_auto_committed_move_runs_four_git_commands(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _planned(repo, 3)
    real = shutil.which("git")
    assert real
    bindir, log = tmp_path / "shim", tmp_path / "git.log"
    bindir.mkdir()
    (bindir / "git").write_text(SHIM.format(log=log, git=real))
    (bindir / "git").chmod(0o755)
    env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}")
    for lane in ("claimed", "planned"):
        log.unlink(missing_ok=True)
        argv = kitty_argv(repo, "move", "WP02", lane, "--agent", "claude")
        done = subprocess.run(argv, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert log.read_text().split() == ["status", "ls-tree", "commit", "rev-parse"]
        assert _kitty_dirty(repo) == ""
        assert git(repo, "diff", "--cached", "--name-only") == ""
    assert "WP02 claimed -> planned" in git(repo, "log", "-1", "--format=%s")
