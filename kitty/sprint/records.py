"""What a sprint records in the mission's log as agents run and end: what an agent's
exit means for its WP (done, a re-run, a halted review, blocked), the arbiter's
decision, notes and heartbeats. Each through the mission's one write path.
"""

from __future__ import annotations

import time
from typing import Any

from kitty.core import lanes
from kitty.core.transitions import halted
from kitty.mission.workspace import Mission
from kitty.sprint import supervise
from kitty.sprint.outcomes import Outcomes
from kitty.sprint.report import WPStats
from kitty.sprint.rules import failure as failures
from kitty.sprint.rules import plan as sprintplan
from kitty.sprint.rules.failure import Failure
from kitty.sprint.rules.plan import PANEL
from kitty.sprint.state import now_text
from kitty.sprint.supervise import Job
from kitty.workflow import moves


class Records(Outcomes):
    def settle(self, job: Job, how: str) -> None:
        seconds = time.monotonic() - job.started
        mission = self.mission()
        why = self.no_commit(mission, job.wp_id) if job.role == sprintplan.IMPLEMENT else None
        if why is not None:
            mission = self.mission()  # a forced entry into review was undone
            self.failed_runs[job.wp_id] = why
        lane = mission.board.lane(job.wp_id)
        key = (job.wp_id, job.role)
        moved = sprintplan.left_done(job.role, lane)
        how, failure = self.explain(job, how, lane, moved)
        record = self.run_record(job, how, seconds, failure, moved)
        supervise.close_log(job, how, seconds, now_text(), record)
        stats = self.stats.setdefault(job.wp_id, WPStats())
        stats.seconds += seconds
        stats.records.append(record)
        self.annotate(mission, job.wp_id, job.agent, {"agent_run": record})
        failures = self.failures.get(key, 0) + (0 if moved else 1)
        verdict = sprintplan.after_exit(job.role, lane, failures, self.opts.retries)
        if failure is not None and failure.fatal and job.role == sprintplan.IMPLEMENT:
            verdict = sprintplan.GIVE_UP  # a re-run fails the same way: stop at once
        finished = self.finished_event(mission, job, how, lane, verdict, seconds, record)
        self.emit({**finished, "reason": why})
        if verdict == sprintplan.DONE:
            if job.role == sprintplan.IMPLEMENT:
                self.failed_runs.pop(job.wp_id, None)
                self.gate(mission, job.wp_id)  # the tests, before a reviewer sees it
            return
        if failure is not None and failure.backs_off and self.back_off(mission, job, failure):
            return
        if verdict == sprintplan.HALT_REVIEW:
            self.halt(mission, job.wp_id, job.agent, how)
            return
        reason = (
            f"{job.agent} ({job.role}) ended with {how}" + (f" and {why}" if why else "")
            + f", and left {job.wp_id} in {lane}; log: {job.log_path}"
        )  # fmt: skip
        self.failures[key] = failures
        self.note(
            mission, job.wp_id, f"sprint: {reason} (failure {failures} of {self.opts.retries + 1})"
        )
        if verdict == sprintplan.GIVE_UP:
            cause = (
                "sprint stopped at once (a re-run fails the same way)"
                if failure is not None and failure.fatal
                else f"sprint gave up after {failures} failed runs"
            )
            self.block(mission, job.wp_id, f"{cause}: {reason}")
            return
        self.retry.append((job.wp_id, job.role, job.agent))
        self.emit({"event": "retry", "wp_id": job.wp_id, "agent": job.agent,
                   "attempt": failures + 1})  # fmt: skip

    def no_commit(self, mission: Mission, wp_id: str) -> str | None:
        """Why an implement run failed its WP for want of committed work (issue 41): the
        WP is still in progress with nothing of its own committed or files left, or it
        was forced into review so (then it goes back to in_progress, recorded). None
        when the lane holds the WP's committed work."""
        from kitty.core.ready import run_failure
        from kitty.mission.readiness import lane_facts

        st = mission.board.wps.get(wp_id)
        if st is None or st.lane not in (lanes.CLAIMED, lanes.IN_PROGRESS, lanes.FOR_REVIEW):
            return None
        forced = st.scalars.get("review_forced") if st.lane == lanes.FOR_REVIEW else None
        if st.lane == lanes.FOR_REVIEW and not forced:
            return None
        facts = lane_facts(mission, wp_id, st)
        why = run_failure(facts) if facts is not None else None
        if forced:
            moves.move_task(
                mission, wp_id, lanes.IN_PROGRESS, agent="sprint", force=True,
                note=f"sprint: the implement run forced {wp_id} into review ({forced})",
            )  # fmt: skip
            why = (
                why or "forced its way into review"
            ) + " (its forced move to for_review is undone)"
        return why

    def back_off(self, mission: Mission, job: Job, failure: Failure) -> bool:
        """A rate limit or an overloaded service: re-run after a wait, without using up a
        retry (False when this WP waited MAX_WAITS times already)."""
        key = (job.wp_id, job.role)
        seconds = failures.wait_for(failure, self.waits.get(key, 0), self.opts.rate_limit_wait)
        if seconds is None:
            return False
        self.waits[key] = self.waits.get(key, 0) + 1
        if job.role == sprintplan.REVIEW and mission.board.lane(job.wp_id) == lanes.IN_REVIEW:
            moves.move_task(
                mission, job.wp_id, lanes.FOR_REVIEW, agent="sprint", force=True,
                note=f"reviewer {job.agent} hit {failure.text()}: waiting {seconds:g}s",
            )  # fmt: skip
        self.waiting[job.wp_id] = time.monotonic() + seconds
        self.retry.append((job.wp_id, job.role, job.agent))
        self.emit({"event": "backoff", "wp_id": job.wp_id, "role": job.role,
                   "agent": job.agent, "seconds": seconds, "reason": failure.text()})  # fmt: skip
        return True

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
