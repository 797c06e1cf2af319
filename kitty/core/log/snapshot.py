"""Derived views of a board: `status.json` (rebuildable) and the status JSON."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from kitty.core import lanes
from kitty.core.clock import format_at
from kitty.core.gateview import view as gate_view
from kitty.core.log.state import Board, WPState
from kitty.core.model import WorkPackage, wp_number
from kitty.core.transitions import cycle_label, cycles_since_arbiter, halted


def sort_ids(ids: Any) -> list[str]:
    """WP ids by number, then text (`WP2` before `WP10`)."""
    return sorted(ids, key=_id_key)


@lru_cache(maxsize=1 << 16)  # the same ids are sorted several times a command
def _id_key(wp_id: str) -> tuple[int, str]:
    number = wp_number(wp_id)
    return (number if number is not None else 1 << 30, wp_id)


def summary(board: Board, ids: list[str]) -> dict[str, int]:
    counts = dict.fromkeys(lanes.LANES, 0)
    for wp_id in ids:
        lane = board.lane(wp_id)
        if lane in counts:
            counts[lane] += 1
    return counts


def progress(board: Board, ids: list[str]) -> dict[str, float]:
    counted = [board.lane(i) for i in ids if board.lane(i) != lanes.CANCELED]
    if not counted:
        return {"done_percentage": 0.0, "weighted_percentage": 0.0}
    done = sum(1 for lane in counted if lane == lanes.DONE)
    weighted = sum(lanes.WEIGHTS.get(lane or "", 0.0) for lane in counted)
    return {
        "done_percentage": round(100.0 * done / len(counted), 1),
        "weighted_percentage": round(100.0 * weighted / len(counted), 1),
    }


#: Spec Kitty 3.2.7's `PROGRESS_SEMANTICS` of `agent tasks status --json`.
PROGRESS_SEMANTICS = "weighted_readiness"


def spec_kitty_progress(board: Board) -> float:
    """`progress_percentage` as Spec Kitty 3.2.7's `agent tasks status --json` computes
    it (`compute_weighted_progress` over its reduction of the transitions alone): every
    WP with a lane counts, canceled ones (weight 0) too; a WP known from annotations
    only (no lane yet) does not count, as that command never reads annotations."""
    counted = [st.lane for st in board.wps.values() if st.lane is not None]
    if not counted:
        return 0.0
    weighted = sum(lanes.WEIGHTS[lane] for lane in counted)  # replay sets known lanes only
    return round(weighted / len(counted) * 100.0, 1)


def spec_kitty_row(wp: WorkPackage | None, st: WPState | None) -> dict[str, Any]:
    """The keys Spec Kitty 3.2.7 gives each row of `agent tasks status --json` that
    kitty's own view lacks, as Spec Kitty fills them (empty text when unrecorded)."""
    meta = wp.meta if wp else {}
    slots = st.sk_slots if st else {}

    def text(value: Any) -> str:
        return "" if value is None else str(value)

    return {
        "phase": text(meta.get("phase")) or "Unknown Phase",
        "file": wp.path.rsplit("/", 1)[-1] if wp else "",
        "agent": slots.get("agent") or "",
        "agent_profile": text(meta.get("agent_profile")),
        "resolved_agent_profile": slots.get("agent_profile") or "",
        "resolved_role": slots.get("role") or "",
        "resolved_model": slots.get("model") or "",
        "shell_pid": slots.get("shell_pid") or "",
        "shell_pid_created_at": slots.get("shell_pid_created_at") or None,
        "execution_mode": (wp.execution_mode if wp else None) or "code_change",
        "workspace_kind": "unknown",
    }


def waits_for(wp: WorkPackage | None, board: Board) -> list[str]:
    if wp is None:
        return []
    return [d for d in wp.dependencies if board.lane(d) not in lanes.SATISFIED]


def wp_entry(st: WPState) -> dict[str, Any]:
    """One WP's entry in `status.json`: a function of its own folded state alone."""
    entry: dict[str, Any] = dict(st.scalars)
    entry.update(
        {
            "actor": st.actor,
            "agent": st.agent,
            "force_count": st.force_count,
            "lane": st.lane,
            "last_event_id": st.last_event_id,
            "last_transition_at": st.last_transition_at,
            "notes": list(st.notes),
            "review_cycles": st.review_cycles,
            "review_result": st.review_result,
            "review_status": st.review_status,
            "subtasks": dict(st.subtasks),
        }
    )
    return entry


def status_header(
    board: Board, slug: str, meta: Mapping[str, Any], ids: list[str]
) -> dict[str, Any]:
    """Every key of `status.json` but `work_packages` (`ids`: the WPs it lists)."""
    return {
        "event_count": board.event_count,
        "last_event_id": board.last_event_id,
        "materialized_at": format_at(board.newest_at_us) if board.newest_at_us else None,
        "mission_number": meta.get("mission_number") or "",
        "mission_slug": slug,
        "mission_type": meta.get("mission_type") or "software-dev",
        "summary": summary(board, ids),
    }


def materialize(board: Board, slug: str, meta: Mapping[str, Any]) -> dict[str, Any]:
    """The `status.json` snapshot: a pure function of the log (same log, same bytes)."""
    ids = sort_ids(board.wps)
    wps = {wp_id: wp_entry(board.wps[wp_id]) for wp_id in ids}
    return {**status_header(board, slug, meta, ids), "work_packages": wps}


def wp_view(
    wp_id: str, wp: WorkPackage | None, st: WPState | None, board: Board, max_cycles: int
) -> dict[str, Any]:
    st = st or WPState(wp_id)
    subtasks = {t: st.subtasks.get(t, "planned") for t in (wp.subtasks if wp else ())}
    for task, status in st.subtasks.items():
        subtasks.setdefault(task, status)
    return {
        "id": wp_id,
        "title": wp.title if wp else "(no WP file)",
        "lane": st.lane,
        "dependencies": list(wp.dependencies) if wp else [],
        "waits_for": waits_for(wp, board) if st.lane in (lanes.PLANNED, None) else [],
        "agent": st.agent,  # replaced by Spec Kitty's `agent` in status_view; see `holder`
        "holder": st.agent,
        "implementer": st.implementer,
        "reviewer": st.reviewer,
        "subtasks": subtasks,
        "review_cycles": st.review_cycles,  # all rejections (Spec Kitty's count)
        "cycle": cycle_label(st, max_cycles),  # since the arbiter's decision, of the cap
        "cycles_since_arbiter": cycles_since_arbiter(st),
        "review_status": st.review_status,
        "max_cycles": max_cycles,
        "force_count": st.force_count,
        "last_transition_at": st.last_transition_at,
        "arbiter": st.arbiter,
        "self_review": st.self_review,
        "review_round": st.scalars.get("review_round") or None,
        "review_halt": (
            {"file": st.scalars["review_halt"], "reason": st.scalars.get("review_halt_reason")}
            if halted(st)
            else None
        ),
        "reason": st.last_reason if st.lane in (lanes.BLOCKED, lanes.CANCELED) else None,
        "gate": gate_view(st.scalars),
        "usage": st.usage,  # what the sprint's agent runs on it cost (kitty's own)
    }
