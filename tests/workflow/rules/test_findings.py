"""Findings: every format is read and mapped, every problem named, the merge follows the spec.

Acceptance checks 1-6 of REVIEW-LOOP.md §6 are marked `# check N`.
"""

from __future__ import annotations

import itertools
import json
import random
from typing import Any

import pytest

from kitty.errors import SpecError
from kitty.workflow.rules.findings import Report, blocking, merge, render_cycle
from kitty.workflow.rules.formats import detect, read_report
from tests.workflow.rules.findings_data import OFF_BY_ONE


def finding(**kw: Any) -> dict[str, Any]:
    base = {
        "severity": "P2",
        **OFF_BY_ONE,
        "suggested_fix": "use range(n)",
    }
    base.update(kw)
    return {k: v for k, v in base.items() if v is not ...}


def report(reviewer: str, *items: dict[str, Any], source: str = "f.json") -> Report:
    return read_report(source, json.dumps({"reviewer": reviewer, "findings": list(items)}))


def persona(**kw: Any) -> dict[str, Any]:
    base = {
        "title": "Token compared with ==",
        "severity": "P1",
        "file": "src/auth.py",
        "line": 42,
        "confidence": 75,
        "autofix_class": "manual",
        "owner": "downstream-resolver",
        "requires_verification": False,
        "pre_existing": False,
        "first_evidence": "if token == expected:",
        "why_it_matters": "timing attack",
    }
    base.update(kw)
    return {k: v for k, v in base.items() if v is not ...}


def test_merge_dedupes_keeps_most_severe_and_every_reviewer() -> None:
    codex = report(
        "codex",
        finding(severity="P2", id="c1"),
        finding(signature="naming", severity="P3"),
    )
    gemini = report(
        "gemini",
        finding(severity="P1", detail="gemini's words", id="g7"),
        finding(location="src/b.py:3", severity="P0", kind="security", signature="sqli"),
    )
    merged = merge([codex, gemini]).findings
    assert [(f.severity, f.location, f.signature) for f in merged] == [
        ("P0", "src/b.py:3", "sqli"),
        ("P1", "src/a.py:10", "off-by-one"),
        ("P3", "src/a.py:10", "naming"),
    ]
    dup = merged[1]
    assert dup.reviewers == ["codex", "gemini"] and dup.detail == "gemini's words"
    assert dup.ids == ["c1", "g7"]
    assert dup.confidence == 100  # two unrated (75) reports agree: one step up
    assert [f.rc_id for f in merged] == ["RC1-1", "RC1-2", "RC1-3"]


def test_key_is_normalised() -> None:
    a = report("a", finding(kind=" Correctness ", signature="Off  By-One"))
    b = report("b", finding(kind="correctness", signature="off by-one"))
    assert len(merge([a, b]).findings) == 1


@pytest.mark.parametrize(("block_at", "expected"), [("P0", 1), ("P1", 2), ("P2", 3), ("P3", 4)])
def test_threshold(block_at: str, expected: int) -> None:
    rep = report("r", *[finding(severity=s, signature=s) for s in ("P0", "P1", "P2", "P3")])
    assert len(blocking(rep.findings, block_at)) == expected


# -- validation: every problem, named ------------------------------------------------
@pytest.mark.parametrize(
    ("data", "field"),
    [
        ([], "top level"),
        ({"findings": []}, "reviewer"),
        ({"reviewer": "r"}, "findings"),
        ({"reviewer": "r", "findings": [finding(severity="P5")]}, "findings[0].severity"),
        (
            {"reviewer": "r", "findings": [finding(), finding(location=None)]},
            "findings[1].location",
        ),
        ({"reviewer": "r", "findings": [finding(location="src/a.py")]}, "findings[0].location"),
        ({"reviewer": "r", "findings": [finding(title=3)]}, "findings[0].title"),
        ({"reviewer": "r", "findings": [finding(title="  ")]}, "findings[0].title"),
        ({"reviewer": "r", "findings": ["x"]}, "findings[0]"),
        ({"reviewer": "r", "findings": [finding(confidence=80)]}, "findings[0].confidence"),
    ],
)
def test_invalid_reports_name_the_file_and_field(data: Any, field: str) -> None:
    with pytest.raises(SpecError) as err:
        read_report("reviews/codex.json", json.dumps(data))
    assert err.value.message.startswith(f"reviews/codex.json: {field}")


