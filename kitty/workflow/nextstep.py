"""`kitty next` (with the atomic `--claim`) and `kitty lanes`."""

from __future__ import annotations

from typing import Any

from kitty.adapters import eventlog
from kitty.core import lanes
from kitty.core.decide import steps as decide
from kitty.core.log.state import Board, as_dict
from kitty.core.move import MoveRequest, Policy
from kitty.core.schedule import lane_map
from kitty.core.transitions import check_move
from kitty.errors import UsageError
from kitty.mission.workspace import Mission
from kitty.workflow.commits.auto import autocommit


def context(
    mission: Mission, agent: str, board: Board, now_us: int, changes: list[int] | None = None
) -> decide.Context:
    ids = mission.all_ids()
    return decide.Context(
        mission=mission.slug,
        agent=agent,
        wps=mission.wps,
        board=board,
        wp_lane=execution_lanes(mission, ids),
        max_cycles=mission.config.max_cycles,
        accepted=bool(mission.meta.get("accepted_at")),
        now_us=now_us,
        panel=bool(as_dict(mission.config.raw.get("review")).get("panel")),
        agents=mission.config.agents,
        halt_questions=halt_questions(mission, board),
        stall_us=int(mission.config.stall_minutes * 60 * 1_000_000),
        changes=changes,
    )


def execution_lanes(mission: Mission, ids: list[str]) -> dict[str, str]:
    """WP -> execution lane (`lane_map`); without lanes.json the overlap grouping is
    kept in the snapshot cache for the same ids and owned files."""
    doc, wps = mission.lanes_doc, mission.wps
    if doc:
        return lane_map(doc, wps, ids)
    from kitty.adapters import derived

    key = (tuple(ids), tuple(wps[w].owned_files if w in wps else None for w in ids))
    return derived.cached(mission.cache_dir, "lanes.pickle", key, lambda: lane_map(doc, wps, ids))


def halt_questions(mission: Mission, board: Board) -> dict[str, list[dict[str, Any]]]:
    """The open questions of each blocker HALT (its file, minus the answers recorded so
    far), with each option's label: what `next` offers as concrete answer commands."""
    found: dict[str, list[dict[str, Any]]] = {}
    for wp_id, st in board.wps.items():
        ref = st.scalars.get("review_halt")
        if not ref or st.scalars.get("review_halt_reason") != "blocker":
            continue
        import json

        path = mission.project.root / str(ref)
        try:
            halt = json.loads(path.read_text(encoding="utf-8"))
            answers_path = path.with_name(path.stem + ".answers.json")
            answered = (
                json.loads(answers_path.read_text(encoding="utf-8"))
                if answers_path.is_file()
                else {}
            )
        except (OSError, ValueError):
            continue
        questions = halt.get("questions") if isinstance(halt, dict) else None
        for q in questions if isinstance(questions, list) else []:
            if not isinstance(q, dict) or not isinstance(q.get("id"), str):
                continue
            if isinstance(answered, dict) and q["id"] in answered:
                continue
            labels = [
                o["label"]
                for o in q.get("options") or []
                if isinstance(o, dict) and isinstance(o.get("label"), str)
            ]
            found.setdefault(wp_id, []).append(
                {"id": q["id"], "question": str(q.get("question") or ""), "options": labels}
            )
    return found


def claim_target(decision: decide.Decision, board: Board) -> str | None:
    """The lane a claim moves the decided WP to, or None when nothing needs claiming."""
    if decision.action not in decide.CLAIMABLE or decision.wp_id is None:
        return None
    lane = board.lane(decision.wp_id)
    if decision.action == decide.REVIEW:
        return lanes.IN_REVIEW if lane == lanes.FOR_REVIEW else None
    return lanes.CLAIMED if lane == lanes.PLANNED else None


