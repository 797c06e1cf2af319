"""Check one requested move against the transition table and its guards.

`check_move` is the single gate every lane change passes through (move-task,
claims, review verdicts, merge). It never writes: it returns what the event must
carry (a review verdict, an arbiter or self-review record) or raises.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kitty.core import lanes, placeholders
from kitty.core.log.state import WPState
from kitty.core.move import DEFAULT_POLICY, IssueRow, MoveCheck, MoveRequest, Policy
from kitty.errors import GuardRefused, InvalidTransition

TERMINAL_ISSUE_VERDICTS = frozenset({"fixed", "verified-already-fixed", "deferred-with-followup"})
IN_MISSION = "in-mission"


#: What an arbiter's choice asks to fill in before its commands run (placeholder -> meaning).
WHY_ACCEPTABLE = placeholders.WHY_ACCEPTABLE
DISAGREEMENT = placeholders.DISAGREEMENT


def arbiter_commands(wp_id: str, mission: str, actor: str) -> list[str]:
    """The two arbiter decisions of seeds/004, recorded in `actor`'s name: approve, escalate.

    Alternatives, never a sequence: each carries a placeholder note to fill in
    (see `arbiter_choices`)."""
    import shlex  # only when an arbiter decision is printed

    base = f"kitty agent tasks move-task {wp_id} --mission {mission}"
    who = f"--agent {shlex.quote(actor)}"
    return [
        f'{base} --to approved --force {who} --note "Arbiter decision: {WHY_ACCEPTABLE}"',
        f'{base} --to blocked --force {who} --note "Escalated to human: {DISAGREEMENT}"',
    ]


def arbiter_choices(wp_id: str, mission: str, actor: str) -> list[dict[str, Any]]:
    """`kitty next`'s `choices` for an arbiter: one decision, its command and what to fill."""
    approve, escalate = arbiter_commands(wp_id, mission, actor)
    return [
        {
            "label": f"approve {wp_id} as the arbiter",
            "commands": [approve],
            "fill": {WHY_ACCEPTABLE: "why the work is acceptable as it is (recorded)"},
        },
        {
            "label": f"escalate {wp_id} to a human (it parks in blocked)",
            "commands": [escalate],
            "fill": {DISAGREEMENT: "what the implementer and the reviewers disagree on"},
        },
    ]


def unready_dependencies(
    wp_id: str, to_lane: str, dependencies: Sequence[str], board_lane: Any
) -> list[str]:
    """The warning a move that starts work on `wp_id` prints while a dependency is not
    approved (`kitty agent action implement` refuses; a person's move is only warned):
    `board_lane(wp)` is a WP's lane now."""
    if to_lane not in (lanes.CLAIMED, lanes.IN_PROGRESS):
        return []
    waiting = [(d, board_lane(d)) for d in dependencies if board_lane(d) not in lanes.SATISFIED]
    if not waiting:
        return []
    named = ", ".join(f"{d} ({lane or 'not finalized'})" for d, lane in waiting)
    return [
        f"{wp_id} depends on {named}, not approved yet: its work starts without that code "
        "(its lane worktree has only what is merged or approved)"
    ]


def cycles_since_arbiter(state: WPState) -> int:
    """Rejections since the last arbiter decision (all of them when there was none)."""
    decided = state.arbiter.get("cycles") if state.arbiter else None
    if not isinstance(decided, int) or isinstance(decided, bool):
        decided = 0 if state.arbiter is None else state.review_cycles
    return max(0, state.review_cycles - decided)


def cycle_label(state: WPState, max_cycles: int) -> str | None:
    """The one review cycle count every board, list, `next`, prompt and --json names:
    `1/3` (rejections since the last arbiter decision, out of the cap), with the total
    beside it once an arbiter decided (`0/3, 4 in all`); None before any rejection."""
    if not state.review_cycles:
        return None
    since = cycles_since_arbiter(state)
    total = state.review_cycles
    return f"{since}/{max_cycles}" + (f", {total} in all" if total != since else "")


