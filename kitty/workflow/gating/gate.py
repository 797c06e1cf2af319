"""The test gate: run the project's `verify.*` commands in a worktree and record the
result in the mission's log (the rules are kitty.workflow.rules.gate).

Each command runs without a shell, in its own session (a timeout kills the whole
group), its output in a file of the run's log directory; the gate stops at the first
failure, and a failing command is re-run once at once (fail-then-pass: flaky). Like
every command the repository defines, nothing runs until `kitty trust` trusts it.
`kitty verify WP01` runs it in the WP's lane worktree; the sprint calls the same
`verify_wp` after each implementer's run, and the merge queue `run_gate` on its
integration tree.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kitty.adapters import trust
from kitty.core.verify import VerifyCommand, verify_commands
from kitty.errors import GuardRefused, UsageError
from kitty.mission.workspace import Mission
from kitty.mission.worktrees import existing_workspace
from kitty.workflow.rules import gate as rules


def commands(mission: Mission) -> tuple[VerifyCommand, ...]:
    """The configured commands, trusted (Untrusted otherwise); empty when none."""
    found = verify_commands(mission.config.raw)
    if found:
        used = list(dict.fromkeys(f"verify.{c.name}" for c in found))
        trust.require(mission.project.root, mission.config.raw, used=used)
    return found


def runs_dir(mission: Mission, label: str) -> Path:
    """A log directory for a gate run outside a sprint: `.kittify/runs/<label>-<time>`."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return mission.project.root / ".kittify" / "runs" / f"{label}-{stamp}-{os.getpid()}"


def _run_one(argv: Sequence[str], cwd: Path, out: Path, timeout: float) -> tuple[int | None, float]:
    """(exit code or None on timeout, seconds) of one command, its output in `out`."""
    start = time.monotonic()
    with out.open("w", encoding="utf-8") as log:
        log.write(f"# kitty gate: {' '.join(argv)}\n# cwd: {cwd}\n")
        log.flush()
        try:
            proc = subprocess.Popen(
                list(argv),
                cwd=cwd,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                # no __pycache__ left in the worktree: a lane stays clean for review
                env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"),
            )
        except OSError as exc:
            log.write(f"could not start {argv[0]}: {exc.strerror or exc}\n")
            return 127, time.monotonic() - start
        try:
            code: int | None = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            log.write(f"\n# kitty gate: timed out after {timeout:g}s, killed\n")
            code = None
    return code, time.monotonic() - start


def _free_label(out_dir: Path, label: str) -> str:
    """`label`, or `label-2`, `label-3`... when an earlier gate run used it."""
    name, n = label, 1
    while any(out_dir.glob(f"{name}-[0-9]*-*.log")):
        n += 1
        name = f"{label}-{n}"
    return name


def run_gate(
    cwd: Path, found: Sequence[VerifyCommand], out_dir: Path, label: str, timeout: float
) -> dict[str, Any]:
    """Run the commands in `cwd` (in order, stopping at the first failure); the run as
    data: the commit tested, each command's exit codes, seconds, output file, flaky."""
    from kitty.adapters.git import Git

    out_dir.mkdir(parents=True, exist_ok=True)
    git = Git(cwd)
    before = set(git.changed_paths())
    commit, clean = git.sha(), not before  # what is tested: before it runs
    label = _free_label(out_dir, label)
    ran: list[dict[str, Any]] = []
    for index, command in enumerate(found, 1):
        exits: list[int | None] = []
        seconds = 0.0
        out = out_dir
        while not exits or rules.needs_rerun(exits):
            again = "-rerun" if exits else ""
            out = out_dir / f"{label}-{index}-{command.name}{again}.log"
            code, took = _run_one(command.argv, cwd, out, timeout)
            exits.append(code)
            seconds += took
        passed, flaky = rules.attempt_verdict(exits)
        entry: dict[str, Any] = {
            "name": command.name,
            "line": command.line,
            "exit": exits[-1],
            "exits": exits,
            "seconds": round(seconds, 2),
            "output": str(out),
            "passed": passed,
            "flaky": flaky,
        }
        if not passed:
            entry["tail"] = rules.tail(out.read_text(encoding="utf-8", errors="replace"))
        ran.append(entry)
        if not passed:
            break
    # files the commands left in the worktree (not ignored): they would block accept
    left = sorted(set(git.changed_paths()) - before)
    return {
        "commit": commit,
        "clean": clean,
        "left_behind": left,
        "output": str(out_dir),
        "timeout": timeout,
        "commands": ran,
        "result": rules.outcome(ran),
    }


def record_gate(
    mission: Mission,
    wp_id: str,
    run: dict[str, Any],
    actor: str,
    where: str = rules.LANE,
    others: Sequence[str] = (),
) -> dict[str, Any]:
    """One annotation on `wp_id` with the run (through the mission's one write path);
    the delta recorded."""
    made: list[dict[str, Any]] = []

    def build(board: Any) -> list[dict[str, Any]]:
        st = board.wps.get(wp_id)
        before = int((st.scalars.get("gate_failures") or 0) if st is not None else 0)
        made.append(rules.delta(run, before, where, others))
        return [mission.annotation(wp_id, actor, made[-1])]

    mission.record(build)
    return made[-1]


def verify_wp(
    mission: Mission,
    wp_id: str,
    actor: str,
    log_dir: Path | None = None,
    timeout: float | None = None,
) -> dict[str, Any]:
    """Run the gate in `wp_id`'s lane worktree and record it; what `kitty verify` prints."""
    found = commands(mission)
    if not found:
        raise UsageError(
            "no verification commands are configured",
            'add them to .kittify/config.yaml, e.g. verify: {test: "python -m pytest -q"},'
            " then run `kitty trust`",
        )
    ws = existing_workspace(mission, wp_id)
    if not ws.path.is_dir():
        raise GuardRefused(
            f"{wp_id} has no lane worktree at {ws.path}",
            f"start it first: kitty agent action implement {wp_id} --mission {mission.slug}",
        )
    limit, _ = rules.settings(mission.config.raw)
    out_dir = log_dir or runs_dir(mission, "verify")
    run = run_gate(ws.path, found, out_dir / "gate", wp_id, timeout or limit)
    recorded = record_gate(mission, wp_id, run, actor)
    return {
        "mission": mission.slug,
        "wp_id": wp_id,
        "workspace": str(ws.path),
        "result": recorded["gate"],
        "passed": recorded["gate"] != rules.FAILED,
        "flaky": recorded["gate"] == rules.FLAKY,
        "commit": run["commit"],
        "clean": run["clean"],
        "left_behind": run["left_behind"],
        "output": run["output"],
        "commands": run["commands"],
        "failures": recorded["gate_failures"],
    }