def next_step(
    mission: Mission,
    agent: str | None,
    claim: bool = False,
    remote: str | None = None,
    clock: tuple[int, list[int]] | None = None,
) -> decide.Decision:
    """Decide (and with `claim`, take) the next step; `remote` claims through a git remote.
    `clock`: decide as of this time (µs), and receive when the decision may change by the
    clock alone (a read only)."""
    who = mission.actor(agent)
    if not claim:
        now, changes = clock or (eventlog.now_us(), None)
        return decide.decide(context(mission, who, mission.board, now, changes))
    from kitty.teams.leases import foreign_holds, reclaim_expired, remote_lease

    result: dict[str, decide.Decision] = {}
    lease = remote_lease(mission) if remote else {}
    # Everything but the log is read before the lock: the locked section is the
    # tail of the log, one decision and the append.
    policy = mission.policy()
    mission.preload()

    def build(board: Board) -> list[dict[str, Any]]:
        if remote:
            foreign_holds(board, who, lease["machine"])
        decision = decide.decide(context(mission, who, board, eventlog.now_us()))
        result["decision"] = decision
        if remote and decision.action in (decide.WAIT, decide.BLOCKED):
            reclaim = reclaim_expired(mission, who, board, eventlog.now_us(), lease)
            if reclaim is not None:
                result["decision"], records = reclaim
                result["decision"].progress = decision.progress
                return records
        return _claim(mission, board, decision, who, policy, lease)

    if remote:
        from kitty.teams.remote import transact

        transact(mission, remote, build, f"{who} claims")
        mission.refresh()
    else:
        mission.record(build)
    decision = result["decision"]
    if decision.claimed:
        autocommit(mission, f"{decision.wp_id} claimed by {who}")
    return decision


def _claim(
    mission: Mission,
    board: Board,
    decision: decide.Decision,
    who: str,
    policy: Policy,
    lease: dict[str, Any],
) -> list[dict[str, Any]]:
    """The claim of the decided WP (none when nothing needs claiming), checked like a move;
    marks the decision claimed."""
    target = claim_target(decision, board)
    if target is None or decision.wp_id is None:
        return []
    wp = mission.wps[decision.wp_id]
    check = check_move(
        wp.wp_id,
        board.wps.get(wp.wp_id),
        wp.subtasks,
        MoveRequest(target, who),
        policy,
        mission.slug,
    )
    decision.claimed = True
    role = "reviewer" if target == lanes.IN_REVIEW else "implementer"
    return [
        mission.transition(
            wp.wp_id,
            check.from_lane,
            target,
            {"tool": who, "role": role, "profile": None, "model": None},
            reason=f"claimed via kitty next ({decision.action})",
            policy_metadata={"agent": who, **lease},
        )
    ]


def lanes_view(mission: Mission) -> dict[str, Any]:
    """lanes.json plus each lane's state, every WP as a graph node, and the critical path."""
    from kitty.core.schedule import critical_path

    doc = mission.lanes_doc
    if doc is None:
        raise UsageError(
            f"{mission.display}/lanes.json does not exist yet",
            f"run `kitty finalize --mission {mission.slug}`",
        )
    board = mission.board
    rows = []
    for lane in doc.get("lanes", []):
        states = {w: board.lane(w) for w in lane.get("wp_ids", [])}
        rows.append(dict(lane, wp_lanes=states))
    path = critical_path(mission.wps)
    on_path = set(path)
    wp_lane = execution_lanes(mission, mission.all_ids())
    nodes = [
        {
            "id": wp_id,
            "title": mission.wps[wp_id].title if wp_id in mission.wps else "(no WP file)",
            "lane": board.lane(wp_id),
            "dependencies": list(mission.wps[wp_id].dependencies) if wp_id in mission.wps else [],
            "execution_lane": wp_lane.get(wp_id),
            "critical": wp_id in on_path,
        }
        for wp_id in mission.all_ids()
    ]
    return {
        "mission": mission.slug,
        "lanes": rows,
        "nodes": nodes,
        "planning_artifact_wps": doc.get("planning_artifact_wps", []),
        "critical_path": path,
        "computed_at": doc.get("computed_at"),
    }