def test_every_problem_is_reported_at_once() -> None:
    data = {
        "findings": [
            finding(severity="P7", kind=..., location="nowhere"),
            finding(title=..., detail=""),
            "x",
        ]
    }
    with pytest.raises(SpecError) as err:
        read_report("f.json", json.dumps(data))
    message = err.value.message
    for expected in (
        "7 problem(s)",
        "reviewer: missing",
        "findings[0].kind: missing",
        "findings[0].severity: 'P7' is not one of P0, P1, P2, P3",
        "findings[0].location: 'nowhere' is not path:line",
        "findings[1].title: missing",
        "findings[1].detail: must not be blank",
        "findings[2]: must be an object",
    ):
        assert expected in message, message


def test_schema_1_files_are_schema_2_files() -> None:
    rep = report("codex", finding())
    f = rep.findings[0]
    assert (f.confidence, f.rated, f.autofix_class, f.owner) == (
        75,
        False,
        "manual",
        "downstream-resolver",
    )
    assert (f.validity, f.pre_existing, f.native) == ("unchallenged", False, {})


# -- the seeds' native formats -----------------------------------------------------
def test_seed_002_persona_finding_is_accepted_and_mapped() -> None:
    data = {
        "reviewer": "security",
        "findings": [persona(autofix_class="safe_auto", owner="review-fixer", evidence=["x"])],
        "residual_risks": ["rate limits unknown"],
        "testing_gaps": ["no test for expiry"],
    }
    rep = read_report("s.json", json.dumps(data))
    f = rep.findings[0]
    assert rep.format == "persona" and rep.reviewer == "security"
    assert (f.kind, f.location, f.signature) == (
        "general",
        "src/auth.py:42",
        "token compared with ==",
    )
    assert (f.detail, f.confidence, f.rated) == ("timing attack", 75, True)
    assert (f.autofix_class, f.owner) == ("gated_auto", "downstream-resolver")  # legacy names
    assert f.native == {
        "format": "persona",
        "severity": "P1",
        "file": "src/auth.py",
        "line": 42,
        "why_it_matters": "timing attack",
    }
    assert rep.residual_risks == ["rate limits unknown"] and rep.testing_gaps == [
        "no test for expiry"
    ]


def test_seed_002_errors_name_its_own_fields() -> None:
    data = {"reviewer": "x", "findings": [persona(line=0, confidence=80, owner="me")]}
    with pytest.raises(SpecError) as err:
        read_report("s.json", json.dumps(data))
    assert "3 problem(s) as persona format" in err.value.message
    assert "findings[0].line: must be a whole number >= 1" in err.value.message


def test_seed_000_round_file_takes_the_reviewer_from_its_name() -> None:
    data = {
        "round": 2,
        "scope": "04",
        "findings": [
            {"kind": "gap", "location": "spec/04.json:3", "signature": "no-owner", "severity": "P1"}
        ],
    }
    rep = read_report(".specdev/findings/findings_04_2_rr1.json", json.dumps(data))
    assert (rep.format, rep.reviewer) == ("specdev", "r1")
    f = rep.findings[0]
    assert (f.title, f.detail, f.native["format"]) == ("no-owner", "no-owner", "specdev")


def test_seed_003_minor_is_a_blocking_p2_and_invalid_never_blocks() -> None:  # check 5
    data = {
        "reviewer": "investigator",
        "findings": [
            {
                "id": "RC1-1",
                "title": "Retry loop never ends",
                "severity": "minor",
                "file": "src/net.rs:7",
                "finding": "no max attempts",
                "required_fix": "cap at 3",
            },
            {
                "id": "RC1-2",
                "title": "Unused import",
                "severity": "major",
                "file": "src/lib.rs:1",
                "finding": "x is unused",
                "validity": "INVALID",
                "evidence": "used at src/lib.rs:40",
            },
            {
                "id": "RC1-3",
                "title": "Claimed dead code",
                "severity": "major",
                "file": "src/lib.rs:9",
                "finding": "never called",
                "validity": "INVALID",
                "evidence": "I doubt it",
            },
        ],
    }
    rep = read_report("h.json", json.dumps(data))
    assert rep.format == "addon"
    minor, invalid, unproven = rep.findings
    assert (minor.severity, minor.native["severity"], minor.suggested_fix) == (
        "P2",
        "minor",
        "cap at 3",
    )
    merged = merge([rep]).findings
    blockers = blocking(merged, "P2")
    assert minor.title in {f.title for f in blockers}
    assert invalid.title not in {f.title for f in blockers}
    # INVALID without a disproving path:line stands as VALID
    assert next(f for f in merged if f.title == unproven.title).validity == "VALID"
    assert unproven.title in {f.title for f in blockers}


