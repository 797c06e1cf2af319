"""`kitty resolve`: close a WP's open conflicts, keeping the lane replay chose."""

from __future__ import annotations

from typing import Any

from kitty.core import placeholders
from kitty.core.log.conflicts import conflict_view
from kitty.core.log.state import RESOLVE_KEY, Board
from kitty.errors import GuardRefused, UsageError
from kitty.mission.workspace import Mission
from kitty.workflow.commits.auto import autocommit


def resolve(mission: Mission, wp_text: str, note: str | None, agent: str | None) -> dict[str, Any]:
    if not (note or "").strip():
        raise UsageError(
            "resolving a conflict needs a note", 'pass --note "keep in_progress: alice was first"'
        )
    placeholders.check_note(note)
    wp_id = mission.resolve_wp(wp_text)
    actor = mission.actor(agent) or "user"
    resolved: list[dict[str, Any]] = []

    def build(board: Board) -> list[dict[str, Any]]:
        state = board.wps.get(wp_id)
        open_ = [c for c in (state.conflicts if state else []) if c.resolved_by is None]
        if not open_:
            raise GuardRefused(
                f"{wp_id} has no open conflicts", f"kitty status --mission {mission.slug} --json"
            )
        lane = state.lane if state else None
        resolved.extend(conflict_view(c, mission.slug, lane) for c in open_)
        delta = {RESOLVE_KEY: [c.event_id for c in open_], "note": note}
        return [mission.annotation(wp_id, actor, delta)]

    records = mission.record(build)
    autocommit(mission, f"{wp_id} conflicts resolved by {actor}")
    return {
        "mission": mission.slug,
        "wp_id": wp_id,
        "lane": mission.board.lane(wp_id),
        "resolved": resolved,
        "event_ids": [r["event_id"] for r in records],
    }
