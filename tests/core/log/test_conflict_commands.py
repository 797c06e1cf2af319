"""The commands printed to resolve a replay conflict, exactly as an agent copies them."""

from __future__ import annotations

from kitty.core.log.conflicts import conflict_view, resolve_commands
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


def test_a_conflict_reads_back_with_every_field_under_its_name() -> None:
    """What `kitty status --json`, `kitty conflicts` and `next` show of one conflict: who
    made the dropped move, where, from and to which lane, who held the WP then, plus
    the commands that resolve it."""
    race = Conflict(
        "E7",
        "WP03",
        12,
        "2026-01-01T00:00:07+00:00",
        "gemini",
        "laptop",
        "planned",
        "in_progress",
        "claimed",
        "stale_from_lane",
        "WP03 planned -> in_progress by gemini was not applied: WP03 was already claimed",
        holder="claude",
        resolved_by="E9",
    )
    assert conflict_view(race, "m", "claimed") == {
        "event_id": "E7",
        "wp_id": "WP03",
        "line": 12,
        "at": "2026-01-01T00:00:07+00:00",
        "agent": "gemini",
        "machine": "laptop",
        "from_lane": "planned",
        "to_lane": "in_progress",
        "lane": "claimed",
        "kind": "stale_from_lane",
        "message": "WP03 planned -> in_progress by gemini was not applied: "
        "WP03 was already claimed",
        "holder": "claude",
        "resolved_by": "E9",
        "commands": [
            KEEP,
            "kitty agent tasks move-task WP03 --mission m --to in_progress --force "
            '--agent gemini --note "resolve conflict: <why this move wins>"',
        ],
    }
