"""The review panel's data rules, exactly as a user meets them: the settings read from
.kittify/config.yaml, the usage errors and their hints, a blocker's problems named by
question and option, the contrarian's verdicts and the recorded answers.

Pure data, no process, no git (the live loop is tests/panel/test_review_panel.py).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from kitty.errors import UsageError
from kitty.panel.rules.data import (
    Entry,
    Settings,
    blocker_problems,
    challenged,
    choose_challenger,
    gate_report,
    overridden,
    panel_configured,
    parse_concurrency,
    plan_entries,
    record_answers,
    reviewer_agents,
    reviewer_report,
)
from kitty.workflow.rules.findings import Finding, merge
from kitty.workflow.rules.formats import read_report
from tests.workflow.rules.findings_data import OFF_BY_ONE

ENTRY = Entry("security", "codex", "security", "diff", ["a.py"])
OPTION_SHAPE = '(each option is {"label": "...", "description": "..."})'


def findings(*changes: dict[str, Any]) -> list[Finding]:
    """Merged findings (RC1-1, RC1-2, ...) from correctness@claude, one per change."""
    base = {
        "severity": "P1",
        **OFF_BY_ONE,
        "suggested_fix": "use range(n)",
        "first_evidence": "for i in range(n - 1):",
    }
    items = [{**base, **kw} for kw in changes]
    text = json.dumps({"reviewer": "correctness@claude", "findings": items})
    return merge([read_report("f.json", text)]).findings


def usage(call: Any, *args: Any, **kw: Any) -> tuple[str, str]:
    with pytest.raises(UsageError) as caught:
        call(*args, **kw)
    return caught.value.message, caught.value.hint


# -- settings ----------------------------------------------------------------------------------
def test_every_review_setting_is_read_from_the_config() -> None:
    """Each review.* key of .kittify/config.yaml reaches the run: the panel, its agents, the
    round counter, the challenge, the test command (split as a shell would), the soft cap
    and its warning round, and the depth."""
    raw = {
        "review": {
            "panel": ["security", 3],
            "panel_agents": ["codex", 7],
            "max_rounds": 4,
            "challenge": True,
            "test_command": "make 'unit tests'",
            "cap": "soft",
            "soft_warn_rounds": 7,
            "depth": "full",
        },
        "agents": {"available": ["claude"]},
    }
    assert Settings.from_config(raw, 3) == Settings(
        panel=["security", "3"],
        agents=["codex", "7"],
        max_rounds=4,
        challenge=True,
        test_command=["make", "unit tests"],
        cap="soft",
        soft_warn_rounds=7,
        depth="full",
    )
    listed = Settings.from_config({"review": {"test_command": ["pytest", 2]}}, 3)
    assert listed.test_command == ["pytest", "2"]


def test_review_settings_default_to_the_hard_cap_and_the_project_agents() -> None:
    """Without review settings: the panel is chosen from the diff, the agents are the
    project's available ones, the counter is review.max_cycles, no challenge and no test
    gate, the hard cap (soft warning at round 5), depth auto. A review.panel that is not a
    list of names does not fix the panel."""
    assert Settings.from_config({}, 3) == Settings(
        panel=None,
        agents=[],
        max_rounds=3,
        challenge=False,
        test_command=None,
        cap="hard",
        soft_warn_rounds=5,
        depth="auto",
    )
    raw = {"review": {"panel": [], "cap": "hard"}, "agents": {"available": ["claude", "codex"]}}
    got = Settings.from_config(raw, 2)
    assert (got.panel, got.agents, got.cap) == (None, ["claude", "codex"], "hard")
    only_panel_agents = Settings.from_config({"review": {"panel_agents": ["gemini"]}}, 2)
    assert only_panel_agents.agents == ["gemini"]


@pytest.mark.parametrize("rounds", [0, True, "3", 1.5])
def test_max_rounds_must_be_a_whole_number_at_least_1(rounds: Any) -> None:
    """review.max_rounds: 0, a yes/no, a string or a fraction is refused with an example;
    1 round is allowed."""
    assert Settings.from_config({"review": {"max_rounds": 1}}, 3).max_rounds == 1
    assert usage(Settings.from_config, {"review": {"max_rounds": rounds}}, 3) == (
        "review.max_rounds must be a whole number >= 1",
        "for example review: {max_rounds: 5}",
    )


def test_max_rounds_on_the_command_line_may_only_lower_the_counter() -> None:
    """--max-rounds equal to review.max_cycles is fine; above it is refused, naming the
    config change that raises it."""
    assert overridden(Settings(), 3, max_rounds=3).max_rounds == 3
    assert usage(overridden, Settings(), 3, max_rounds=4) == (
        "--max-rounds 4 is above review.max_cycles (3): rounds and review cycles are one "
        "counter, and a run may only lower it",
        "raise it for the project: review: {max_rounds: 4} in .kittify/config.yaml",
    )


def test_panel_configured_only_when_review_panel_is_set() -> None:
    """`kitty next` sends a reviewer to the panel only when review.panel names personas."""
    assert panel_configured({"review": {"panel": ["security"]}})
    assert not panel_configured({"review": {"panel": []}})
    assert not panel_configured({"review": {"max_rounds": 2}})
    assert not panel_configured({"review": None})
    assert not panel_configured({})


def test_concurrency_error_names_the_value_and_the_fix() -> None:
    """KITTY_REVIEW_CONCURRENCY=1 runs one reviewer at a time; a bad value is refused with
    what to set instead."""
    assert parse_concurrency("1") == 1
    assert usage(parse_concurrency, "0") == (
        "KITTY_REVIEW_CONCURRENCY must be a whole number >= 1, not '0'",
        "unset it (default 6) or set e.g. KITTY_REVIEW_CONCURRENCY=4",
    )


def test_agent_errors_say_how_to_name_another_agent() -> None:
    """A panel or a challenge with only the implementer is refused with the option to pass."""
    assert usage(reviewer_agents, ["claude"], "claude") == (
        "the panel needs a reviewer agent other than the implementer (claude)",
        "pass --agents codex,gemini (or set review.panel_agents)",
    )
    assert usage(choose_challenger, Settings(agents=["claude"]), "claude") == (
        "the challenge needs an agent other than the implementer",
        "pass --challenger NAME",
    )


def test_every_planned_entry_reviews_the_whole_diff() -> None:
    """plan.json: each persona on an agent in turn, scope `diff`, every changed file."""
    assert plan_entries(["security", "testing"], ["codex"], ["a.py", "b.py"]) == [
        Entry("security", "codex", "security", "diff", ["a.py", "b.py"]),
        Entry("testing", "codex", "testing", "diff", ["a.py", "b.py"]),
    ]


# -- what came back ----------------------------------------------------------------------------
def test_a_reviewers_findings_are_credited_to_the_panel_entry() -> None:
    """Whatever name a reviewer writes into its file, its report and each of its findings are
    credited to the persona@agent that ran it."""
    item = {"severity": "P1", "kind": "k", "location": "a.py:1", "signature": "s",
            "title": "t", "detail": "d", "first_evidence": "x"}  # fmt: skip
    text = json.dumps({"reviewer": "someone-else", "findings": [item]})
    got = reviewer_report(ENTRY, 0, "round-1/security.json", text)
    assert not isinstance(got, str)
    assert got.reviewer == "security@codex"
    assert [f.reviewers for f in got.findings] == [["security@codex"]]


def test_gate_report_keeps_the_last_4000_characters_of_the_output() -> None:
    """The next fix is told the command, its exit and the end of its output (the last 4000
    characters, where the failure summary is)."""
    output = "head" + "x" * 3999 + "E"
    assert gate_report(["make", "test"], 2, output) == "$ make test\nexit 2\n" + "x" * 3999 + "E"


# -- a blocker's shape -------------------------------------------------------------------------
def test_blocker_problems_name_each_bad_question_and_option() -> None:
    """Every problem of a blocker is named by question and option index, all at once (one
    bad question never hides the next): a question that is not an object, a missing or blank
    id/question/header, the wrong number of options, an option without a text label (its
    shape quoted, cut at 60 characters)."""
    long = "z" * 100
    questions = [
        "not an object",
        {"id": "q1", "question": " ", "options": [{"label": "a"}]},
        {
            "id": "q2",
            "question": "?",
            "header": "h",
            "options": [{"label": 3}, long, {"label": "ok"}],
        },
        {"id": "q3", "question": "?", "header": "h", "options": [{"label": x} for x in "abcd"]},
    ]
    assert blocker_problems({"questions": questions}) == [
        "questions[0]: must be an object",
        "questions[1].question: missing",
        "questions[1].header: missing",
        "questions[1].options: needs 2 to 4 options",
        f'questions[2].options[0]: {{"label": 3}} is not an object with a label {OPTION_SHAPE}',
        f'questions[2].options[1]: "{"z" * 59} is not an object with a label {OPTION_SHAPE}',
    ]
    assert blocker_problems({"questions": []}) == ["questions: must be a non-empty list"]
    assert blocker_problems({}) == ["questions: must be a non-empty list"]


# -- the contrarian ----------------------------------------------------------------------------
def test_the_contrarians_verdicts_are_applied_to_the_named_findings_only() -> None:
    """Verdicts that are not objects or name no finding are skipped, never stop the rest;
    VALID keeps the reviewer's fix unless the contrarian sharpens it; a verdict without a
    validity leaves the finding unchallenged; the contrarian is listed once per finding."""
    fs = findings({}, {"signature": "other", "location": "src/b.py:2"})
    f, g = fs
    verdicts = [
        "noise",
        {"id": "RC9-9", "validity": "INVALID", "evidence": "src/a.py:1"},
        {"id": f.rc_id, "validity": "valid"},
        {"id": g.rc_id},
    ]
    out = challenged(fs, verdicts, "gemini")
    assert out[0] == replace(
        f, validity="VALID", reviewers=["correctness@claude", "contrarian@gemini"]
    )
    assert out[1] == replace(g, reviewers=["correctness@claude", "contrarian@gemini"])
    again = challenged(
        out, [{"id": f.rc_id, "validity": "VALID", "fix": "use range(n + 0)"}], "gemini"
    )
    assert again[0].reviewers == ["correctness@claude", "contrarian@gemini"]
    assert again[0].suggested_fix == "use range(n + 0)"


def test_an_invalid_verdict_without_evidence_stands_as_valid_with_no_evidence() -> None:
    """INVALID with no evidence at all cannot disprove a finding: it stays VALID (blocking)
    and no evidence text is invented for it."""
    (f,) = findings({})
    (out,) = challenged([f], [{"id": f.rc_id, "validity": "INVALID"}], "gemini")
    assert (out.validity, out.validity_evidence) == ("VALID", "")


# -- the blocker bridge ------------------------------------------------------------------------
QUESTIONS = [
    {"id": "q1", "header": "API", "question": "Keep the old API?",
     "options": [{"label": "keep", "description": "callers"}, {"label": "drop"}]},
    {"id": "q2", "header": "DB", "question": "Migrate now?",
     "options": [{"label": "now"}, {"label": "later"}]},
]  # fmt: skip


def test_recorded_answers_carry_the_question_and_the_chosen_option() -> None:
    """Each answer is recorded in seed 000's shape, with who answered; an option without a
    description and an answer without a note record empty texts."""
    got = record_answers(QUESTIONS, {"q1": "drop"}, {}, "lead", {"q2": {"x": 1}}, "h.json")
    assert got == {
        "q2": {"x": 1},
        "q1": {
            "answered_by": "lead",
            "id": "q1",
            "question": "Keep the old API?",
            "selected_label": "drop",
            "selected_description": "",
            "user_notes_if_any": "",
        },
    }


def test_a_wrong_answer_lists_the_ids_or_labels_to_choose_from() -> None:
    """An unknown question id or label is refused, listing what exists."""
    assert usage(record_answers, QUESTIONS, {"q9": "keep"}, {}, "me", {}, "h.json") == (
        "no question 'q9' in h.json",
        "ids: q1, q2",
    )
    assert usage(record_answers, QUESTIONS, {"q1": "maybe"}, {}, "me", {}, "h.json") == (
        "'maybe' is not an option of q1",
        "options: keep, drop",
    )


@pytest.mark.parametrize(
    ("review", "message", "hint"),
    [
        (
            {"panel": "correctness"},
            "review.panel must be a list of persona names, not 'correctness'",
            "for example review: {panel: [correctness, testing]} (`kitty review personas` "
            "lists them)",
        ),
        (
            {"cap": "sofy"},
            "review.cap must be hard or soft, not 'sofy'",
            "for example review: {cap: soft}",
        ),
        (
            {"depth": "lite"},
            "review.depth must be auto or full, not 'lite'",
            "for example review: {depth: full}",
        ),
        (
            {"soft_warn_rounds": "five"},
            "review.soft_warn_rounds must be a whole number >= 1",
            "for example review: {soft_warn_rounds: 5}",
        ),
        (
            {"soft_warn_rounds": 0},
            "review.soft_warn_rounds must be a whole number >= 1",
            "for example review: {soft_warn_rounds: 5}",
        ),
        (
            {"soft_warn_rounds": True},
            "review.soft_warn_rounds must be a whole number >= 1",
            "for example review: {soft_warn_rounds: 5}",
        ),
    ],
    ids=["panel", "cap", "depth", "warn-text", "warn-zero", "warn-bool"],
)
def test_a_review_setting_the_panel_cannot_use_is_named_never_silently_defaulted(
    review: dict[str, Any], message: str, hint: str
) -> None:
    """A typo in review.cap or review.depth used to mean the default without a word, a
    string review.panel was ignored (while `kitty next` still sent reviewers to the
    panel), and `soft_warn_rounds: five` crashed with a bare ValueError."""
    assert usage(Settings.from_config, {"review": review}, 3) == (message, hint)


def test_every_allowed_choice_is_taken() -> None:
    for review in ({"cap": "soft", "soft_warn_rounds": 1}, {"depth": "full"}, {"panel": None}):
        settings = Settings.from_config({"review": review}, 3)
        for key, value in review.items():
            expected = None if key == "panel" else value
            assert getattr(settings, key) == expected