def cycle_count(state: WPState) -> str:
    """`3 times`, or `3 times since the arbiter's decision (5 in all)` (see cycle_label)."""
    since = cycles_since_arbiter(state)
    total = state.review_cycles
    if since == total:
        return f"{total} times"
    return f"{since} times since the arbiter's decision ({total} in all)"


def halted(state: WPState) -> bool:
    """An open review-panel HALT: its artifact is named and the WP is parked in planned."""
    return bool(state.scalars.get("review_halt")) and state.lane in (
        lanes.PLANNED,
        lanes.IN_PROGRESS,
    )


def at_cycle_cap(state: WPState | None, max_cycles: int) -> bool:
    """True when the WP was rejected `max_cycles` times since the last arbiter decision
    (or ever, without one) and no verdict came after, or a review panel HALTed on it
    (`kitty review run`): either way it waits for an arbiter."""
    if state is not None and halted(state):
        return True
    if state is None or not state.reviews or cycles_since_arbiter(state) < max_cycles:
        return False
    return state.reviews[-1].verdict == "changes_requested"


def issue_blockers(wp_id: str, to_lane: str, rows: Sequence[IssueRow]) -> list[str]:
    """Issue-matrix rows that forbid moving `wp_id` to approved/done."""
    if to_lane not in (lanes.APPROVED, lanes.DONE):
        return []
    blockers = []
    for row in rows:
        if row.wps and wp_id not in row.wps:
            continue
        verdict = row.verdict.strip().lower()
        if verdict in TERMINAL_ISSUE_VERDICTS:
            continue
        if verdict == IN_MISSION:
            if to_lane == lanes.DONE:
                blockers.append(f"{row.issue} (in-mission)")
            continue
        blockers.append(f"{row.issue} ({verdict or 'empty'})")
    return blockers


def check_move(
    wp_id: str,
    state: WPState | None,
    subtasks: Sequence[str],
    req: MoveRequest,
    policy: Policy = DEFAULT_POLICY,
    mission: str = "<mission>",
) -> MoveCheck:
    placeholders.check_note(req.note)
    to_lane = _target(req)
    from_lane = (state.lane if state else None) or lanes.GENESIS
    if to_lane == from_lane:
        raise InvalidTransition(f"{wp_id} is already in {to_lane}", "nothing to do")
    if not req.force and (from_lane, to_lane) == (lanes.CLAIMED, lanes.PLANNED) and state:
        holder = state.implementer
        if holder and req.actor == holder:
            return MoveCheck(from_lane, to_lane, release=True)
    _check_edge(wp_id, from_lane, to_lane, req)
    if (
        not req.force
        and state is not None
        and at_cycle_cap(state, policy.max_cycles)
        and to_lane in (lanes.CLAIMED, lanes.IN_PROGRESS, lanes.FOR_REVIEW)
    ):
        raise GuardRefused(
            f"{wp_id} was rejected {cycle_count(state)} "
            f"(review.max_cycles is {policy.max_cycles}): it needs an arbiter decision",
            _cap_hint(wp_id, state, req.actor, mission),
        )
    verdict, self_review = _guards(wp_id, state, from_lane, to_lane, subtasks, req)
    blockers = issue_blockers(wp_id, to_lane, policy.issue_rows)
    if blockers:
        raise GuardRefused(
            f"{policy.issue_rows[0].source} blocks moving {wp_id} to {to_lane}: "
            + ", ".join(blockers),
            "give each row a verdict (fixed, verified-already-fixed, deferred-with-followup"
            + (")" if to_lane == lanes.DONE else ", in-mission)"),
        )
    arbiter = _arbiter(state, to_lane, req, policy)
    return MoveCheck(from_lane, to_lane, verdict, arbiter, self_review)


