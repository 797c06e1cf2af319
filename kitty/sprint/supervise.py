"""Sprint process supervision: the running agents, their logs, waiting, and what the
orchestrator itself costs.

A `Job` is one agent run (a spawned process, a manual run a human does, or an
agent adopted from an earlier sprint). The sprint sleeps in `wait` until an agent
exits: every spawned or adopted agent has a pidfd that becomes readable when it
exits (Linux), so the next dispatch follows at once; elsewhere, and for manual
runs, the poll timeout wakes it. `Meter` measures the orchestrator: CPU per
dispatch, mean busy slots, the hand-off from an agent's exit to the next start,
CPU while only waiting.
"""

from __future__ import annotations

import json
import os
import resource
import select
import shlex
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from kitty.agents import reports
from kitty.agents.clis import Invocation
from kitty.agents.reports import RunReport
from kitty.agents.run import AgentRun
from kitty.core.clock import humanize_duration
from kitty.teams import liveness


@dataclass
class Job:
    wp_id: str
    role: str
    agent: str
    cycle: int
    started: float
    deadline: float
    log_path: Path
    argv: list[str] = field(default_factory=list)
    proc: AgentRun | None = None
    watch_pid: int | None = None  # an adopted agent from an earlier sprint
    start_lane: str | None = None
    log: IO[str] | None = None
    last_heartbeat: float = 0.0
    pidfd: int | None = None  # readable once the agent exits: wakes the sprint at once
    cli: str | None = None  # the agent CLI the command runs: how to read its output
    model: str | None = None  # the model it was told to use (None: the CLI's default)
    report: RunReport | None = None  # what its output said, once it ended
    exit_code: int | None = None
    timed_out: bool = False

    def close_pidfd(self) -> None:
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None


def new_job(log_dir: Path, wp_id: str, role: str, agent: str, cycle: int, timeout: float) -> Job:
    """A job starting now, with a log file of its own: a retry or a re-dispatch of the
    same WP, role and cycle gets `-attempt2`, `-attempt3`..."""
    now = time.monotonic()
    log_path = log_dir / f"{wp_id}-{role}-{cycle}.log"
    attempt = 1
    while log_path.exists():
        attempt += 1
        log_path = log_dir / f"{wp_id}-{role}-{cycle}-attempt{attempt}.log"
    job = Job(wp_id, role, agent, cycle, now, now + timeout, log_path)
    job.last_heartbeat = now  # the dispatch itself records the agent's pid and start
    return job


def launch(job: Job, invocation: Invocation, header: str) -> None:
    """Start the job's process with `header` at the top of its log; open its pidfd."""
    job.argv = invocation.argv
    job.cli = reports.cli_of(invocation.argv)
    assert job.log is not None
    job.log.write(header)
    job.log.flush()
    job.proc = AgentRun(invocation, job.agent, job.log)
    watch_exit(job)


def watch_exit(job: Job) -> None:
    """Open a pidfd on the job's process (spawned or adopted): `wait` wakes the moment
    it exits. Without pidfds (not Linux, an old kernel) the poll timeout does."""
    pid = job.proc.pid if job.proc is not None else job.watch_pid
    if pid is None or not hasattr(os, "pidfd_open"):
        return
    try:
        job.pidfd = os.pidfd_open(pid)
    except OSError:
        job.pidfd = None


def outcome(job: Job, lane_now: Callable[[], str | None], timeout: int) -> str | None:
    """None while the agent runs; otherwise how it ended (killing it at its deadline), on
    one line, with the agent's own error and the tool calls it was refused. `lane_now`
    is asked only for manual and adopted runs."""
    now = time.monotonic()
    if job.proc is not None:
        if job.proc.error:
            return job.proc.error
        code = job.proc.poll()
        if code is None:
            if now <= job.deadline:
                return None
            kill(job)
            job.timed_out = True
            job.report = read_output(job, failed=True)
            return f"timed out after {timeout}s" + denied_text(job)
        job.exit_code = code
        job.report = read_output(job, failed=code != 0)
        error = f": {job.report.error}" if code != 0 and job.report.error else ""
        if code == 0 and job.report.error:  # claude's is_error with exit 0
            error = f" but reported an error: {job.report.error}"
        return f"exit {code}{error}" + denied_text(job)
    if lane_now() != job.start_lane:
        return "lane changed"
    if job.watch_pid is not None and (exited(job) or not liveness.pid_alive(job.watch_pid)):
        return "agent process gone"
    if now > job.deadline:
        return f"timed out after {timeout}s"
    return None


