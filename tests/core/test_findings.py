"""Findings: validation names the field, merging deduplicates, thresholds decide."""

from __future__ import annotations

from typing import Any

import pytest

from kitty.core.findings import blocking, merge, parse_report, render_cycle
from kitty.errors import SpecError


def finding(**kw: Any) -> dict[str, Any]:
    base = {
        "severity": "P2",
        "kind": "correctness",
        "location": "src/a.py:10",
        "signature": "off-by-one",
        "title": "Loop skips the last item",
        "detail": "range(n - 1) drops index n-1",
        "suggested_fix": "use range(n)",
    }
    base.update(kw)
    return base


def test_merge_dedupes_keeps_most_severe_and_every_reviewer() -> None:
    codex = parse_report(
        "codex.json",
        {
            "reviewer": "codex",
            "findings": [
                finding(severity="P2", id="c1"),
                finding(signature="naming", severity="P3"),
            ],
        },
    )
    gemini = parse_report(
        "gemini.json",
        {
            "reviewer": "gemini",
            "findings": [
                finding(severity="P1", detail="gemini's words", id="g7"),
                finding(location="src/b.py:3", severity="P0", kind="security", signature="sqli"),
            ],
        },
    )
    merged = merge([codex, gemini])
    assert [(f.severity, f.location, f.signature) for f in merged] == [
        ("P0", "src/b.py:3", "sqli"),
        ("P1", "src/a.py:10", "off-by-one"),
        ("P3", "src/a.py:10", "naming"),
    ]
    dup = merged[1]
    assert dup.reviewers == ["codex", "gemini"] and dup.detail == "gemini's words"
    assert dup.ids == ["c1", "g7"]


@pytest.mark.parametrize(("block_at", "expected"), [("P0", 1), ("P1", 2), ("P2", 3), ("P3", 4)])
def test_threshold(block_at: str, expected: int) -> None:
    _, findings = parse_report(
        "f.json",
        {
            "reviewer": "r",
            "findings": [finding(severity=s, signature=s) for s in ("P0", "P1", "P2", "P3")],
        },
    )
    assert len(blocking(findings, block_at)) == expected


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
        ({"reviewer": "r", "findings": ["x"]}, "findings[0]"),
    ],
)
def test_invalid_reports_name_the_file_and_field(data: Any, field: str) -> None:
    with pytest.raises(SpecError) as err:
        parse_report("reviews/codex.json", data)
    assert err.value.message.startswith(f"reviews/codex.json: {field}")


def test_cycle_body_lists_rc_ids() -> None:
    _, findings = parse_report(
        "f.json",
        {
            "reviewer": "codex",
            "findings": [
                finding(severity="P1"),
                finding(severity="P3", signature="style", suggested_fix=None),
            ],
        },
    )
    body = render_cycle("WP03", 2, ["codex"], findings, "P2", approved=False)
    assert "### RC2-1 [P1] correctness: Loop skips the last item" in body
    assert "- Location: `src/a.py:10`" in body and "- Required fix: use range(n)" in body
    assert "RC2-2 [P3] correctness `src/a.py:10`" in body
    assert "changes requested (cycle 2)" in body
