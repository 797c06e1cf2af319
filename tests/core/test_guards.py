"""Every guard of the transition table, tested by its refusal (message and hint).

Each test names the guard, shows the request it refuses with the exact words
the user sees, and the smallest change to the request that passes it, so a
guard that is removed or loosened fails here and not only in an exit code.
"""

from __future__ import annotations

import pytest

from kitty.core import lanes
from kitty.core.log.state import ReviewRecord, WPState
from kitty.core.move import IssueRow, MoveRequest, Policy
from kitty.core.transitions import (
    arbiter_choices,
    arbiter_commands,
    at_cycle_cap,
    check_move,
    cycles_since_arbiter,
    halted,
    issue_blockers,
)
from kitty.errors import GuardRefused, InvalidTransition


def at(lane: str, implementer: str | None = "claude", **kw: object) -> WPState:
    st = WPState("WP01", lane=lane, implementer=implementer)
    for key, value in kw.items():
        setattr(st, key, value)
    return st


def refused(state: WPState | None, req: MoveRequest, **kw: object) -> GuardRefused:
    with pytest.raises(GuardRefused) as err:
        check_move("WP01", state, kw.pop("subtasks", []), req, **kw)  # type: ignore[arg-type]
    assert err.value.exit_code == 1
    return err.value


def review(verdict: str, n: int) -> ReviewRecord:
    return ReviewRecord(verdict, "codex", "t", None, None, "planned", f"e{n}", n)


def rejected(times: int, lane: str = "planned", **kw: object) -> WPState:
    reviews = [review("changes_requested", i + 1) for i in range(times)]
    return at(lane, review_cycles=times, reviews=reviews, **kw)


# -- the table itself ----------------------------------------------------------


def test_unfinalized_and_final_lanes_say_why() -> None:
    with pytest.raises(InvalidTransition) as err:
        check_move("WP01", None, [], MoveRequest("claimed", "claude"))
    assert err.value.message == "WP01 has no state yet (mission not finalized)"
    assert err.value.hint == "run `kitty finalize` first"
    for final in (lanes.DONE, lanes.CANCELED):
        with pytest.raises(InvalidTransition) as err:
            check_move("WP01", at(final), [], MoveRequest("planned", "claude"))
        assert err.value.message == f"WP01 is {final}, which is final"
    with pytest.raises(InvalidTransition) as err:
        check_move("WP01", at("planned"), [], MoveRequest("approved", "codex"))
    assert err.value.message == "WP01 cannot move from planned to approved"
    assert err.value.hint.startswith("legal targets from planned: ")


def test_force_needs_a_non_blank_note_and_an_actor() -> None:
    err = refused(at("planned"), MoveRequest("done", "lead", force=True, note="   "))
    assert err.message == "--force on WP01 needs a note"
    assert err.hint == 'pass --note "why"'
    assert refused(at("planned"), MoveRequest("done", "", force=True, note="n")).message == (
        "--force on WP01 needs an actor"
    )


# -- actors --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("from_lane", "to_lane"), [("planned", "claimed"), ("for_review", "in_review")]
)
def test_claim_and_review_need_an_actor(from_lane: str, to_lane: str) -> None:
    err = refused(at(from_lane), MoveRequest(to_lane, None))
    assert err.message == f"moving WP01 to {to_lane} needs an actor"
    assert err.hint == "pass --agent NAME (or set KITTY_AGENT)"
    assert check_move("WP01", at(from_lane), [], MoveRequest(to_lane, "codex")).to_lane == to_lane


def test_approval_needs_a_reviewer_identity_even_when_forced() -> None:
    err = refused(at("in_review"), MoveRequest("approved", None))
    assert err.message == "approving WP01 needs a reviewer identity"
    # --force checks the actor first, with its own message
    err = refused(at("in_review"), MoveRequest("approved", None, force=True, note="n"))
    assert err.message == "--force on WP01 needs an actor"


# -- notes and feedback ----------------------------------------------------------


