"""The merge rules of REVIEW-LOOP.md §2, each stated as what the user reads in merged.json.

Several reviewers' files go in; what comes out is one list a developer acts on. These tests pin
the rules that decide which words, owner, evidence, bucket and order that list shows.
"""

from __future__ import annotations

import json
from typing import Any

from kitty.workflow.rules.findings import Report, merge
from kitty.workflow.rules.formats import read_report
from tests.workflow.rules.findings_data import OFF_BY_ONE


def finding(**kw: Any) -> dict[str, Any]:
    base = {
        "severity": "P2",
        **OFF_BY_ONE,
    }
    base.update(kw)
    return base


def report(reviewer: str, *items: dict[str, Any], **extra: Any) -> Report:
    return read_report(
        f"{reviewer}.json", json.dumps({"reviewer": reviewer, "findings": list(items), **extra})
    )


def test_the_most_confident_report_words_a_shared_finding() -> None:
    # Same severity: the words shown are those of the reviewer who is surest, whatever the names.
    unsure = finding(confidence=50, detail="maybe off by one")
    sure = finding(confidence=100, first_evidence="for i in range(n - 1):", detail="drops n-1")
    for low, high in (("aaa", "zzz"), ("zzz", "aaa")):
        (merged,) = merge([report(low, unsure), report(high, sure)]).findings
        assert merged.detail == "drops n-1"
        assert merged.confidence == 100


def test_evidence_of_every_copy_is_kept_once_and_the_inputs_are_untouched() -> None:
    codex = report("codex", finding(evidence=["a.py:1", "a.py:2"]))
    gemini = report("gemini", finding(evidence=["a.py:2", "a.py:3"]))
    (merged,) = merge([codex, gemini]).findings
    assert merged.evidence == ["a.py:1", "a.py:2", "a.py:3"]
    # Merging does not write into the reports it read: merging again gives the same file.
    assert codex.findings[0].evidence == ["a.py:1", "a.py:2"]
    assert gemini.findings[0].evidence == ["a.py:2", "a.py:3"]
    again = merge([codex, gemini]).findings[0]
    assert again.to_json() == merged.to_json()
    # The merged finding is a copy: annotating it leaves the reports as they were read.
    merged.native["note"] = "seen"
    assert "note" not in codex.findings[0].native and "note" not in gemini.findings[0].native


def test_the_most_conservative_owner_wins() -> None:
    # human > release > downstream-resolver, not the alphabetical order of the names.
    for owners, winner in (
        (("release", "downstream-resolver"), "release"),
        (("downstream-resolver", "human"), "human"),
        (("release", "human"), "human"),
        (("downstream-resolver", "downstream-resolver"), "downstream-resolver"),
    ):
        reports = [report(f"r{i}", finding(owner=o)) for i, o in enumerate(owners)]
        assert merge(reports).findings[0].owner == winner, owners


def test_a_fast_pass_finding_is_suppressed_at_exactly_50() -> None:
    rated = finding(severity="P1", confidence=100, first_evidence="x = 1")
    merged = merge([report("fast-pass@codex", rated)])
    assert merged.findings == []
    assert [f.confidence for f in merged.suppressed] == [50]
    assert merged.suppressed_by_anchor == {"50": 1}


def test_findings_at_one_place_are_listed_by_kind_then_signature() -> None:
    # Same severity, confidence and line: kind, then signature, decide, not the other fields.
    items = [
        finding(kind="b-kind", signature="s", detail="a words"),
        finding(kind="a-kind", signature="s", detail="z words"),
        finding(kind="c-kind", signature="b-sig", detail="a words"),
        finding(kind="c-kind", signature="a-sig", detail="z words"),
    ]
    merged = merge([report("codex", *items)]).findings
    assert [(f.kind, f.signature) for f in merged] == [
        ("a-kind", "s"),
        ("b-kind", "s"),
        ("c-kind", "a-sig"),
        ("c-kind", "b-sig"),
    ]
    assert [f.rc_id for f in merged] == ["RC1-1", "RC1-2", "RC1-3", "RC1-4"]


def test_merged_file_names_every_reviewer_and_every_gap_once() -> None:
    one = report(
        "maintainability@codex",
        testing_gaps=["no test for empty input", "no fuzzing"],
        residual_risks=["slow on big repos", "locale"],
    )
    two = report(
        "testing@gemini",
        testing_gaps=["no fuzzing", "no test for unicode"],
        residual_risks=["locale", "clock skew"],
    )
    merged = merge([two, one, two])
    assert merged.reviewers == ["maintainability@codex", "testing@gemini"]
    assert merged.testing_gaps == ["no fuzzing", "no test for empty input", "no test for unicode"]
    assert merged.residual_risks == ["clock skew", "locale", "slow on big repos"]


def _where(reviewers: list[str], **kw: Any) -> str:
    """Where one finding reported by `reviewers` ends up in the merge."""
    merged = merge([report(r, finding(**kw)) for r in reviewers])
    if merged.findings:
        return "findings"
    if merged.testing_gaps:
        return "testing_gaps"
    if merged.residual_risks:
        return "residual_risks"
    return "suppressed" if merged.suppressed else "nowhere"


def test_only_weak_advisories_of_testing_and_maintainability_are_demoted() -> None:
    advisory = {"autofix_class": "advisory"}
    # Demoted: advisory P2/P3 raised only by the testing and maintainability personas.
    assert _where(["testing@codex"], severity="P2", **advisory) == "testing_gaps"
    assert _where(["testing@codex"], severity="P3", **advisory) == "testing_gaps"
    assert _where(["maintainability@codex"], severity="P2", **advisory) == "residual_risks"
    both = ["testing@codex", "maintainability@gemini"]
    assert _where(both, severity="P2", **advisory) == "testing_gaps"
    # Kept: a P1, a non-advisory, or any other persona's advisory stays a finding.
    assert _where(["testing@codex"], severity="P1", **advisory) == "findings"
    assert _where(["testing@codex"], severity="P2", autofix_class="manual") == "findings"
    assert _where(["correctness@codex"], severity="P2", **advisory) == "findings"
    assert _where(["testing@codex", "security@gemini"], severity="P3", **advisory) == "findings"


def test_demoted_gap_text_names_title_place_and_detail() -> None:
    merged = merge(
        [report("maintainability@codex", finding(severity="P3", autofix_class="advisory"))]
    )
    assert merged.residual_risks == [
        "Loop skips the last item (src/a.py:10): range(n - 1) drops index n-1"
    ]
    assert merged.testing_gaps == []


def test_an_invalid_verdict_needs_a_path_line_even_quoted() -> None:
    def validity(evidence: str) -> str:
        rep = report("contrarian", finding(validity="INVALID", validity_evidence=evidence))
        return merge([rep]).findings[0].validity

    # Quoted or punctuated path:line still disproves the finding.
    assert validity("see `src/a.py:12`.") == "INVALID"
    assert validity("checked (src/a.py:12-14);") == "INVALID"
    assert validity("the file X:3 handles it") == "INVALID"  # any file name, even one letter
    # Without a location the finding stands.
    assert validity("I looked and it is fine") == "VALID"
    assert validity("src/a.py:12X") == "VALID"
