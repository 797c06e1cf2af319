"""Conflicts found by strict replay, as data with the exact commands that resolve them.

A conflict is a transition kept in the log but not applied (see `kitty.core.log.state`):
two clones moved the same WP offline, a hand-written edge that the table does not
allow, or a self-approval. It stays open until someone states the intended lane:
`kitty resolve` keeps the board as replayed, a forced move sets another lane.
"""

from __future__ import annotations

import shlex
from typing import Any

from kitty.core.log.state import Board, Conflict
from kitty.core.placeholders import WHY_FIRST_MOVE, WHY_THIS_MOVE


def resolve_commands(conflict: Conflict, mission: str, lane: str | None = None) -> list[str]:
    """Keep the board as replayed (first command) or force the dropped move (second, if
    any). `lane` is the WP's lane now (the board as it is); without it, the lane the WP
    was in when the conflict came up."""
    wp = conflict.wp_id
    now = lane or conflict.lane
    keep = f'kitty resolve {wp} --mission {mission} --note "keep {now}: {WHY_FIRST_MOVE}"'
    commands = [keep]
    if conflict.kind in ("stale_from_lane", "not_holder") and conflict.to_lane != now:
        who = conflict.agent or "NAME"
        commands.append(
            f"kitty agent tasks move-task {wp} --mission {mission} --to {conflict.to_lane} "
            f'--force --agent {shlex.quote(who)} --note "resolve conflict: {WHY_THIS_MOVE}"'
        )
    return commands


def conflict_view(conflict: Conflict, mission: str, lane: str | None = None) -> dict[str, Any]:
    return dict(conflict.to_json(), commands=resolve_commands(conflict, mission, lane))


def open_views(board: Board, mission: str, agent: str | None = None) -> list[dict[str, Any]]:
    """Open conflicts (of one agent's moves, when `agent` is given) in replay order."""
    return [
        conflict_view(c, mission, board.lane(c.wp_id))
        for c in board.open_conflicts()
        if agent is None or c.agent == agent
    ]
