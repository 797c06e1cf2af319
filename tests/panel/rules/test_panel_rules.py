"""The review panel's rules on plain data: one test per rule of REVIEW-LOOP.md §2-3.

No process, no git: `next_actions(state, results, settings)` and the pure helpers of
panel/rules/data.py and panel/rules/report.py. The live loop is tests/panel/test_review_panel.py.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from kitty.errors import UsageError
from kitty.panel.rules.data import (
    HALT_OPTIONS,
    Entry,
    Settings,
    carried_errors,
    challenged,
    choose_challenger,
    chunks,
    gate_report,
    lane_changed,
    overridden,
    parse_concurrency,
    plan_entries,
    record_answers,
    reviewer_agents,
    reviewer_report,
    waves,
)
from kitty.panel.rules.report import halt_artifact, result_json, triage
from kitty.panel.rules.rounds import (
    ArchiveRounds,
    Challenge,
    ClearHalt,
    Converge,
    DispatchReviewers,
    Fix,
    FixReturn,
    Halt,
    Merge,
    NextRound,
    PanelSettings,
    Reject,
    Results,
    RoundState,
    RunTests,
    WriteBlocker,
    next_actions,
)
from kitty.workflow.rules.findings import Finding, Merged, Report, blocking, merge
from kitty.workflow.rules.formats import read_report
from tests.workflow.rules.findings_data import OFF_BY_ONE


def item(**kw: Any) -> dict[str, Any]:
    base = {
        "severity": "P1",
        **OFF_BY_ONE,
        "confidence": 75,
        "first_evidence": "for i in range(n - 1):",
    }
    base.update(kw)
    return {k: v for k, v in base.items() if v is not ...}


def report(reviewer: str, *items: dict[str, Any]) -> Report:
    return read_report("f.json", json.dumps({"reviewer": reviewer, "findings": list(items)}))


def found(*items: dict[str, Any], round_no: int = 1) -> tuple[Finding, ...]:
    return tuple(merge([report("correctness@codex", *items)], round_no).findings)


def rules(**opts: Any) -> PanelSettings:
    return PanelSettings(Settings(agents=["codex"], **opts), "WP01", "P2", 6)


def entries(n: int) -> tuple[Entry, ...]:
    return tuple(Entry(f"p{i}", "codex", f"p{i}", "diff", []) for i in range(n))


def at(round_no: int, phase: str, **kw: Any) -> RoundState:
    return RoundState(round_no, phase, **kw)


def fix_return(payload: dict[str, Any], edited: bool = False, lane: str = "for_review") -> Results:
    return Results(fix=FixReturn("claude", payload, edited, lane, 0, "runs/x"))


QUESTION = {
    "id": "q1",
    "header": "API",
    "question": "Keep the old API?",
    "options": [{"label": "keep", "description": "callers"}, {"label": "drop"}],
}


# -- §2 merge ----------------------------------------------------------------------------------
def test_validate_a_bad_reviewer_return_is_reviewer_failed() -> None:
    entry = entries(1)[0]
    assert reviewer_report(entry, 2, "r.json", "{}") == "p0 (codex): exit 2"
    assert reviewer_report(entry, 0, "r.json", None) == "p0 (codex): wrote no findings file"
    bad = reviewer_report(entry, 0, "r.json", '{"findings": [{"severity": "P9"}]}')
    assert isinstance(bad, str) and bad.startswith("p0 (codex): ") and "r.json" in bad
    good = reviewer_report(
        entry, 0, "r.json", json.dumps({"reviewer": "p0@codex", "findings": [item()]})
    )
    assert isinstance(good, Report) and good.reviewer == "p0@codex"
    assert good.findings[0].reviewers == ["p0@codex"]


def test_quote_gate_rated_75_without_first_evidence_counts_50() -> None:
    merged = merge([report("a@x", item(first_evidence=...))])
    assert merged.findings == [] and [f.confidence for f in merged.suppressed] == [50]


def test_dedup_by_key_most_severe_wins_and_reviewers_union() -> None:
    a = report("a@x", item(severity="P2"))
    b = report("b@y", item(severity="P1", kind=" Correctness ", signature="Off-By-One"))
    (f,) = merge([a, b]).findings
    assert (f.severity, f.reviewers) == ("P1", ["a@x", "b@y"])


def test_agreement_two_independent_reviewers_step_confidence_up() -> None:
    (f,) = merge([report("a@x", item()), report("b@y", item())]).findings
    assert f.confidence == 100
    (g,) = merge([report("fast-pass", item()), report("a@x", item())]).findings
    assert g.confidence == 75  # fast-pass never counts


def test_pre_existing_findings_never_block() -> None:
    merged = merge([report("a@x", item(pre_existing=True))])
    assert merged.findings == [] and len(merged.pre_existing) == 1


def test_demote_advisory_p3_from_testing_only_to_testing_gaps() -> None:
    merged = merge([report("testing@x", item(severity="P3", autofix_class="advisory"))])
    assert merged.findings == [] and len(merged.testing_gaps) == 1


def test_gate_drops_below_75_unless_p0_at_50() -> None:
    merged = merge([report("a@x", item(confidence=50), item(severity="P0", signature="z"))])
    assert [f.severity for f in merged.findings] == ["P0"]
    assert merged.suppressed_by_anchor == {"50": 1}


def test_sort_and_rc_ids_by_severity_then_location() -> None:
    merged = merge([report("a@x", item(severity="P2", location="b.py:1"), item(signature="s2"))], 3)
    assert [(f.rc_id, f.severity) for f in merged.findings] == [("RC3-1", "P1"), ("RC3-2", "P2")]


def test_blocking_is_at_or_above_block_at_not_invalid_not_advisory() -> None:
    fs = found(item(), item(severity="P3", signature="minor"))
    assert [f.severity for f in blocking(fs, "P2")] == ["P1"]
    assert blocking([replace(fs[0], validity="INVALID")], "P2") == []
    assert blocking([replace(fs[0], severity="P2", autofix_class="advisory")], "P2") == []


# -- §3 round loop -----------------------------------------------------------------------------
def test_plan_assigns_personas_to_agents_in_turn_never_the_implementer() -> None:
    pool = reviewer_agents(["claude", "codex", "gemini"], "claude")
    planned = plan_entries(["correctness", "testing", "security"], pool, ["a.py"])
    assert [(e.reviewer_id, e.agent) for e in planned] == [
        ("correctness", "codex"),
        ("testing", "gemini"),
        ("security", "codex"),
    ]
    assert planned[0].paths == ["a.py"] and planned[0].name == "correctness@codex"
    with pytest.raises(UsageError, match="other than the implementer"):
        reviewer_agents(["claude"], "claude")


def test_waves_every_entry_at_most_c_at_a_time() -> None:  # check 7
    actions = next_actions(at(1, "planned"), Results(entries=entries(13)), rules())
    assert all(isinstance(a, DispatchReviewers) for a in actions)
    sizes = [len(a.entries) for a in actions if isinstance(a, DispatchReviewers)]
    assert sizes == [6, 6, 1]
    assert waves(list(range(5)), 2) == [[0, 1], [2, 3], [4]]


@pytest.mark.parametrize("raw", ["0", "-1", "six", ""])
def test_concurrency_must_be_a_whole_number_at_least_1(raw: str) -> None:
    assert parse_concurrency("4") == 4
    with pytest.raises(UsageError, match="KITTY_REVIEW_CONCURRENCY"):
        parse_concurrency(raw)


def test_invariants_every_round_dispatches_every_entry() -> None:  # check 10
    for round_no in (1, 2):
        actions = next_actions(at(round_no, "planned"), Results(entries=entries(3)), rules())
        assert [(a.round_no, len(a.entries)) for a in actions] == [(round_no, 3)]  # type: ignore[union-attr]


def test_reviewer_failed_or_changed_lane_halts_the_round() -> None:
    failure = lane_changed(1, entries(2), "HEAD moved")
    assert "p0, p1" in failure and "nothing is approved" in failure
    actions = next_actions(at(1, "reviewed"), Results(failures=("a", failure)), rules())
    assert actions == [Halt(1, "reviewer_failed", f"a; {failure}")]
    assert next_actions(at(1, "reviewed"), Results(), rules()) == [Merge(1)]


def test_verdict_converged_when_no_blocking_findings() -> None:
    minor = found(item(severity="P3"))
    assert next_actions(at(1, "merged"), Results(findings=minor), rules()) == [Converge(1)]


def test_verdict_changes_requested_rejects_then_fixes() -> None:
    fs = found(item())
    actions = next_actions(at(1, "merged"), Results(findings=fs), rules())
    assert actions == [Reject(1, ("RC1-1",)), Fix(1)]


def test_max_rounds_last_blocking_round_halts_without_a_fix() -> None:  # check 8
    fs = found(item(), round_no=3)
    actions = next_actions(at(3, "merged"), Results(findings=fs), rules(max_rounds=3))
    assert actions == [Reject(3, ("RC3-1",)), Halt(3, "max_rounds", extra={"warn_at": 5})]


def test_soft_warn_halts_before_the_fix_and_continue_runs_one_more_round() -> None:  # check 11
    fs = found(item(), round_no=5)
    soft = rules(cap="soft", max_rounds=1)
    actions = next_actions(at(5, "merged", warn_at=5), Results(findings=fs), soft)
    assert actions[1] == Halt(5, "soft_warn", extra={"warn_at": 5})
    assert next_actions(at(4, "merged", warn_at=5), Results(findings=fs), soft)[1] == Fix(4)
    cont = next_actions(at(5, "warned", warn_at=6), Results(choice="continue"), soft)
    assert cont == [Fix(5)]
    after = next_actions(at(5, "fixed", warn_at=6), fix_return({"status": "done"}), soft)
    assert after == [NextRound(6, 6)]
    abort = next_actions(at(5, "warned"), Results(choice="abort"), soft)
    assert abort == [Halt(5, "aborted_by_user", "stopped at the soft warning")]


def test_fix_done_goes_to_the_test_gate_or_the_next_round() -> None:
    done = fix_return({"status": "done"})
    assert next_actions(at(1, "fixed"), done, rules()) == [NextRound(2, 5)]
    tests = rules(test_command=["make", "test"])
    assert next_actions(at(1, "fixed"), done, tests) == [RunTests(1)]


def test_fix_that_leaves_the_wp_out_of_review_halts_fix_failed() -> None:
    (halt,) = next_actions(at(1, "fixed"), fix_return({}, lane="in_progress"), rules())
    assert isinstance(halt, Halt) and halt.reason == "fix_failed"
    assert halt.park_note == "the fix by claude left WP01 in in_progress"
    assert halt.context == "claude exited 0 and left WP01 in in_progress; log: runs/x"


def test_errors_remaining_feed_the_next_fix_only_with_gate_errors() -> None:
    assert carried_errors({"gate_status": "errors", "errors_remaining": ["E1", 2]}) == ["E1", "2"]
    assert carried_errors({"gate_status": "ok", "errors_remaining": ["E1"]}) == []


def test_blocker_valid_questions_write_the_blocker_and_halt() -> None:
    state = at(2, "fixed", blocker_round=1)
    actions = next_actions(
        state, fix_return({"status": "blocker", "questions": [QUESTION]}), rules()
    )
    assert actions == [
        WriteBlocker(2, 1),
        Halt(2, "blocker", "", "blocker from claude", True, {"blocker_round": 1}),
    ]


@pytest.mark.parametrize(
    ("questions", "edited", "problem"),
    [
        ([{**QUESTION, "options": [{"label": "only"}]}], False, "needs 2 to 4 options"),
        ([{**QUESTION, "options": [{"label": str(i)} for i in range(5)]}], False, "2 to 4"),
        ([QUESTION], True, "the fix made edits and returned a blocker"),
        ([], False, "questions: must be a non-empty list"),
    ],
)
def test_blocker_malformed_or_with_edits_halts_without_retry(
    questions: list[Any], edited: bool, problem: str
) -> None:  # check 9
    payload = {"status": "blocker", "questions": questions}
    (halt,) = next_actions(at(1, "fixed"), fix_return(payload, edited), rules())
    assert isinstance(halt, Halt) and halt.reason == "blocker_malformed"
    assert problem in halt.context and halt.with_payload


def test_blocker_questions_are_asked_four_at_a_time() -> None:  # check 9
    qs = [{**QUESTION, "id": f"q{i}"} for i in range(5)]
    assert [len(c) for c in chunks(qs)] == [4, 1]


def test_blocker_cap_two_redispatches_per_round() -> None:  # check 9
    assert next_actions(at(1, "answered", blocker_round=2), Results(), rules()) == [Fix(1, 2)]
    (halt,) = next_actions(at(1, "answered", blocker_round=3), Results(), rules())
    assert halt == Halt(1, "blocker_cap", "3 re-dispatches in round 1")


def test_blocker_answers_are_checked_and_recorded() -> None:
    got = record_answers([QUESTION], {"q1": "keep"}, {"q1": "why"}, "me", {}, "h.json")
    assert got["q1"]["selected_description"] == "callers"
    assert got["q1"]["user_notes_if_any"] == "why" and got["q1"]["answered_by"] == "me"
    with pytest.raises(UsageError, match=r"no question 'q9' in h\.json"):
        record_answers([QUESTION], {"q9": "keep"}, {}, "me", {}, "h.json")
    with pytest.raises(UsageError, match="'maybe' is not an option of q1"):
        record_answers([QUESTION], {"q1": "maybe"}, {}, "me", {}, "h.json")


def test_test_fix_failing_tests_redispatch_three_times_then_halt() -> None:  # check 12
    tests = rules(test_command=["make", "test"])
    output = gate_report(["make", "test"], 2, "x" * 5000)
    assert output.startswith("$ make test\nexit 2\n") and output.endswith("x" * 4000)
    failing = Results(test_exit=2, test_output=output)
    for failures in range(3):
        actions = next_actions(at(1, "tested", test_failures=failures), failing, tests)
        assert actions == [Fix(1, 0, failures + 1, output)]
    (halt,) = next_actions(at(1, "tested", test_failures=3), failing, tests)
    assert isinstance(halt, Halt) and halt.reason == "tests_failing"
    assert halt.context.startswith("`make test` failed 4 times:\n$ make test")
    assert next_actions(at(1, "tested"), Results(test_exit=0), tests) == [NextRound(2, 5)]


def test_challenge_runs_before_the_verdict_when_enabled() -> None:
    fs = found(item())
    actions = next_actions(at(1, "merged"), Results(findings=fs), rules(challenge=True))
    assert actions == [Challenge(1, ("RC1-1",))]
    failed = Results(failures=("challenger codex: no valid challenge.json",), findings=fs)
    assert next_actions(at(1, "challenged"), failed, rules())[0].reason == "reviewer_failed"  # type: ignore[union-attr]


def test_challenge_invalid_needs_a_disproving_location_else_valid() -> None:
    fs = found(item())
    verdicts = [{"id": "RC1-1", "validity": "INVALID", "evidence": "no location here"}]
    (f,) = challenged(fs, verdicts, "gemini")
    assert f.validity == "VALID" and f.reviewers[-1] == "contrarian@gemini"
    verdicts = [{"id": "RC1-1", "validity": "INVALID", "evidence": "see src/a.py:12"}]
    (g,) = challenged(fs, verdicts, "gemini")
    assert g.validity == "INVALID"
    assert next_actions(at(1, "challenged"), Results(findings=(g,)), rules()) == [Converge(1)]
    fixed = challenged(fs, [{"id": "RC1-1", "validity": "VALID", "fix": "use range(n)"}], "g")
    assert fixed[0].suggested_fix == "use range(n)" and fs[0].validity == "unchallenged"


def test_challenger_is_never_the_implementer() -> None:
    assert choose_challenger(Settings(agents=["claude", "codex"]), "claude") == "codex"
    with pytest.raises(UsageError, match="other than the implementer"):
        choose_challenger(Settings(agents=["claude"]), "claude")
    with pytest.raises(UsageError):
        choose_challenger(Settings(challenger="claude"), "claude")


def test_halt_file_names_reason_counts_and_options() -> None:
    fs = found(item(), item(severity="P3", signature="minor"))
    payload = {"questions": [QUESTION], "context": "found"}
    art = halt_artifact("WP01", "m", 2, "blocker", fs, "P2", payload, "", {}, {"x": 1})
    assert art["counts"] == {"P0": 0, "P1": 1, "P2": 0, "P3": 0}
    assert art["options"] == HALT_OPTIONS and art["questions"] == [QUESTION]
    assert (art["context"], art["x"]) == ("found", 1)
    warn = halt_artifact("WP01", "m", 5, "soft_warn", fs, "P2", None, "", {}, {})
    assert warn["options"] == ["continue", "halt", "abort"]


def test_result_is_seed_002_shape_with_round_and_loop_verdict() -> None:
    fs = found(item(), item(location="src/b.py:3", signature="other"))
    merged = Merged(list(fs), reviewers=["correctness@codex"])
    out = result_json(("WP01", "m", 1), "changes requested", merged, {}, "P2", (None, "run"))
    assert (out["verdict"], out["round"], out["loop_verdict"]) == (
        "Not ready",
        1,
        "changes requested",
    )
    assert out["artifact_write_status"] == "unavailable"
    assert [g["title"] for g in triage(list(fs))] == ["src/a.py", "src/b.py"]


def test_max_rounds_is_one_counter_a_run_may_only_lower() -> None:
    assert Settings.from_config({"review": {"max_cycles": 5}}, 3).max_rounds == 5
    assert Settings.from_config({"review": {"max_rounds": 2, "max_cycles": 5}}, 3).max_rounds == 2
    assert Settings.from_config({}, 3).max_rounds == 3
    with pytest.raises(UsageError, match="max_rounds must be a whole number"):
        Settings.from_config({"review": {"max_rounds": 0}}, 3)
    base = Settings(max_rounds=3)
    assert overridden(base, 3, max_rounds=2, test_command="make 'a b'").max_rounds == 2
    assert overridden(base, 3, test_command="make 'a b'").test_command == ["make", "a b"]
    assert overridden(base, 3, max_rounds=None) == base
    with pytest.raises(UsageError, match=r"above review\.max_cycles"):
        overridden(base, 3, max_rounds=4)


def test_resume_is_a_fresh_round_1_with_old_rounds_kept_for_audit() -> None:  # check 10
    parked = Results(old_rounds=("round-1", "round-2"), halted=True, lane="planned")
    assert next_actions(at(1, "started"), parked, rules()) == [
        ArchiveRounds(("round-1", "round-2")),
        ClearHalt(back_to_review=True),
    ]
    assert next_actions(at(1, "started"), Results(lane="for_review"), rules()) == []
    approved = Results(halted=True, lane="approved")
    assert next_actions(at(1, "started"), approved, rules()) == [ClearHalt(False)]


def test_unknown_phase_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown panel phase"):
        next_actions(at(1, "lunch"), Results(), rules())


# -- the exact actions (what the runner writes and where the WP is parked) ---------------------
def test_waves_are_numbered_from_1() -> None:
    """Each wave of reviewers is numbered 1, 2, ... in the round's log."""
    actions = next_actions(at(2, "planned"), Results(entries=entries(13)), rules())
    assert [(a.round_no, a.wave) for a in actions] == [(2, 1), (2, 2), (2, 3)]  # type: ignore[union-attr]


