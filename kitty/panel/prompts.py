"""The review panel's prompts: a reviewer's, the contrarian's, and the fix section."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kitty.panel.rules.data import Entry
from kitty.panel.rules.personas import Persona
from kitty.workflow.rules.findings import Finding, Merged


def handoff(sender: str, receiver: str) -> list[str]:
    return [
        "## Handoff",
        "End your output with this block:",
        "--- AGENT HANDOFF ---",
        f"From:     {sender}",
        f"To:       {receiver}",
        "Status:   complete | blocked",
        "Branch:   <branch>",
        "Done:",
        "  - <key action>",
        "Decisions:",
        "  - <decision + rationale, or none>",
        "Findings:",
        "  - <id> - <severity> - <one line> - VALID | INVALID",
        "Open:",
        "  - <item + owner, or none>",
        "Pass forward:",
        "  <2-3 sentences for the next agent>",
        "--- END HANDOFF ---",
    ]


def _verification(lines: Sequence[str]) -> list[str]:
    """The project's verify.* commands, the only ones beyond git and kitty it may run."""
    if not lines:
        return ["Nothing verifies the work: no verify.* commands are configured.", ""]
    return [
        "Verification: exactly these commands (verify.* in .kittify/config.yaml), the only "
        "ones besides `git` and `kitty` you may run; a failure is a finding:",
        *[f"    {line}" for line in lines],
        "",
    ]


def reviewer_prompt(
    wp: tuple[str, str],
    persona: Persona,
    entry: Entry,
    scope: dict[str, Any],
    round_no: int,
    out: Path,
    prior: Merged | None,
) -> str:
    """wp = (wp_id, mission slug)."""
    wp_id, slug = wp
    lines = [
        f"# Panel review {wp_id} as {entry.persona}",
        "",
        f"Mission: --mission {slug}",
        f"Persona: {entry.persona}",
        f"Round: {round_no}",
        f"Scope: {scope['base']}..{scope['head_sha']} (the full diff, every round)",
        f"Workspace: {scope['workspace']}",
        f"Write your findings to: {out}",
        "",
        f"## Your focus: {persona.focus}",
        "",
        persona.prompt,
        "",
        "## How to report",
        f"Run `git diff --no-ext-diff {scope['base']}..{scope['head_sha']}` and read the "
        "changed files:",
        *[f"- {p}" for p in scope["files"]],
        "",
        *_verification(scope.get("verify") or []),
        "Write one JSON object to the findings file (schema: `kitty review schema`):",
        f'{{"reviewer": "{entry.name}", "findings": [{{"severity": "P0-P3", "kind": '
        f'"{entry.persona}", "location": "path:line", "signature": "stable-key", "title": '
        '"...", "detail": "...", "suggested_fix": "...", "confidence": 75, '
        '"first_evidence": "the quoted line"}], "residual_risks": [], "testing_gaps": []}',
        "An empty findings list means you found nothing. Do not edit any file, do not move "
        "the work package: the panel records the verdict.",
    ]
    if entry.persona == "previous-comments" and prior is not None:
        lines += [
            "",
            "## Previous round's findings",
            *[f"- {f.rc_id} [{f.severity}] {f.location}: {f.title}" for f in prior.findings],
        ]
    return "\n".join([*lines, "", *handoff(entry.name, "the review panel")]) + "\n"


def challenge_prompt(
    wp: tuple[str, str], round_no: int, out: Path, targets: Sequence[Finding]
) -> str:
    wp_id, slug = wp
    lines = [
        f"# Challenge review findings of {wp_id} (round {round_no})",
        "",
        f"Mission: --mission {slug}",
        "You are the contrarian. For each finding below, read the code at the cited",
        "location and decide: VALID (the problem exists; make the required fix concrete)",
        "or INVALID (cite the exact path:line that disproves it; without one it stays VALID).",
        f"Round: {round_no}",
        f"Write your verdicts to: {out}",
        'as {"verdicts": [{"id": "RC<round>-<n>", "validity": "VALID|INVALID", '
        '"evidence": "path:line ...", "fix": "..."}]}',
        "",
    ]
    for f in targets:
        lines += [
            f"### {f.rc_id}: {f.title}",
            f"**Severity:** {f.severity}",
            f"**File:** {f.location}",
            f"**Finding:** {f.detail}",
            f"**Required fix:** {f.suggested_fix or '(none given)'}",
            "",
        ]
    lines += handoff("contrarian", "the review panel")
    return "\n".join(lines)


def fix_section(
    wp_id: str,
    round_no: int,
    paths: tuple[Path, str, Path],
    answers: list[dict[str, Any]] | None,
    context: str,
    errors: list[str],
    test_output: str,
) -> list[str]:
    """paths = (merged.json, its path relative to the repo, the fix return file)."""
    merged_path, merged_rel, ret = paths
    lines = [
        f"## Review panel fix (round {round_no})",
        "",
        f"Round: {round_no}",
        "Fix every blocking finding listed in the merged findings file:",
        f"Findings: {merged_path}",
        "Input: "
        + json.dumps({"mode": "fix", "findings_path": merged_rel, "wp": wp_id, "round": round_no}),
        f"Fix return file: {ret}",
        "When you finish, write to the fix return file:",
        '{"status": "done", "gate_status": "ok|errors", "errors_remaining": [], '
        '"questions": [], "context": "what you did"}',
        "If you cannot fix it without a decision from a human, make NO edits and write",
        '{"status": "blocker", "questions": [{"id": "q1", "header": "short", "question": '
        '"...", "options": [{"label": "A", "description": "..."}, {"label": "B", '
        '"description": "..."}]}], "context": "what you found"} (2 to 4 options each).',
    ]
    if errors:
        lines += ["", "## Errors remaining from the previous fix", *[f"- {e}" for e in errors]]
    if test_output:
        lines += ["", "## Tests still failing (review.test_command)", "```", test_output, "```"]
    if answers:
        lines += ["", "## User answers (from blocker bridge)", json.dumps(answers, indent=2)]
    if context:
        lines += ["", "## Context from prior dispatch", context]
    return [*lines, "", *handoff("implementer", "the review panel")]