def test_seed_003_markdown_addon() -> None:
    text = (
        "# Review Add-On: Cycle 2\n\n## Valid Findings\n\n"
        "### RC2-1: Off by one\n**Severity:** minor\n**File:** src/a.py:10\n"
        "**Finding:** skips the last item\n**Required fix:** use range(n)\n\n"
        "### RC2-2: Leak\n**Severity:** critical\n**File:** src/b.py:3\n**Finding:** fd leak\n"
    )
    rep = read_report("review-addon-2.md", text, fallback_reviewer="contrarian")
    assert (rep.format, rep.reviewer) == ("addon", "contrarian")
    assert [(f.id, f.severity, f.validity, f.confidence) for f in rep.findings] == [
        ("RC2-1", "P2", "VALID", 100),
        ("RC2-2", "P0", "VALID", 100),
    ]


def test_explicit_format_wins_over_detection() -> None:
    data = {"reviewer": "r", "findings": [finding()]}
    assert detect(data) == "kitty"
    with pytest.raises(SpecError) as err:
        read_report("f.json", json.dumps(data), fmt="persona")
    assert "findings[0].file: missing" in err.value.message


# -- merge rules -----------------------------------------------------------------------
def test_check_1_evidence_and_agreement() -> None:  # check 1
    a = report("A", finding(severity="P2", confidence=75, first_evidence="for i in range(n-1)"))
    b = report("B", finding(severity="P1", confidence=50))
    (f,) = merge([a, b]).findings
    assert (f.severity, f.reviewers, f.confidence) == ("P1", ["A", "B"], 100)
    assert f.first_evidence == "for i in range(n-1)"


def test_check_2_quote_gate() -> None:  # check 2
    a = report("A", finding(confidence=75), finding(severity="P0", signature="p0", confidence=75))
    b = report("B", finding(confidence=75), finding(severity="P0", signature="p0", confidence=75))
    merged = merge([a, b])
    assert [f.signature for f in merged.findings] == ["p0"]
    assert merged.findings[0].confidence == 50
    assert [(f.signature, f.confidence) for f in merged.suppressed] == [("off-by-one", 50)]
    assert merged.suppressed_by_anchor == {"50": 1}


def test_check_3_confidence_gate() -> None:  # check 3
    merged = merge(
        [
            report(
                "A",
                finding(severity="P1", confidence=50),
                finding(severity="P0", signature="z", confidence=50),
            )
        ]
    )
    assert [f.severity for f in merged.findings] == ["P0"]
    assert blocking(merged.findings, "P2") == merged.findings
    assert [f.severity for f in merged.suppressed] == ["P1"]


def test_check_4_fast_pass_never_promotes_and_testing_advisories_are_demoted() -> None:  # check 4
    ev = {"first_evidence": "x = 1"}
    merged = merge(
        [
            report("fast-pass", finding(confidence=75, **ev)),
            report("correctness@codex", finding(confidence=75, **ev)),
            report(
                "testing@codex", finding(severity="P3", signature="t", autofix_class="advisory")
            ),
        ]
    )
    (f,) = merged.findings
    assert f.reviewers == ["correctness@codex", "fast-pass"] and f.confidence == 75
    assert merged.testing_gaps == [
        "Loop skips the last item (src/a.py:10): range(n - 1) drops index n-1"
    ]


def test_pre_existing_never_blocks_and_needs_every_copy() -> None:
    merged = merge(
        [
            report("a", finding(pre_existing=True), finding(signature="s2", pre_existing=True)),
            report("b", finding(signature="s2", pre_existing=False)),
        ]
    )
    assert [f.signature for f in merged.pre_existing] == ["off-by-one"]
    assert [f.signature for f in merged.findings] == ["s2"]


def test_combination_rules() -> None:
    merged = merge(
        [
            report(
                "a",
                finding(autofix_class="gated_auto", owner="release", requires_verification=True),
            ),
            report("b", finding(autofix_class="manual", owner="human")),
            report("c", finding(severity="P3", signature="adv", autofix_class="advisory")),
            report("d", finding(severity="P3", signature="adv", autofix_class="gated_auto")),
        ]
    )
    main, adv = merged.findings
    assert (main.autofix_class, main.owner, main.requires_verification) == ("manual", "human", True)
    assert adv.autofix_class == "gated_auto"  # advisory only when unanimous
    assert [r["reviewer"] for r in main.reports] == ["a", "b"]