def test_a_failed_challenge_halts_naming_every_failure() -> None:
    """The contrarian's round fails like a reviewer's: HALT reviewer_failed at that round,
    every failure named, separated by '; '."""
    failed = Results(failures=("challenger codex: no valid challenge.json", "lane changed"))
    assert next_actions(at(2, "challenged"), failed, rules()) == [
        Halt(2, "reviewer_failed", "challenger codex: no valid challenge.json; lane changed")
    ]


def test_a_malformed_blocker_halts_with_every_problem_and_parks_the_wp() -> None:
    """A blocker with edits and a bad question: HALT blocker_malformed at that round, all
    problems in the context ('; '), the WP parked with a note naming the implementer, and
    the fix's return kept in the HALT file."""
    bad = {**QUESTION, "options": [{"label": "only"}]}
    payload = {"status": "blocker", "questions": [bad]}
    assert next_actions(at(2, "fixed"), fix_return(payload, edited=True), rules()) == [
        Halt(
            2,
            "blocker_malformed",
            "questions[0].options: needs 2 to 4 options; the fix made edits and returned a blocker",
            "blocker from claude",
            with_payload=True,
        )
    ]


def test_a_fix_that_left_the_wp_elsewhere_halts_at_its_round() -> None:
    """fix_failed is recorded at the round of the fix, with the exit, the lane and the log."""
    actions = next_actions(at(2, "fixed"), fix_return({}, lane="in_progress"), rules())
    assert actions == [
        Halt(
            2,
            "fix_failed",
            "claude exited 0 and left WP01 in in_progress; log: runs/x",
            "the fix by claude left WP01 in in_progress",
        )
    ]


def test_the_fixed_phase_needs_the_fixs_return() -> None:
    """A runner bug (no fix return in the fixed phase) is named, not a bare crash."""
    with pytest.raises(AssertionError, match=r"^the fixed phase needs the fix's return$"):
        next_actions(at(1, "fixed"), Results(), rules())


def test_tests_failing_halts_at_its_round_and_parks_the_wp_as_tests_failing() -> None:
    """The fourth failure of the test gate: HALT tests_failing at that round, the command and
    its output in the context, the WP parked with the note 'tests failing'."""
    tests = rules(test_command=["make", "test"])
    failing = Results(test_exit=2, test_output="$ make test\nexit 2\nboom")
    assert next_actions(at(2, "tested", test_failures=3), failing, tests) == [
        Halt(
            2,
            "tests_failing",
            "`make test` failed 4 times:\n$ make test\nexit 2\nboom",
            "tests failing",
        )
    ]
