"""`kitty sprint`: drive agent CLIs through the implement-review loop, unattended.

Claims are made one at a time by this process (the same rules as `kitty next`);
agents then run in parallel, up to `--parallel`. Scheduling is completion-driven:
whenever an agent exits, its outcome is checked and new work is dispatched at
once (a review as soon as a WP reaches for_review, dependents as soon as their
dependencies are approved). All state lives in the event log, so a killed sprint
is resumed by running it again.

The loop is event-driven: it sleeps until an agent exits (on the agents' pidfds)
or the poll interval passes, and reads the mission again only when its files
changed (their size, mtime or inode), at least every `REREAD` seconds; while the
slots are full or nothing changed since the last look found no work, a turn
costs a few stat calls.

The parts, each readable and testable alone: `kitty.core.sprintplan` decides
(pure: which work, which agent, what an exit means, the arbiter, the halt text),
`kitty.services.supervise` runs and watches the agent processes and measures the
orchestrator, `kitty.services.sprint_report` builds the summary and the dry-run
plan, `kitty.services.sprint_resume` finds what a killed sprint left running.
This module is the loop that connects them to the mission's one write path.
"""

from __future__ import annotations

import os
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kitty.adapters import contain, eventlog, snapshots, trust
from kitty.adapters.agents import MANUAL, Backend, Dispatch, Invocation, backend_for
from kitty.core import lanes, sprintplan
from kitty.core.clock import format_at
from kitty.core.decide import Context, Queues, work_queues
from kitty.core.limits import check_agent
from kitty.core.sprintplan import IMPLEMENT, PANEL, REVIEW, Step
from kitty.core.transitions import halted
from kitty.errors import KittyError, LockBusy, UsageError
from kitty.services import actions, moves, supervise
from kitty.services.schedule import context
from kitty.services.sprint_report import WPStats, dry_run_event, dry_run_order, plan_entry
from kitty.services.sprint_report import summary_rows as report_rows
from kitty.services.sprint_resume import adoptions
from kitty.services.supervise import Job, Meter
from kitty.services.workspace import Mission

Emit = Callable[[dict[str, Any]], None]
__all__ = ["IMPLEMENT", "Emit", "Options", "Sprint"]  # what teamsprint and the commands use
#: Read the mission again at least this often even when no file changed: decisions
#: that depend on time (a lease running out), a WP file edited in place.
REREAD = 5.0
#: Save the log's snapshot again once this much was appended since (bytes; a command
#: that reads once waits for 256 KiB).
SNAPSHOT_TAIL = 16 * 1024


@dataclass
class Options:
    implementers: list[str]
    reviewers: list[str]
    parallel: int = 2
    timeout: int = 1800
    max_cycles: int | None = None
    merge: bool = False
    caffeinate: bool = True
    dry_run: bool = False
    retries: int = 2
    poll: float = 0.2
    heartbeat_every: float = 60.0
    arbiter: str = "escalate"  # escalate | approve
    review_panel: list[str] | None = None  # personas: reviews run as `kitty review run`
    remote: str | None = None  # share the mission with sprints on other machines


def run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + f"-{os.getpid()}"


def now_text() -> str:
    return format_at(eventlog.now_us())


