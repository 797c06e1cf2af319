"""The review panel runner's fixing half: the implementer's fix dispatch and the test gate.
What follows a fix (a blocker HALT, the tests, a retry, the next round) is decided by
panel/rules/rounds.py."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from kitty.adapters import contain
from kitty.core import lanes
from kitty.panel.lanes import PanelLanes
from kitty.panel.procs import git_state, read_json, run_tests, stamp, write_once
from kitty.panel.prompts import fix_section
from kitty.panel.rules.data import MAX_TEST_ATTEMPTS, carried_errors, gate_report
from kitty.panel.rules.rounds import (
    Action,
    Fix,
    FixReturn,
    Halt,
    NextRound,
    Results,
    RoundState,
    RunTests,
    WriteBlocker,
    next_actions,
)
from kitty.workflow import moves
from kitty.workflow.rules.findings import Merged

Outcome = dict[str, Any] | NextRound


class PanelFix(PanelLanes):
    def fix(
        self,
        action: Fix,
        merged: Merged | None,
        warn_at: int,
        answers: list[dict[str, Any]] | None = None,
        context: str = "",
        errors: list[str] | None = None,
    ) -> Outcome:
        """Dispatch the implementer (and the tests) until the WP is back for review, or HALT."""
        errors_remaining = list(errors or [])
        while True:
            ret, workspace = self.fix_once(action, answers, context, errors_remaining)
            if ret.payload.get("status") != "blocker":
                errors_remaining = [str(e) for e in ret.payload.get("errors_remaining") or []]
                self.carry_errors = carried_errors(ret.payload)
            state = RoundState(
                action.round_no, "fixed", warn_at, action.test_failures, action.blocker_round
            )
            steps = next_actions(state, Results(fix=ret), self.rules())
            if isinstance(steps[-1], RunTests):
                steps = self.test_gate(replace(state, phase="tested"), workspace)
            outcome = self.settle(steps, merged, ret.payload)
            if not isinstance(outcome, Fix):
                return outcome
            action = outcome

    def fix_once(
        self,
        action: Fix,
        answers: list[dict[str, Any]] | None,
        context: str,
        errors: list[str],
    ) -> tuple[FixReturn, str]:
        """One fix dispatch: the implementer claims the WP again and gets the findings."""
        from kitty.workflow import actions

        round_no = action.round_no
        mission = self.mission()
        implementer = self.implementer(mission)
        if mission.board.lane(self.wp_id) in (lanes.FOR_REVIEW, lanes.IN_REVIEW):
            # Failing tests are not a review verdict: back to the implementer without
            # passing through a rejection (no cycle is counted).
            self.unreview()
            moves.move_task(
                self.mission(), self.wp_id, lanes.IN_PROGRESS, agent=implementer, force=True,
                note=f"review panel: tests failing after the fix "
                f"(attempt {action.test_failures} of {MAX_TEST_ATTEMPTS})",
            )  # fmt: skip
        # the fix agent runs with the workspace as its cwd (procs.start_agent): no `cd`
        claimed = actions.implement(self.mission(), self.wp_id, implementer, in_workspace=True)
        rdir = contain.check(self.round_dir(round_no))
        rdir.mkdir(parents=True, exist_ok=True)
        attempt = len(list(rdir.glob("fix-*.prompt.md"))) + 1
        ret = rdir / f"fix-{attempt}.return.json"
        merged_path = self.round_dir(round_no) / "merged.json"
        paths = (merged_path, self.rel(merged_path), ret)
        section = fix_section(
            self.wp_id, round_no, paths, answers, context, errors, action.test_output
        )
        prompt = Path(claimed["prompt"]).read_text(encoding="utf-8") + "\n" + "\n".join(section)
        workspace = claimed["workspace"]
        head_before = git_state(workspace)
        extra = {
            "round": str(round_no),
            "findings_file": str(rdir / "merged.json"),
            "return_file": str(ret),
        }
        run = self.spawn(
            mission, (implementer, "implement"), prompt, rdir / f"fix-{attempt}.prompt.md",
            workspace, f"r{round_no}-fix-{attempt}", extra,
        )  # fmt: skip
        (code,) = self.wait([run])
        payload = read_json(ret)
        status = payload.get("status")
        self.emit(
            {"event": "fix", "round": round_no, "attempt": attempt, "exit": code, "status": status}
        )
        blocker = status == "blocker"
        edited = blocker and git_state(workspace) != head_before
        lane = None if blocker else self.mission().board.lane(self.wp_id)
        return FixReturn(implementer, payload, edited, lane, code, str(self.log_dir)), workspace

    def test_gate(self, state: RoundState, workspace: str) -> list[Action]:
        """review.test_command after a fix; the rules say retry, go on, or HALT."""
        argv = list(self.opts.test_command or [])
        self.require_trust(self.mission(), [])
        code, output = run_tests(argv, workspace)
        self.emit({"event": "tests", "round": state.round_no, "exit": code})
        report = gate_report(argv, code, output) if code else ""
        return next_actions(state, Results(test_exit=code, test_output=report), self.rules())

    def settle(
        self, steps: list[Action], merged: Merged | None, payload: dict[str, Any]
    ) -> Outcome | Fix:
        """Carry out what follows a fix: keep a blocker, HALT, retry, or the next round."""
        first: dict[str, Any] = {}
        halt = next((s for s in steps if isinstance(s, Halt)), None)
        if halt is not None and halt.park_note:  # parked before the blocker file is kept
            self.park(halt.park_note)
            steps = [replace(s, park_note=None) if s is halt else s for s in steps]
        for step in steps:
            if isinstance(step, WriteBlocker):
                path = self.review_dir / f"blocker-r{step.round_no}-{stamp()}.json"
                write_once(
                    path, {"round": step.round_no, "blocker_round": step.blocker_round, **payload}
                )
                first = {"blocker_file": self.rel(path)}
            elif isinstance(step, Halt):
                return self.stop(step, merged, payload, first)
            elif isinstance(step, NextRound | Fix):
                return step
        raise AssertionError(f"no outcome in {steps!r}")
