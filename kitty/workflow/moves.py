"""Lane changes and subtask marks: validated under the lock, one append each."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from kitty import SCHEMA
from kitty.adapters.config import DEFAULT_MAX_FEEDBACK_BYTES
from kitty.adapters.eventlog import now_us
from kitty.adapters.files import atomic_write, read_user_file
from kitty.core import lanes
from kitty.core.clock import format_at
from kitty.core.limits import check_text
from kitty.core.log.state import HELD, Board, WPState
from kitty.core.move import MoveCheck, MoveRequest, Policy
from kitty.core.record import Record, replace
from kitty.core.transitions import check_move, cycle_label, unready_dependencies
from kitty.core.wpfile import dump_front_matter
from kitty.errors import NotFound, UsageError
from kitty.mission import feedback
from kitty.mission.workspace import AGENT_ENV, Mission
from kitty.workflow.commits.auto import autocommit
from kitty.workflow.lanecheck import lane_guard, reviewed_lane

SUBTASK_STATUSES = lanes.SUBTASK_STATUSES


class ReviewDoc(Record):
    """What a review verdict stores as tasks/<stem>/review-cycle-N.md (and its findings)."""

    body: str
    affected_files: list[str]
    findings: list[dict[str, Any]] | None
    reviewers: list[str]
    #: A review panel's agents (`reviewer_agent`); the actor who ran it is `recorded_by`.
    panel_agents: list[str]

    def __init__(
        self,
        body: str,
        affected_files: list[str] | None = None,
        findings: list[dict[str, Any]] | None = None,
        reviewers: list[str] | None = None,
        panel_agents: list[str] | None = None,
    ) -> None:
        self.body = body
        self.affected_files = [] if affected_files is None else affected_files
        self.findings = findings
        self.reviewers = [] if reviewers is None else reviewers
        self.panel_agents = [] if panel_agents is None else panel_agents


_CYCLE_FILE = re.compile(r"^review-cycle-(\d+)\.md$")


def read_feedback(
    path: Path | None,
    root: Path | None = None,
    max_bytes: int = DEFAULT_MAX_FEEDBACK_BYTES,
    force: bool = False,
) -> str | None:
    """The text of --review-feedback-file, which is copied into the repository.

    Only a regular file of at most `max_bytes` (devices, FIFOs and directories are
    refused without blocking), inside the repository `root` or the system temp
    directory unless `force`: `/dev/zero` or `~/.ssh/id_rsa` never end up in a commit.
    """
    if path is None:
        return None
    import tempfile

    allowed = None if force else [Path(tempfile.gettempdir()), *([root] if root else [])]
    data = read_user_file(path, "review feedback", max_bytes, allowed)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(
            f"review feedback {path} is not UTF-8 text", "re-save it as UTF-8"
        ) from None
    if not text.strip():
        raise UsageError(
            f"review feedback file {path} is empty", "write what must change into the file"
        )
    return text


def next_cycle_number(folder: Path) -> int:
    if not folder.is_dir():
        return 1
    numbers = [int(m.group(1)) for p in folder.iterdir() if (m := _CYCLE_FILE.match(p.name))]
    return max(numbers, default=0) + 1


def write_review_cycle(
    mission: Mission, wp_id: str, reviewer: str | None, verdict: str, doc: ReviewDoc
) -> tuple[list[Path], str, int]:
    """Store a verdict as tasks/<stem>/review-cycle-N.md; return (paths, review_ref, N).

    The front matter keeps exactly the keys other tools read (FORMAT.md); structured
    findings, when there are any, go beside it in review-cycle-N.findings.json.
    """
    wp = mission.wp(wp_id)
    stem = wp.stem if wp else wp_id
    folder = mission.dir / "tasks" / stem
    number = next_cycle_number(folder)
    front: dict[str, Any] = {
        "affected_files": sorted(set(doc.affected_files)),
        "cycle_number": number,
        "mission_slug": mission.slug,
        "reviewed_at": format_at(now_us()).replace("+00:00", "Z"),
        "reviewer_agent": reviewer or "unknown",
        "verdict": verdict,
        "wp_id": wp_id,
    }
    if doc.panel_agents:  # the findings came from the panel's agents, not from its runner
        front["reviewer_agent"] = ", ".join(doc.panel_agents)
        front["recorded_by"] = reviewer or "unknown"
    path = folder / f"review-cycle-{number}.md"
    text = dump_front_matter(front, sort_keys=True) + "\n"
    atomic_write(path, text + doc.body.rstrip("\n") + "\n")
    paths = [path]
    if doc.findings is not None:
        sidecar = folder / f"review-cycle-{number}.findings.json"
        atomic_write(
            sidecar,
            json.dumps(
                {"schema": SCHEMA, "reviewers": doc.reviewers, "findings": doc.findings},
                indent=2,
                sort_keys=True,
            )
            + "\n",
        )
        paths.append(sidecar)
    return paths, f"review-cycle://{mission.slug}/{stem}/{path.name}", number


def move_task(
    mission: Mission,
    wp_text: str,
    to_lane: str,
    *,
    agent: str | None = None,
    note: str | None = None,
    force: bool = False,
    feedback_file: Path | None = None,
    merged: bool = False,
    self_review_fallback: bool = False,
    intended_reviewer: str | None = None,
    reviewer_failure_reason: str | None = None,
    policy_extra: dict[str, Any] | None = None,
    review_doc: ReviewDoc | None = None,
) -> dict[str, Any]:
    wp_id = mission.resolve_wp(wp_text)
    check_text(note, "--note", mission.config.max_text_bytes)
    text = read_feedback(
        feedback_file, mission.project.root, mission.config.max_feedback_bytes, force
    )
    doc = review_doc or (ReviewDoc(text) if text is not None else None)
    req = MoveRequest(
        to_lane=to_lane, actor=(actor := mission.actor(agent)), force=force, note=note,
        has_feedback=doc is not None, merged=merged, self_review_fallback=self_review_fallback,
        intended_reviewer=intended_reviewer, reviewer_failure_reason=reviewer_failure_reason,
    )  # fmt: skip
    subtasks = wp.subtasks if (wp := mission.wp(wp_id)) else ()
    policy = mission.policy()
    target = lanes.canonical(to_lane)
    policy_extra, reviewed = reviewed_lane(mission, wp_id, target, force, policy_extra)
    recorded, unready = lane_guard(mission, wp_id, target, req)  # issue 41
    outcome: dict[str, Any] = {}
    written: list[Path] = []

    def build(board: Board) -> list[dict[str, Any]]:
        before = board.wps.get(wp_id)
        if before is not None and before.lane in HELD:
            outcome["holder"] = before.reviewer if before.lane == lanes.IN_REVIEW else before.agent
        state, hops = _on_the_way(mission, wp_id, board, subtasks, req, policy, policy_extra)
        check = check_move(wp_id, state, subtasks, req, policy, mission.slug)
        if unready is not None:
            raise unready
        outcome["check"] = replace(check, from_lane=hops[0]["from_lane"]) if hops else check
        extra = {**(policy_extra or {}), **recorded} if recorded else policy_extra
        return hops + _records(mission, wp_id, check, req, doc, written, extra)

    try:
        records = mission.record(build)
    except BaseException:
        for path in written:
            path.unlink(missing_ok=True)
        raise
    check: MoveCheck = outcome["check"]
    autocommit(mission, f"{wp_id} {check.from_lane} -> {check.to_lane}", written)
    feedback.collected(None if review_doc else feedback_file)  # in the review cycle now
    warnings = reviewed + _fallback_warning(mission, wp_id, agent, actor, outcome.get("holder"))
    return _moved(mission, wp_id, check, req, records, warnings)


def _moved(
    mission: Mission,
    wp_id: str,
    check: MoveCheck,
    req: MoveRequest,
    records: list[dict[str, Any]],
    warnings: list[str],
) -> dict[str, Any]:
    """What move_task answers (the JSON object of `move --json`)."""
    board = mission.board
    state = board.wps.get(wp_id)
    deps = wp.dependencies if (wp := mission.wp(wp_id)) else ()
    return {
        "mission": mission.slug,
        "wp_id": wp_id,
        "from_lane": check.from_lane,
        "to_lane": check.to_lane,
        "actor": req.actor,
        "force": req.force,
        "review_cycles": state.review_cycles if state else 0,
        "cycle": cycle_label(state, mission.config.max_cycles) if state else None,
        "review_ref": records[0].get("review_ref") if records else None,
        "arbiter": check.arbiter,
        "self_review": check.self_review,
        "event_ids": [r["event_id"] for r in records],
        "warnings": warnings + unready_dependencies(wp_id, check.to_lane, deps, board.lane),
    }


def _fallback_warning(
    mission: Mission, wp_id: str, agent: str | None, actor: str, holder: str | None
) -> list[str]:
    """A move recorded under the fallback identity (no --agent, no $KITTY_AGENT) while an
    agent held the WP: most likely an agent ran a command without naming itself."""
    if (agent or "").strip() or os.environ.get(AGENT_ENV, "").strip():
        return []
    if not holder or holder == actor:
        return []
    return [
        f"{wp_id} was held by {holder}, and this move is recorded as {actor!r} (the fallback "
        "identity: no --agent, no $KITTY_AGENT); if an agent made it, pass --agent NAME"
    ]


def _on_the_way(
    mission: Mission,
    wp_id: str,
    board: Board,
    subtasks: tuple[str, ...],
    req: MoveRequest,
    policy: Policy,
    policy_extra: dict[str, Any] | None,
) -> tuple[WPState | None, list[dict[str, Any]]]:
    """The lanes an unforced move passes through before its target (`lanes.hops`: planned
    -> claimed on the way to in_progress, as Spec Kitty's `--to doing`), each checked and
    recorded like a move of its own; returns the state the last step starts from."""
    state = board.wps.get(wp_id)
    target = lanes.canonical(req.to_lane)
    if req.force or state is None or target is None:
        return state, []
    records: list[dict[str, Any]] = []
    for step in lanes.hops(state.lane, target)[:-1]:
        hop = replace(req, to_lane=step, note=None)
        check = check_move(wp_id, state, subtasks, hop, policy, mission.slug)
        records += _records(mission, wp_id, check, hop, None, [], policy_extra)
        state = replace(state, lane=step)
    return state, records


def _records(
    mission: Mission,
    wp_id: str,
    check: MoveCheck,
    req: MoveRequest,
    doc: ReviewDoc | None,
    written: list[Path],
    policy_extra: dict[str, Any] | None,
) -> list[dict[str, Any]]:
    policy: dict[str, Any] = dict(policy_extra or {})
    if req.actor and check.to_lane in (lanes.CLAIMED, lanes.IN_PROGRESS, lanes.IN_REVIEW):
        policy.setdefault("agent", req.actor)
        policy.setdefault("shell_pid", os.getppid())
    if check.arbiter:
        policy["arbiter"] = check.arbiter
    if check.self_review:
        policy["self_review_fallback"] = check.self_review
    if check.release:
        policy["release"] = {"holder": req.actor}
    fields: dict[str, Any] = {
        "force": req.force or check.release,
        "reason": req.note
        or (f"claim released by its holder {req.actor}" if check.release else None),
        "policy_metadata": policy or None,
    }
    if check.verdict:
        result: dict[str, Any] = {
            "reviewer": req.actor,
            "verdict": check.verdict,
            "reference": None,
        }
        if doc is None and check.verdict == "changes_requested" and req.note:
            doc = ReviewDoc(req.note)  # the note alone is the feedback (Spec Kitty parity)
        if doc is not None:
            label = "rejected" if check.verdict == "changes_requested" else "approved"
            paths, ref, _ = write_review_cycle(mission, wp_id, req.actor, label, doc)
            written.extend(paths)
            result.update(reference=ref, feedback_path=str(paths[0]))
            fields["review_ref"] = ref
            if check.verdict == "changes_requested":
                fields["reason"] = req.note or f"changes requested: {ref}"
        fields["review_result"] = result
    records = [mission.transition(wp_id, check.from_lane, check.to_lane, req.actor, **fields)]
    delta: dict[str, Any] = {}
    if req.note:
        delta["note"] = req.note
    if check.verdict == "changes_requested":
        wp = mission.wp(wp_id)
        delta["release_runtime_claim"] = True
        if wp and wp.subtasks:
            delta["subtasks"] = dict.fromkeys(wp.subtasks, "planned")
    if delta:
        records.append(mission.annotation(wp_id, req.actor, delta))
    return records


def mark_status(
    mission: Mission,
    task_ids: list[str],
    status: str,
    *,
    agent: str | None = None,
    wp_text: str | None = None,
) -> dict[str, Any]:
    if status not in SUBTASK_STATUSES:
        raise UsageError(
            f"unknown subtask status {status!r}", "use one of: " + ", ".join(SUBTASK_STATUSES)
        )
    if not task_ids:
        raise UsageError(
            "name at least one subtask", "kitty agent tasks mark-status T001 --status done"
        )
    only = mission.resolve_wp(wp_text) if wp_text else None
    owner: dict[str, str] = {}
    for wp in mission.wps.values():
        if only is None or wp.wp_id == only:
            for task in wp.subtasks:
                owner.setdefault(task, wp.wp_id)
    grouped: dict[str, dict[str, str]] = {}
    for task in task_ids:
        task = task.strip().upper()
        if task not in owner:
            scope = f"{only}'s subtasks" if only else "any work package's subtasks"
            raise NotFound(
                f"subtask {task} is not in {scope}", "check the WP file's `subtasks:` list"
            )
        grouped.setdefault(owner[task], {})[task] = status
    actor = mission.actor(agent)

    def build(board: Board) -> list[dict[str, Any]]:
        return [
            mission.annotation(wp_id, actor, {"subtasks": marks})
            for wp_id, marks in sorted(grouped.items())
        ]

    records = mission.record(build)
    return {
        "mission": mission.slug,
        "status": status,
        "marked": grouped,
        "event_ids": [r["event_id"] for r in records],
    }
