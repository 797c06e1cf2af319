"""The transition table is the single authority: every (from, to) pair is checked."""

from __future__ import annotations

import itertools

import pytest

from kitty.core import lanes
from kitty.core.log.state import ReviewRecord, WPState
from kitty.core.move import IssueRow, MoveRequest, Policy
from kitty.core.transitions import check_move
from kitty.errors import GuardRefused, InvalidTransition

FROM = (lanes.GENESIS, *lanes.LANES)
PAIRS = [(a, b) for a, b in itertools.product(FROM, lanes.LANES) if a != b]


def state(lane: str, **kw: object) -> WPState | None:
    if lane == lanes.GENESIS:
        return None
    st = WPState("WP01", lane=lane, implementer="claude")
    for key, value in kw.items():
        setattr(st, key, value)
    return st


def satisfying_request(from_lane: str, to_lane: str) -> MoveRequest:
    """A request that passes every guard of the edge (reviewer != implementer)."""
    return MoveRequest(
        to_lane=to_lane,
        actor="codex",
        note="evidence",
        has_feedback=(
            from_lane == lanes.IN_REVIEW and to_lane in (lanes.PLANNED, lanes.IN_PROGRESS)
        )
        or (from_lane, to_lane) == (lanes.IN_PROGRESS, lanes.APPROVED),  # a recorded review
        merged=True,
    )


@pytest.mark.parametrize(("from_lane", "to_lane"), PAIRS)
def test_every_pair_follows_the_table(from_lane: str, to_lane: str) -> None:
    st = state(from_lane, subtasks={"T001": "done"})
    req = satisfying_request(from_lane, to_lane)
    legal = to_lane in lanes.TRANSITIONS[from_lane]
    if legal:
        check = check_move("WP01", st, ["T001"], req)
        assert (check.from_lane, check.to_lane) == (from_lane, to_lane)
    else:
        with pytest.raises(InvalidTransition) as err:
            check_move("WP01", st, ["T001"], req)
        assert err.value.exit_code == 1
        if lanes.TRANSITIONS[from_lane] and from_lane != lanes.GENESIS:
            assert "legal targets" in err.value.hint
            for target in lanes.legal_targets(from_lane):
                assert target in err.value.hint


@pytest.mark.parametrize(("from_lane", "to_lane"), PAIRS)
def test_force_takes_any_edge_with_actor_and_note(from_lane: str, to_lane: str) -> None:
    st = state(from_lane)
    req = MoveRequest(to_lane=to_lane, actor="lead", force=True, note="because")
    assert check_move("WP01", st, [], req).to_lane == to_lane
    with pytest.raises(GuardRefused, match=r"needs an actor$"):
        check_move("WP01", st, [], MoveRequest(to_lane=to_lane, actor=None, force=True, note="x"))
    with pytest.raises(GuardRefused, match=r"needs a note$"):
        check_move("WP01", st, [], MoveRequest(to_lane=to_lane, actor="lead", force=True))


def test_doing_is_an_alias_and_unknown_lanes_are_refused() -> None:
    assert check_move("WP01", state("claimed"), [], MoveRequest("doing", "claude")).to_lane == (
        lanes.IN_PROGRESS
    )
    with pytest.raises(InvalidTransition, match="unknown lane 'shipping'"):
        check_move("WP01", state("claimed"), [], MoveRequest("shipping", "claude"))
    with pytest.raises(InvalidTransition, match="already in claimed"):
        check_move("WP01", state("claimed"), [], MoveRequest("claimed", "claude"))


def test_claim_needs_an_actor() -> None:
    with pytest.raises(GuardRefused, match="needs an actor"):
        check_move("WP01", state("planned"), [], MoveRequest("claimed", None))


def test_for_review_needs_every_subtask_done() -> None:
    st = state("in_progress", subtasks={"T001": "done"})
    with pytest.raises(GuardRefused, match="T002") as err:
        check_move("WP01", st, ["T001", "T002"], MoveRequest("for_review", "claude"))
    assert "mark-status T002" in err.value.hint
    forced = MoveRequest("for_review", "claude", force=True, note="skip")
    assert check_move("WP01", st, ["T001", "T002"], forced).to_lane == "for_review"


def test_rejection_needs_feedback_and_records_changes_requested() -> None:
    st = state("in_review")
    with pytest.raises(GuardRefused, match="review feedback"):
        check_move("WP01", st, [], MoveRequest("planned", "codex"))
    check = check_move("WP01", st, [], MoveRequest("planned", "codex", has_feedback=True))
    assert check.verdict == "changes_requested"
    assert check_move("WP01", st, [], MoveRequest("approved", "codex")).verdict == "approved"


def test_done_needs_a_merge() -> None:
    with pytest.raises(GuardRefused, match="merge"):
        check_move("WP01", state("approved"), [], MoveRequest("done", "codex"))
    merged = check_move("WP01", state("approved"), [], MoveRequest("done", "merge", merged=True))
    assert (merged.from_lane, merged.to_lane, merged.verdict) == ("approved", "done", None)


