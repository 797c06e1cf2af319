"""The commands printed to resolve a replay conflict, exactly as an agent copies them."""

from __future__ import annotations

from kitty.core.log.conflicts import resolve_commands
from kitty.core.log.state import Conflict


def conflict(kind: str, to_lane: str, lane: str, agent: str | None = "gemini") -> Conflict:
    return Conflict("E1", "WP03", 4, "t", agent, None, "planned", to_lane, lane, kind, "msg")


KEEP = 'kitty resolve WP03 --mission m --note "keep claimed: <why the first move wins>"'


def test_a_stale_move_offers_keep_and_force() -> None:
    assert resolve_commands(conflict("stale_from_lane", "in_progress", "claimed"), "m") == [
        KEEP,
        "kitty agent tasks move-task WP03 --mission m --to in_progress --force --agent gemini "
        '--note "resolve conflict: <why this move wins>"',
    ]
    unknown = resolve_commands(conflict("stale_from_lane", "in_progress", "claimed", None), "m")
    assert unknown[1].split("--agent ")[1].startswith("NAME ")


def test_only_keep_when_forcing_changes_nothing_or_the_move_was_never_legal() -> None:
    assert resolve_commands(conflict("stale_from_lane", "claimed", "claimed"), "m") == [KEEP]
    assert resolve_commands(conflict("illegal_edge", "done", "claimed"), "m") == [KEEP]
    assert resolve_commands(conflict("self_review", "approved", "claimed"), "m") == [KEEP]
