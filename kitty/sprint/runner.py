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

The parts, each readable and testable alone: `kitty.sprint.rules.plan` decides
(pure: which work, which agent, what an exit means, the arbiter, the halt text),
`kitty.sprint.supervise` runs and watches the agent processes and measures the
orchestrator, `kitty.sprint.report` builds the summary and the dry-run
plan, `kitty.sprint.resume` finds what a killed sprint left running.
The sprint itself is split by job: `sprint.preflight` refuses before anything
starts, `sprint.state` holds the options, the state and the mission as last read,
`sprint.records` records what an agent's exit means, `sprint.start` claims and
launches, `sprint.finish` accepts, merges and sums up. This module is the loop
that connects them to the mission's one write path.
"""

from __future__ import annotations

import time
from typing import Any

from kitty.adapters import contain
from kitty.core import lanes
from kitty.core.decide.steps import Queues, work_queues
from kitty.errors import LockBusy
from kitty.mission.workspace import Mission
from kitty.sprint import supervise
from kitty.sprint.finish import Finishing
from kitty.sprint.preflight import preflight, verification
from kitty.sprint.resume import adoptions
from kitty.sprint.rules import plan as sprintplan
from kitty.sprint.rules.plan import IMPLEMENT, PANEL, REVIEW, Options, Step
from kitty.sprint.start import Starting
from kitty.sprint.state import REREAD, Emit
from kitty.sprint.supervise import Job
from kitty.workflow import moves

__all__ = ["IMPLEMENT", "Emit", "Options", "Sprint"]  # what teamsprint and the commands use


class Sprint(Starting, Finishing):
    def preflight(self) -> None:
        """Refuse before anything starts when an agent CLI cannot be run, or when some
        implementer's work could never be reviewed (its only reviewer is itself)."""
        self.versions = preflight(self.opts, self.backends)

    # -- the loop --------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        from filelock import FileLock, Timeout

        from kitty.agents.awake import prevent_idle_sleep

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
                unverified = verification(mission.config.raw).get("unverified")
                if unverified:  # said once here, and again in the end summary
                    self.emit({"event": "notice", "code": "unverified", "message": unverified})
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
            waiting = bool(self.waiting_now()) and self.stopped is None
            if not self.jobs and not started and not waiting and not self.others_active():
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

    # -- dispatching -------------------------------------------------------------
    def dispatch(self) -> bool:
        """Fill the free slots; True when anything was done. Skipped while nothing a
        decision reads changed since the last look found no work (and for less than
        `REREAD` seconds)."""
        if len(self.jobs) >= self.opts.parallel or self.over_budget():
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
        waiting = self.waiting_now()
        step, self.retry = sprintplan.take_retry(self.retry, self.jobs, self.halted, waiting)
        busy = frozenset(self.jobs) | frozenset(self.halted) | waiting
        if step is None and not self.opts.review_panel:
            stalled = sprintplan.stalled_review(
                self.ctx(mission), mission.board.wps, mission.all_ids(), busy,
                self.opts.reviewers, self.reviewed_by(),
            )  # fmt: skip
            if stalled is not None:
                self.nothing_at = None
                return self.take_over(mission, *stalled)
        if step is None:
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

    def take_over(self, mission: Mission, wp_id: str, reviewer: str, why: str) -> bool:
        """A stalled review: released (recorded), then reviewed like any other WP."""
        moves.move_task(
            mission,
            wp_id,
            lanes.FOR_REVIEW,
            agent=reviewer,
            force=True,
            note=f"review taken over by {reviewer} (kitty sprint): {why}",
        )
        self.emit({"event": "takeover", "wp_id": wp_id, "agent": reviewer, "message": why})
        return self.start(self.mission(), wp_id, REVIEW, reviewer)

    def choose(self, mission: Mission, queues: Queues) -> Step | None:
        implementer_of = {
            w: st.implementer
            for w in [*queues.reviews, *queues.fixes, *queues.fresh]
            if (st := mission.board.wps.get(w)) is not None
        }
        step, self.turn = sprintplan.choose(
            queues,
            implementer_of,
            self.reviewed_by(),
            self.opts.implementers,
            self.opts.reviewers,
            self.turn,
            panel=bool(self.opts.review_panel),
        )
        return step

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
