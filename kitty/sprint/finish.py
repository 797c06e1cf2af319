"""The end of a sprint: accept (and merge, with --merge) when every WP is approved,
say why when nothing more can move, and emit the summary; and the dry-run plan.
"""

from __future__ import annotations

from typing import Any

from kitty.core import lanes
from kitty.core.decide.steps import work_queues
from kitty.errors import KittyError
from kitty.mission.workspace import Mission
from kitty.sprint.preflight import lone_reviewer, verification
from kitty.sprint.report import (
    WPStats,
    dry_run_event,
    dry_run_order,
    plan_entry,
    usage_summary,
)
from kitty.sprint.report import summary_rows as report_rows
from kitty.sprint.rules import plan as sprintplan
from kitty.sprint.rules import spend
from kitty.sprint.rules.plan import REVIEW
from kitty.sprint.state import SprintState


def estimate(mission: Mission) -> dict[str, Any] | None:
    """What the rest of the mission may cost, from the mean of its past agent runs (the
    `agent_run` records in its log): two runs (implement, review) per WP not approved
    yet. None when no run was recorded."""
    past = [st.usage for st in mission.board.wps.values() if st.usage]
    runs = sum(int(u.get("runs", 0)) for u in past)
    ids = mission.all_ids()
    left = [w for w in ids if mission.board.lane(w) not in (*lanes.SATISFIED, lanes.CANCELED)]
    return spend.estimate(past, runs, 2 * len(left))


class Finishing(SprintState):
    def finish(self) -> dict[str, Any]:
        mission = self.mission()
        ids = mission.all_ids()
        all_approved = sprintplan.all_approved({w: mission.board.lane(w) for w in ids})
        result: dict[str, Any] = {"accepted": False, "merged": False}
        if all_approved and not self.claim_finish():
            result["finished_by"] = self.finished_by
            reason = f"every work package is approved; {self.finished_by} accepts and merges"
        elif all_approved:
            self.accept_and_merge(mission, result)
            if result.get("sent_back") and self.requeue():
                return self.finish()  # the merge queue sent WPs back: fix, review, merge
            reason = sprintplan.finish_reason(result["accepted"], result["merged"])
        elif self.stopped is not None:
            reason = self.stopped + " (no new run started; the running ones finished)"
        else:
            reason = "nothing more can move: " + "; ".join(self.stuck(self.mission()))
        rows = report_rows(self.mission(), self.stats, self.halted, self.failed_runs)
        runs = self.runs()
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
            "budget_stop": self.stopped,
            "denials": [{"wp_id": r["wp_id"], "call": d} for r in rows for d in r["denials"]],
            "verify_refused": [r["wp_id"] for r in rows if r["verify_refused"]],
            "errors": [{"wp_id": r["wp_id"], **e} for r in rows for e in r["errors"]],
            "usage": usage_summary(runs),
            "models": {
                "implementer": self.opts.implementer_model,
                "reviewer": self.opts.reviewer_model,
            },
            "logs": str(self.log_dir),
            "timing": self.meter.report(),
            **verification(self.mission().config.raw),
            **result,
        }
        self.emit(summary)
        return summary

    def requeue(self) -> bool:
        """The merge queue sent WPs back to fix mode: run the loop again (their fixes,
        reviews), then finish again. Bounded: each WP's failed gates have a cap."""
        self.requeues = getattr(self, "requeues", 0) + 1
        if self.requeues > sprintplan.MAX_REQUEUES:
            return False
        self.loop()
        return True

    def loop(self) -> None:
        """Reap, dispatch and wait until nothing can start (the runner's)."""
        raise NotImplementedError

    def accept_and_merge(self, mission: Mission, result: dict[str, Any]) -> None:
        """Accept the mission (and merge it, with --merge); problems go to `result`."""
        from kitty.workflow.gating.queue import merge
        from kitty.workflow.merging.accept import NotReady, accept

        # Subtasks a rejection reset on an arbiter-approved WP: accept records them
        # (actor accept, naming the approval), in nobody's name (issue 22.8).
        try:
            accept(mission, "sprint")
            result["accepted"] = True
            self.emit({"event": "accepted", "mission": self.slug})
            if self.opts.merge:
                merged = merge(self.mission(), log_dir=self.log_dir)  # the queue, if verify.*
                back = merged.get("sent_back") or []
                result["merged"] = not back and not merged.get("held")
                if back:
                    result["sent_back"] = back
                    self.emit({"event": "queue", "mission": self.slug, **merged})
                if merged.get("merged"):
                    self.emit(
                        {"event": "merged", "mission": self.slug, "commit": merged["merge_commit"],
                         "wp_ids": merged.get("done", []), "verified": merged.get("verified")}
                    )  # fmt: skip
        except NotReady as exc:
            result["problems"] = exc.problems
        except KittyError as exc:
            result["problems"] = [exc.message]

    def stuck(self, mission: Mission) -> list[str]:
        """Why nothing more can move: halted reviews, WPs held by agents this sprint does
        not run, and what `kitty next` says."""
        from kitty.core.decide.steps import decide

        decision = decide(self.ctx(mission))
        return (
            [f"{w}: review halted (reviewer failed; see the options)" for w in self.halted]
            + [f"{w}: its last implement run {why}" for w, why in self.failed_runs.items()]
            + sprintplan.foreign_holds(
                self.slug, mission.board.wps, mission.all_ids(), self.jobs, self.run_id
            )
            + (decision.blocked_by or [decision.reason])
        )

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
            model = self.model_of(mission, agent, role)
            plan.append(plan_entry(mission, wp_id, role, agent, backend, self.opts.timeout, model))
        result = dry_run_event(mission, queues, plan, self.opts.parallel, self.opts.arbiter)
        result["estimate"] = estimate(mission)
        alone = lone_reviewer(self.opts, self.backends)
        result["problems"] = [alone] if alone and not self.opts.review_panel else []
        self.emit(result)
        return result