def test_advisory_p2_does_not_block() -> None:
    rep = report("a", finding(autofix_class="advisory"))
    assert blocking(merge([rep]).findings, "P2") == []


def _random_reports(seed: int) -> list[Report]:
    rng = random.Random(seed)
    reviewers = ["correctness@a", "testing@b", "security@c", "fast-pass", "maintainability@d"]
    out = []
    for name in reviewers:
        items = []
        for _ in range(rng.randint(0, 5)):
            items.append(
                finding(
                    severity=rng.choice(["P0", "P1", "P2", "P3"]),
                    signature=rng.choice(["a", "b", "c"]),
                    location=rng.choice(["x.py:1", "y.py:2"]),
                    confidence=rng.choice([None, 25, 50, 75, 100]),
                    first_evidence=rng.choice([None, "quote"]),
                    detail=rng.choice(["d1", "d2"]),
                    suggested_fix=rng.choice([None, "f1", "f2"]),
                    autofix_class=rng.choice(["gated_auto", "manual", "advisory"]),
                    owner=rng.choice(["downstream-resolver", "human", "release"]),
                    pre_existing=rng.choice([False, False, True]),
                    id=rng.choice([None, "i1", "i2"]),
                )
            )
        out.append(report(name, *items))
    return out


def _snapshot(reports: list[Report]) -> str:
    m = merge(reports, round_no=2)
    return json.dumps(
        {
            "findings": [f.to_json() for f in m.findings],
            "pre": [f.to_json() for f in m.pre_existing],
            "suppressed": [f.to_json() for f in m.suppressed],
            "gaps": m.testing_gaps,
            "risks": m.residual_risks,
        },
        sort_keys=True,
    )


@pytest.mark.parametrize("seed", range(20))
def test_check_6_merge_is_order_independent(seed: int) -> None:  # check 6
    reports = _random_reports(seed)
    expected = _snapshot(reports)
    for perm in itertools.islice(itertools.permutations(reports), 0, None, 7):
        assert _snapshot(list(perm)) == expected
    shuffled = [Report(r.reviewer, list(reversed(r.findings))) for r in reports]
    assert _snapshot(shuffled) == expected


def test_cycle_body_lists_rc_ids() -> None:
    rep = report(
        "codex",
        finding(severity="P1"),
        finding(severity="P3", signature="style", suggested_fix=None),
    )
    body = render_cycle("WP03", 2, ["codex"], rep.findings, "P2", approved=False)
    assert "### RC2-1 [P1] correctness: Loop skips the last item" in body
    assert "- Location: `src/a.py:10`" in body and "- Required fix: use range(n)" in body
    assert "RC2-2 [P3] correctness `src/a.py:10`" in body
    assert "changes requested (cycle 2)" in body


def test_cycle_body_lists_invalid_apart() -> None:
    rep = report(
        "c",
        finding(severity="P1", validity="INVALID", validity_evidence="see src/a.py:3"),
        finding(severity="P1", signature="real"),
    )
    merged = merge([rep], round_no=3)
    body = render_cycle("WP01", 1, ["c"], merged.findings, "P2", approved=False, round_no=3)
    assert "### RC3-" in body and "## INVALID" in body and "Disproved: see src/a.py:3" in body


def test_kind_is_part_of_the_key() -> None:
    """Same place, same signature, different kind: two findings, not one."""
    a = report("a", finding(kind="correctness"))
    b = report("b", finding(kind="security", severity="P3"))
    merged = merge([a, b]).findings
    assert sorted((f.kind, f.severity) for f in merged) == [
        ("correctness", "P2"),
        ("security", "P3"),
    ]
    assert [f.reviewers for f in merged] == [["a"], ["b"]]


