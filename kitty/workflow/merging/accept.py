"""`kitty accept`: every reason the mission is not ready, all at once; else the acceptance
record (meta.json and a MissionAccepted event). `kitty merge` (kitty.workflow.merging.merge)
refuses a mission that is not accepted."""

from __future__ import annotations

from typing import Any

from kitty.adapters import eventlog
from kitty.adapters.files import atomic_write, dump_json
from kitty.core import lanes
from kitty.core.clock import format_at
from kitty.core.log.state import Board
from kitty.errors import GuardRefused
from kitty.mission.workspace import Mission
from kitty.mission.worktrees import lane_path
from kitty.workflow.commits.auto import autocommit


class NotReady(GuardRefused):
    code = "not_ready"

    def __init__(self, what: str, problems: list[str], hint: str) -> None:
        super().__init__(f"{what}: {len(problems)} problem(s)\n  " + "\n  ".join(problems), hint)
        self.problems = problems

    def to_json(self) -> dict[str, Any]:
        return dict(super().to_json(), problems=self.problems)


def active_ids(mission: Mission) -> list[str]:
    return [w for w in mission.all_ids() if mission.board.lane(w) != lanes.CANCELED]


def readiness(mission: Mission) -> list[str]:
    """Every reason the mission cannot be accepted, all at once."""
    from kitty.adapters.git import Git

    board = mission.board
    problems = []
    for wp_id in active_ids(mission):
        lane = board.lane(wp_id)
        if lane not in lanes.SATISFIED:
            problems.append(f"{wp_id} is {lane or 'not finalized'} (needs approved or done)")
        wp = mission.wps.get(wp_id)
        st = board.wps.get(wp_id)
        if wp and st and lane != lanes.APPROVED:  # approved: accept records them (_remarks)
            open_tasks = [t for t in wp.subtasks if st.subtasks.get(t) != "done"]
            if open_tasks:
                problems.append(f"{wp_id} subtasks not done: {', '.join(open_tasks)}")
    for row in mission.policy().issue_rows:
        verdict = row.verdict.strip().lower()
        if verdict in ("", "unknown"):
            problems.append(f"{row.source}: {row.issue} has verdict {verdict or 'empty'}")
        elif verdict == "in-mission":
            problems.append(
                f"{row.source}: {row.issue} is still in-mission "
                "(give it a final verdict before the merge)"
            )
    from kitty.core.ready import bookkeeping

    for lane in (mission.lanes_doc or {}).get("lanes", []):
        path = lane_path(mission, str(lane["lane_id"]))
        if path.is_dir():
            # what the review guards refuse (issue 41), kitty's own files aside
            dirty = [p for p in Git(path, gitpython=True).changed_paths() if not bookkeeping(p)]
            if dirty:
                problems.append(
                    f"{lane['lane_id']} worktree has uncommitted changes: " + ", ".join(dirty[:8])
                )
    return problems


def _remarks(mission: Mission, board: Board) -> dict[str, dict[str, Any]]:
    """Approved WPs whose subtasks are not all done (a rejection reset them; the approval
    that followed, an arbiter's or a forced one, did not re-mark them): accept records them
    done as actor `accept`, naming the approval, instead of in someone's name."""
    found: dict[str, dict[str, Any]] = {}
    for wp_id in active_ids(mission):
        st = board.wps.get(wp_id)
        wp = mission.wps.get(wp_id)
        if st is None or wp is None or st.lane != lanes.APPROVED:
            continue
        left = [t for t in wp.subtasks if st.subtasks.get(t) != "done"]
        if not left:
            continue
        if st.arbiter and st.arbiter.get("to_lane") == lanes.APPROVED:
            how = f"an arbiter decision of {st.arbiter.get('by') or 'unknown'}"
        elif st.reviews and st.reviews[-1].verdict == "approved":
            how = f"{st.reviews[-1].reviewer or 'unknown'}'s approval"
        else:
            how = f"{st.actor or 'unknown'}'s move"
        found[wp_id] = {
            "subtasks": left,
            "note": f"subtasks {', '.join(left)} marked done at acceptance: {wp_id} was "
            f"approved by {how} after a rejection reset them, without re-implementation",
        }
    return found


def accept(mission: Mission, agent: str | None) -> dict[str, Any]:
    from kitty.adapters.git import Git

    if mission.meta.get("accepted_at"):
        return {
            "mission": mission.slug,
            "accepted": True,
            "already": True,
            "accepted_at": mission.meta["accepted_at"],
            "problems": [],
        }
    problems = readiness(mission)
    if problems:
        raise NotReady(
            f"{mission.slug} is not ready to accept",
            problems,
            "fix every problem listed, then run `kitty accept` again",
        )
    who = mission.actor(agent)
    commit = Git(mission.project.root, gitpython=True).sha()
    mission.record(lambda board: _acceptance(mission, board, who, commit))
    mission.refresh()
    autocommit(mission, f"accept {mission.slug}")
    return {
        "mission": mission.slug,
        "accepted": True,
        "already": False,
        "accepted_at": mission.meta.get("accepted_at"),
        "accepted_by": who,
        "accept_commit": commit,
        "problems": [],
    }


def _acceptance(mission: Mission, board: Board, who: str, commit: str) -> list[dict[str, Any]]:
    """Write the acceptance record into meta.json; the records: subtasks marked done at
    acceptance (see _remarks), then MissionAccepted."""
    at = format_at(eventlog.now_us())
    meta = dict(mission.meta)
    remarks = _remarks(mission, board)
    record: dict[str, Any] = {
        "accept_commit": commit,
        "accepted_at": at,
        "accepted_by": who,
        "acceptance_mode": "local",
    }
    if remarks:
        record["subtasks_marked_done"] = {w: r["subtasks"] for w, r in remarks.items()}
    meta.update(record)
    meta["acceptance_history"] = [*meta.get("acceptance_history", []), record]
    atomic_write(mission.dir / "meta.json", dump_json(meta))
    marks = [
        mission.annotation(
            wp_id,
            "accept",
            {"subtasks": dict.fromkeys(r["subtasks"], "done"), "note": r["note"] + f" ({who})"},
        )
        for wp_id, r in sorted(remarks.items())
    ]
    return [
        *marks,
        {"event_type": "MissionAccepted", "mission_slug": mission.slug, "payload": record},
    ]
