"""An agent that cannot start is blamed for what actually failed."""

from __future__ import annotations

import sys
from pathlib import Path

from kitty.agents.clis import Invocation
from kitty.agents.run import AgentRun


def test_a_missing_working_directory_is_named_not_the_executable(tmp_path: Path) -> None:
    gone = tmp_path / "worktree-that-is-not-there"
    with (tmp_path / "agent.log").open("w+") as log:
        run = AgentRun(Invocation([sys.executable, "-c", "pass"], str(gone)), "codex", log)
        log.seek(0)
        assert run.error is not None and run.error in log.read()
    assert str(gone) in run.error and "does not exist" in run.error


def test_a_missing_executable_is_still_named(tmp_path: Path) -> None:
    with (tmp_path / "agent.log").open("w") as log:
        run = AgentRun(Invocation(["no-such-agent-cli"], str(tmp_path)), "codex", log)
    assert run.error == "could not start no-such-agent-cli: No such file or directory"
