"""`kitty review run`: the review-fix loop of seeds 000-003 as one engine.

Each round runs every panel entry (a persona on an agent) as a fresh process on
the full base..head diff, in waves of at most KITTY_REVIEW_CONCURRENCY, merges
their files (REVIEW-LOOP.md §2), optionally has a contrarian challenge the
findings, and ends with a verdict: CONVERGED (approved), changes requested (the
implementer gets a fix dispatch, then `review.test_command`), or HALT (a
write-once artifact; the WP waits for an arbiter or `kitty review answer`).

The rules are pure (panel/rules/rounds.py `next_actions`, panel/rules/data.py,
panel/rules/report.py); this runner and its halves (panel/review.py, fix.py,
lanes.py, base.py, procs.py) only start processes, read their files into
data and write the files and moves the actions name. `kitty review answer` is
panel/answer.py.

Lanes: a round's verdict is recorded with the existing review path (review-cycle
file, cycle count), so status, next, the board and the sprint understand it.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from kitty.core import lanes
from kitty.errors import GuardRefused, KittyError, NotFound
from kitty.mission.workspace import Mission
from kitty.panel.base import Emit, concurrency
from kitty.panel.fix import PanelFix
from kitty.panel.procs import read_json
from kitty.panel.review import PanelReview
from kitty.panel.rules.data import (
    CHANGES,
    CONVERGED,
    HALT,
    HALT_OPTIONS,
    MAX_BLOCKER_REDISPATCH,
    MAX_TEST_ATTEMPTS,
    QUESTIONS_PER_ASK,
    RUNNER,
    Entry,
    Settings,
    blocker_problems,
    chunks,
    panel_configured,
    waves,
)
from kitty.panel.rules.report import answer_example, halt_hint
from kitty.panel.rules.rounds import (
    Action,
    Challenge,
    Converge,
    Fix,
    Halt,
    Reject,
    Results,
    RoundState,
    next_actions,
)
from kitty.workflow.rules.findings import Merged
from kitty.workflow.rules.formats import read_report

__all__ = [
    "CHANGES",
    "CONVERGED",
    "HALT",
    "HALT_OPTIONS",
    "MAX_BLOCKER_REDISPATCH",
    "MAX_TEST_ATTEMPTS",
    "QUESTIONS_PER_ASK",
    "RUNNER",
    "Emit",
    "Entry",
    "Halted",
    "Loop",
    "Settings",
    "answer_example",
    "blocker_problems",
    "chunks",
    "concurrency",
    "current_halt",
    "halt_hint",
    "load_merged",
    "panel_configured",
    "waves",
]

Round = dict[str, Any] | tuple[Merged, RoundState]


class Halted(KittyError):
    """The loop stopped with a HALT verdict (exit 1); the result is attached."""

    code = "review_halt"

    def __init__(self, result: dict[str, Any]) -> None:
        super().__init__(
            f"HALT: {result['reason']} at round {result['round']} ({result['halt_file']})",
            result.get("hint", ""),
        )
        self.result = result


class Loop(PanelReview, PanelFix):
    def run(self, start_round: int = 1, warn_at: int | None = None) -> dict[str, Any]:
        mission = self.mission()
        st = mission.board.wps.get(self.wp_id)
        if st is None or st.lane is None:
            raise NotFound(f"{self.wp_id} has no state", f"kitty finalize --mission {self.slug}")
        # Pre-flight: an untrusted repo-defined command refuses the run before anything starts.
        self.require_trust(
            mission, [*self.opts.agents, self.opts.challenger, self.opts.implementer]
        )
        from kitty.workflow.actions import review_workspace

        if review_workspace(mission, self.wp_id):  # a clone without the lane worktree
            mission = self.mission()
        if start_round == 1:
            self.fresh_start(mission)
        state = RoundState(start_round, "planned", warn_at or self.opts.soft_warn_rounds)
        prior: Merged | None = None
        while True:
            outcome = self.one_round(state, prior)
            if isinstance(outcome, dict):
                return outcome
            prior, state = outcome

    def one_round(self, state: RoundState, prior: Merged | None) -> Round:
        """Review, merge, challenge, then carry out the verdict's actions."""
        reviewed = self.review_round(state, prior)
        if isinstance(reviewed, Halt):
            return self.stop(reviewed, None)
        merged, scope = reviewed
        results = Results(findings=tuple(merged.findings))
        actions = next_actions(replace(state, phase="merged"), results, self.rules())
        if isinstance(actions[0], Challenge):
            merged, actions = self.challenge(state, merged, scope, actions[0])
            if isinstance(actions[0], Halt):
                return self.stop(actions[0], None)
        self.write_merged(state.round_no, merged, scope)
        return self.act(state, actions, merged, scope)

    def act(
        self, state: RoundState, actions: list[Action], merged: Merged, scope: dict[str, Any]
    ) -> Round:
        for action in actions:
            if isinstance(action, Converge):
                return self.converge(action.round_no, merged, scope)
            if isinstance(action, Reject):
                self.reject(action.round_no, merged)
            elif isinstance(action, Halt):
                return self.stop(action, merged)
            elif isinstance(action, Fix):
                outcome = self.fix(action, merged, state.warn_at, errors=self.carry_errors)
                if isinstance(outcome, dict):
                    return outcome
                return merged, RoundState(outcome.round_no, "planned", outcome.warn_at)
        raise AssertionError(f"no outcome in {actions!r}")


def load_merged(path: Path) -> Merged:
    """A round's merged.json back as findings (for HALT artifacts after a resume)."""
    data = read_json(path)
    if not data.get("findings"):
        return Merged([], reviewers=list(data.get("reviewers") or []))
    report = read_report(str(path), json.dumps({"reviewer": "panel", "findings": data["findings"]}))
    findings = report.findings
    for f, raw in zip(findings, data["findings"], strict=True):
        f.number, f.rc_id = int(raw.get("#") or 0), raw.get("rc_id")
        f.reviewers = list(raw.get("reviewers") or f.reviewers)
    return Merged(findings, reviewers=list(data.get("reviewers") or []))


def current_halt(mission: Mission, wp_id: str) -> tuple[Path, dict[str, Any]]:
    st = mission.board.wps.get(wp_id)
    ref = str((st.scalars.get("review_halt") if st else "") or "")
    if not ref or (st and st.lane not in (lanes.PLANNED, lanes.IN_PROGRESS)):
        raise GuardRefused(
            f"{wp_id} has no open review panel HALT", f"see `kitty review show {wp_id}`"
        )
    path = mission.project.root / ref
    data = read_json(path)
    if not data:
        raise NotFound(f"the HALT file {ref} is missing or unreadable", "run the panel again")
    return path, data
