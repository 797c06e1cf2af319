"""Structured review findings: the canonical form, the merge rules, the verdict.

Reading (kitty's format and the seeds' native ones) is `kitty.workflow.rules.formats`;
this module only works on canonical `Finding`s. The merge follows
REVIEW-LOOP.md §2 and is a pure function of the *set* of reports: any order of
the same inputs gives the same result.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

SEVERITIES = ("P0", "P1", "P2", "P3")
STEPS = (0, 25, 50, 75, 100)
UNRATED = 75
#: Reviewers that never count toward agreement; their confidence is capped at 50.
NOT_INDEPENDENT = ("fast-pass", "inline-fallback")
#: Personas whose weak advisory P2/P3 findings are demoted out of the findings.
DEMOTED_TO = {"testing": "testing_gaps", "maintainability": "residual_risks"}
_LOCATION = re.compile(r"^(?P<path>.+):(?P<line>\d+)(?:-(?P<end>\d+))?$")
_OWNER_RANK = {"human": 0, "release": 1, "downstream-resolver": 2}


def rank(severity: str) -> int:
    return SEVERITIES.index(severity)


def norm(text: str | None) -> str:
    """Trim, lower-case and collapse spaces: how keys are compared."""
    return " ".join((text or "").lower().split())


def persona_of(reviewer: str) -> str:
    """`correctness@codex` -> correctness; a bare agent name is its own persona."""
    return reviewer.split("@", 1)[0]


def independent(reviewer: str) -> bool:
    return persona_of(reviewer) not in NOT_INDEPENDENT


@dataclass
class Finding:
    severity: str
    kind: str
    location: str
    signature: str
    title: str
    detail: str
    suggested_fix: str | None = None
    id: str | None = None
    confidence: int = UNRATED
    rated: bool = False  # False: the reviewer gave no confidence (counted as 75)
    first_evidence: str | None = None
    evidence: list[str] = field(default_factory=list)
    autofix_class: str = "manual"
    owner: str = "downstream-resolver"
    requires_verification: bool = False
    pre_existing: bool = False
    validity: str = "unchallenged"
    validity_evidence: str | None = None
    native: dict[str, Any] = field(default_factory=dict)
    reviewers: list[str] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    reports: list[dict[str, Any]] = field(default_factory=list)
    number: int = 0  # `#` after the merge
    rc_id: str | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        return (norm(self.kind), self.location.strip(), norm(self.signature))

    @property
    def path(self) -> str:
        match = _LOCATION.match(self.location)
        return match.group("path") if match else self.location

    @property
    def line(self) -> int:
        match = _LOCATION.match(self.location)
        return int(match.group("line")) if match else 0

    @property
    def advisory(self) -> bool:
        return self.autofix_class == "advisory"

    @property
    def actionable(self) -> bool:
        return (
            self.autofix_class in ("gated_auto", "manual") and self.owner == "downstream-resolver"
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.number:
            out["#"] = self.number
            out["rc_id"] = self.rc_id
        out.update(
            severity=self.severity,
            kind=self.kind,
            location=self.location,
            signature=self.signature,
            title=self.title,
            detail=self.detail,
            suggested_fix=self.suggested_fix,
            id=self.id,
            confidence=self.confidence,
            confidence_rated=self.rated,
            first_evidence=self.first_evidence,
            evidence=self.evidence,
            autofix_class=self.autofix_class,
            owner=self.owner,
            requires_verification=self.requires_verification,
            pre_existing=self.pre_existing,
            validity=self.validity,
            validity_evidence=self.validity_evidence,
            native=self.native,
            reviewers=self.reviewers,
            ids=self.ids,
        )
        if self.reports:
            out["reports"] = self.reports
        return out


@dataclass
class Report:
    """One reviewer's file, in canonical form."""

    reviewer: str
    findings: list[Finding]
    format: str = "kitty"
    source: str = ""
    residual_risks: list[str] = field(default_factory=list)
    testing_gaps: list[str] = field(default_factory=list)


