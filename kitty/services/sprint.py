"""`kitty sprint`: drive agent CLIs through the implement-review loop, unattended.

Claims are made one at a time by this process (the same rules as `kitty next`);
agents then run in parallel, up to `--parallel`. Scheduling is completion-driven:
whenever an agent exits, its outcome is checked and new work is dispatched at
once (a review as soon as a WP reaches for_review, dependents as soon as their
dependencies are approved). All state lives in the event log, so a killed sprint
is resumed by running it again.
"""

from __future__ import annotations

import os
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from kitty.adapters import contain, eventlog, trust
from kitty.adapters.agentrun import AgentRun
from kitty.adapters.agents import MANUAL, Backend, Dispatch, backend_for
from kitty.core import lanes
from kitty.core.clock import format_at, humanize_duration
from kitty.core.decide import Context, work_queues
from kitty.core.state import HELD
from kitty.core.transitions import halted
from kitty.errors import KittyError, LockBusy, UsageError
from kitty.services import actions, liveness, moves
from kitty.services.schedule import context
from kitty.services.workspace import Mission
from kitty.services.worktrees import lane_path

Emit = Callable[[dict[str, Any]], None]
IMPLEMENT, REVIEW = "implement", "review"
PANEL = "review-panel"


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


@dataclass
class WPStats:
    implementers: list[str] = field(default_factory=list)
    reviewers: list[str] = field(default_factory=list)
    seconds: float = 0.0
    runs: int = 0


