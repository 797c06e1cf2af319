"""Starting a sprint's agents: claim the WP through the same actions as
`kitty agent action implement/review`, build the agent's command line, launch it
(or ask a human, for a manual agent) and record who runs it; a review panel is one
`kitty review run` process.
"""

from __future__ import annotations

import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from kitty.agents import grants
from kitty.agents.clis import BUILTIN, MANUAL, Dispatch, Invocation
from kitty.core import lanes
from kitty.errors import KittyError
from kitty.mission.workspace import Mission
from kitty.sprint import supervise
from kitty.sprint.records import Records
from kitty.sprint.report import WPStats
from kitty.sprint.rules import plan as sprintplan
from kitty.sprint.rules.plan import IMPLEMENT, PANEL, REVIEW
from kitty.sprint.state import now_text
from kitty.sprint.supervise import Job
from kitty.workflow import actions


class Starting(Records):
    def new_job(self, wp_id: str, role: str, agent: str, cycle: int) -> Job:
        return supervise.new_job(self.log_dir, wp_id, role, agent, cycle, self.opts.timeout)

    def count_run(self, wp_id: str, role: str, agent: str) -> None:
        stats = self.stats.setdefault(wp_id, WPStats())
        (stats.implementers if role == IMPLEMENT else stats.reviewers).append(agent)
        stats.runs += 1

    def take(
        self, mission: Mission, wp_id: str, role: str, agent: str, in_workspace: bool = False
    ) -> dict[str, Any]:
        """Claim `wp_id` for `agent` as `kitty agent action implement/review` does; the
        claimed workspace and prompt (without a `cd` line when the agent starts there)."""
        if role != IMPLEMENT:
            return actions.review(mission, wp_id, agent, in_workspace=in_workspace)
        from kitty.core.clock import ulid

        invocation = ulid(int(time.time() * 1000), os.urandom(10))
        record = actions.dispatch_record(mission, invocation, wp_id, IMPLEMENT, agent, None)
        mission.record(lambda board: [record])
        return actions.implement(
            mission, wp_id, agent, invocation_id=invocation, in_workspace=in_workspace
        )

    def start(self, mission: Mission, wp_id: str, role: str, agent: str) -> bool:
        backend = self.backend(mission, agent)  # an untrusted command: refused before the claim
        if role == REVIEW and self.ungated(mission, wp_id):  # no review of untested work
            self.gate(mission, wp_id)
            mission = self.mission()
            if mission.board.lane(wp_id) != lanes.FOR_REVIEW:
                return True
        try:
            # every built-in CLI runs with the workspace as its cwd (Invocation.cwd)
            claimed = self.take(mission, wp_id, role, agent, backend.kind in BUILTIN)
        except KittyError as exc:
            self.fail_to_start(mission, wp_id, role, agent, exc)
            return True
        st = mission.board.wps[wp_id]  # the claim's write left the board fresh
        prompt_path = Path(claimed["prompt"])
        why = self.failed_runs.get(wp_id) if role == IMPLEMENT else None
        if why is not None:  # the re-run of a run that left nothing committed: say so first
            from kitty.adapters.files import atomic_write
            from kitty.core.ready import retry_header

            wp = mission.wps[wp_id]
            header = retry_header(wp_id, wp.title, why, claimed["workspace"])
            atomic_write(prompt_path, header + prompt_path.read_text(encoding="utf-8"))
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
            grants.configured(mission.config.raw),
            self.model_of(mission, agent, role),
        )
        job.start_lane = st.lane
        job.model = dispatch.model
        self.count_run(wp_id, role, agent)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        job.log = job.log_path.open("x", encoding="utf-8")
        if backend.kind == MANUAL:
            self.manual(job, claimed)
        else:
            command = backend.invocation(dispatch)
            supervise.launch(job, command, supervise.header(self.run_id, job, command, now_text()))
        self.running(mission, job)
        return True

    def running(self, mission: Mission, job: Job) -> None:
        """`job` was started: watch it, and record who runs it."""
        self.jobs[job.wp_id] = job
        self.meter.dispatched(len(self.jobs))
        pid = job.proc.pid if job.proc else None
        if job.proc is not None and job.proc.error:
            self.emit(
                {
                    "event": "error",
                    "wp_id": job.wp_id,
                    "role": job.role,
                    "agent": job.agent,
                    "message": job.proc.error,
                    "hint": f"log: {job.log_path}",
                }
            )
        self.annotate(
            mission,
            job.wp_id,
            job.agent,
            {
                "agent_pid": pid,
                "agent_started_at": now_text(),
                "sprint_run": self.run_id,
                "role": "implementer" if job.role == IMPLEMENT else "reviewer",
            },
        )
        self.emit_dispatch(job, pid)

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
                "model": job.model,
            }
        )

    def start_panel(self, mission: Mission, wp_id: str) -> bool:
        """The review is one `kitty review run` process: it runs the reviewer personas
        (on --reviewer agents) round by round and dispatches the fixes itself."""
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
        message = sprintplan.manual_message(
            job.wp_id, job.role, job.agent, claimed["workspace"], claimed["prompt"]
        )
        self.emit(
            {
                "event": "manual",
                "wp_id": job.wp_id,
                "role": job.role,
                "agent": job.agent,
                "message": message,
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
