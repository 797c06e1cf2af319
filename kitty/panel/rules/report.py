"""The review panel's files and answers, pure: the round plan, merged.json, the HALT file,
the `--json` result (seed 002's shape plus kitty's round and loop verdict), the hints."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from kitty.panel.rules.data import (
    HALT,
    HALT_OPTIONS,
    QUESTIONS_PER_ASK,
    SOFT_WARN_OPTIONS,
    Entry,
    chunks,
)
from kitty.panel.rules.personas import Roster
from kitty.workflow.rules.findings import Finding, Merged, blocking, counts, report_verdict


def plan_json(entries: Sequence[Entry], max_rounds: int, roster: Roster) -> dict[str, Any]:
    return {
        "fan_out": [asdict(e) for e in entries],
        "max_rounds": max_rounds,
        "rationale": "lite roster (small, low-risk diff)"
        if roster.lite
        else "; ".join(f"{k}: {v}" for k, v in roster.reasons.items()),
    }


def merged_json(
    round_no: int, merged: Merged, scope: dict[str, Any], block_at: str, now: int
) -> dict[str, Any]:
    blockers = blocking(merged.findings, block_at)
    return {
        "round": round_no,
        "scope": {k: v for k, v in scope.items() if k not in ("diff", "workspace")},
        "generated_at": now,
        "reviewers": merged.reviewers,
        "verdict": report_verdict(merged, block_at),
        "block_at": block_at,
        "blocking": [f.rc_id for f in blockers],
        "findings": [f.to_json() for f in merged.findings],
        "pre_existing_findings": [f.to_json() for f in merged.pre_existing],
        "suppressed": [f.to_json() for f in merged.suppressed],
        "suppressed_by_anchor": merged.suppressed_by_anchor,
        "testing_gaps": merged.testing_gaps,
        "residual_risks": merged.residual_risks,
    }


def halt_artifact(
    wp_id: str,
    slug: str,
    round_no: int,
    reason: str,
    findings: Sequence[Finding],
    block_at: str,
    payload: dict[str, Any] | None,
    context: str,
    settings: dict[str, Any],
    extra: dict[str, Any],
) -> dict[str, Any]:
    questions = (payload or {}).get("questions") or []
    return {
        "wp_id": wp_id,
        "mission": slug,
        "round": round_no,
        "reason": reason,
        "findings": [f.to_json() for f in findings],
        "counts": counts(blocking(findings, block_at)),
        "questions": questions if isinstance(questions, list) else [],
        "context": context or (payload or {}).get("context") or "",
        "options": SOFT_WARN_OPTIONS if reason == "soft_warn" else HALT_OPTIONS,
        "settings": settings,
        **extra,
    }


def halt_details(artifact: dict[str, Any], hint: str) -> dict[str, Any]:
    """What the HALT result adds to the round's result: the questions, four per ask."""
    questions = artifact["questions"]
    return {
        "questions": questions,
        "context": artifact["context"],
        "question_chunks": chunks(questions) if questions else [],
        "hint": hint,
    }


def triage(findings: Sequence[Finding]) -> list[dict[str, Any]]:
    """Seed 002's triage groups: findings in the same file, when there is more than one file."""
    groups: dict[str, list[int]] = {}
    for f in findings:
        groups.setdefault(f.path, []).append(f.number)
    if len(groups) < 2:
        return []
    return [
        {
            "title": path,
            "findings": nums,
            "context": f"findings in {path}",
            "preferred_resolution": "fix together",
            "why": "same file",
        }
        for path, nums in groups.items()
    ]


_SCOPE_KEYS = ("base", "branch", "head_sha", "pr_url", "files_changed")
_NO_VERIFICATION = {
    "status": "not-produced",
    "closeout_verdict": "not-run",
    "reason_code": "no-targeted-command-executed",
    "checks": [],
    "limitations": [],
}


def result_json(
    ids: tuple[str, str, int],
    loop_verdict: str,
    merged: Merged,
    scope: dict[str, Any],
    block_at: str,
    artifact: tuple[str | None, str],
) -> dict[str, Any]:
    """`kitty review run --json`: ids = (wp_id, slug, round), artifact = (path, run id)."""
    wp_id, slug, round_no = ids
    path, run_id = artifact
    return {
        "status": "complete" if loop_verdict != HALT or merged.findings else "failed",
        "verdict": report_verdict(merged, block_at),
        "mutation_policy": "report-only",
        "commit_authorization": "missing",
        "scope": {
            k: scope.get(k) for k in ("base", "branch", "head_sha", "pr_url", "files_changed")
        },
        "intent": f"{wp_id} of mission {slug}",
        "intent_confidence": "explicit",
        "reviewers": merged.reviewers,
        "findings": [f.to_json() for f in merged.findings],
        "actionable_findings": [f.to_json() for f in merged.findings if f.actionable],
        "triage_groups": triage(merged.findings),
        "pre_existing_findings": [f.to_json() for f in merged.pre_existing],
        "requirements_completeness": None,
        "learnings": [],
        "agent_native_gaps": [],
        "deployment_notes": [],
        "residual_risks": merged.residual_risks,
        "testing_gaps": merged.testing_gaps,
        "coverage": {
            "suppressed_by_anchor": merged.suppressed_by_anchor,
            "verification_evidence": dict(_NO_VERIFICATION),
        },
        "artifact_path": path,
        "artifact_write_status": "written" if path else "unavailable",
        "run_id": run_id,
        "wp_id": wp_id,
        "mission": slug,
        "round": round_no,
        "loop_verdict": loop_verdict,
    }


def pending_json(
    wp_id: str, recorded: dict[str, Any], pending: list[dict[str, Any]], halt_file: str
) -> dict[str, Any]:
    """Some blocker questions are still open: the next (at most four) to ask."""
    return {
        "wp_id": wp_id,
        "loop_verdict": HALT,
        "reason": "blocker",
        "answered": sorted(recorded),
        "pending": [q["id"] for q in pending],
        "ask": pending[:QUESTIONS_PER_ASK],
        "halt_file": halt_file,
    }


def answer_example(wp_id: str, slug: str, questions: list[Any]) -> str:
    """A runnable `kitty review answer` for the first question's first option."""
    for q in questions:
        options = q.get("options") if isinstance(q, dict) else None
        for o in options if isinstance(options, list) else []:
            if isinstance(o, dict) and isinstance(o.get("label"), str):
                pair = shlex.quote(f"{q.get('id')}={o['label']}")
                return f"kitty review answer {wp_id} --mission {slug} --answer {pair}"
    return f"kitty review answer {wp_id} --mission {slug}"


def halt_hint(wp_id: str, slug: str, reason: str, questions: list[Any] | None = None) -> str:
    if reason == "blocker":
        return (
            "answer each question (--answer ID=LABEL, repeatable), for example: "
            + answer_example(wp_id, slug, questions or [])
        )
    if reason == "soft_warn":
        return f"continue one more round: kitty review answer {wp_id} --mission {slug} --continue"
    return (
        f"proceed-with-gaps: kitty agent tasks move-task {wp_id} --mission {slug} --to approved "
        f'--force --note "Arbiter decision: <why>"; replay or hand-edit, then: '
        f"kitty review run {wp_id} --mission {slug}"
    )