def read_output(job: Job, failed: bool) -> RunReport:
    """What the agent CLI's output (the last 256 KiB of its log) says, read the way the CLI
    the command ran prints it; a failed run with no structured error gets its first
    error-looking line."""
    try:
        with job.log_path.open("rb") as log:
            log.seek(max(0, log.seek(0, os.SEEK_END) - 256 * 1024))
            tail = log.read().decode("utf-8", "replace")
    except OSError:
        return RunReport(job.cli)
    report = reports.read_report(job.cli, tail)
    if failed and report.error is None:
        report.error = reports.plain_error(tail)
    return report


def denied_text(job: Job) -> str:
    """The tool calls the agent was refused (claude and qwen exit 0 with `"subtype":
    "success"` after refusing one), said in the exit's text on one line, so a run that
    left its WP where it was is reported with the reason."""
    refused = job.report.denials if job.report else []
    if not refused:
        return ""
    shown = ", ".join(refused[:5]) + (f" and {len(refused) - 5} more" if len(refused) > 5 else "")
    return f"; {job.agent} was denied {len(refused)} tool call(s): {shown}"


def exited(job: Job) -> bool:
    """Whether the job's pidfd says its process is gone (False without a pidfd)."""
    if job.pidfd is None:
        return False
    readable, _, _ = select.select([job.pidfd], [], [], 0)
    return bool(readable)


def kill(job: Job) -> None:
    if job.proc is not None:
        job.proc.kill()
    job.close_pidfd()


def close_log(
    job: Job, how: str, seconds: float, now: str, record: dict[str, Any] | None = None
) -> None:
    """The log's last lines: how the run ended, and the run's record (usage, denials)."""
    if job.log is not None:
        job.log.write(f"\n# end: {now} ({how}, {humanize_duration(seconds)})\n")
        if record is not None:
            job.log.write(f"# run: {json.dumps(record, sort_keys=True)}\n")
        job.log.close()


def wait(jobs: Iterable[Job], poll: float) -> None:
    """Sleep until an agent exits (its pidfd becomes readable) or `poll` seconds pass;
    the timeout also serves manual runs, deadlines, heartbeats and changes made by
    others."""
    fds = [job.pidfd for job in jobs if job.pidfd is not None]
    if fds:
        select.select(fds, [], [], poll)
    else:
        time.sleep(poll)


def header(run_id: str, job: Job, invocation: Invocation, now: str) -> str:
    # the agent's own environment settings first, as a shell runs them (opencode's)
    env = "".join(f"{key}={shlex.quote(value)} " for key, value in invocation.env.items())
    return (
        f"# kitty sprint {run_id}: {job.role} {job.wp_id} by {job.agent} "
        f"(cycle {job.cycle})\n# command: {env}{shlex.join(invocation.argv)}\n"
        f"# cwd: {invocation.cwd}\n# start: {now}\n"
    )


def change_key(paths: Iterable[Path]) -> tuple[Any, ...]:
    """Cheap stats of the files a decision reads (no parsing): an append changes a
    log's size, a rewrite its inode or mtime, a WP file created or renamed into place
    its folder's mtime."""
    stamps: list[Any] = []
    for path in paths:
        try:
            st = os.stat(path)
            stamps.append((st.st_size, st.st_mtime_ns, st.st_ino))
        except OSError:
            stamps.append(None)
    return tuple(stamps)