CYCLE_2 = """\
# Review of WP03: changes requested (cycle 2)

Reviewers: codex, gemini
Blocking findings (at or above P2): 2; advisory: 1; invalid: 1

## Required fixes

### RC2-1 [P1] correctness: Loop skips the last item

- Location: `src/a.py:10`
- What is wrong: range(n - 1) drops index n-1
- Required fix: use range(n)
- Reported by: codex, gemini

### RC2-3 [P2] correctness: T2

- Location: `src/a.py:10`
- What is wrong: D2
- Required fix: resolve the defect described above
- Reported by: codex

## Advisory notes (not blocking)

- RC2-4 [P3] correctness `src/a.py:10`: Loop skips the last item. range(n - 1) drops index n-1

## INVALID (disproved by the challenge, not blocking)

- RC2-2 [P1] `src/a.py:10`: Loop skips the last item. Disproved: see a.py:3
"""


def test_cycle_body_word_for_word_with_counts_and_verdicts() -> None:
    from kitty.workflow.rules.findings import counts, report_verdict

    codex = report(
        "codex",
        finding(severity="P1"),
        finding(severity="P3", signature="style", suggested_fix=None),
        finding(severity="P2", signature="x", suggested_fix=None, title="T2", detail="D2"),
        finding(severity="P1", signature="bad", validity="INVALID", validity_evidence="see a.py:3"),
    )
    merged = merge([codex, report("gemini", finding(severity="P1"))], round_no=2)
    body = render_cycle("WP03", 2, ["codex", "gemini"], merged.findings, "P2", False, 2)
    assert body == CYCLE_2
    assert counts(merged.findings) == {"P0": 0, "P1": 2, "P2": 1, "P3": 1}
    assert report_verdict(merged, "P2") == "Not ready"
    assert report_verdict(merged, "P0") == "Ready with fixes"
    assert report_verdict(merge([]), "P2") == "Ready to merge"
    assert render_cycle("WP03", 1, ["codex"], [], "P2", approved=True) == (
        "# Review of WP03: approved (cycle 1)\n\n"
        "Reviewers: codex\n"
        "Blocking findings (at or above P2): 0; advisory: 0\n\n"
        "No findings.\n"
    )


def test_cycle_body_numbers_unnumbered_findings_by_the_cycle() -> None:
    rep = report(
        "codex",
        finding(severity="P3", suggested_fix="rename it"),
        finding(severity="P0", signature="s"),
    )
    body = render_cycle("WP01", 4, ["codex"], rep.findings, "P1", approved=False)
    assert "### RC4-2 [P0] correctness: Loop skips the last item" in body
    assert (
        "- RC4-1 [P3] correctness `src/a.py:10`: Loop skips the last item. "
        "range(n - 1) drops index n-1 Suggested: rename it"
    ) in body
    assert "Blocking findings (at or above P1): 1; advisory: 1\n" in body


def test_merged_finding_json_field_by_field() -> None:
    from kitty.workflow.rules.findings import persona_of

    merged = merge(
        [
            report("correctness@codex", finding(severity="P1", id="c1")),
            report("gemini", finding(severity="P2", id="g1", suggested_fix=None)),
        ]
    )
    assert merged.findings[0].to_json() == {
        "#": 1,
        "rc_id": "RC1-1",
        "severity": "P1",
        "kind": "correctness",
        "location": "src/a.py:10",
        "signature": "off-by-one",
        "title": "Loop skips the last item",
        "detail": "range(n - 1) drops index n-1",
        "suggested_fix": "use range(n)",
        "id": "c1",
        "confidence": 100,
        "confidence_rated": False,
        "first_evidence": None,
        "evidence": [],
        "autofix_class": "manual",
        "owner": "downstream-resolver",
        "requires_verification": False,
        "pre_existing": False,
        "validity": "unchallenged",
        "validity_evidence": None,
        "native": {},
        "reviewers": ["correctness@codex", "gemini"],
        "ids": ["c1", "g1"],
        "reports": [
            {"reviewer": "correctness@codex", "severity": "P1", "confidence": 75},
            {"reviewer": "gemini", "severity": "P2", "confidence": 75},
        ],
    }
    single = report("x", finding()).findings[0].to_json()
    assert "#" not in single and "rc_id" not in single and "reports" not in single
    assert persona_of("security@claude@eu") == "security"
    assert persona_of("codex") == "codex"


def test_fast_pass_confidence_is_capped_even_with_evidence() -> None:
    rated = finding(confidence=100, first_evidence="x = 1")
    assert merge([report("fast-pass@codex", rated)]).findings == []  # capped at 50: dropped
    assert [f.confidence for f in merge([report("correctness@codex", rated)]).findings] == [100]
    from kitty.workflow.rules.findings import Finding, _gate_quote

    anonymous = Finding(
        "P1", "k", "a.py:1", "s", "t", "d", confidence=100, rated=True, first_evidence="q"
    )
    assert _gate_quote(anonymous).confidence == 100  # no reviewer recorded: not a fast pass