def test_self_approval_is_refused_unless_fallback_is_complete() -> None:
    st = state("in_review")
    with pytest.raises(GuardRefused, match="self-review"):
        check_move("WP01", st, [], MoveRequest("approved", "claude"))
    partial = MoveRequest("approved", "claude", force=True, note="n", self_review_fallback=True)
    with pytest.raises(GuardRefused):
        check_move("WP01", st, [], partial)
    full = MoveRequest(
        "approved",
        "claude",
        force=True,
        note="n",
        self_review_fallback=True,
        intended_reviewer="codex",
        reviewer_failure_reason="exit 1",
    )
    check = check_move("WP01", st, [], full)
    assert check.self_review == {
        "approved_by": "claude",
        "implementer": "claude",
        "intended_reviewer": "codex",
        "reviewer_failure_reason": "exit 1",
    }


def _rejected(times: int) -> WPState:
    st = WPState("WP01", lane="planned", implementer="claude", review_cycles=times)
    st.reviews = [
        ReviewRecord("changes_requested", "codex", "t", None, None, "planned", f"e{i}", i + 1)
        for i in range(times)
    ]
    return st


def test_cycle_cap_refuses_plain_work_and_records_arbiter() -> None:
    st = _rejected(3)
    with pytest.raises(GuardRefused, match="arbiter") as err:
        check_move("WP01", st, [], MoveRequest("claimed", "lead"), Policy(max_cycles=3), "m")
    assert "--to approved --force" in err.value.hint and "--to blocked --force" in err.value.hint
    check = check_move(
        "WP01", st, [], MoveRequest("approved", "lead", force=True, note="Arbiter decision: fine")
    )
    assert check.arbiter is not None and check.arbiter["decision"] == "approve"
    below = check_move("WP01", _rejected(2), [], MoveRequest("claimed", "claude"))
    assert below.to_lane == "claimed"


def test_issue_matrix_blocks_approval_and_in_mission_blocks_done() -> None:
    rows = [
        IssueRow("#1", "unknown"),
        IssueRow("#2", "in-mission", ("WP01",)),
        IssueRow("#3", "", ("WP09",)),
    ]
    policy = Policy(issue_rows=rows)
    with pytest.raises(GuardRefused, match="#1 \\(unknown\\)") as err:
        check_move("WP01", state("in_review"), [], MoveRequest("approved", "codex"), policy)
    assert "#3" not in err.value.message  # a row for another WP does not count
    ok_rows = Policy(issue_rows=[IssueRow("#2", "in-mission", ("WP01",))])
    approved = check_move("WP01", state("in_review"), [], MoveRequest("approved", "codex"), ok_rows)
    assert approved.to_lane == "approved"
    with pytest.raises(GuardRefused, match="in-mission"):
        check_move(
            "WP01", state("approved"), [], MoveRequest("done", "merge", merged=True), ok_rows
        )


# -- what a refused move tells its user, word for word -----------------------------


def _refusal(st: WPState | None, req: MoveRequest, **kw: object) -> tuple[str, str | None]:
    with pytest.raises((GuardRefused, InvalidTransition)) as err:
        check_move("WP01", st, [], req, **kw)  # type: ignore[arg-type]
    return err.value.message, err.value.hint


def test_every_refusal_says_what_to_do_next() -> None:
    for final in (lanes.DONE, lanes.CANCELED):
        assert _refusal(state(final), MoveRequest("planned", "claude")) == (
            f"WP01 is {final}, which is final",
            "a done or canceled WP never moves again",
        )
    assert _refusal(state("planned"), MoveRequest("done", None, force=True, note="n")) == (
        "--force on WP01 needs an actor",
        "pass --agent NAME (or set KITTY_AGENT)",
    )
    assert _refusal(state("claimed"), MoveRequest("claimed", "claude")) == (
        "WP01 is already in claimed",
        "nothing to do",
    )
    # at the cap, a move without an actor shows the arbiter commands with a NAME to fill
    capped = _rejected(3)
    message, hint = _refusal(capped, MoveRequest("claimed", None), policy=Policy(max_cycles=3))
    assert message.startswith("WP01 was rejected 3 times")
    assert hint is not None and hint.count("--agent NAME ") == 2


def test_issue_matrix_names_every_blocking_row_and_skips_other_wps_rows() -> None:
    rows = [IssueRow("#1", "open", ("WP02",)), IssueRow("#2", ""), IssueRow("#3", "unknown")]
    message, _ = _refusal(
        state("in_review"), MoveRequest("approved", "codex"), policy=Policy(issue_rows=rows)
    )
    assert message == "issue-matrix.json blocks moving WP01 to approved: #2 (empty), #3 (unknown)"


def test_open_subtasks_never_keep_a_wp_in_progress_from_being_parked() -> None:
    st = state("in_progress", subtasks={"T001": "planned"})
    for to_lane in (lanes.BLOCKED, lanes.PLANNED, lanes.CANCELED):
        assert check_move("WP01", st, ["T001"], MoveRequest(to_lane, "claude")).to_lane == to_lane
