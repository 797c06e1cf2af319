"""`kitty review submit|show|schema`: structured findings drive the review verdict."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

from kitty import SCHEMA
from kitty.adapters.files import read_user_file
from kitty.core import lanes
from kitty.errors import GuardRefused, SpecError, UsageError
from kitty.mission import feedback
from kitty.mission.workspace import Mission
from kitty.workflow.moves import move_task
from kitty.workflow.reviewcycle import ReviewDoc, next_cycle_number
from kitty.workflow.rules.findings import Merged, Report, blocking, counts, merge, render_cycle
from kitty.workflow.rules.formats import read_report

_CYCLE_REF = re.compile(r"review-cycle-(\d+)\.md$")


#: The largest findings file kitty reads (a reviewer's report, not a dump).
MAX_FINDINGS_BYTES = 8 << 20


def load_reports(
    files: list[Path], fmt: str | None = None, agent: str | None = None
) -> list[Report]:
    """Read every file; all problems of all files are reported together, nothing recorded."""
    if not files:
        raise UsageError("pass at least one --findings FILE", "see `kitty review schema`")
    reports: list[Report] = []
    errors: list[SpecError] = []
    for path in files:
        try:
            text = read_user_file(
                path, "findings file", MAX_FINDINGS_BYTES, limit_hint="split the report"
            ).decode("utf-8")
        except UnicodeDecodeError:
            raise UsageError(f"findings file {path} is not UTF-8", "pass a JSON file") from None
        try:
            reports.append(read_report(str(path), text, fmt, agent))
        except SpecError as exc:
            errors.append(exc)
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise SpecError(
            f"{len(errors)} findings files",
            None,
            "invalid:\n" + "\n".join(e.message for e in errors),
            "see `kitty review schema`; nothing was recorded",
        )
    return reports


def record_verdict(
    mission: Mission,
    wp_id: str,
    who: str,
    merged: Merged,
    round_no: int | None = None,
    note_suffix: str = "",
    panel: bool = False,
) -> dict[str, Any]:
    """Approve, or reject back to planned, with a review-cycle file and its findings sidecar."""
    block_at = mission.config.block_at
    findings = merged.findings
    blockers = blocking(findings, block_at)
    reviewers = merged.reviewers
    wp = mission.wp(wp_id)
    stem_dir = mission.dir / "tasks" / (wp.stem if wp else wp_id)
    cycle = next_cycle_number(stem_dir)
    approved = not blockers
    doc = ReviewDoc(
        body=render_cycle(wp_id, cycle, reviewers, findings, block_at, approved, round_no),
        affected_files=list(dict.fromkeys(f.path for f in (blockers or findings))),
        findings=[f.to_json() for f in findings],
        reviewers=reviewers,
        # a panel's reviewers are `persona@agent`: the agents reviewed, `who` ran the panel
        panel_agents=list(dict.fromkeys(r.rsplit("@", 1)[-1] for r in reviewers)) if panel else [],
    )
    advisory = [f for f in findings if f not in blockers]
    if approved:
        note = f"Review passed ({', '.join(reviewers)})" + (
            f" with {len(advisory)} advisory note(s)" if advisory else ""
        )
        result = move_task(
            mission, wp_id, lanes.APPROVED, agent=who, note=note + note_suffix, review_doc=doc
        )
    else:
        tally = counts(blockers)
        text = ", ".join(f"{n} {s}" for s, n in tally.items() if n)
        result = move_task(
            mission,
            wp_id,
            lanes.PLANNED,
            agent=who,
            review_doc=doc,
            note=f"Changes requested: {text} (threshold {block_at}){note_suffix}",
        )
    return dict(
        result,
        verdict="approved" if approved else "changes_requested",
        findings=len(findings),
        blocking=len(blockers),
        advisory=len(advisory),
        suppressed=len(merged.suppressed),
        pre_existing=len(merged.pre_existing),
        block_at=block_at,
        reviewers=reviewers,
    )


def submit(
    mission: Mission,
    wp_text: str,
    files: list[Path],
    agent: str | None,
    fmt: str | None = None,
) -> dict[str, Any]:
    """Merge the reports; approve, or reject with a review-cycle file. All or nothing."""
    wp_id = mission.resolve_wp(wp_text)
    who = mission.actor(agent)
    reports = load_reports(files, fmt, who)  # every file is checked before anything is recorded
    state = mission.board.wps.get(wp_id)
    if state is None or state.lane != lanes.IN_REVIEW:
        raise GuardRefused(
            f"{wp_id} is {state.lane if state else 'unknown'}, not in_review",
            f"claim it first: kitty agent action review {wp_id} --agent {shlex.quote(who)}",
        )
    result = record_verdict(mission, wp_id, who, merge(reports))
    for path in files:  # in the review cycle now; kitty's own findings files go
        feedback.collected(path)
    return result


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
            side_text = mission.read_inside(sidecar)
            if side_text is not None:
                try:
                    side = json.loads(side_text)
                except ValueError:
                    side = None
                findings = side.get("findings") if isinstance(side, dict) else None
            text = mission.read_inside(path)
            if text is not None:
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
