"""The review panel's round loop (REVIEW-LOOP.md §3) as one pure function.

`next_actions(state, results, settings)` says what the loop does next, from the phase the
round is in, what came back from the processes (reviewer reports, the contrarian's
verdicts, the fix's return file, the test command's exit) and the settings: dispatch
reviewers, merge, challenge, converge, reject, fix, run the test gate, start the next
round, or HALT with a reason. The runner (panel/runner.py) only starts the processes,
reads their files into `Results` and writes the files the actions name; the merge rules
(§2) are workflow/rules/findings.py, the data shapes panel/rules/data.py.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kitty.core import lanes
from kitty.panel.rules.data import (
    MAX_BLOCKER_REDISPATCH,
    MAX_TEST_ATTEMPTS,
    Entry,
    Settings,
    blocker_problems,
    waves,
)
from kitty.workflow.rules.findings import Finding, blocking


# -- actions -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class ArchiveRounds:
    """Keep earlier runs' round folders under review/archive-<ts>, for audit only."""

    names: tuple[str, ...]


@dataclass(frozen=True)
class ClearHalt:
    """This run resolves the open HALT; `back_to_review`: the parked WP is for_review again."""

    back_to_review: bool


@dataclass(frozen=True)
class DispatchReviewers:
    """Run these entries as fresh processes, in parallel, and wait for all of them."""

    round_no: int
    wave: int
    entries: tuple[Entry, ...]


@dataclass(frozen=True)
class Merge:
    """Merge the round's reports (§2) into merged findings."""

    round_no: int


@dataclass(frozen=True)
class Challenge:
    """The contrarian judges these findings VALID or INVALID."""

    round_no: int
    rc_ids: tuple[str, ...]


@dataclass(frozen=True)
class Converge:
    """No blocking finding: record the approval."""

    round_no: int


@dataclass(frozen=True)
class Reject:
    """Record the round as changes requested, with these blocking findings."""

    round_no: int
    blocking: tuple[str, ...]


@dataclass(frozen=True)
class Fix:
    """Dispatch the implementer; `test_failures` > 0: again, after failing tests."""

    round_no: int
    blocker_round: int = 0
    test_failures: int = 0
    test_output: str = ""


@dataclass(frozen=True)
class RunTests:
    """Run review.test_command in the workspace (the test gate)."""

    round_no: int


@dataclass(frozen=True)
class NextRound:
    round_no: int
    warn_at: int


@dataclass(frozen=True)
class WriteBlocker:
    """Keep the implementer's blocker as tasks/<WP>/review/blocker-r<R>-<ts>.json."""

    round_no: int
    blocker_round: int


@dataclass(frozen=True)
class Halt:
    """Stop: the write-once HALT file, the WP parked in planned (noted `park_note`)."""

    round_no: int
    reason: str
    context: str = ""
    park_note: str | None = None  # the note of the move to planned (default: the reason)
    with_payload: bool = False  # the fix's return (questions, context) goes in the file
    extra: dict[str, Any] = field(default_factory=dict)


Action = (
    ArchiveRounds
    | ClearHalt
    | DispatchReviewers
    | Merge
    | Challenge
    | Converge
    | Reject
    | Fix
    | RunTests
    | NextRound
    | WriteBlocker
    | Halt
)


# -- state, results, settings ------------------------------------------------------------------
@dataclass(frozen=True)
class RoundState:
    """Where the loop is: started (a new run), planned, reviewed, merged, challenged, fixed,
    tested, warned (a soft-warn HALT being answered) or answered (a blocker's answers are
    all in)."""

    round_no: int
    phase: str
    warn_at: int = 5
    test_failures: int = 0
    blocker_round: int = 0


@dataclass(frozen=True)
class FixReturn:
    """What the implementer's fix left behind."""

    implementer: str
    payload: dict[str, Any]  # the return file ({} when missing or unreadable)
    edited: bool  # HEAD or the worktree changed during the run
    lane: str | None  # the WP's lane afterwards
    exit: int
    log: str = ""


@dataclass(frozen=True)
class Results:
    entries: tuple[Entry, ...] = ()  # planned: the round's fan-out
    failures: tuple[str, ...] = ()  # reviewed / challenged: what failed
    findings: tuple[Finding, ...] = ()  # merged / challenged: the merged findings
    fix: FixReturn | None = None  # fixed
    test_exit: int = 0  # tested
    test_output: str = ""  # tested: gate_report(...)
    choice: str = ""  # warned: "continue" | "abort"
    old_rounds: tuple[str, ...] = ()  # started: round folders of earlier runs
    halted: bool = False  # started: the WP has an open HALT
    lane: str | None = None  # started: the WP's lane


@dataclass(frozen=True)
class PanelSettings:
    opts: Settings
    wp_id: str
    block_at: str = "P2"
    concurrency: int = 6


# -- the rules ---------------------------------------------------------------------------------
def next_actions(state: RoundState, results: Results, settings: PanelSettings) -> list[Action]:
    rule = _RULES.get(state.phase)
    if rule is None:
        raise ValueError(f"unknown panel phase {state.phase!r}")
    return rule(state, results, settings)


def started(state: RoundState, results: Results, settings: PanelSettings) -> list[Action]:
    """Resume is a fresh round 1: earlier rounds are kept for audit only (never fed to the
    new run), an open HALT is cleared and a parked WP goes back for review."""
    actions: list[Action] = []
    if results.old_rounds:
        actions.append(ArchiveRounds(results.old_rounds))
    if results.halted:
        actions.append(ClearHalt(results.lane in (lanes.PLANNED, lanes.IN_PROGRESS)))
    return actions


