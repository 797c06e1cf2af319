"""Reading a findings file: what each shape of file is read as, and what a bad one is told.

Each test states a promise to the user who hands kitty a reviewer's file: which format it is read
as, which fields it keeps, and the exact words of the error that names the file and the problem.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kitty.errors import SpecError
from kitty.workflow.rules.formats import parse_addon_markdown, read_report
from tests.workflow.rules.findings_data import OFF_BY_ONE

KITTY_ITEM = {"severity": "P1", **OFF_BY_ONE}
PERSONA_ITEM = {
    "title": "Token compared with ==",
    "severity": "P1",
    "file": "src/auth.py",
    "line": 42,
    "confidence": 50,
    "autofix_class": "manual",
    "owner": "human",
    "requires_verification": False,
    "pre_existing": False,
}
ADDON_ITEM = {"title": "Leak", "severity": "major", "file": "src/b.py:3", "finding": "fd leak"}


def problem(source: str, text: str, fmt: str | None = None) -> str:
    with pytest.raises(SpecError) as err:
        read_report(source, text, fmt)
    return err.value.message


def test_a_merged_file_fed_back_keeps_each_findings_native_fields() -> None:
    # merged.json carries `native` (the seed's own fields and format): reading it again keeps them.
    item = {**KITTY_ITEM, "native": {"format": "persona", "why_it_matters": "timing"}, "extra": 1}
    (f,) = read_report("merged.json", json.dumps({"reviewer": "r", "findings": [item]})).findings
    assert f.native == {"format": "persona", "why_it_matters": "timing", "extra": 1}
    # A plain kitty finding with an unknown field records it under kitty's own format.
    (h,) = read_report(
        "k.json", json.dumps({"reviewer": "r", "findings": [{**KITTY_ITEM, "x": 2}]})
    ).findings
    assert h.native == {"x": 2, "format": "kitty"}


def test_persona_fields_are_read_as_written() -> None:
    item = {**PERSONA_ITEM, "first_evidence": "if token == expected:"}
    (f,) = read_report("p.json", json.dumps({"reviewer": "security", "findings": [item]})).findings
    # No why_it_matters: the quoted line explains it; the confidence and classes are the file's.
    assert (f.detail, f.confidence, f.rated) == ("if token == expected:", 50, True)
    assert (f.autofix_class, f.owner) == ("manual", "human")
    legacy = {**PERSONA_ITEM, "autofix_class": "safe_auto", "owner": "review-fixer"}
    (g,) = read_report("p.json", json.dumps({"reviewer": "s", "findings": [legacy]})).findings
    assert (g.autofix_class, g.owner) == ("gated_auto", "downstream-resolver")
    advisory = {**PERSONA_ITEM, "autofix_class": "advisory"}
    (h,) = read_report("p.json", json.dumps({"reviewer": "s", "findings": [advisory]})).findings
    assert h.autofix_class == "advisory"


def test_an_addon_finding_without_verdict_or_id_is_unchallenged_and_unnumbered() -> None:
    rep = read_report("addon.json", json.dumps({"reviewer": "c", "findings": [ADDON_ITEM]}))
    (f,) = rep.findings
    assert (rep.format, f.severity, f.validity) == ("addon", "P1", "unchallenged")
    assert (f.confidence, f.rated, f.id, f.ids) == (75, False, None, [])


@pytest.mark.parametrize(
    ("data", "message"),
    [
        # A rule with no message of its own still names the field and what it must be.
        ({"schema": 3, "reviewer": "r", "findings": []}, "schema: must be one of [1, 2]"),
        # A blank reviewer is "missing", not a quoted empty value.
        ({"reviewer": "", "findings": []}, "reviewer: missing (the reviewing agent's name)"),
        ({"reviewer": "r", "findings": 5}, "findings: must be a list"),
        # Optional text that may be null: the message asks for text, never for "null".
        (
            {"reviewer": "r", "findings": [{**KITTY_ITEM, "suggested_fix": 5}]},
            "findings[0].suggested_fix: must be text",
        ),
    ],
)
def test_single_problem_message_word_for_word(data: Any, message: str) -> None:
    assert problem("f.json", json.dumps(data)) == f"f.json: {message} (kitty format)"


def test_several_problems_are_listed_one_per_line() -> None:
    data = {"reviewer": "r", "findings": [{**KITTY_ITEM, "kind": " ", "severity": "P9"}]}
    assert problem("f.json", json.dumps(data)) == (
        "f.json: 2 problem(s) as kitty format:\n"
        "  findings[0].severity: 'P9' is not one of P0, P1, P2, P3\n"
        "  findings[0].kind: must not be blank"
    )


def test_a_file_with_no_reviewer_name_anywhere_is_refused_reviewer_first() -> None:
    # Add-on files may omit the reviewer (the file name gives it); with no name at all they
    # are refused, and the missing reviewer is named before the other problems.
    good = json.dumps({"findings": [ADDON_ITEM]})
    assert problem("", good) == ": reviewer: missing (the reviewing agent's name) (addon format)"
    bad = json.dumps({"findings": [{**ADDON_ITEM, "file": "nowhere"}]})
    assert problem("", bad) == (
        ": 2 problem(s) as addon format:\n"
        "  reviewer: missing (the reviewing agent's name)\n"
        "  findings[0].file: 'nowhere' is not path:line"
    )


def test_only_a_seed_000_file_takes_the_reviewer_from_a_trailing_r_name() -> None:
    addon = json.dumps({"findings": [ADDON_ITEM]})
    assert read_report("reviews/review_rbob.json", addon).reviewer == "review_rbob"
    specdev = {"round": 1, "findings": [KITTY_ITEM]}
    assert read_report("findings_x_1_rbob.json", json.dumps(specdev)).reviewer == "bob"


def test_json_is_read_as_json_even_when_the_addon_format_is_asked_for() -> None:
    body = json.dumps({"reviewer": "c", "findings": [ADDON_ITEM]})
    for text in (body, "\n  " + body + "\n"):
        rep = read_report("a.json", text, "addon")
        assert [f.title for f in rep.findings] == ["Leak"]
    assert problem("a.json", "[]", "addon") == "a.json: top level: must be an object (addon format)"


def test_markdown_asked_for_as_addon_is_read_even_without_findings() -> None:
    text = "# Review Add-On: Cycle 2\n\nNo findings.\n"
    rep = read_report("review-addon-2.md", text, "addon")
    assert (rep.format, rep.reviewer, rep.findings) == ("addon", "review-addon-2", [])


def test_text_that_is_neither_json_nor_an_addon_is_refused_as_json() -> None:
    message = problem("codex.json", "reviewer: codex\nfindings: []\n")
    assert message.startswith("codex.json:1: not valid JSON: Expecting value"), message


def test_addon_cycle_heading_is_found_below_a_preamble() -> None:
    text = "Handoff from the contrarian.\n\n# Review Add-On: Cycle 4\n\n### RC4-1: Leak\n"
    assert parse_addon_markdown(text) == {
        "cycle": 4,
        "findings": [{"id": "RC4-1", "title": "Leak"}],
    }


def test_the_shipped_schema_reads_the_same_under_any_locale() -> None:
    # `kitty review schema` prints this text: plain ASCII, so no locale can garble it.
    from kitty.workflow.rules.formats import schema, schema_text

    text = schema_text()
    assert text.isascii()
    assert json.loads(text) == schema()