def cpu_seconds() -> tuple[float, float]:
    """CPU of this process, and of the children it waited for (its git commands and the
    agents; `Meter` subtracts the agents' own)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time(), usage.ru_utime + usage.ru_stime


class Meter:
    """What the orchestrator itself costs, reported in the `end` event as `timing`.

    * `cpu_per_dispatch_ms`: the sprint's CPU (this process and its git commands, not
      the agents) from the start of the loop to its end, per agent run started (the
      start-up before it is a command's start-up, measured elsewhere);
    * `mean_busy_slots`: agent-seconds per second from the first dispatch to the last
      agent's exit (of `parallel`);
    * `handoff_ms`: mean time from seeing an agent exit to the next agent starting in
      its slot, when work was waiting;
    * `idle_cpu_percent`: the sprint's CPU while it only waited on running agents.
    """

    def __init__(self, parallel: int) -> None:
        self.parallel = parallel
        self.cpu0 = cpu_seconds()
        self.cpu_loop: tuple[float, float] | None = None
        self.agent_cpu = 0.0  # the agents' own CPU, reported by their exits
        self.dispatches = 0
        self.busy = 0.0  # slot-seconds with an agent running
        self.first: float | None = None  # the first dispatch
        self.last: float | None = None  # the last moment an agent was running
        self.running = 0
        self.since = time.monotonic()
        self.freed: list[float] = []  # when slots were freed by an exit, not yet refilled
        self.handoffs: list[float] = []
        self.ramp = 0.0  # slot-seconds before each slot got its first agent
        self.idle_cpu = 0.0
        self.idle_wall = 0.0

    def slots(self, running: int) -> None:
        """Integrate busy slots up to now; `running` agents from now on."""
        now = time.monotonic()
        self.busy += self.running * (now - self.since)
        if self.running:
            self.last = now
        if running and self.first is None:
            self.first = now
        self.running, self.since = running, now

    def exited(self, running: int, agent_cpu: float) -> None:
        self.slots(running)
        self.agent_cpu += agent_cpu
        self.freed.append(self.since)

    def dispatched(self, running: int) -> None:
        self.slots(running)
        self.dispatches += 1
        if self.freed:
            self.handoffs.append(self.since - self.freed.pop(0))
        elif self.dispatches <= self.parallel and self.first is not None:
            self.ramp += self.since - self.first  # a slot filled for the first time

    def nothing_to_start(self) -> None:
        """Free slots stay free for want of work: not a hand-off the sprint delays."""
        self.freed.clear()

    def loop_starts(self) -> None:
        self.cpu0 = cpu_seconds()

    def start_turn(self) -> tuple[float, float]:
        return sum(cpu_seconds()), time.monotonic()

    def end_turn(self, mark: tuple[float, float], eventful: bool) -> None:
        if not eventful and self.running:  # only waited on running agents
            self.idle_cpu += sum(cpu_seconds()) - mark[0]
            self.idle_wall += time.monotonic() - mark[1]

    def loop_done(self) -> None:
        self.slots(0)
        self.cpu_loop = cpu_seconds()

    def report(self) -> dict[str, Any]:
        if self.cpu_loop is None:
            self.loop_done()
        assert self.cpu_loop is not None
        own = self.cpu_loop[0] - self.cpu0[0]
        children = max(0.0, self.cpu_loop[1] - self.cpu0[1] - self.agent_cpu)
        cpu = own + children
        span = (self.last - self.first) if self.first is not None and self.last else 0.0
        idle = max(0.0, self.parallel * span - self.busy)
        handoff = sum(self.handoffs)
        return {
            "dispatches": self.dispatches,
            "orchestrator_cpu_seconds": round(cpu, 3),
            "subprocess_cpu_seconds": round(children, 3),
            "cpu_per_dispatch_ms": round(1000 * cpu / self.dispatches, 1)
            if self.dispatches
            else None,
            "parallel": self.parallel,
            "mean_busy_slots": round(self.busy / span, 3) if span > 0 else None,
            "busy_seconds": round(span, 2),
            # where the idle slot-seconds of that span went: filling the slots at the
            # start, exit-to-next-start hand-offs, and slots free for want of work
            "idle_slot_seconds": {
                "ramp_up": round(self.ramp, 2),
                "handoff": round(handoff, 2),
                "no_work": round(max(0.0, idle - self.ramp - handoff), 2),
            },
            "handoff_ms": round(1000 * handoff / len(self.handoffs), 1) if self.handoffs else None,
            "idle_cpu_percent": round(100 * self.idle_cpu / self.idle_wall, 2)
            if self.idle_wall > 0
            else None,
        }
