"""What an agent run's end means, as data: the exit's text with the agent's own error
classified (`sprint.rules.failure`), the run's record (outcome, refused calls, tokens,
cost, turns, time) that the mission's log and the run's log keep, the `finished`
event, and the budget that stops new runs (`sprint.rules.spend`).
"""

from __future__ import annotations

from typing import Any

from kitty.agents.reports import call_detail
from kitty.core.verify import runs_one_of, verify_commands
from kitty.errors import KittyError
from kitty.mission.workspace import Mission
from kitty.sprint.gating import Gating
from kitty.sprint.rules import failure as failures
from kitty.sprint.rules import plan as sprintplan
from kitty.sprint.rules import spend
from kitty.sprint.rules.failure import Failure
from kitty.sprint.supervise import Job


class Outcomes(Gating):
    def explain(
        self, job: Job, how: str, lane: str | None, moved: bool
    ) -> tuple[str, Failure | None]:
        """The exit's text with what it means: a reviewer that left no verdict said so,
        a failed run's error classified (with what to fix when a re-run cannot help)."""
        report = job.report
        silent = report is None or report.error is None
        if job.role == sprintplan.REVIEW and not moved and how.startswith("exit 0") and silent:
            how = f"exited without a verdict (exit 0, {job.wp_id} left in {lane})" + how[6:]
        failed = job.timed_out or (job.exit_code not in (0, None)) or bool(report and report.error)
        if moved or not failed or report is None:
            return how, None
        failure = failures.classify(
            report.error, report.status, job.cli, job.agent, job.role, job.timed_out
        )
        if failure.kind == failures.TIMEOUT:  # the exit's text says so already
            return how, failure
        fix = f" {failure.fix}" if failure.fix else ""
        return f"{how} [{failure.kind.replace('_', ' ')}]{fix}", failure

    def run_record(
        self, job: Job, how: str, seconds: float, failure: Failure | None, moved: bool
    ) -> dict[str, Any]:
        """The run as the mission's log and its own log keep it: outcome, error, refused
        calls, tokens, cost, turns and time (what the CLI reported)."""
        report = job.report
        usage = {**(report.usage if report else {}), "seconds": round(seconds, 1)}
        return {
            "run": self.run_id,
            "role": job.role,
            "agent": job.agent,
            "cli": job.cli,
            "model": job.model or (report.model if report else None),
            "cycle": job.cycle,
            "outcome": how,
            "ok": moved,
            "exit_code": job.exit_code,
            "error": report.error if report else None,
            "error_kind": failure.kind if failure else None,
            "denials": list(report.denials) if report else [],
            "verify_refused": self.refused_verification(job, report.denials if report else []),
            "usage": usage,
            "log": str(job.log_path),
        }

    def refused_verification(self, job: Job, denials: list[str]) -> list[str]:
        """The refused calls of an implement run that ran a verification command
        (`verify.*`): the WP is flagged, its work went unverified by its implementer."""
        if job.role != sprintplan.IMPLEMENT or not denials:
            return []
        try:
            lines = [c.line for c in verify_commands(self.mission().config.raw)]
        except KittyError:
            return []
        return [d for d in denials if runs_one_of(call_detail(d), lines)]

    def finished_event(
        self, mission: Mission, job: Job, how: str, lane: str | None, verdict: str,
        seconds: float, record: dict[str, Any],
    ) -> dict[str, Any]:  # fmt: skip
        finished: dict[str, Any] = {
            "event": "finished",
            "wp_id": job.wp_id,
            "role": job.role,
            "agent": job.agent,
            "model": record["model"],
            "how": how,
            "lane": lane,
            "ok": verdict == sprintplan.DONE,
            "seconds": round(seconds, 1),
            "log": str(job.log_path),
            "denials": record["denials"],
            "verify_refused": record["verify_refused"],
            "error": record["error"],
            "error_kind": record["error_kind"],
            "usage": record["usage"],
        }
        state = mission.board.wps.get(job.wp_id)
        if job.role == sprintplan.REVIEW and verdict == sprintplan.DONE and state is not None:
            # The review's verdict and the WP's review cycle: a rejection is not a success.
            last = state.reviews[-1].verdict if state.reviews else None
            finished["verdict"] = last if lane in sprintplan.review_lanes(last) else None
            finished["cycle"] = state.review_cycles
        return finished

    def over_budget(self) -> bool:
        """Whether --budget or --max-tokens is reached: no new run starts (running ones
        finish); said once, and the sprint ends with it as the reason."""
        if self.stopped is None:
            self.stopped = spend.over_budget(
                self.spent(), self.opts.budget_usd, self.opts.max_tokens
            )
            if self.stopped is not None:
                self.emit({"event": "budget", "message": self.stopped, "spent": self.spent()})
        return self.stopped is not None
