"""`kitty status`: the board as data (the JSON contract); text is rendered from it."""

from __future__ import annotations

from typing import Any

from kitty import SCHEMA
from kitty.core import lanes
from kitty.core.log.conflicts import open_views
from kitty.core.log.snapshot import (
    PROGRESS_SEMANTICS,
    progress,
    spec_kitty_progress,
    spec_kitty_row,
    summary,
    wp_view,
)
from kitty.core.schedule import critical_path
from kitty.mission.workspace import Mission
from kitty.teams.leases import lease_of


def mission_info(mission: Mission) -> dict[str, Any]:
    meta = mission.meta
    return {
        "slug": mission.slug,
        "mission_id": mission.mission_id or None,
        "title": meta.get("friendly_name") or mission.slug,
        "target_branch": meta.get("target_branch"),
        "accepted_at": meta.get("accepted_at"),
        "finalized": bool(mission.board.wps),
    }


def global_fields(
    mission: Mission,
    work_packages: list[dict[str, Any]],
    now_us: int | None,
    changes: list[int] | None = None,
) -> list[dict[str, Any]]:
    """Set what each WP's view gets from the whole board (its open conflicts, its
    lease, a reclaim) and from the clock (`lease.expired`); return the open conflicts.
    `changes` receives when a lease not yet expired expires (the view changes then)."""
    board = mission.board
    conflicts = open_views(board, mission.slug)
    per_wp: dict[str, int] = {}
    for conflict in conflicts:
        per_wp[conflict["wp_id"]] = per_wp.get(conflict["wp_id"], 0) + 1
    for wp in work_packages:
        wp["conflicts"] = per_wp.get(wp["id"], 0)  # counted once: O(WPs + conflicts)
        st = board.wps.get(wp["id"])
        lease = lease_of(st)
        wp["lease"] = (
            None
            if lease is None
            else {k: lease[k] for k in ("holder", "machine", "expires_at")}
            | {"expired": now_us is not None and lease["expires_us"] <= now_us}
        )
        wp["reclaimed_from"] = st.reclaim if st is not None else None
        if changes is not None and lease is not None and not wp["lease"]["expired"]:
            changes.append(lease["expires_us"])
    for wp in work_packages:  # Spec Kitty 3.2.7's row keys (`agent` as it records it)
        wp.update(spec_kitty_row(mission.wps.get(wp["id"]), board.wps.get(wp["id"])))
    return conflicts


def status_view(
    mission: Mission, now_us: int | None = None, changes: list[int] | None = None
) -> dict[str, Any]:
    """The board as data. `changes` (when given) receives the times (µs) at which the
    same files would give a different view (the clock alone moves it); `now_us` when
    it depends on more than files and clock (whether an agent's process is alive)."""
    board = mission.board
    ids = mission.all_ids()
    max_cycles = mission.config.max_cycles
    work_packages = [
        wp_view(i, mission.wps.get(i), board.wps.get(i), board, max_cycles) for i in ids
    ]
    conflicts = global_fields(mission, work_packages, now_us, changes)
    path = critical_path(mission.wps)
    on_path = set(path) if len(path) > 1 else set()  # one lone WP is no chain
    for wp in work_packages:
        wp["critical"] = wp["id"] in on_path
    if now_us is not None:
        from kitty.teams.liveness import mark_stalled

        stall_us = int(mission.config.stall_minutes * 60 * 1_000_000)
        mark_stalled(work_packages, board, now_us, stall_us, changes)
    meta = mission.meta
    by_lane: dict[str, int] = {}
    for wp in work_packages:  # Spec Kitty counts its rows' lanes, first seen first
        row_lane = wp["lane"] or lanes.GENESIS
        by_lane[row_lane] = by_lane.get(row_lane, 0) + 1
    done = by_lane.get(lanes.DONE, 0)
    weighted = spec_kitty_progress(board)
    return {
        "schema": SCHEMA,
        # Spec Kitty 3.2.7's keys of `agent tasks status --json`, computed as it does
        "mission_slug": mission.slug,
        "mission_number": meta.get("mission_number"),
        "mission_type": meta.get("mission_type"),
        "total_wps": len(work_packages),
        "by_lane": by_lane,
        "progress_percentage": weighted,
        "progress_semantics": PROGRESS_SEMANTICS,
        "weighted_percentage": weighted,
        "done_count": done,
        "done_percentage": round(100.0 * done / len(work_packages), 1) if work_packages else 0.0,
        "stale_wps": sum(1 for wp in work_packages if wp.get("stalled")),
        "stale_verdicts": [],
        "stalled_wps": [],
        "auto_commit": mission.config.auto_commit,
        # kitty's own
        "mission": mission_info(mission),
        "work_packages": work_packages,
        "summary": summary(board, ids),
        "progress": progress(board, ids),
        "critical_path": path,
        "warnings": mission.warnings(),
        "conflicts": conflicts,
    }