def test_approving_straight_from_in_progress_needs_a_recorded_review_or_force() -> None:
    """Issue 22.2: a note alone is no review (Spec Kitty 3.2.7's InProgressState requires
    review evidence with reviewer, reference and verdict, or force)."""
    for note in (None, "Review passed"):
        err = refused(at("in_progress"), MoveRequest("approved", "codex", note=note))
        assert err.message == (
            "approving WP01 straight from in_progress records no review: nobody reviewed it"
        )
        assert err.hint == (
            "move it to for_review for a review; or record the review you did with "
            '--review-feedback-file FILE; or --force --note "why" (counted)'
        )
    reviewed = check_move(
        "WP01", at("in_progress"), [], MoveRequest("approved", "codex", has_feedback=True)
    )
    assert (reviewed.to_lane, reviewed.verdict) == ("approved", "approved")
    forced = check_move(
        "WP01", at("in_progress"), [], MoveRequest("approved", "codex", force=True, note="ok")
    )
    assert forced.to_lane == "approved"


def test_the_holder_releases_its_own_claim() -> None:
    """Issue 22.12: claimed -> planned by its holder, recorded (as a forced edge, which is
    how Spec Kitty's table, without that edge, reads it)."""
    check = check_move("WP01", at("claimed"), [], MoveRequest("planned", "claude"))
    assert (check.from_lane, check.to_lane, check.release) == ("claimed", "planned", True)
    with pytest.raises(InvalidTransition):  # anyone else: not an edge without --force
        check_move("WP01", at("claimed"), [], MoveRequest("planned", "codex"))
    with pytest.raises(InvalidTransition):
        check_move("WP01", at("claimed", implementer=None), [], MoveRequest("planned", None))
    # every other move, forced or not, is no release (it is recorded as asked)
    assert not check_move("WP01", at("claimed"), [], MoveRequest("in_progress", "claude")).release
    forced = MoveRequest("planned", "codex", force=True, note="take it back")
    assert not check_move("WP01", at("claimed"), [], forced).release


@pytest.mark.parametrize("to_lane", [lanes.BLOCKED, lanes.CANCELED])
def test_leaving_review_for_blocked_or_canceled_needs_a_reason(to_lane: str) -> None:
    err = refused(at("in_review"), MoveRequest(to_lane, "codex"))
    assert err.message == f"moving WP01 out of review to {to_lane} needs a reason"
    assert err.hint == "pass --note explaining the review outcome"
    check = check_move("WP01", at("in_review"), [], MoveRequest(to_lane, "codex", note="why"))
    assert (check.to_lane, check.verdict) == (to_lane, None)


@pytest.mark.parametrize("to_lane", [lanes.PLANNED, lanes.IN_PROGRESS])
def test_rejection_to_either_lane_needs_feedback(to_lane: str) -> None:
    err = refused(at("in_review"), MoveRequest(to_lane, "codex"))
    assert err.message == "rejecting WP01 needs review feedback"
    assert err.hint == 'pass --review-feedback-file FILE or --note "what must change"'

    check = check_move(
        "WP01", at("in_review"), [], MoveRequest(to_lane, "codex", has_feedback=True)
    )
    assert check.verdict == "changes_requested"


def test_verdicts_outside_review() -> None:
    """Feedback on a non-review move is a rejection; a plain move carries no verdict."""
    req = MoveRequest("planned", "codex", has_feedback=True)
    assert check_move("WP01", at("approved"), [], req).verdict == "changes_requested"
    assert check_move("WP01", at("approved"), [], MoveRequest("planned", "codex")).verdict is None
    assert check_move("WP01", at("claimed"), [], MoveRequest("in_progress", "x")).verdict is None
    forced = MoveRequest("done", "lead", force=True, note="n")
    assert check_move("WP01", at("in_review"), [], forced).verdict == "approved"


def test_for_review_lists_every_open_subtask_in_order() -> None:
    st = at("in_progress", subtasks={"T001": "done", "T002": "in_progress"})
    err = refused(st, MoveRequest("for_review", "claude"), subtasks=["T003", "T001", "T002"])
    assert err.message == "WP01 has subtasks not done: T003, T002"
    assert err.hint == "kitty agent tasks mark-status T003 T002 --status done"
    done = at("in_progress", subtasks={"T001": "done"})
    assert check_move("WP01", done, ["T001"], MoveRequest("for_review", "claude")).to_lane == (
        "for_review"
    )


def test_done_only_by_merge_unless_forced() -> None:
    err = refused(at("approved"), MoveRequest("done", "codex"))
    assert err.message == "WP01 reaches done only when its code is merged"
    assert err.hint == "run `kitty merge`; or --force with --note to override"
    forced = MoveRequest("done", "lead", force=True, note="merged by hand")
    assert check_move("WP01", at("approved"), [], forced).to_lane == "done"