def planned(state: RoundState, results: Results, settings: PanelSettings) -> list[Action]:
    """Waves of at most C entries, every entry, in order (check 7)."""
    return [
        DispatchReviewers(state.round_no, number, tuple(wave))
        for number, wave in enumerate(waves(results.entries, settings.concurrency), 1)
    ]


def reviewed(state: RoundState, results: Results, settings: PanelSettings) -> list[Action]:
    """A failed reviewer (or a lane changed by one) HALTs the round: nothing is approved."""
    if results.failures:
        return [Halt(state.round_no, "reviewer_failed", "; ".join(results.failures))]
    return [Merge(state.round_no)]


def merged(state: RoundState, results: Results, settings: PanelSettings) -> list[Action]:
    """With review.challenge the contrarian judges every unchallenged finding first."""
    targets = [f.rc_id or "" for f in results.findings if f.validity == "unchallenged"]
    if settings.opts.challenge and targets:
        return [Challenge(state.round_no, tuple(targets))]
    return verdict(state, results.findings, settings)


def challenged(state: RoundState, results: Results, settings: PanelSettings) -> list[Action]:
    if results.failures:
        return [Halt(state.round_no, "reviewer_failed", "; ".join(results.failures))]
    return verdict(state, results.findings, settings)


def verdict(
    state: RoundState, findings: Sequence[Finding], settings: PanelSettings
) -> list[Action]:
    """CONVERGED without blocking findings; else changes requested, then a fix, or HALT at
    the last round (hard cap: no unreviewed fix) or at the soft warning."""
    blockers = blocking(findings, settings.block_at)
    if not blockers:
        return [Converge(state.round_no)]
    opts, round_no = settings.opts, state.round_no
    reject = Reject(round_no, tuple(f.rc_id or "" for f in blockers))
    if opts.cap == "hard" and round_no >= opts.max_rounds:
        return [reject, Halt(round_no, "max_rounds", extra={"warn_at": state.warn_at})]
    if opts.cap == "soft" and round_no >= state.warn_at:
        return [reject, Halt(round_no, "soft_warn", extra={"warn_at": state.warn_at})]
    return [reject, Fix(round_no)]


def fixed(state: RoundState, results: Results, settings: PanelSettings) -> list[Action]:
    """A blocker HALTs (malformed, or with edits: no retry); a fix that did not hand the WP
    back for review HALTs; otherwise the test gate, or the next round."""
    fix = results.fix
    assert fix is not None, "the fixed phase needs the fix's return"
    round_no, wp_id = state.round_no, settings.wp_id
    if fix.payload.get("status") == "blocker":
        problems = blocker_problems(fix.payload)
        if fix.edited:
            problems.append("the fix made edits and returned a blocker")
        park = f"blocker from {fix.implementer}"
        if problems:
            reason, context = "blocker_malformed", "; ".join(problems)
            return [Halt(round_no, reason, context, park, with_payload=True)]
        return [
            WriteBlocker(round_no, state.blocker_round),
            Halt(round_no, "blocker", "", park, True, {"blocker_round": state.blocker_round}),
        ]
    if fix.lane != lanes.FOR_REVIEW:
        return [
            Halt(
                round_no,
                "fix_failed",
                f"{fix.implementer} exited {fix.exit} and left {wp_id} in {fix.lane}; "
                f"log: {fix.log}",
                f"the fix by {fix.implementer} left {wp_id} in {fix.lane}",
            )
        ]
    if not settings.opts.test_command:
        return [NextRound(round_no + 1, state.warn_at)]
    return [RunTests(round_no)]


def tested(state: RoundState, results: Results, settings: PanelSettings) -> list[Action]:
    """Passing tests: the next round. Failing: back to the implementer, at most three
    re-dispatches per round, then HALT tests_failing (check 12)."""
    if results.test_exit == 0:
        return [NextRound(state.round_no + 1, state.warn_at)]
    failures = state.test_failures + 1
    if failures > MAX_TEST_ATTEMPTS:
        command = shlex.join(settings.opts.test_command or [])
        context = f"`{command}` failed {failures} times:\n{results.test_output}"
        return [Halt(state.round_no, "tests_failing", context, "tests failing")]
    return [Fix(state.round_no, state.blocker_round, failures, results.test_output)]


def warned(state: RoundState, results: Results, settings: PanelSettings) -> list[Action]:
    """After a soft warning: abort HALTs (aborted_by_user); continue fixes and runs one
    more round, the next warning one round later."""
    if results.choice == "abort":
        return [Halt(state.round_no, "aborted_by_user", "stopped at the soft warning")]
    return [Fix(state.round_no)]


def answered(state: RoundState, results: Results, settings: PanelSettings) -> list[Action]:
    """Every blocker question answered: a fresh fix dispatch with the answers, at most
    two re-dispatches per round, then HALT blocker_cap (check 9)."""
    if state.blocker_round > MAX_BLOCKER_REDISPATCH:
        context = f"{state.blocker_round} re-dispatches in round {state.round_no}"
        return [Halt(state.round_no, "blocker_cap", context)]
    return [Fix(state.round_no, state.blocker_round)]


_RULES = {
    "started": started,
    "planned": planned,
    "reviewed": reviewed,
    "merged": merged,
    "challenged": challenged,
    "fixed": fixed,
    "tested": tested,
    "warned": warned,
    "answered": answered,
}