@dataclass
class Merged:
    findings: list[Finding]  # survived the gates, sorted, numbered
    pre_existing: list[Finding] = field(default_factory=list)
    suppressed: list[Finding] = field(default_factory=list)
    testing_gaps: list[str] = field(default_factory=list)
    residual_risks: list[str] = field(default_factory=list)
    reviewers: list[str] = field(default_factory=list)

    @property
    def suppressed_by_anchor(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for f in self.suppressed:
            counts[str(f.confidence)] = counts.get(str(f.confidence), 0) + 1
        return dict(sorted(counts.items(), key=lambda kv: -int(kv[0])))


def _step_up(confidence: int) -> int:
    above = [s for s in STEPS if s > confidence]
    return above[0] if above else confidence


def _gate_quote(f: Finding) -> Finding:
    """Quote gate: a rated 75/100 without the quoted line counts as 50."""
    confidence = f.confidence
    if not independent(f.reviewers[0] if f.reviewers else ""):
        confidence = min(confidence, 50)
    if f.rated and confidence >= 75 and not f.first_evidence:
        confidence = 50
    return replace(f, confidence=confidence)


def _challenge_rule(f: Finding) -> Finding:
    """INVALID needs a disproving path:line; without one the finding stands (VALID)."""
    words = (w.strip("`'\".,;()[]") for w in (f.validity_evidence or "").split())
    if f.validity == "INVALID" and not any(_LOCATION.match(w) for w in words):
        return replace(f, validity="VALID")
    return f


def _sort_key(f: Finding) -> tuple[Any, ...]:
    return (rank(f.severity), -f.confidence, f.path, f.line, norm(f.kind), norm(f.signature))


def _dump(f: Finding) -> str:
    import json

    return json.dumps(f.to_json(), sort_keys=True)


def _canonical_order(reports: Iterable[Report]) -> list[Report]:
    """Sorted by reviewer, each report's findings by content: the input order never matters."""
    ordered = [
        replace(r, findings=sorted(r.findings, key=lambda f: (_sort_key(f), _dump(f))))
        for r in reports
    ]
    return sorted(ordered, key=lambda r: (r.reviewer, [_dump(f) for f in r.findings]))


def _combine(copies: list[Finding]) -> Finding:
    """Several reports of one defect -> one finding (REVIEW-LOOP.md §2.3)."""
    winner = min(
        enumerate(copies), key=lambda ic: (rank(ic[1].severity), -ic[1].confidence, ic[0])
    )[1]
    out = replace(winner, evidence=list(winner.evidence), native=dict(winner.native))
    for other in copies:  # fill blanks in input order
        for name in ("suggested_fix", "first_evidence", "id", "validity_evidence"):
            if not getattr(out, name) and getattr(other, name):
                setattr(out, name, getattr(other, name))
        out.evidence += [e for e in other.evidence if e not in out.evidence]
    out.confidence = max(c.confidence for c in copies)
    out.rated = any(c.rated for c in copies)
    out.reviewers = list(dict.fromkeys(r for c in copies for r in c.reviewers))
    out.ids = list(dict.fromkeys(i for c in copies for i in c.ids))
    classes = {c.autofix_class for c in copies}
    out.autofix_class = (
        "advisory" if classes == {"advisory"} else "manual" if "manual" in classes else "gated_auto"
    )
    # P: human > release > downstream-resolver: the most conservative owner wins.
    out.owner = min((c.owner for c in copies), key=lambda o: _OWNER_RANK.get(o, 3))
    out.requires_verification = any(c.requires_verification for c in copies)
    out.pre_existing = all(c.pre_existing for c in copies)
    validities = {c.validity for c in copies}
    # P: one VALID verdict outweighs INVALID ones; unchallenged copies do not vote.
    out.validity = (
        "VALID"
        if "VALID" in validities
        else "INVALID"
        if "INVALID" in validities
        else "unchallenged"
    )
    out.reports = [
        {"reviewer": r, "severity": c.severity, "confidence": c.confidence}
        for c in copies
        for r in c.reviewers
    ]
    # Agreement: two independent reviewers raise confidence one step, unless a
    # rated report lacks the quoted line (then it stays at the gate's 50).
    voters = {r for r in out.reviewers if independent(r)}
    if len(voters) >= 2 and not (out.rated and not out.first_evidence):
        out.confidence = _step_up(out.confidence)
    return out


def _gap_text(f: Finding) -> str:
    return f"{f.title} ({f.location}): {f.detail}"


def merge(reports: Sequence[Report], round_no: int = 1) -> Merged:
    """REVIEW-LOOP.md §2: quote gate, dedup, agreement, pre-existing, demotion, gate, sort."""
    ordered = _canonical_order(reports)
    groups: dict[tuple[str, str, str], list[Finding]] = {}
    for report in ordered:
        for f in report.findings:
            gated = _challenge_rule(_gate_quote(f))
            groups.setdefault(gated.key, []).append(gated)
    merged = Merged([], reviewers=list(dict.fromkeys(r.reviewer for r in ordered)))
    for report in ordered:
        merged.testing_gaps += [g for g in report.testing_gaps if g not in merged.testing_gaps]
        merged.residual_risks += [
            g for g in report.residual_risks if g not in merged.residual_risks
        ]
    survivors = []
    for copies in groups.values():
        f = _combine(copies)
        personas = {persona_of(r) for r in f.reviewers}
        if f.pre_existing:
            merged.pre_existing.append(f)
        elif f.advisory and rank(f.severity) >= rank("P2") and personas <= set(DEMOTED_TO):
            bucket = "testing_gaps" if "testing" in personas else "residual_risks"
            getattr(merged, bucket).append(_gap_text(f))
        elif f.confidence < 75 and not (f.severity == "P0" and f.confidence >= 50):
            merged.suppressed.append(f)
        else:
            survivors.append(f)
    survivors.sort(key=_sort_key)
    for number, f in enumerate(survivors, 1):
        f.number, f.rc_id = number, f"RC{round_no}-{number}"
    merged.findings = survivors
    merged.pre_existing.sort(key=_sort_key)
    merged.suppressed.sort(key=_sort_key)
    merged.testing_gaps.sort()
    merged.residual_risks.sort()
    return merged


def is_blocking(f: Finding, block_at: str) -> bool:
    return (
        not f.pre_existing
        and f.validity != "INVALID"
        and rank(f.severity) <= rank(block_at)
        and not (f.advisory and rank(f.severity) >= rank("P2"))
    )


def blocking(findings: Sequence[Finding], block_at: str) -> list[Finding]:
    return [f for f in findings if is_blocking(f, block_at)]


def counts(findings: Iterable[Finding]) -> dict[str, int]:
    out = dict.fromkeys(SEVERITIES, 0)
    for f in findings:
        out[f.severity] += 1
    return out


def report_verdict(merged: Merged, block_at: str) -> str:
    """Seed 002's verdict words for the same facts."""
    if blocking(merged.findings, block_at):
        return "Not ready"
    return "Ready with fixes" if merged.findings else "Ready to merge"


def render_cycle(
    wp_id: str,
    cycle: int,
    reviewers: Sequence[str],
    findings: Sequence[Finding],
    block_at: str,
    approved: bool,
    round_no: int | None = None,
) -> str:
    """The body of review-cycle-N.md: each finding as RC<round>-<#>, INVALID ones apart."""
    rc = round_no or cycle
    numbered = [
        f if f.number else replace(f, number=i, rc_id=f"RC{rc}-{i}")
        for i, f in enumerate(findings, 1)
    ]
    blockers = blocking(numbered, block_at)
    invalid = [f for f in numbered if f.validity == "INVALID"]
    advisory = [f for f in numbered if f not in blockers and f not in invalid]
    verdict = "approved" if approved else "changes requested"
    out = [
        f"# Review of {wp_id}: {verdict} (cycle {cycle})",
        "",
        f"Reviewers: {', '.join(reviewers)}",
        f"Blocking findings (at or above {block_at}): {len(blockers)}; advisory: {len(advisory)}"
        + (f"; invalid: {len(invalid)}" if invalid else ""),
        "",
    ]
    if blockers:
        out += ["## Required fixes", ""]
    for f in blockers:
        out += [
            f"### {f.rc_id} [{f.severity}] {f.kind}: {f.title}",
            "",
            f"- Location: `{f.location}`",
            f"- What is wrong: {f.detail}",
            f"- Required fix: {f.suggested_fix or 'resolve the defect described above'}",
            f"- Reported by: {', '.join(f.reviewers)}",
            "",
        ]
    if advisory:
        out += ["## Advisory notes (not blocking)", ""]
    for f in advisory:
        fix = f" Suggested: {f.suggested_fix}" if f.suggested_fix else ""
        out.append(
            f"- {f.rc_id} [{f.severity}] {f.kind} `{f.location}`: {f.title}. {f.detail}{fix}"
        )
    if invalid:
        out += ["", "## INVALID (disproved by the challenge, not blocking)", ""]
    for f in invalid:
        out.append(
            f"- {f.rc_id} [{f.severity}] `{f.location}`: {f.title}. "
            f"Disproved: {f.validity_evidence}"
        )
    if not findings:
        out.append("No findings.")
    return "\n".join(out).rstrip() + "\n"