def test_finding_json_keeps_evidence_and_render_keeps_earlier_rc_ids() -> None:
    from kitty.workflow.rules.findings import Finding

    f = Finding("P1", "k", "a.py:1", "s", "t", "d", first_evidence="q", validity_evidence="v")
    assert (f.to_json()["first_evidence"], f.to_json()["validity_evidence"]) == ("q", "v")
    merged = merge([report("c", finding(severity="P1"))], round_no=3)
    body = render_cycle("WP01", 1, ["c"], merged.findings, "P2", approved=False)
    assert "### RC3-1 [P1]" in body  # numbered by its round, not renumbered by the cycle
    assert body.endswith("- Reported by: c\n")  # one newline at the end, never a blank line


def test_kitty_format_mapping_field_by_field() -> None:
    item = {
        "severity": "P2",
        "kind": " k ",
        "location": "a.py:3",
        "signature": " s ",
        "title": " T ",
        "detail": " D ",
        "suggested_fix": "",
        "id": "",
        "confidence": 75,
        "confidence_rated": False,
        "evidence": ["e"],
        "extra": 1,
    }
    rep = read_report("a.json", json.dumps({"reviewer": " codex ", "findings": [item]}))
    assert (rep.reviewer, rep.format, rep.source) == ("codex", "kitty", "a.json")
    assert rep.findings[0].to_json() == {
        "severity": "P2",
        "kind": "k",
        "location": "a.py:3",
        "signature": "s",
        "title": "T",
        "detail": "D",
        "suggested_fix": None,
        "id": None,
        "confidence": 75,
        "confidence_rated": False,
        "first_evidence": None,
        "evidence": ["e"],
        "autofix_class": "manual",
        "owner": "downstream-resolver",
        "requires_verification": False,
        "pre_existing": False,
        "validity": "unchallenged",
        "validity_evidence": None,
        "native": {"extra": 1, "format": "kitty"},
        "reviewers": ["codex"],
        "ids": [],
    }
    rated = read_report(
        "b.json", json.dumps({"reviewer": "c", "findings": [finding(confidence=50, id="x1")]})
    )
    assert (rated.findings[0].confidence, rated.findings[0].rated, rated.findings[0].ids) == (
        50,
        True,
        ["x1"],
    )
    assert rated.findings[0].native == {}  # nothing but canonical fields: no native block


def test_reviewer_names_and_file_level_errors() -> None:
    from kitty.workflow.rules.formats import reviewer_name

    assert reviewer_name({"reviewer_id": " x "}, "specdev", "s.json", None) == "x"
    assert reviewer_name({}, "specdev", "findings_api_2_rbob.json", "fb") == "bob"
    assert reviewer_name({}, "persona", "dir/corr.json", "fb") == "fb"
    assert reviewer_name({}, "persona", "dir/corr.json", None) == "corr"
    assert reviewer_name({}, "kitty", "x.json", "fb") is None
    assert reviewer_name({"reviewer": "  "}, "addon", "", None) is None
    with pytest.raises(SpecError) as err:
        read_report("b.json", "{nope")
    assert err.value.message.startswith("b.json:1: not valid JSON: Expecting property name")
    assert err.value.hint == "see `kitty review schema` (or pass a seed-003 review add-on .md)"
    with pytest.raises(SpecError) as err:
        read_report("b.json", "{}", fmt="weird")
    assert (err.value.message, err.value.hint) == (
        "b.json: unknown format 'weird'",
        "formats: kitty, specdev, persona, addon",
    )
    with pytest.raises(SpecError) as err:
        read_report("b.json", json.dumps({"findings": []}))
    assert (err.value.message, err.value.hint) == (
        "b.json: reviewer: missing (kitty format)",
        "see `kitty review schema`; nothing was recorded",
    )


ADDON_MD = (
    "# Review Add-On: Cycle 3\n\n## Valid\n\n"
    "### RC3-1: Off by one\n**Severity:** Minor\n**File:** src/a.py:10\n"
    "**Finding:** skips the last item\n**Required fix:** use range(n)\n\n"
    "## Invalid\n\n"
    "### RC3-2 : Leak\n**Severity:** CRITICAL\n**File:** src/b.py:3\n**Finding:** fd leak\n"
    "**Evidence:** closed in finally\n\n"
    "### RC3-3: No severity\n**File:** c.py:1\n"
)


