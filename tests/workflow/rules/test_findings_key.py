"""REVIEW-LOOP.md §1–2 from a reviewer's side: a finding is one finding per
(kind, location, signature), kind and signature compared normalised (trim, lower-case,
collapsed spaces), the location as written. Two reports of the same mistake at two places are
two things to fix; the same mistake written in two hands at one place is one."""

from __future__ import annotations

import json
from typing import Any

from kitty.workflow.rules.findings import Report, merge
from kitty.workflow.rules.formats import read_report
from tests.workflow.rules.findings_data import OFF_BY_ONE


def finding(**kw: Any) -> dict[str, Any]:
    return {
        "severity": "P1",
        "confidence": 100,
        "first_evidence": "range(n - 1)",
        **OFF_BY_ONE,
        **kw,
    }


def report(reviewer: str, *items: dict[str, Any]) -> Report:
    return read_report(
        f"{reviewer}.json", json.dumps({"reviewer": reviewer, "findings": list(items)})
    )


def locations(*reports: Report) -> list[str]:
    return [f.location for f in merge(list(reports)).findings]


def test_the_same_mistake_in_another_file_stays_a_finding_of_its_own() -> None:
    one = report("codex", finding(), finding(location="src/b.py:10"))
    assert locations(one) == ["src/a.py:10", "src/b.py:10"]
    # Reported by two reviewers, one place each: still two, each with its own reviewer.
    merged = merge([report("codex", finding()), report("gemini", finding(location="src/b.py:10"))])
    assert [(f.location, f.reviewers) for f in merged.findings] == [
        ("src/a.py:10", ["codex"]),
        ("src/b.py:10", ["gemini"]),
    ]


def test_the_same_mistake_on_another_line_of_the_same_file_stays_two() -> None:
    assert locations(report("codex", finding(location="src/a.py:40"), finding())) == [
        "src/a.py:10",
        "src/a.py:40",
    ]
    # A range that starts on the same line is another location as written.
    assert locations(report("codex", finding(), finding(location="src/a.py:10-12"))) == [
        "src/a.py:10",
        "src/a.py:10-12",
    ]


def test_one_place_written_in_two_hands_is_one_finding_seen_by_both() -> None:
    other_hand = finding(kind="  Correctness ", signature="OFF-BY-ONE", title="Drops the last")
    (merged,) = merge([report("codex", finding()), report("gemini", other_hand)]).findings
    assert merged.location == "src/a.py:10"
    assert merged.reviewers == ["codex", "gemini"]
    spaced = finding(signature="off-by-one  ", kind="correctness")
    assert len(merge([report("codex", finding()), report("gemini", spaced)]).findings) == 1
    collapsed = finding(signature="off  by one")
    plain = finding(signature="off by one")
    assert len(merge([report("codex", plain), report("gemini", collapsed)]).findings) == 1


def test_another_kind_or_signature_at_one_place_stays_two() -> None:
    security = finding(kind="security")
    assert len(merge([report("codex", finding()), report("gemini", security)]).findings) == 2
    other = finding(signature="unchecked-index")
    assert len(merge([report("codex", finding()), report("gemini", other)]).findings) == 2


def test_numbers_follow_the_places_so_none_is_lost_from_the_cycle_file() -> None:
    merged = merge([report("codex", finding(), finding(location="src/a.py:20"))], round_no=2)
    assert [(f.number, f.rc_id, f.location) for f in merged.findings] == [
        (1, "RC2-1", "src/a.py:10"),
        (2, "RC2-2", "src/a.py:20"),
    ]
