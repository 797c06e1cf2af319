"""Structured review findings: validate, merge across reviewers, decide the verdict.

The contract is `kitty/data/findings.schema.json` (printed by `kitty review
schema`); this module checks it by hand so no JSON Schema library is needed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kitty.errors import SpecError

SEVERITIES = ("P0", "P1", "P2", "P3")
REQUIRED = ("severity", "kind", "location", "signature", "title", "detail")
_LOCATION = re.compile(r"^.+:\d+(-\d+)?$")


@dataclass
class Finding:
    severity: str
    kind: str
    location: str
    signature: str
    title: str
    detail: str
    suggested_fix: str | None = None
    reviewers: list[str] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.kind, self.location, self.signature)

    @property
    def path(self) -> str:
        return self.location.rsplit(":", 1)[0]

    def to_json(self) -> dict[str, Any]:
        return {
            "severity": self.severity,
            "kind": self.kind,
            "location": self.location,
            "signature": self.signature,
            "title": self.title,
            "detail": self.detail,
            "suggested_fix": self.suggested_fix,
            "reviewers": self.reviewers,
            "ids": self.ids,
        }


def rank(severity: str) -> int:
    return SEVERITIES.index(severity)


def parse_report(source: str, data: Any) -> tuple[str, list[Finding]]:
    """Check one reviewer's file; every problem names the file and the field."""

    def bad(where: str, what: str) -> SpecError:
        return SpecError(
            source, None, f"{where}: {what}", "see `kitty review schema` for the expected shape"
        )

    if not isinstance(data, dict):
        raise bad("top level", "must be an object with 'reviewer' and 'findings'")
    reviewer = data.get("reviewer")
    if not isinstance(reviewer, str) or not reviewer.strip():
        raise bad("reviewer", "missing (the reviewing agent's name)")
    items = data.get("findings")
    if not isinstance(items, list):
        raise bad("findings", "missing or not a list")
    findings = []
    for index, item in enumerate(items):
        where = f"findings[{index}]"
        if not isinstance(item, dict):
            raise bad(where, "must be an object")
        for key in REQUIRED:
            value = item.get(key)
            if not isinstance(value, str) or not value.strip():
                raise bad(f"{where}.{key}", "missing" if value in (None, "") else "must be text")
        severity = item["severity"].strip().upper()
        if severity not in SEVERITIES:
            raise bad(
                f"{where}.severity", f"{item['severity']!r} is not one of " + ", ".join(SEVERITIES)
            )
        location = item["location"].strip()
        if not _LOCATION.match(location):
            raise bad(f"{where}.location", f"{location!r} is not path:line")
        fix = item.get("suggested_fix")
        if fix is not None and not isinstance(fix, str):
            raise bad(f"{where}.suggested_fix", "must be text")
        findings.append(
            Finding(
                severity,
                item["kind"].strip(),
                location,
                item["signature"].strip(),
                item["title"].strip(),
                item["detail"].strip(),
                fix or None,
                [reviewer.strip()],
                [str(item["id"])] if item.get("id") else [],
            )
        )
    return reviewer.strip(), findings


def merge(reports: Sequence[tuple[str, list[Finding]]]) -> list[Finding]:
    """One finding per (kind, location, signature): the most severe copy, every reviewer."""
    merged: dict[tuple[str, str, str], Finding] = {}
    for _, findings in reports:
        for finding in findings:
            kept = merged.get(finding.key)
            if kept is None:
                merged[finding.key] = Finding(
                    **{
                        **finding.__dict__,
                        "reviewers": list(finding.reviewers),
                        "ids": list(finding.ids),
                    }
                )
                continue
            names = kept.reviewers + [r for r in finding.reviewers if r not in kept.reviewers]
            ids = kept.ids + [i for i in finding.ids if i not in kept.ids]
            if rank(finding.severity) < rank(kept.severity):
                kept = merged[finding.key] = Finding(**{**finding.__dict__})
            kept.reviewers, kept.ids = names, ids
    return sorted(merged.values(), key=lambda f: (rank(f.severity), f.location, f.kind))


def blocking(findings: Sequence[Finding], block_at: str) -> list[Finding]:
    return [f for f in findings if rank(f.severity) <= rank(block_at)]


def render_cycle(
    wp_id: str,
    cycle: int,
    reviewers: Sequence[str],
    findings: Sequence[Finding],
    block_at: str,
    approved: bool,
) -> str:
    """The body of review-cycle-N.md: each finding as RC<N>-<seq>."""
    blockers = blocking(findings, block_at)
    advisory = [f for f in findings if f not in blockers]
    verdict = "approved" if approved else "changes requested"
    out = [
        f"# Review of {wp_id}: {verdict} (cycle {cycle})",
        "",
        f"Reviewers: {', '.join(reviewers)}",
        f"Blocking findings (at or above {block_at}): {len(blockers)}; advisory: {len(advisory)}",
        "",
    ]
    seq = 0
    if blockers:
        out += ["## Required fixes", ""]
    for finding in blockers:
        seq += 1
        out += [
            f"### RC{cycle}-{seq} [{finding.severity}] {finding.kind}: {finding.title}",
            "",
            f"- Location: `{finding.location}`",
            f"- What is wrong: {finding.detail}",
            f"- Required fix: {finding.suggested_fix or 'resolve the defect described above'}",
            f"- Reported by: {', '.join(finding.reviewers)}",
            "",
        ]
    if advisory:
        out += ["## Advisory notes (not blocking)", ""]
    for finding in advisory:
        seq += 1
        fix = f" Suggested: {finding.suggested_fix}" if finding.suggested_fix else ""
        out.append(
            f"- RC{cycle}-{seq} [{finding.severity}] {finding.kind} `{finding.location}`: "
            f"{finding.title}. {finding.detail}{fix}"
        )
    if not findings:
        out.append("No findings.")
    return "\n".join(out).rstrip() + "\n"
