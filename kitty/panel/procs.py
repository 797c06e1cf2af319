"""The review panel's effects at the edge: agent processes, the test command, git reads
and the write-once files. No rule lives here (those are panel/rules/rounds.py)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kitty.adapters import contain
from kitty.adapters.files import atomic_write
from kitty.core.verify import verify_commands
from kitty.errors import UsageError
from kitty.mission.workspace import Mission


def stamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")


def read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def read_text(path: Path) -> str | None:
    """A returned file's text; None when the process wrote none."""
    return path.read_text(encoding="utf-8") if path.is_file() else None


def write_once(path: Path, data: dict[str, Any]) -> None:
    contain.check(path)  # "x" never follows a final symlink; this covers the folders
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("x", encoding="utf-8") as fh:
        fh.write(json.dumps(data, indent=2) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def write_json(path: Path, data: dict[str, Any]) -> None:
    atomic_write(path, json.dumps(data, indent=2) + "\n")


def git_state(workspace: str) -> str:
    from kitty.adapters.git import Git

    git = Git(Path(workspace))
    return (
        git.status("rev-parse", "HEAD")[1].strip() + "\n" + git.status("status", "--porcelain")[1]
    )


def diff_scope(mission: Mission, wp_id: str) -> dict[str, Any]:
    """The round's scope: the full base..head diff of the WP's workspace."""
    from kitty.adapters.git import Git
    from kitty.mission.worktrees import existing_workspace

    st = mission.board.wps[wp_id]
    ws = existing_workspace(mission, wp_id)
    git = Git(mission.project.root, gitpython=True)
    head_ref = ws.branch if ws.branch and git.branch_exists(ws.branch) else "HEAD"
    base = str(st.scalars.get("base_commit") or "")
    if not base:
        target = str(mission.meta.get("target_branch") or "main")
        base = (
            git.run("merge-base", target, head_ref).strip()
            if git.branch_exists(target)
            else head_ref
        )
    head = git.sha(head_ref)
    diff = git.run("diff", f"{base}..{head}")
    files = [f for f in git.run("diff", "--name-only", f"{base}..{head}").splitlines() if f]
    return {
        "base": base,
        "branch": ws.branch or git.run("rev-parse", "--abbrev-ref", "HEAD").strip(),
        "head_sha": head,
        "pr_url": None,
        "files_changed": len(files),
        "files": files,
        "workspace": str(ws.path),
        "diff": diff,
        "verify": [" ".join(c.line.split()) for c in verify_commands(mission.config.raw)],
    }


def start_agent(
    mission: Mission,
    who: tuple[str, str, str],
    prompt: str,
    files: tuple[Path, Path],
    workspace: str,
    timeout: int,
    extra: dict[str, str],
) -> Any:
    """who = (agent, role, wp_id); files = (prompt file, log file). Returns (run, log)."""
    from kitty.agents import grants
    from kitty.agents.clis import MANUAL, Dispatch, backend_for
    from kitty.agents.run import AgentRun

    agent, role, wp_id = who
    prompt_file, log_file = files
    backend = backend_for(agent, mission.config.raw)
    if backend.kind == MANUAL:
        raise UsageError(f"{agent} is a manual agent", "the panel needs agent CLIs")
    atomic_write(prompt_file, prompt)
    invocation = backend.invocation(
        Dispatch(
            agent,
            role,
            prompt,
            str(prompt_file),
            workspace,
            wp_id,
            mission.slug,
            str(mission.project.root),
            timeout,
            extra,
            grants.configured(mission.config.raw),
        )
    )
    log_path = contain.check(log_file)  # `.kittify/runs` symlink
    log_path.parent.mkdir(parents=True, exist_ok=True)
    contain.check_final(log_path)
    log = log_path.open("a", encoding="utf-8")
    log.write(f"# command: {shlex.join(invocation.argv)}\n# cwd: {invocation.cwd}\n")
    log.flush()
    return AgentRun(invocation, agent, log), log


def wait_all(runs: list[tuple[Any, Any]], timeout: int) -> list[int]:
    """Wait for every run; past the timeout the rest are killed (exit -9)."""
    deadline = time.monotonic() + timeout
    codes: list[int | None] = [None] * len(runs)
    while any(c is None for c in codes):
        for i, (run, _) in enumerate(runs):
            if codes[i] is None:
                codes[i] = run.poll()
        if time.monotonic() > deadline:
            for i, (run, _) in enumerate(runs):
                if codes[i] is None:
                    run.kill()
                    codes[i] = -9
        time.sleep(0.05)
    for _, log in runs:
        log.close()
    return [int(c if c is not None else -1) for c in codes]


def run_tests(argv: list[str], workspace: str) -> tuple[int, str]:
    """review.test_command in the workspace: its exit and its output."""
    done = subprocess.run(argv, cwd=workspace, capture_output=True, text=True, check=False)
    return done.returncode, done.stdout + done.stderr