def _cap_hint(wp_id: str, state: WPState, actor: str | None, mission: str) -> str:
    """What to do at the cap, naming only commands `actor` may run: its implementer cannot
    decide (that would be self-review), so it is told who does and to go on with `next`."""
    if actor and actor == state.implementer:
        import shlex

        return (
            f"{actor} implemented {wp_id} and cannot decide on its own work: another agent "
            "or a person arbitrates (kitty next offers them the decision); meanwhile: "
            f"kitty next --agent {shlex.quote(actor)} --mission {mission}"
        )
    return "an agent other than its implementer (or a person) decides with one of: " + " | ".join(
        arbiter_commands(wp_id, mission, actor or "NAME")
    )


def _target(req: MoveRequest) -> str:
    """The requested lane, canonical (`doing` is in_progress); an unknown one is refused
    with the nearest lane name."""
    to_lane = lanes.canonical(req.to_lane)
    if to_lane is None or to_lane == lanes.GENESIS:
        known = [*lanes.LANES, *lanes.ALIASES]
        import difflib  # only for a typo's suggestion

        close = difflib.get_close_matches(req.to_lane, known, n=1, cutoff=0.6)
        raise InvalidTransition(
            f"unknown lane {req.to_lane!r}" + (f"; did you mean {close[0]!r}?" if close else ""),
            "lanes: " + ", ".join(lanes.LANES) + " (doing = in_progress)",
        )
    return to_lane


def _check_edge(wp_id: str, from_lane: str, to_lane: str, req: MoveRequest) -> None:
    """The move is an edge of the table, or forced by a named actor with a note."""
    if req.force:
        if not req.actor:
            raise GuardRefused(
                f"--force on {wp_id} needs an actor", "pass --agent NAME (or set KITTY_AGENT)"
            )
        if not (req.note or "").strip():
            raise GuardRefused(f"--force on {wp_id} needs a note", 'pass --note "why"')
        return
    if to_lane in lanes.TRANSITIONS[from_lane]:
        return
    targets = lanes.legal_targets(from_lane)
    if not targets:
        raise InvalidTransition(
            f"{wp_id} is {from_lane}, which is final", "a done or canceled WP never moves again"
        )
    if from_lane == lanes.GENESIS:
        raise InvalidTransition(
            f"{wp_id} has no state yet (mission not finalized)", "run `kitty finalize` first"
        )
    raise InvalidTransition(
        f"{wp_id} cannot move from {from_lane} to {to_lane}",
        f'legal targets from {from_lane}: {", ".join(targets)} (or --force with --note "why")',
    )


def _arbiter(
    state: WPState | None, to_lane: str, req: MoveRequest, policy: Policy
) -> dict[str, Any] | None:
    """The arbiter record of a forced approval or escalation at the cap (or so noted)."""
    if not (
        req.force
        and to_lane in (lanes.APPROVED, lanes.BLOCKED)
        and (
            at_cycle_cap(state, policy.max_cycles)
            or (req.note or "").lower().startswith(("arbiter decision", "escalated"))
        )
    ):
        return None
    return {
        "decision": "approve" if to_lane == lanes.APPROVED else "escalate",
        "note": req.note,
        "by": req.actor,
        "cycles": state.review_cycles if state else 0,
    }


def _guards(
    wp_id: str,
    state: WPState | None,
    from_lane: str,
    to_lane: str,
    subtasks: Sequence[str],
    req: MoveRequest,
) -> tuple[str | None, dict[str, Any] | None]:
    """The verdict the move records and its self-review record, or a guard's refusal."""
    # A rejection carries feedback: a file, or (as in Spec Kitty) the --note alone.
    rejection_feedback = req.has_feedback or bool((req.note or "").strip())
    verdict: str | None = None
    if from_lane == lanes.IN_REVIEW or to_lane == lanes.APPROVED:
        if to_lane in (lanes.APPROVED, lanes.DONE):
            verdict = "approved"
        elif to_lane in (lanes.PLANNED, lanes.IN_PROGRESS) and rejection_feedback:
            # (only from in_review: this block reaches planned/in_progress from nowhere else)
            verdict = "changes_requested"
    elif req.has_feedback:
        verdict = "changes_requested"
    if not req.force:
        _unforced_guards(wp_id, state, from_lane, to_lane, subtasks, req)
        if from_lane == lanes.IN_REVIEW:
            _review_exit_guards(wp_id, to_lane, req, rejection_feedback)
        if to_lane == lanes.DONE and not req.merged:
            raise GuardRefused(
                f"{wp_id} reaches done only when its code is merged",
                "run `kitty merge`; or --force with --note to override",
            )
    self_review = _approval(wp_id, state, req) if to_lane == lanes.APPROVED else None
    return verdict, self_review