def test_addon_markdown_is_parsed_heading_by_heading() -> None:
    from kitty.workflow.rules.formats import parse_addon_markdown

    assert parse_addon_markdown(ADDON_MD) == {
        "cycle": 3,
        "findings": [
            {
                "id": "RC3-1",
                "title": "Off by one",
                "validity": "VALID",
                "severity": "minor",
                "file": "src/a.py:10",
                "finding": "skips the last item",
                "required_fix": "use range(n)",
            },
            {
                "id": "RC3-2",
                "title": "Leak",
                "validity": "INVALID",
                "severity": "critical",
                "file": "src/b.py:3",
                "finding": "fd leak",
                "evidence": "closed in finally",
            },
            {"id": "RC3-3", "title": "No severity", "validity": "INVALID", "file": "c.py:1"},
        ],
    }
    assert parse_addon_markdown("### RC1-1: x\n**Severity:** Major\n") == {
        "cycle": None,
        "findings": [{"id": "RC1-1", "title": "x", "severity": "major"}],
    }


def test_specdev_mapping_field_by_field() -> None:
    item = {
        "kind": " gap ",
        "location": "s.json:3",
        "signature": " no-owner ",
        "severity": "P1",
        "title": " T ",
        "description": " desc ",
        "suggested_fix": "fix",
        "id": "i1",
        "extra": 5,
    }
    rep = read_report(
        "findings_04_2_rr1.json", json.dumps({"round": 2, "scope": "04", "findings": [item]})
    )
    assert rep.findings[0].to_json() == {
        "severity": "P1",
        "kind": "gap",
        "location": "s.json:3",
        "signature": "no-owner",
        "title": "T",
        "detail": "desc",
        "suggested_fix": "fix",
        "id": "i1",
        "confidence": 75,
        "confidence_rated": False,
        "first_evidence": None,
        "evidence": [],
        "autofix_class": "manual",
        "owner": "downstream-resolver",
        "requires_verification": False,
        "pre_existing": False,
        "validity": "unchallenged",
        "validity_evidence": None,
        "native": {"description": " desc ", "extra": 5, "format": "specdev"},
        "reviewers": ["r1"],
        "ids": ["i1"],
    }
    detailed = dict(item, detail=" D ")
    rep = read_report("findings_04_2_rr1.json", json.dumps({"round": 2, "findings": [detailed]}))
    assert rep.findings[0].detail == "D"


def test_persona_mapping_field_by_field() -> None:
    item = persona(
        suggested_fix="use hmac.compare_digest",
        id="p1",
        evidence=["e1"],
        autofix_class="safe_auto",
        owner="human",
        requires_verification=True,
        pre_existing=True,
        extra=1,
    )
    rep = read_report("c.json", json.dumps({"reviewer": "correctness@codex", "findings": [item]}))
    assert rep.format == "persona"
    assert rep.findings[0].to_json() == {
        "severity": "P1",
        "kind": "general",
        "location": "src/auth.py:42",
        "signature": "token compared with ==",
        "title": "Token compared with ==",
        "detail": "timing attack",
        "suggested_fix": "use hmac.compare_digest",
        "id": "p1",
        "confidence": 75,
        "confidence_rated": True,
        "first_evidence": "if token == expected:",
        "evidence": ["e1"],
        "autofix_class": "gated_auto",  # the legacy name, mapped
        "owner": "human",
        "requires_verification": True,
        "pre_existing": True,
        "validity": "unchallenged",
        "validity_evidence": None,
        "native": {
            "file": "src/auth.py",
            "line": 42,
            "why_it_matters": "timing attack",
            "extra": 1,
            "format": "persona",
            "severity": "P1",
        },
        "reviewers": ["correctness@codex"],
        "ids": ["p1"],
    }
    bare = persona(why_it_matters=..., first_evidence=..., title=" Weak ")
    weak = read_report("c.json", json.dumps({"reviewer": "x", "findings": [bare]})).findings[0]
    assert (weak.title, weak.detail, weak.first_evidence, weak.signature) == (
        "Weak",
        "Weak",
        None,
        "weak",
    )