class Sprint:
    def __init__(self, repo: Path, mission: str | None, opts: Options, emit: Emit) -> None:
        if not opts.implementers:
            raise UsageError("a sprint needs at least one implementer", "--implementer claude")
        if not opts.reviewers:
            raise UsageError("a sprint needs at least one reviewer", "--reviewer codex")
        if opts.parallel < 1:
            raise UsageError("--parallel must be at least 1", "for example --parallel 3")
        if opts.arbiter not in ("escalate", "approve"):
            raise UsageError(f"unknown arbiter policy {opts.arbiter!r}", "escalate or approve")
        for flag, names in (("--implementer", opts.implementers), ("--reviewer", opts.reviewers)):
            for name in names:
                check_agent(name, flag)
        self.repo = repo
        named = Mission.open(repo, mission)  # resolves the name; reads nothing yet
        self.slug = named.slug
        self.watched = [
            *(named.dir / name for name in ("status.events.jsonl", "tasks", "lanes.json")),
            *(named.dir / name for name in ("issue-matrix.json", "issue-matrix.md", "meta.json")),
            named.project.config_path,
        ]
        self.opts = opts
        self.emit = emit
        self.run_id = run_id()
        self.jobs: dict[str, Job] = {}
        self.halted: dict[str, str] = {}
        self.failures: dict[tuple[str, str], int] = {}
        self.retry: list[sprintplan.Retry] = []  # re-dispatched before anything else
        self.stats: dict[str, WPStats] = {}
        self.turn = 0
        self.meter = Meter(opts.parallel)
        self.cached: tuple[Mission, tuple[Any, ...], float] | None = None
        self.versions: list[Any] = []  # the agent CLIs' versions, read by the pre-flight
        self.nothing_at: tuple[tuple[Any, ...], float] | None = None  # no work found then
        probe = self.mission()
        names = [*opts.implementers, *opts.reviewers]
        if not opts.dry_run:  # pre-flight: nothing is claimed or started when this refuses
            # Before backend_for: an untrusted template is refused, never validated first.
            self.require_trust(probe, names)
        self.backends = {name: backend_for(name, probe.config.raw) for name in names}

    def require_trust(self, mission: Mission, names: list[str]) -> None:
        """Commands from the repository's config run only when the user trusts them."""
        defined = trust.repo_commands(mission.config.raw)
        keys = sorted({f"agents.commands.{n}" for n in names} & set(defined))
        if "agents.commands" in defined:  # not a mapping: covers every name
            keys.append("agents.commands")
        if self.opts.review_panel and "review.test_command" in trust.repo_commands(
            mission.config.raw
        ):
            keys.append("review.test_command")  # the panel's `kitty review run` runs it
        if keys:
            trust.require(mission.project.root, mission.config.raw, keys)

    def backend(self, mission: Mission, agent: str) -> Backend:
        backend = self.backends.get(agent)
        if backend is None:
            if not self.opts.dry_run:
                self.require_trust(mission, [agent])
            backend = backend_for(agent, mission.config.raw)
            self.backends[agent] = backend
        return backend

    def preflight(self) -> None:
        """Refuse before anything starts when an agent CLI cannot be run, or when some
        implementer's work could never be reviewed (its only reviewer is itself)."""
        alone = sprintplan.no_second_reviewer(self.opts.implementers, self.opts.reviewers)
        if alone and not self.opts.review_panel:
            head, _, how = alone.partition(". ")
            raise UsageError(head, how)
        missing = [
            (name, backend.executable() or name)
            for name, backend in self.backends.items()
            if backend.kind != MANUAL and not backend.available()
        ]
        if missing:
            names = ", ".join(name for name, _ in missing)
            raise UsageError(
                "; ".join(f"{exe}: not found on PATH (agent {name})" for name, exe in missing),
                f"install it or put it on PATH; or drop {names} from --implementer/--reviewer; "
                "or define agents.commands.<name> in .kittify/config.yaml "
                "(`kitty agent config list` shows what is found)",
            )
        from kitty.adapters.agents import check_versions

        # Each CLI's version against the range kitty was tested with: a warning, never
        # a refusal (a newer CLI usually still accepts the command line).
        self.versions = check_versions(
            [b for b in self.backends.values() if b.kind not in (MANUAL, "command")]
        )

    # -- reading -------------------------------------------------------------
    def mission(self) -> Mission:
        """The mission, read again only when one of its files changed since the last read
        (or `REREAD` seconds passed). The stats are taken before reading, so a change
        made while reading is seen next time."""
        now = time.monotonic()
        key = self.files_key()
        if self.cached is not None:
            mission, seen, at = self.cached
            if seen == key and now - at < REREAD:
                return mission
        mission = Mission.open(self.repo, self.slug)
        if self.opts.max_cycles is not None:
            mission.__dict__["config"] = replace(mission.config, max_cycles=self.opts.max_cycles)
        # The log grows all through a sprint: keep the snapshot's unparsed tail short, so
        # each read (here, under the write lock, in the agents' kitty commands) is cheap.
        mission.__dict__["log_state"] = snapshots.read_log(
            mission.events_path, mission.cache_dir, resave_tail=SNAPSHOT_TAIL
        )
        self.cached = (mission, key, now)
        return mission

    def files_key(self) -> tuple[Any, ...]:
        return supervise.change_key(self.watched)

    def state_key(self) -> tuple[Any, ...]:
        """What a dispatch decision depends on: the files and this sprint's own state."""
        return (
            self.files_key(),
            frozenset(self.jobs),
            tuple(self.retry),
            frozenset(self.halted),
        )

    def ctx(self, mission: Mission) -> Context:
        return context(mission, "sprint", mission.board, eventlog.now_us())

    @property
    def log_dir(self) -> Path:
        return self.repo / ".kittify" / "runs" / self.run_id

    # -- the loop --------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        from filelock import FileLock, Timeout

        from kitty.adapters.awake import prevent_idle_sleep

        if self.opts.dry_run:
            return self.dry_run()
        mission = self.mission()
        contain.check(self.log_dir)  # a committed `.kittify/runs` symlink: refuse up front
        self.preflight()  # an agent CLI that cannot run: refuse before anything starts
        lock_path = mission.project.lock_path(f"sprint-{self.slug}")
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(lock_path), timeout=0)
        try:
            lock.acquire()
        except Timeout:
            raise LockBusy(
                f"another kitty sprint is running for {self.slug}",
                "wait for it to finish, or stop it; a killed sprint frees the lock",
            ) from None
        try:
            with prevent_idle_sleep(
                self.opts.caffeinate,
                f"kitty sprint {self.slug}",
                lambda msg: self.emit({"event": "notice", "message": msg}),
            ) as guard:
                self.emit(
                    {
                        "event": "start",
                        "mission": self.slug,
                        "run": self.run_id,
                        "keep_awake": guard,
                        "parallel": self.opts.parallel,
                        "implementers": self.opts.implementers,
                        "reviewers": self.opts.reviewers,
                    }
                )
                if self.versions:
                    self.emit({"event": "versions", "agents": [v.as_dict() for v in self.versions]})
                self.adopt()
                try:
                    self.loop()
                except BaseException:
                    self.stop_all()
                    raise
                return self.finish()
        finally:
            lock.release()

    def loop(self) -> None:
        """Reap, heartbeat, dispatch, wait; until nothing runs and nothing can start."""
        self.meter.loop_starts()
        while True:
            mark = self.meter.start_turn()
            reaped = self.reap()
            self.heartbeat()
            started = self.dispatch()
            if not self.jobs and not started and not self.others_active():
                break
            self.wait()
            self.meter.end_turn(mark, eventful=reaped or started)
        self.meter.loop_done()

    def wait(self) -> None:
        supervise.wait(self.jobs.values(), self.opts.poll)

    def adopt(self) -> None:
        """Take over WPs an earlier (killed) sprint left with agents."""
        for found in adoptions(self.mission(), self.owns_claim):
            if found.alive:
                job = supervise.new_job(
                    self.log_dir, found.wp_id, found.role, found.agent, found.cycle,
                    self.opts.timeout,
                )  # fmt: skip
                job.watch_pid, job.start_lane = int(str(found.pid)), found.lane
                supervise.watch_exit(job)
                self.jobs[found.wp_id] = job
            else:
                self.retry.append((found.wp_id, found.role, found.agent))
            self.emit(found.event())

    def dispatch(self) -> bool:
        """Fill the free slots; True when anything was done. Skipped while nothing a
        decision reads changed since the last look found no work (and for less than
        `REREAD` seconds)."""
        if len(self.jobs) >= self.opts.parallel:
            return False
        if self.nothing_at is not None:
            key, at = self.nothing_at
            if time.monotonic() - at < REREAD and key == self.state_key():
                return False
        started = False
        while len(self.jobs) < self.opts.parallel:
            if not self.dispatch_one():
                self.meter.nothing_to_start()
                break
            started = True
        return started

    def dispatch_one(self) -> bool:
        """Do the next step (a re-run, a review, the arbiter, a fix, fresh work); False
        when there is nothing to do."""
        key = self.state_key()
        mission = self.mission()
        step, self.retry = sprintplan.take_retry(self.retry, self.jobs, self.halted)
        if step is None and not self.opts.review_panel:
            stalled = self.stalled_review(mission)
            if stalled is not None:
                self.nothing_at = None
                wp_id, reviewer, why = stalled
                moves.move_task(  # released (recorded), then reviewed like any other WP
                    mission,
                    wp_id,
                    lanes.FOR_REVIEW,
                    agent=reviewer,
                    force=True,
                    note=f"review taken over by {reviewer} (kitty sprint): {why}",
                )
                self.emit({"event": "takeover", "wp_id": wp_id, "agent": reviewer,
                           "message": why})  # fmt: skip
                return self.start(self.mission(), wp_id, REVIEW, reviewer)
        if step is None:
            busy = frozenset(self.jobs) | frozenset(self.halted)
            step = self.choose(mission, work_queues(self.ctx(mission), exclude=busy))
        if step is None:
            self.nothing_at = (key, time.monotonic())
            return False
        self.nothing_at = None
        if step.kind == sprintplan.HALT:
            self.halt(mission, step.wp_id, step.agent, step.why)
            return True
        if step.kind == sprintplan.ARBITRATE:
            self.arbitrate(mission, step.wp_id)
            return True
        if step.agent == PANEL:
            return self.start_panel(mission, step.wp_id)
        return self.start(mission, step.wp_id, step.role, step.agent)

    def foreign_holds(self, mission: Mission) -> list[str]:
        """WPs held (claimed, in progress) by an agent this sprint does not run: named,
        with how the holder releases the claim (issue 22.12)."""
        found = []
        for wp_id in mission.all_ids():
            st = mission.board.wps.get(wp_id)
            if st is None or st.lane not in (lanes.CLAIMED, lanes.IN_PROGRESS):
                continue
            holder = st.implementer or "unknown"
            if wp_id in self.jobs or (st.runtime_claim or {}).get("sprint_run") == self.run_id:
                continue
            how = (
                f"kitty move {wp_id} planned --mission {self.slug} --agent {shlex.quote(holder)} "
                '--note "claim released"'
            )
            found.append(
                f"{wp_id} is {st.lane} by {holder}, which this sprint does not run "
                f"(held by nobody it runs): {holder} finishes it or releases it: {how}"
            )
        return found

    def stalled_review(self, mission: Mission) -> tuple[str, str, str] | None:
        """A review nobody works on (silent past review.stall_minutes, not one of this
        sprint's jobs), with the reviewer to take it over and why; None if there is none."""
        from kitty.core.decide import stalled

        ctx = self.ctx(mission)
        for wp_id in mission.all_ids():
            st = mission.board.wps.get(wp_id)
            if st is None or st.lane != lanes.IN_REVIEW or wp_id in self.jobs:
                continue
            if wp_id in self.halted:
                continue
            why = stalled(ctx, st)
            if why is None:
                continue
            others = [r for r in self.opts.reviewers if r != st.reviewer] or self.opts.reviewers
            used = self.stats.get(wp_id, WPStats()).reviewers
            reviewer = sprintplan.pick_reviewer(st.implementer, others, used)
            if reviewer is not None:
                return wp_id, reviewer, f"{st.reviewer}'s review was STALLED: {why}"
        return None

    def choose(self, mission: Mission, queues: Queues) -> Step | None:
        implementer_of = {
            w: st.implementer
            for w in [*queues.reviews, *queues.fixes, *queues.fresh]
            if (st := mission.board.wps.get(w)) is not None
        }
        reviewed_by = {w: stats.reviewers for w, stats in self.stats.items()}
        step, self.turn = sprintplan.choose(
            queues,
            implementer_of,
            reviewed_by,
            self.opts.implementers,
            self.opts.reviewers,
            self.turn,
            panel=bool(self.opts.review_panel),
        )
        return step

    # -- starting agents ---------------------------------------------------------
    def new_job(self, wp_id: str, role: str, agent: str, cycle: int) -> Job:
        return supervise.new_job(self.log_dir, wp_id, role, agent, cycle, self.opts.timeout)

    def count_run(self, wp_id: str, role: str, agent: str) -> None:
        stats = self.stats.setdefault(wp_id, WPStats())
        (stats.implementers if role == IMPLEMENT else stats.reviewers).append(agent)
        stats.runs += 1

    def start(self, mission: Mission, wp_id: str, role: str, agent: str) -> bool:
        backend = self.backend(mission, agent)  # an untrusted command: refused before the claim
        try:
            if role == IMPLEMENT:
                from kitty.core.clock import ulid

                invocation = ulid(int(time.time() * 1000), os.urandom(10))
                record = actions.dispatch_record(mission, invocation, wp_id, IMPLEMENT, agent, None)
                mission.record(lambda board: [record])
                claimed = actions.implement(mission, wp_id, agent, invocation_id=invocation)
            else:
                claimed = actions.review(mission, wp_id, agent)
        except KittyError as exc:
            self.fail_to_start(mission, wp_id, role, agent, exc)
            return True
        st = mission.board.wps[wp_id]  # the claim's write left the board fresh
        prompt_path = Path(claimed["prompt"])
        job = self.new_job(wp_id, role, agent, st.review_cycles + 1)
        extra = (
            {"result_file": str(job.log_path.with_suffix(".result.md"))} if role == REVIEW else {}
        )
        dispatch = Dispatch(
            agent,
            role,
            prompt_path.read_text(encoding="utf-8"),
            str(prompt_path),
            claimed["workspace"],
            wp_id,
            self.slug,
            str(mission.project.root),
            self.opts.timeout,
            extra,
        )
        job.start_lane = st.lane
        job.kind = backend.kind
        self.count_run(wp_id, role, agent)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        job.log = job.log_path.open("x", encoding="utf-8")
        if backend.kind == MANUAL:
            self.manual(job, claimed)
        else:
            command = backend.invocation(dispatch)
            supervise.launch(job, command, supervise.header(self.run_id, job, command, now_text()))
        self.jobs[wp_id] = job
        self.meter.dispatched(len(self.jobs))
        pid = job.proc.pid if job.proc else None
        if job.proc is not None and job.proc.error:
            self.emit(
                {
                    "event": "error",
                    "wp_id": wp_id,
                    "role": role,
                    "agent": agent,
                    "message": job.proc.error,
                    "hint": f"log: {job.log_path}",
                }
            )
        self.annotate(
            mission,
            wp_id,
            agent,
            {
                "agent_pid": pid,
                "agent_started_at": now_text(),
                "sprint_run": self.run_id,
                "role": "implementer" if role == IMPLEMENT else "reviewer",
            },
        )
        self.emit_dispatch(job, pid)
        return True

    def emit_dispatch(self, job: Job, pid: int | None) -> None:
        self.emit(
            {
                "event": "dispatch",
                "wp_id": job.wp_id,
                "role": job.role,
                "agent": job.agent,
                "cycle": job.cycle,
                "pid": pid,
                "log": str(job.log_path),
                "command": job.argv,
            }
        )

    def start_panel(self, mission: Mission, wp_id: str) -> bool:
        """The review is one `kitty review run` process: it runs the reviewer personas
        (on --reviewer agents) round by round and dispatches the fixes itself."""
        import shlex
        import sys

        panel = self.opts.review_panel or []
        argv = [
            sys.executable, "-m", "kitty", "-C", str(self.repo), "review", "run", wp_id,
            "--mission", self.slug, "--panel", ",".join(panel),
            "--agents", ",".join(self.opts.reviewers), "--timeout", str(self.opts.timeout),
            "--json",
        ]  # fmt: skip
        st = mission.board.wps[wp_id]
        job = self.new_job(wp_id, REVIEW, PANEL, st.review_cycles + 1)
        job.deadline = job.started + self.opts.timeout * (2 * mission.config.max_cycles + 2)
        job.start_lane = st.lane
        self.count_run(wp_id, REVIEW, PANEL)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        job.log = job.log_path.open("a", encoding="utf-8")
        supervise.launch(
            job,
            Invocation(argv, str(self.repo)),
            f"# kitty sprint {self.run_id}: review panel {wp_id}\n# command: {shlex.join(argv)}\n",
        )
        self.jobs[wp_id] = job
        self.meter.dispatched(len(self.jobs))
        self.emit_dispatch(job, job.proc.pid if job.proc else None)
        return True

    def manual(self, job: Job, claimed: dict[str, Any]) -> None:
        """Tier 3: a human runs the agent; we wait until the WP's lane changes."""
        verb = "for_review" if job.role == IMPLEMENT else "approved (or planned with feedback)"
        self.emit(
            {
                "event": "manual",
                "wp_id": job.wp_id,
                "role": job.role,
                "agent": job.agent,
                "message": f"Manual dispatch required for agent: {job.agent}\n"
                f"Workspace: cd {claimed['workspace']}\n"
                f"Prompt: cat {claimed['prompt']}\n"
                f"When done, move {job.wp_id} to {verb} with "
                "kitty agent tasks move-task",
            }
        )
        job.argv = ["manual"]

    def fail_to_start(
        self, mission: Mission, wp_id: str, role: str, agent: str, exc: KittyError
    ) -> None:
        self.emit(
            {
                "event": "error",
                "wp_id": wp_id,
                "role": role,
                "agent": agent,
                "message": exc.message,
                "hint": exc.hint,
            }
        )
        self.block(mission, wp_id, f"sprint could not start {role} by {agent}: {exc.message}")

    # -- watching agents ---------------------------------------------------------
    def reap(self) -> bool:
        reaped = False
        for wp_id, job in list(self.jobs.items()):
            outcome = self.poll(job)
            if outcome is None:
                continue
            del self.jobs[wp_id]
            job.close_pidfd()
            self.meter.exited(len(self.jobs), job.proc.cpu if job.proc else 0.0)
            self.settle(job, outcome)
            reaped = True
        return reaped

    def poll(self, job: Job) -> str | None:
        """None while the agent runs; otherwise how it ended."""
        return supervise.outcome(
            job, lambda: self.mission().board.lane(job.wp_id), self.opts.timeout
        )

    def stop_all(self) -> None:
        for job in self.jobs.values():
            supervise.kill(job)

    def settle(self, job: Job, how: str) -> None:
        seconds = time.monotonic() - job.started
        supervise.close_log(job, how, seconds, now_text())
        self.stats.setdefault(job.wp_id, WPStats()).seconds += seconds
        mission = self.mission()
        lane = mission.board.lane(job.wp_id)
        key = (job.wp_id, job.role)
        failures = self.failures.get(key, 0) + (0 if sprintplan.left_done(job.role, lane) else 1)
        verdict = sprintplan.after_exit(job.role, lane, failures, self.opts.retries)
        finished: dict[str, Any] = {
            "event": "finished",
            "wp_id": job.wp_id,
            "role": job.role,
            "agent": job.agent,
            "how": how,
            "lane": lane,
            "ok": verdict == sprintplan.DONE,
            "seconds": round(seconds, 1),
            "log": str(job.log_path),
        }
        state = mission.board.wps.get(job.wp_id)
        if job.role == sprintplan.REVIEW and verdict == sprintplan.DONE and state is not None:
            # The review's verdict and the WP's review cycle: a rejection is not a success.
            last = state.reviews[-1].verdict if state.reviews else None
            finished["verdict"] = last if lane in review_lanes(last) else None
            finished["cycle"] = state.review_cycles
        self.emit(finished)
        if verdict == sprintplan.DONE:
            return
        if verdict == sprintplan.HALT_REVIEW:
            self.halt(mission, job.wp_id, job.agent, how)
            return
        reason = (
            f"{job.agent} ({job.role}) ended with {how} and left {job.wp_id} in {lane}; "
            f"log: {job.log_path}"
        )
        self.failures[key] = failures
        self.note(
            mission, job.wp_id, f"sprint: {reason} (failure {failures} of {self.opts.retries + 1})"
        )
        if verdict == sprintplan.GIVE_UP:
            self.block(mission, job.wp_id, f"sprint gave up after {failures} failed runs: {reason}")
            return
        self.retry.append((job.wp_id, job.role, job.agent))
        self.emit({"event": "retry", "wp_id": job.wp_id, "agent": job.agent,
                   "attempt": failures + 1})  # fmt: skip

    def halt(self, mission: Mission, wp_id: str, reviewer: str, why: str) -> None:
        """A failed reviewer stops that WP in this sprint: never a silent approval, never the
        implementer. The WP goes back to for_review (recorded, with the reason) so another
        reviewer, a re-run or an operator can take it; each printed option runs as shown."""
        st = mission.board.wps.get(wp_id)
        if mission.board.lane(wp_id) == lanes.IN_REVIEW:
            moves.move_task(
                mission,
                wp_id,
                lanes.FOR_REVIEW,
                agent="sprint",
                force=True,
                note=f"reviewer {reviewer} failed ({why}): back to for_review for another review",
            )
        message = sprintplan.halt_message(
            self.slug,
            wp_id,
            reviewer,
            why,
            st.implementer if st else None,
            self.opts.implementers,
            [*self.opts.reviewers, *mission.config.agents],
        )
        self.halted[wp_id] = message
        self.emit({"event": "halt", "wp_id": wp_id, "reviewer": reviewer, "message": message})

    def note(self, mission: Mission, wp_id: str, text: str) -> None:
        self.annotate(mission, wp_id, "sprint", {"note": text})

    @staticmethod
    def annotate(mission: Mission, wp_id: str, actor: str, delta: dict[str, Any]) -> None:
        mission.record(lambda board: [mission.annotation(wp_id, actor, delta)])

    def block(self, mission: Mission, wp_id: str, reason: str) -> None:
        if mission.board.lane(wp_id) in (lanes.BLOCKED, lanes.DONE, lanes.CANCELED, None):
            return
        moves.move_task(mission, wp_id, lanes.BLOCKED, agent="sprint", force=True, note=reason)
        self.emit({"event": "blocked", "wp_id": wp_id, "reason": reason})

    def arbitrate(self, mission: Mission, wp_id: str) -> None:
        st = mission.board.wps[wp_id]
        is_halted = halted(st)
        answer = sprintplan.arbiter(
            self.slug,
            wp_id,
            self.opts.arbiter,
            st.review_cycles,
            st.scalars.get("review_halt_reason") if is_halted else None,
            st.scalars.get("review_round"),
            st.scalars.get("review_halt"),
        )
        if answer.to_lane is None:  # questions for a human: no policy can answer them
            self.halted[wp_id] = answer.text
            self.emit({"event": "halt", "wp_id": wp_id, "reviewer": PANEL, "message": answer.text})
            return
        moves.move_task(
            mission, wp_id, answer.to_lane, agent="sprint-arbiter", force=True, note=answer.text
        )
        self.emit(
            {"event": "arbiter", "wp_id": wp_id, "policy": self.opts.arbiter, "note": answer.text}
        )

    def heartbeat(self) -> None:
        """At most once a minute per running agent: proof of life in the log."""
        now = time.monotonic()
        for job in self.jobs.values():
            if job.proc is None or now - job.last_heartbeat < self.opts.heartbeat_every:
                continue
            job.last_heartbeat = now
            mission = self.mission()
            record = mission.annotation(
                job.wp_id, job.agent, {"heartbeat": now_text(), "agent_pid": job.proc.pid}
            )
            mission.record(lambda board, record=record: [record])  # type: ignore[misc]

    # -- hooks for a sprint shared across machines (kitty.services.teamsprint) -----
    finished_by: str | None = None

    def owns_claim(self, claim: dict[str, Any]) -> bool:
        """Whether a runtime claim belongs to this machine (adopt only those)."""
        return True

    def others_active(self) -> bool:
        """Whether to keep waiting when nothing is left to dispatch here."""
        return False

    def claim_finish(self) -> bool:
        """Whether this sprint accepts and merges (one machine does, when shared)."""
        return True

    def after_finish(self, result: dict[str, Any]) -> None:
        """Called with the accept/merge result before the summary is emitted."""

    # -- the end -----------------------------------------------------------------
    def finish(self) -> dict[str, Any]:
        from kitty.services.merging import NotReady, accept, merge

        mission = self.mission()
        ids = mission.all_ids()
        all_approved = sprintplan.all_approved({w: mission.board.lane(w) for w in ids})
        result: dict[str, Any] = {"accepted": False, "merged": False}
        if all_approved and not self.claim_finish():
            result["finished_by"] = self.finished_by
            reason = f"every work package is approved; {self.finished_by} accepts and merges"
        elif all_approved:
            # Subtasks a rejection reset on an arbiter-approved WP: accept records them
            # (actor accept, naming the approval), in nobody's name (issue 22.8).
            try:
                accept(mission, "sprint")
                result["accepted"] = True
                self.emit({"event": "accepted", "mission": self.slug})
                if self.opts.merge:
                    merged = merge(self.mission())
                    result["merged"] = True
                    self.emit(
                        {"event": "merged", "mission": self.slug, "commit": merged["merge_commit"]}
                    )
            except NotReady as exc:
                result["problems"] = exc.problems
            except KittyError as exc:
                result["problems"] = [exc.message]
            reason = (
                "every work package is merged"
                if result["merged"]
                else "every work package is approved"
                + ("" if result["accepted"] else "; acceptance failed")
            )
        else:
            from kitty.core.decide import decide

            decision = decide(self.ctx(self.mission()))
            reason = "nothing more can move: " + "; ".join(
                [f"{w}: review halted (reviewer failed; see the options)" for w in self.halted]
                + self.foreign_holds(self.mission())
                + (decision.blocked_by or [decision.reason])
            )
        rows = report_rows(self.mission(), self.stats, self.halted)
        self.after_finish(result)
        ok = all_approved and (
            "finished_by" in result
            or ((result["merged"] or not self.opts.merge) and result["accepted"])
        )
        summary = {
            "event": "end",
            "mission": self.slug,
            "run": self.run_id,
            "ok": ok,
            "reason": reason,
            "summary": rows,
            "logs": str(self.log_dir),
            "timing": self.meter.report(),
            **result,
        }
        self.emit(summary)
        return summary

    def dry_run(self) -> dict[str, Any]:
        """The first wave of dispatches and their exact commands; nothing is run or claimed."""
        mission = self.mission()
        queues = work_queues(self.ctx(mission))
        plan = []
        for wp_id, role in dry_run_order(queues, self.opts.parallel):
            st = mission.board.wps.get(wp_id)
            implementer = st.implementer if st else None
            if role == REVIEW:
                used = self.stats.get(wp_id, WPStats()).reviewers
                agent = sprintplan.pick_reviewer(implementer, self.opts.reviewers, used) or "?"
            else:
                agent, self.turn = sprintplan.pick_implementer(
                    implementer, self.opts.implementers, self.turn
                )
            backend = self.backend(mission, agent)
            plan.append(plan_entry(mission, wp_id, role, agent, backend, self.opts.timeout))
        result = dry_run_event(mission, queues, plan, self.opts.parallel, self.opts.arbiter)
        alone = sprintplan.no_second_reviewer(self.opts.implementers, self.opts.reviewers)
        result["problems"] = [alone] if alone and not self.opts.review_panel else []
        self.emit(result)
        return result


def review_lanes(verdict: str | None) -> tuple[str, ...]:
    """The lanes a reviewer's `verdict` leaves a WP in (tells a fresh verdict from a stale one)."""
    if verdict == "approved":
        return (lanes.APPROVED, lanes.DONE)
    if verdict == "changes_requested":
        return (lanes.PLANNED, lanes.IN_PROGRESS)
    return ()