def run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + f"-{os.getpid()}"


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
        self.repo = repo
        self.slug = Mission.open(repo, mission).slug
        self.opts = opts
        self.emit = emit
        self.run_id = run_id()
        self.jobs: dict[str, Job] = {}
        self.halted: dict[str, str] = {}
        self.failures: dict[tuple[str, str], int] = {}
        self.retry: list[tuple[str, str, str]] = []  # (wp, role, agent) to re-dispatch first
        self.stats: dict[str, WPStats] = {}
        self.turn = 0
        probe = self.mission()
        self.backends = {
            name: backend_for(name, probe.config.raw)
            for name in [*opts.implementers, *opts.reviewers]
        }
        if not opts.dry_run:  # pre-flight: nothing is claimed or started when this refuses
            self.require_trust(probe, list(self.backends.values()))

    def require_trust(self, mission: Mission, backends: list[Backend]) -> None:
        """Commands from the repository's config run only when the user trusts them."""
        keys = sorted({f"agents.commands.{b.name}" for b in backends if b.kind == "command"})
        if self.opts.review_panel and "review.test_command" in trust.repo_commands(
            mission.config.raw
        ):
            keys.append("review.test_command")  # the panel's `kitty review run` runs it
        if keys:
            trust.require(mission.project.root, mission.config.raw, keys)

    def backend(self, mission: Mission, agent: str) -> Backend:
        backend = self.backends.get(agent)
        if backend is None:
            backend = backend_for(agent, mission.config.raw)
            if not self.opts.dry_run:
                self.require_trust(mission, [backend])
            self.backends[agent] = backend
        return backend

    def preflight(self) -> None:
        """Refuse before anything starts when an agent CLI cannot be run."""
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

    # -- reading -------------------------------------------------------------
    def mission(self) -> Mission:
        mission = Mission.open(self.repo, self.slug)
        if self.opts.max_cycles is not None:
            mission.__dict__["config"] = replace(mission.config, max_cycles=self.opts.max_cycles)
        return mission

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
                self.adopt()
                try:
                    while True:
                        self.reap()
                        self.heartbeat()
                        started = self.dispatch()
                        if not self.jobs and not started and not self.others_active():
                            break
                        time.sleep(self.opts.poll)
                except BaseException:
                    self.stop_all()
                    raise
                return self.finish()
        finally:
            lock.release()

    def adopt(self) -> None:
        """Take over WPs an earlier (killed) sprint left with agents."""
        mission = self.mission()
        for wp_id in mission.all_ids():
            st = mission.board.wps.get(wp_id)
            if st is None or st.lane not in HELD or not st.runtime_claim:
                continue
            claim = st.runtime_claim
            if "agent_pid" not in claim or not self.owns_claim(claim):
                continue  # not dispatched by a sprint here: somebody else's work
            role = REVIEW if st.lane == lanes.IN_REVIEW else IMPLEMENT
            agent = (st.reviewer if role == REVIEW else st.implementer) or "unknown"
            pid = claim.get("agent_pid")
            if liveness.pid_alive(pid):
                job = self.new_job(wp_id, role, agent, st.review_cycles + 1, [])
                job.watch_pid, job.start_lane = int(str(pid)), st.lane
                self.jobs[wp_id] = job
                how = "watching the running agent"
            else:
                self.retry.append((wp_id, role, agent))
                how = "its agent is gone: dispatching it again"
            self.emit(
                {
                    "event": "adopt",
                    "wp_id": wp_id,
                    "role": role,
                    "agent": agent,
                    "pid": pid,
                    "how": how,
                }
            )

    def dispatch(self) -> bool:
        started = False
        while len(self.jobs) < self.opts.parallel:
            if not self.dispatch_one():
                break
            started = True
        return started

    def dispatch_one(self) -> bool:
        mission = self.mission()
        while self.retry:
            wp_id, role, agent = self.retry.pop(0)
            if wp_id not in self.jobs and wp_id not in self.halted:
                return self.start(mission, wp_id, role, agent)
        busy = frozenset(self.jobs) | frozenset(self.halted)
        queues = work_queues(self.ctx(mission), exclude=busy)
        for wp_id in queues.reviews:
            if self.opts.review_panel:
                return self.start_panel(mission, wp_id)
            reviewer = self.pick_reviewer(mission, wp_id)
            if reviewer is None:
                self.halt(mission, wp_id, "none", "every configured reviewer implemented it")
                return True
            return self.start(mission, wp_id, REVIEW, reviewer)
        if queues.capped:
            self.arbitrate(mission, queues.capped[0])
            return True
        for wp_id in queues.fixes + queues.fresh:
            return self.start(mission, wp_id, IMPLEMENT, self.pick_implementer(mission, wp_id))
        return False

    def pick_implementer(self, mission: Mission, wp_id: str) -> str:
        st = mission.board.wps.get(wp_id)
        if st and st.implementer in self.opts.implementers:
            return st.implementer  # a fix goes back to whoever wrote it
        agent = self.opts.implementers[self.turn % len(self.opts.implementers)]
        self.turn += 1
        return agent

    def pick_reviewer(self, mission: Mission, wp_id: str) -> str | None:
        st = mission.board.wps.get(wp_id)
        implementer = st.implementer if st else None
        candidates = [r for r in self.opts.reviewers if r != implementer]
        if not candidates:
            return None
        used = self.stats.get(wp_id, WPStats()).reviewers
        fresh = [r for r in candidates if r not in used] or candidates
        return fresh[0]

    # -- starting agents ---------------------------------------------------------
    def new_job(self, wp_id: str, role: str, agent: str, cycle: int, argv: list[str]) -> Job:
        now = time.monotonic()
        log_path = self.log_dir / f"{wp_id}-{role}-{cycle}.log"
        attempt = 1
        while log_path.exists():  # a retry or a re-dispatch: one log file per attempt
            attempt += 1
            log_path = self.log_dir / f"{wp_id}-{role}-{cycle}-attempt{attempt}.log"
        return Job(wp_id, role, agent, cycle, now, now + self.opts.timeout, log_path, argv)

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
        mission = self.mission()
        st = mission.board.wps[wp_id]
        prompt_path = Path(claimed["prompt"])
        job = self.new_job(wp_id, role, agent, st.review_cycles + 1, [])
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
        stats = self.stats.setdefault(wp_id, WPStats())
        (stats.implementers if role == IMPLEMENT else stats.reviewers).append(agent)
        stats.runs += 1
        self.log_dir.mkdir(parents=True, exist_ok=True)
        job.log = job.log_path.open("x", encoding="utf-8")
        if backend.kind == MANUAL:
            self.manual(job, claimed)
        else:
            self.spawn(job, backend, dispatch)
        self.jobs[wp_id] = job
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
                "agent_started_at": format_at(eventlog.now_us()),
                "sprint_run": self.run_id,
                "role": "implementer" if role == IMPLEMENT else "reviewer",
            },
        )
        self.emit(
            {
                "event": "dispatch",
                "wp_id": wp_id,
                "role": role,
                "agent": agent,
                "cycle": job.cycle,
                "pid": pid,
                "log": str(job.log_path),
                "command": job.argv,
            }
        )
        return True

    def start_panel(self, mission: Mission, wp_id: str) -> bool:
        """The review is one `kitty review run` process: it runs the reviewer personas
        (on --reviewer agents) round by round and dispatches the fixes itself."""
        import sys

        from kitty.adapters.agents import Invocation

        panel = self.opts.review_panel or []
        argv = [
            sys.executable, "-m", "kitty", "-C", str(self.repo), "review", "run", wp_id,
            "--mission", self.slug, "--panel", ",".join(panel),
            "--agents", ",".join(self.opts.reviewers), "--timeout", str(self.opts.timeout),
            "--json",
        ]  # fmt: skip
        st = mission.board.wps[wp_id]
        job = self.new_job(wp_id, REVIEW, PANEL, st.review_cycles + 1, argv)
        job.deadline = job.started + self.opts.timeout * (2 * mission.config.max_cycles + 2)
        job.start_lane = st.lane
        stats = self.stats.setdefault(wp_id, WPStats())
        stats.reviewers.append(PANEL)
        stats.runs += 1
        self.log_dir.mkdir(parents=True, exist_ok=True)
        job.log = job.log_path.open("a", encoding="utf-8")
        job.log.write(f"# kitty sprint {self.run_id}: review panel {wp_id}\n# command: "
                      f"{shlex.join(argv)}\n")  # fmt: skip
        job.log.flush()
        job.proc = AgentRun(Invocation(argv, str(self.repo)), PANEL, job.log)
        self.jobs[wp_id] = job
        self.emit(
            {
                "event": "dispatch",
                "wp_id": wp_id,
                "role": REVIEW,
                "agent": PANEL,
                "cycle": job.cycle,
                "pid": job.proc.pid,
                "log": str(job.log_path),
                "command": argv,
            }
        )
        return True

    def spawn(self, job: Job, backend: Backend, dispatch: Dispatch) -> None:
        invocation = backend.invocation(dispatch)
        job.argv = invocation.argv
        assert job.log is not None
        job.log.write(
            f"# kitty sprint {self.run_id}: {job.role} {job.wp_id} by {job.agent} "
            f"(cycle {job.cycle})\n# command: {shlex.join(invocation.argv)}\n"
            f"# cwd: {invocation.cwd}\n# start: {format_at(eventlog.now_us())}\n"
        )
        job.log.flush()
        job.proc = AgentRun(invocation, job.agent, job.log)

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
    def reap(self) -> None:
        for wp_id, job in list(self.jobs.items()):
            outcome = self.poll(job)
            if outcome is None:
                continue
            del self.jobs[wp_id]
            self.settle(job, outcome)

    def poll(self, job: Job) -> str | None:
        """None while the agent runs; otherwise how it ended."""
        now = time.monotonic()
        if job.proc is not None:
            if job.proc.error:
                return job.proc.error
            code = job.proc.poll()
            if code is None:
                if now <= job.deadline:
                    return None
                self.kill(job)
                return f"timed out after {self.opts.timeout}s"
            return f"exit {code}"
        lane = self.mission().board.lane(job.wp_id)
        if lane != job.start_lane:
            return "lane changed"
        if job.watch_pid is not None and not liveness.pid_alive(job.watch_pid):
            return "agent process gone"
        if now > job.deadline:
            return f"timed out after {self.opts.timeout}s"
        return None

    def kill(self, job: Job) -> None:
        if job.proc is not None:
            job.proc.kill()

    def stop_all(self) -> None:
        for job in self.jobs.values():
            self.kill(job)

    def settle(self, job: Job, how: str) -> None:
        seconds = time.monotonic() - job.started
        if job.log is not None:
            job.log.write(
                f"\n# end: {format_at(eventlog.now_us())} ({how}, {humanize_duration(seconds)})\n"
            )
            job.log.close()
        self.stats.setdefault(job.wp_id, WPStats()).seconds += seconds
        mission = self.mission()
        lane = mission.board.lane(job.wp_id)
        if job.role == IMPLEMENT:
            ok = lane not in (lanes.CLAIMED, lanes.IN_PROGRESS)
        else:
            ok = lane not in (lanes.IN_REVIEW, lanes.FOR_REVIEW)
        self.emit(
            {
                "event": "finished",
                "wp_id": job.wp_id,
                "role": job.role,
                "agent": job.agent,
                "how": how,
                "lane": lane,
                "ok": ok,
                "seconds": round(seconds, 1),
                "log": str(job.log_path),
            }
        )
        if ok:
            return
        reason = (
            f"{job.agent} ({job.role}) ended with {how} and left {job.wp_id} in {lane}; "
            f"log: {job.log_path}"
        )
        if job.role == REVIEW:
            self.halt(mission, job.wp_id, job.agent, how)
            return
        key = (job.wp_id, job.role)
        self.failures[key] = self.failures.get(key, 0) + 1
        self.note(
            mission,
            job.wp_id,
            f"sprint: {reason} (failure {self.failures[key]} of {self.opts.retries + 1})",
        )
        if self.failures[key] > self.opts.retries:
            self.block(
                mission,
                job.wp_id,
                f"sprint gave up after {self.failures[key]} failed runs: {reason}",
            )
        else:
            self.retry.append((job.wp_id, job.role, job.agent))
            self.emit(
                {
                    "event": "retry",
                    "wp_id": job.wp_id,
                    "agent": job.agent,
                    "attempt": self.failures[key] + 1,
                }
            )

    def halt(self, mission: Mission, wp_id: str, reviewer: str, why: str) -> None:
        """A failed reviewer stops that WP in this sprint: never a silent approval, never the
        implementer. The WP goes back to for_review (recorded, with the reason) so another
        reviewer, a re-run or an operator can take it; each printed option runs as shown."""
        st = mission.board.wps.get(wp_id)
        implementer = (st.implementer if st else None) or "the implementer"
        if mission.board.lane(wp_id) == lanes.IN_REVIEW:
            moves.move_task(
                mission,
                wp_id,
                lanes.FOR_REVIEW,
                agent="sprint",
                force=True,
                note=f"reviewer {reviewer} failed ({why}): back to for_review for another review",
            )
        candidates = [*self.opts.reviewers, *mission.config.agents]
        others = [r for r in dict.fromkeys(candidates) if r not in (reviewer, implementer)]
        other = others[0] if others else "gemini"
        retry = shlex.join(
            [
                "kitty",
                "sprint",
                "--mission",
                self.slug,
                "--implementer",
                ",".join(self.opts.implementers),
                "--reviewer",
                reviewer,
            ]
        )
        fallback = shlex.join(
            [
                "kitty",
                "agent",
                "tasks",
                "move-task",
                wp_id,
                "--mission",
                self.slug,
                "--to",
                "approved",
                "--force",
                "--agent",
                implementer,
                "--self-review-fallback",
                "--intended-reviewer",
                reviewer,
                "--reviewer-failure-reason",
                why,
                "--note",
                "Self-review fallback after reviewer failure: <summary>",
            ]
        )
        message = (
            f"ERROR: Configured reviewer '{reviewer}' failed ({why}).\n"
            f"{wp_id} is back in for_review.\n"
            "Options:\n"
            f"  a) Retry with '{reviewer}' after fixing the error:\n     {retry}\n"
            f"  b) Switch reviewer:\n     kitty agent action review {wp_id} --mission "
            f"{self.slug} --agent {other}\n"
            "  c) Proceed with self-review -- WARNING: no independent review:\n"
            f"     {fallback}"
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
        reason = st.scalars.get("review_halt_reason")
        if halted(st) and reason in ("blocker", "soft_warn"):
            # Questions for a human (or a soft warning): no policy can answer them.
            how = "--answer <id>=<label>" if reason == "blocker" else "--continue"
            message = (
                f"review panel HALT ({reason}) at round {st.scalars.get('review_round')}: "
                f"{st.scalars.get('review_halt')}\n"
                f"  kitty review answer {wp_id} --mission {self.slug} {how}"
            )
            self.halted[wp_id] = message
            self.emit({"event": "halt", "wp_id": wp_id, "reviewer": PANEL, "message": message})
            return
        if self.opts.arbiter == "approve":
            note = (
                f"Arbiter decision: approved by sprint policy after {st.review_cycles} "
                "review cycles"
            )
            moves.move_task(
                mission, wp_id, lanes.APPROVED, agent="sprint-arbiter", force=True, note=note
            )
        else:
            note = (
                f"Escalated to human after {st.review_cycles} review cycles (sprint arbiter policy)"
            )
            moves.move_task(
                mission, wp_id, lanes.BLOCKED, agent="sprint-arbiter", force=True, note=note
            )
        self.emit({"event": "arbiter", "wp_id": wp_id, "policy": self.opts.arbiter, "note": note})

    def mark_reset_subtasks(self, mission: Mission, ids: list[str]) -> None:
        """What `kitty next` prints before ACCEPT: re-mark subtasks a rejection reset on a
        WP that was then approved (by the arbiter policy) without another implementation."""
        from kitty.core.decide import unmarked_subtasks

        for wp_id, tasks in unmarked_subtasks(mission.board, mission.wps, ids).items():
            moves.mark_status(mission, tasks, "done", agent="sprint", wp_text=wp_id)
            self.emit({"event": "notice", "message": f"{wp_id}: marked {', '.join(tasks)} done"})

    def heartbeat(self) -> None:
        """At most once a minute per running agent: proof of life in the log."""
        now = time.monotonic()
        for job in self.jobs.values():
            if job.proc is None or now - job.last_heartbeat < self.opts.heartbeat_every:
                continue
            job.last_heartbeat = now
            mission = self.mission()
            record = mission.annotation(
                job.wp_id,
                job.agent,
                {"heartbeat": format_at(eventlog.now_us()), "agent_pid": job.proc.pid},
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
        active = [w for w in ids if mission.board.lane(w) != lanes.CANCELED]
        all_approved = bool(active) and all(
            mission.board.lane(w) in lanes.SATISFIED for w in active
        )
        result: dict[str, Any] = {"accepted": False, "merged": False}
        if all_approved and not self.claim_finish():
            result["finished_by"] = self.finished_by
            reason = f"every work package is approved; {self.finished_by} accepts and merges"
        elif all_approved:
            self.mark_reset_subtasks(mission, active)
            mission = self.mission()
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
                + (decision.blocked_by or [decision.reason])
            )
        final = self.mission()
        rows = []
        for wp_id in final.all_ids():
            st = final.board.wps.get(wp_id)
            stats = self.stats.get(wp_id, WPStats())
            rows.append(
                {
                    "wp_id": wp_id,
                    "lane": st.lane if st else None,
                    "review_cycles": st.review_cycles if st else 0,
                    "implementers": sorted(set(stats.implementers)),
                    "reviewers": sorted(set(stats.reviewers)),
                    "agent_seconds": round(stats.seconds, 1),
                    "runs": stats.runs,
                    "halted": self.halted.get(wp_id),
                }
            )
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
            **result,
        }
        self.emit(summary)
        return summary

    def dry_run(self) -> dict[str, Any]:
        """The first wave of dispatches and their exact commands; nothing is run or claimed."""
        mission = self.mission()
        queues = work_queues(self.ctx(mission))
        plan = []
        for wp_id in (queues.reviews + queues.fixes + queues.fresh)[: self.opts.parallel * 4]:
            role = REVIEW if wp_id in queues.reviews else IMPLEMENT
            agent = (
                self.pick_reviewer(mission, wp_id)
                if role == REVIEW
                else self.pick_implementer(mission, wp_id)
            ) or "?"
            lane = mission.wp(wp_id)
            lane_doc = next(
                (x for x in (mission.lanes_doc or {}).get("lanes", []) if wp_id in x["wp_ids"]),
                None,
            )
            workspace = (
                lane_path(mission, lane_doc["lane_id"]) if lane_doc else mission.project.root
            )
            prompt = actions.prompt_path(mission, wp_id, role)
            backend = self.backend(mission, agent)
            claim = f"kitty agent action {role} {wp_id} --mission {self.slug} --agent {agent}"
            command = (
                ["manual"]
                if backend.kind == MANUAL
                else backend.invocation(
                    Dispatch(
                        agent,
                        role,
                        f"<contents of {prompt}>",
                        str(prompt),
                        str(workspace),
                        wp_id,
                        self.slug,
                        str(mission.project.root),
                        self.opts.timeout,
                    )
                ).argv
            )
            plan.append(
                {
                    "wp_id": wp_id,
                    "role": role,
                    "agent": agent,
                    "title": lane.title if lane else wp_id,
                    "claim": claim,
                    "command": command,
                    "available": backend.available(),
                }
            )
        capped = [{"wp_id": w, "policy": self.opts.arbiter} for w in queues.capped]
        result = {
            "event": "dry_run",
            "mission": self.slug,
            "parallel": self.opts.parallel,
            "first_wave": plan[: self.opts.parallel],
            "queue": plan[self.opts.parallel :],
            "arbiter": capped,
            "lanes": (mission.lanes_doc or {}).get("lanes", []),
        }
        self.emit(result)
        return result