def test_addon_mapping_field_by_field() -> None:
    md = ADDON_MD.split("### RC3-3")[0]
    rep = read_report("review-addon-3.md", md, fallback_reviewer="contrarian")
    assert (rep.reviewer, rep.format) == ("contrarian", "addon")
    valid, invalid = (f.to_json() for f in rep.findings)
    assert valid == {
        "severity": "P2",
        "kind": "general",
        "location": "src/a.py:10",
        "signature": "off by one",
        "title": "Off by one",
        "detail": "skips the last item",
        "suggested_fix": "use range(n)",
        "id": "RC3-1",
        "confidence": 100,
        "confidence_rated": True,
        "first_evidence": "skips the last item",
        "evidence": [],
        "autofix_class": "manual",
        "owner": "downstream-resolver",
        "requires_verification": False,
        "pre_existing": False,
        "validity": "VALID",
        "validity_evidence": None,
        "native": {
            "file": "src/a.py:10",
            "finding": "skips the last item",
            "required_fix": "use range(n)",
            "format": "addon",
            "severity": "minor",
        },
        "reviewers": ["contrarian"],
        "ids": ["RC3-1"],
    }
    assert {
        k: invalid[k] for k in ("severity", "confidence", "confidence_rated", "first_evidence")
    } == {
        "severity": "P0",
        "confidence": 75,
        "confidence_rated": False,
        "first_evidence": None,
    }
    assert (invalid["validity"], invalid["validity_evidence"], invalid["suggested_fix"]) == (
        "INVALID",
        "closed in finally",
        None,
    )


@pytest.mark.parametrize(
    ("data", "fmt"),
    [
        ([], "kitty"),
        ({"findings": [{"file": "a", "line": 1}]}, "persona"),
        ({"findings": [{"file": "a", "line": 1, "location": "x"}]}, "kitty"),
        ({"findings": [], "residual_risks": []}, "persona"),
        ({"findings": [], "testing_gaps": []}, "persona"),
        ({"findings": [{"severity": "Minor"}]}, "addon"),
        ({"findings": [{"finding": "x"}]}, "addon"),
        ({"findings": [{"required_fix": "x"}]}, "addon"),
        ({"round": 1}, "specdev"),
        ({"scope": "a"}, "specdev"),
        ({"reviewer_id": "r"}, "specdev"),
        ({"reviewer": "r", "round": 1}, "kitty"),
        ({"findings": "x"}, "kitty"),
        ({"findings": [1, {"file": "a", "line": 2}]}, "persona"),
        ({"findings": [{"file": "a"}]}, "kitty"),
    ],
)
def test_format_detection(data: Any, fmt: str) -> None:
    assert detect(data) == fmt


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "top level: must be an object"),
        ({"findings": []}, "reviewer: missing"),
        ({"reviewer": "r"}, "findings: missing"),
        ({"reviewer": 5, "findings": []}, "reviewer: must be text"),
        ({"reviewer": "r", "findings": {}}, "findings: must be a list"),
        ({"reviewer": "r", "findings": ["x"]}, "findings[0]: must be an object"),
        (
            {"reviewer": "r", "findings": [finding(severity="P5")]},
            "findings[0].severity: 'P5' is not one of P0, P1, P2, P3",
        ),
        (
            {"reviewer": "r", "findings": [finding(), finding(location=None)]},
            "findings[1].location: missing",
        ),
        (
            {"reviewer": "r", "findings": [finding(location="src/a.py")]},
            "findings[0].location: 'src/a.py' is not path:line",
        ),
        ({"reviewer": "r", "findings": [finding(title=3)]}, "findings[0].title: must be text"),
        (
            {"reviewer": "r", "findings": [finding(title="  ")]},
            "findings[0].title: must not be blank",
        ),
        (
            {"reviewer": "r", "findings": [finding(confidence=80)]},
            "findings[0].confidence: 80 is not one of 0, 25, 50, 75, 100",
        ),
        (
            {"reviewer": "r", "findings": [finding(evidence="x")]},
            "findings[0].evidence: must be a list",
        ),
        (
            {"reviewer": "r", "findings": [finding(requires_verification="no")]},
            "findings[0].requires_verification: must be true or false",
        ),
    ],
)
def test_each_validation_message_exactly(data: Any, message: str) -> None:
    with pytest.raises(SpecError) as err:
        read_report("f.json", json.dumps(data))
    assert err.value.message == f"f.json: {message} (kitty format)"
    assert err.value.hint == "see `kitty review schema`; nothing was recorded"