# -- self-review -------------------------------------------------------------------


@pytest.mark.parametrize("missing", ["force", "self_review_fallback", "intended", "reason"])
def test_self_review_fallback_needs_all_four_parts(missing: str) -> None:
    parts = {
        "force": True,
        "self_review_fallback": True,
        "intended_reviewer": "codex",
        "reviewer_failure_reason": "exit 3",
    }
    key = {"intended": "intended_reviewer", "reason": "reviewer_failure_reason"}.get(
        missing, missing
    )
    parts[key] = False if key in ("force", "self_review_fallback") else None
    req = MoveRequest("approved", "claude", note="n", **parts)  # type: ignore[arg-type]
    err = refused(at("in_review"), req)
    assert err.message == "claude implemented WP01 and cannot approve it (self-review)"
    assert "--self-review-fallback --intended-reviewer X --reviewer-failure-reason R" in err.hint


def test_a_forced_self_approval_without_the_fallback_flag_is_refused() -> None:
    """Naming the intended reviewer and its failure is not enough: the implementer must
    ask for the fallback (--self-review-fallback) for its approval to count."""
    req = MoveRequest(
        "approved",
        "claude",
        force=True,
        note="n",
        intended_reviewer="codex",
        reviewer_failure_reason="exit 3",
    )
    err = refused(at("in_review"), req)
    assert err.message == "claude implemented WP01 and cannot approve it (self-review)"


def test_a_policy_without_a_cap_of_its_own_stops_at_three_rejections() -> None:
    rows = Policy(issue_rows=[IssueRow("#1", "fixed")])
    assert refused(rejected(3), MoveRequest("claimed", "claude"), policy=rows).message == (
        "WP01 was rejected 3 times (review.max_cycles is 3): it needs an arbiter decision"
    )


def test_self_review_does_not_apply_to_another_reviewer_or_unknown_implementer() -> None:
    assert (
        check_move("WP01", at("in_review"), [], MoveRequest("approved", "codex")).self_review
        is None
    )
    anon = at("in_review", implementer=None)
    assert check_move("WP01", anon, [], MoveRequest("approved", "claude")).to_lane == "approved"


# -- the cycle cap -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lane", "to_lane"),
    [("planned", "claimed"), ("claimed", "in_progress"), ("in_progress", "for_review")],
)
def test_cycle_cap_refuses_every_step_towards_review(lane: str, to_lane: str) -> None:
    st = rejected(3, lane=lane)
    err = refused(st, MoveRequest(to_lane, "lead"), policy=Policy(max_cycles=3), mission="m")
    assert err.message == (
        "WP01 was rejected 3 times (review.max_cycles is 3): it needs an arbiter decision"
    )
    assert err.hint == (
        "an agent other than its implementer (or a person) decides with one of: "
        + " | ".join(arbiter_commands("WP01", "m", "lead"))
    )
    # its implementer is never told to decide (that is self-review): only what it may run
    own = refused(st, MoveRequest(to_lane, "claude"), policy=Policy(max_cycles=3), mission="m")
    assert own.hint == (
        "claude implemented WP01 and cannot decide on its own work: another agent or a person "
        "arbitrates (kitty next offers them the decision); meanwhile: "
        "kitty next --agent claude --mission m"
    )
    # one rejection fewer, or a larger cap, and the same move is allowed
    below = check_move("WP01", rejected(2, lane=lane), [], MoveRequest(to_lane, "claude"))
    larger = check_move("WP01", st, [], MoveRequest(to_lane, "claude"), Policy(max_cycles=4))
    assert below.to_lane == larger.to_lane == to_lane
    # --force (the arbiter's own tool) passes
    forced = MoveRequest(to_lane, "lead", force=True, note="arbiter says go")
    assert check_move("WP01", st, [], forced).to_lane == to_lane


def test_cycle_cap_ends_with_an_approval_or_an_arbiter_decision() -> None:
    st = rejected(3)
    assert at_cycle_cap(st, 3) and not at_cycle_cap(st, 4) and not at_cycle_cap(None, 0)
    st.reviews.append(review("approved", 4))
    assert not at_cycle_cap(st, 3)
    decided = rejected(3, arbiter={"decision": "approve"})
    assert not at_cycle_cap(decided, 3)
    no_records = at("planned", review_cycles=3)
    assert not at_cycle_cap(no_records, 3)


