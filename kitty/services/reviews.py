"""`kitty review submit|show|schema`: structured findings drive the review verdict."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

from kitty import SCHEMA
from kitty.core import lanes
from kitty.core.findings import Finding, blocking, merge, parse_report, render_cycle
from kitty.errors import GuardRefused, SpecError, UsageError
from kitty.services.moves import ReviewDoc, move_task, next_cycle_number
from kitty.services.workspace import Mission

_CYCLE_REF = re.compile(r"review-cycle-(\d+)\.md$")


def schema_text() -> str:
    return resources.files("kitty").joinpath("data/findings.schema.json").read_text("utf-8")


def load_reports(files: list[Path]) -> list[tuple[str, list[Finding]]]:
    if not files:
        raise UsageError("pass at least one --findings FILE", "see `kitty review schema`")
    reports = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"cannot read {path}: {exc}", "pass a readable JSON file") from None
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise SpecError(
                str(path),
                getattr(exc, "lineno", None),
                f"not valid JSON: {exc}",
                "see `kitty review schema`",
            ) from None
        reports.append(parse_report(str(path), data))
    return reports


def submit(mission: Mission, wp_text: str, files: list[Path], agent: str | None) -> dict[str, Any]:
    """Merge the reports; approve, or reject with a review-cycle file. All or nothing."""
    reports = load_reports(files)  # every file is checked before anything is recorded
    wp_id = mission.resolve_wp(wp_text)
    who = mission.actor(agent)
    if not who:
        raise UsageError("a verdict needs the reviewer's identity", "pass --agent NAME")
    state = mission.board.wps.get(wp_id)
    if state is None or state.lane != lanes.IN_REVIEW:
        raise GuardRefused(
            f"{wp_id} is {state.lane if state else 'unknown'}, not in_review",
            f"claim it first: kitty agent action review {wp_id} --agent {who}",
        )
    findings = merge(reports)
    block_at = mission.config.block_at
    blockers = blocking(findings, block_at)
    reviewers = list(dict.fromkeys(name for name, _ in reports))
    wp = mission.wp(wp_id)
    stem_dir = mission.dir / "tasks" / (wp.stem if wp else wp_id)
    cycle = next_cycle_number(stem_dir)
    approved = not blockers
    doc = ReviewDoc(
        body=render_cycle(wp_id, cycle, reviewers, findings, block_at, approved),
        affected_files=[f.path for f in (blockers or findings)],
        findings=[f.to_json() for f in findings],
        reviewers=reviewers,
    )
    advisory = [f for f in findings if f not in blockers]
    if approved:
        note = f"Review passed ({', '.join(reviewers)})" + (
            f" with {len(advisory)} advisory note(s)" if advisory else ""
        )
        result = move_task(mission, wp_id, lanes.APPROVED, agent=who, note=note, review_doc=doc)
    else:
        counts = ", ".join(
            f"{sum(1 for f in blockers if f.severity == s)} {s}"
            for s in ("P0", "P1", "P2", "P3")
            if any(f.severity == s for f in blockers)
        )
        result = move_task(
            mission,
            wp_id,
            lanes.PLANNED,
            agent=who,
            review_doc=doc,
            note=f"Changes requested: {counts} (threshold {block_at})",
        )
    return dict(
        result,
        verdict="approved" if approved else "changes_requested",
        findings=len(findings),
        blocking=len(blockers),
        advisory=len(advisory),
        block_at=block_at,
        reviewers=reviewers,
    )


def _cycle_file(mission: Mission, reference: str | None) -> Path | None:
    if not reference or not reference.startswith("review-cycle://"):
        return None
    parts = reference[len("review-cycle://") :].split("/")
    if len(parts) != 3 or parts[0] != mission.slug or ".." in parts:
        return None
    return mission.dir / "tasks" / parts[1] / parts[2]


def show(mission: Mission, wp_text: str) -> dict[str, Any]:
    wp_id = mission.resolve_wp(wp_text)
    state = mission.board.wps.get(wp_id)
    reviews = []
    for record in state.reviews if state else []:
        path = _cycle_file(mission, record.reference)
        findings = None
        body = None
        number = None
        if path is not None:
            match = _CYCLE_REF.search(path.name)
            number = int(match.group(1)) if match else None
            sidecar = path.with_name(path.name[:-3] + ".findings.json")
            if sidecar.is_file():
                findings = json.loads(sidecar.read_text(encoding="utf-8")).get("findings")
            if path.is_file():
                text = path.read_text(encoding="utf-8")
                body = text.split("---", 2)[2].strip() if text.startswith("---") else text
        reviews.append(
            {
                "verdict": record.verdict,
                "reviewer": record.reviewer,
                "at": record.at,
                "rejection": record.cycle,
                "review_cycle_file": number,
                "reference": record.reference,
                "note": record.note,
                "findings": findings,
                "feedback": body,
            }
        )
    return {
        "schema": SCHEMA,
        "mission": mission.slug,
        "wp_id": wp_id,
        "lane": state.lane if state else None,
        "review_cycles": state.review_cycles if state else 0,
        "max_cycles": mission.config.max_cycles,
        "reviews": reviews,
        "arbiter": state.arbiter if state else None,
        "self_review": state.self_review if state else None,
    }