def _unforced_guards(
    wp_id: str,
    state: WPState | None,
    from_lane: str,
    to_lane: str,
    subtasks: Sequence[str],
    req: MoveRequest,
) -> None:
    """A claim or review names its actor; for_review needs every subtask done; approving
    straight from in_progress needs review evidence."""
    if to_lane in (lanes.CLAIMED, lanes.IN_REVIEW) and not req.actor:
        raise GuardRefused(
            f"moving {wp_id} to {to_lane} needs an actor",
            "pass --agent NAME (or set KITTY_AGENT)",
        )
    if from_lane == lanes.IN_PROGRESS and to_lane == lanes.FOR_REVIEW and state is not None:
        open_tasks = [t for t in subtasks if state.subtasks.get(t) != "done"]
        if open_tasks:
            raise GuardRefused(
                f"{wp_id} has subtasks not done: {', '.join(open_tasks)}",
                f"kitty agent tasks mark-status {' '.join(open_tasks)} --status done",
            )
    if from_lane == lanes.IN_PROGRESS and to_lane == lanes.APPROVED and not req.has_feedback:
        # Spec Kitty 3.2.7 (InProgressState -> approved) wants review evidence with a
        # reviewer, a reference and the verdict, or force: a note is no review.
        raise GuardRefused(
            f"approving {wp_id} straight from in_progress records no review: nobody reviewed it",
            "move it to for_review for a review; or record the review you did with "
            '--review-feedback-file FILE; or --force --note "why" (counted)',
        )


def _review_exit_guards(
    wp_id: str, to_lane: str, req: MoveRequest, rejection_feedback: bool
) -> None:
    """Leaving in_review unforced: a rejection needs feedback, blocked/canceled a reason."""
    if to_lane in (lanes.PLANNED, lanes.IN_PROGRESS) and not rejection_feedback:
        raise GuardRefused(
            f"rejecting {wp_id} needs review feedback",
            'pass --review-feedback-file FILE or --note "what must change"',
        )
    if to_lane in (lanes.BLOCKED, lanes.CANCELED) and not req.note:
        raise GuardRefused(
            f"moving {wp_id} out of review to {to_lane} needs a reason",
            "pass --note explaining the review outcome",
        )


def _approval(wp_id: str, state: WPState | None, req: MoveRequest) -> dict[str, Any] | None:
    """An approval names its reviewer, never the implementer, unless it is a recorded
    self-review fallback (returned: the record the event carries)."""
    if not req.actor:
        raise GuardRefused(
            f"approving {wp_id} needs a reviewer identity",
            "pass --agent NAME (or set KITTY_AGENT)",
        )
    implementer = state.implementer if state else None
    fallback = (
        req.self_review_fallback
        and req.force
        and req.intended_reviewer
        and req.reviewer_failure_reason
    )
    self_review = None
    if fallback:
        self_review = {
            "approved_by": req.actor,
            "implementer": implementer,
            "intended_reviewer": req.intended_reviewer,
            "reviewer_failure_reason": req.reviewer_failure_reason,
        }
    if implementer and implementer == req.actor and not fallback:
        raise GuardRefused(
            f"{req.actor} implemented {wp_id} and cannot approve it (self-review)",
            "have another agent review it; after a reviewer failure use --force "
            "--self-review-fallback --intended-reviewer X --reviewer-failure-reason R "
            "--note ...",
        )
    return self_review