def test_the_cap_restarts_at_each_arbiter_decision() -> None:
    """Issue 22.3: an escalation at 3 rejections, then 3 more: the cap holds again."""
    for total, capped in ((3, False), (5, False), (6, True), (7, True)):
        st = rejected(total, arbiter={"decision": "escalate", "cycles": 3})
        assert at_cycle_cap(st, 3) is capped, total


def test_arbiter_commands_are_exact() -> None:
    approve, escalate = arbiter_commands("WP04", "shop", "lead")
    # Issue 22.4: a command that records a decision names its actor.
    assert approve == (
        "kitty agent tasks move-task WP04 --mission shop --to approved --force --agent lead "
        '--note "Arbiter decision: <why the work is acceptable>"'
    )
    assert escalate == (
        "kitty agent tasks move-task WP04 --mission shop --to blocked --force --agent lead "
        '--note "Escalated to human: <the disagreement>"'
    )


def test_a_review_panel_halt_waits_for_the_arbiter_while_the_wp_is_parked() -> None:
    """A HALT named on a WP in planned or in_progress stops the work like the cap does,
    with no rejection at all; elsewhere (or with the HALT cleared) it stops nothing."""
    for lane in (lanes.PLANNED, lanes.IN_PROGRESS):
        st = at(lane, scalars={"review_halt": "reviews/halt-1.json"})
        assert halted(st) and at_cycle_cap(st, 3)
        assert not halted(at(lane, scalars={"review_halt": ""})) and not halted(at(lane))
    for lane in (lanes.CLAIMED, lanes.FOR_REVIEW, lanes.IN_REVIEW, lanes.BLOCKED):
        assert not halted(at(lane, scalars={"review_halt": "reviews/halt-1.json"}))
    parked = at(lanes.PLANNED, scalars={"review_halt": "reviews/halt-1.json"})
    err = refused(parked, MoveRequest("claimed", "claude"))
    assert err.message.endswith("it needs an arbiter decision")


def test_right_after_an_arbiter_decision_no_rejection_counts() -> None:
    st = rejected(2, arbiter={"decision": "escalate", "cycles": 2})
    assert cycles_since_arbiter(st) == 0
    # a cap of one rejection: the decision itself does not put the WP back at the cap
    assert not at_cycle_cap(st, 1)
    assert check_move(
        "WP01", st, [], MoveRequest("claimed", "claude"), Policy(max_cycles=1)
    ).to_lane == ("claimed")


def test_kitty_next_offers_the_arbiter_two_filled_in_choices() -> None:
    approve, escalate = arbiter_commands("WP04", "shop", "lead")
    assert arbiter_choices("WP04", "shop", "lead") == [
        {
            "label": "approve WP04 as the arbiter",
            "commands": [approve],
            "fill": {
                "<why the work is acceptable>": "why the work is acceptable as it is (recorded)"
            },
        },
        {
            "label": "escalate WP04 to a human (it parks in blocked)",
            "commands": [escalate],
            "fill": {"<the disagreement>": "what the implementer and the reviewers disagree on"},
        },
    ]


@pytest.mark.parametrize(
    ("to_lane", "decision"), [(lanes.APPROVED, "approve"), (lanes.BLOCKED, "escalate")]
)
def test_arbiter_decision_is_recorded_at_the_cap(to_lane: str, decision: str) -> None:
    req = MoveRequest(to_lane, "lead", force=True, note="looked at it")
    check = check_move("WP01", rejected(3), [], req, Policy(max_cycles=3))
    assert check.arbiter == {
        "decision": decision,
        "note": "looked at it",
        "by": "lead",
        "cycles": 3,
    }
    # below the cap a forced move is no arbiter decision unless its note says so
    assert check_move("WP01", rejected(1), [], req).arbiter is None
    for note in ("Arbiter decision: fine", "Escalated to human: stuck"):
        said = MoveRequest(to_lane, "lead", force=True, note=note)
        assert check_move("WP01", rejected(1), [], said).arbiter == {
            "decision": decision,
            "note": note,
            "by": "lead",
            "cycles": 1,
        }
    # a non-forced move never records one
    plain = MoveRequest(lanes.BLOCKED, "lead", note="Escalated to human: stuck")
    assert check_move("WP01", at("planned"), [], plain).arbiter is None


# -- the issue matrix -------------------------------------------------------------------


def test_issue_matrix_rows_by_verdict() -> None:
    rows = [
        IssueRow("#1", "fixed"),
        IssueRow("#2", "verified-already-fixed"),
        IssueRow("#3", " Deferred-With-Followup "),
        IssueRow("#4", "in-mission"),
        IssueRow("#5", ""),
        IssueRow("#6", "unknown", ("WP02",)),
    ]
    assert issue_blockers("WP01", lanes.APPROVED, rows) == ["#5 (empty)"]
    assert issue_blockers("WP01", lanes.DONE, rows) == ["#4 (in-mission)", "#5 (empty)"]
    assert issue_blockers("WP02", lanes.APPROVED, rows) == ["#5 (empty)", "#6 (unknown)"]
    assert issue_blockers("WP01", lanes.FOR_REVIEW, rows) == []
    err = refused(at("in_review"), MoveRequest("approved", "codex"), policy=Policy(issue_rows=rows))
    assert err.message == "issue-matrix.json blocks moving WP01 to approved: #5 (empty)"
    assert err.hint == (
        "give each row a verdict (fixed, verified-already-fixed, deferred-with-followup, "
        "in-mission)"
    )
    done = MoveRequest("done", "merge", merged=True)
    err = refused(at("approved"), done, policy=Policy(issue_rows=rows))
    assert (
        err.hint
        == "give each row a verdict (fixed, verified-already-fixed, deferred-with-followup)"
    )


def test_legal_targets_in_board_order() -> None:
    assert lanes.legal_targets("planned") == ["claimed", "blocked", "canceled"]
    assert lanes.legal_targets("in_review") == [
        "planned",
        "in_progress",
        "approved",
        "done",
        "blocked",
        "canceled",
    ]
    assert lanes.legal_targets("done") == [] and lanes.legal_targets("nowhere") == []
    with pytest.raises(InvalidTransition) as err:
        check_move("WP01", at("claimed"), [], MoveRequest("for_review", "claude"))
    assert err.value.hint == (
        'legal targets from claimed: in_progress, blocked, canceled (or --force with --note "why")'
    )


def test_identity_and_self_review_hints_are_exact() -> None:
    err = refused(at("in_review"), MoveRequest("approved", None))
    assert err.hint == "pass --agent NAME (or set KITTY_AGENT)"
    err = refused(at("in_review"), MoveRequest("approved", "claude"))
    assert err.hint == (
        "have another agent review it; after a reviewer failure use --force "
        "--self-review-fallback --intended-reviewer X --reviewer-failure-reason R --note ..."
    )
    noted = check_move("WP01", at("in_review"), [], MoveRequest("planned", "codex", note="redo"))
    assert noted.verdict == "changes_requested"  # the --note alone is the feedback


def test_unknown_lanes_suggest_the_closest_and_list_them_all() -> None:
    all_lanes = (
        "lanes: planned, claimed, in_progress, for_review, in_review, approved, done, "
        "blocked, canceled (doing = in_progress)"
    )
    with pytest.raises(InvalidTransition) as err:
        check_move("WP01", at("planned"), [], MoveRequest("plannd", "x"))
    assert (err.value.message, err.value.hint) == (
        "unknown lane 'plannd'; did you mean 'planned'?",
        all_lanes,
    )
    with pytest.raises(InvalidTransition) as err:
        check_move("WP01", at("planned"), [], MoveRequest("zzz", "x"))
    assert (err.value.message, err.value.hint) == ("unknown lane 'zzz'", all_lanes)
    # an arbiter decision on a WP without state counts zero cycles
    forced = MoveRequest("approved", "lead", force=True, note="Arbiter decision: x")
    assert check_move("WP01", None, [], forced).arbiter == {
        "decision": "approve",
        "note": "Arbiter decision: x",
        "by": "lead",
        "cycles": 0,
    }
    err2 = refused(rejected(3), MoveRequest("claimed", "claude"), policy=Policy(max_cycles=3))
    assert "--mission <mission>" in err2.hint  # the placeholder when no mission is given
