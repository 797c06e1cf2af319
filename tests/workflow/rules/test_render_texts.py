"""What `kitty next`, `kitty move` and `kitty agent tasks mark-status` print for a person:
the exact text, line by line, for every part a decision or a move can carry."""

from __future__ import annotations

from typing import Any

from kitty.core.decide.decision import Decision, choice
from kitty.workflow.rules.render import mark_text, move_text, next_text

PROGRESS = {
    "approved_or_done": 3,
    "total": 8,
    "done_percentage": 25.0,
    "weighted_percentage": 41.6,
}


def decision(**fields: Any) -> dict[str, Any]:
    """The JSON of a real Decision (what `kitty next --json` prints), as next_text gets it."""
    return Decision(**{"progress": PROGRESS, "mission": "shop", **fields}).to_json()


def test_next_names_the_action_its_wp_the_cycle_and_a_claim_on_the_first_line() -> None:
    """The first line a person reads: the action in capitals, the WP it is about, the
    review cycle it is in and whether `next --claim` just claimed it."""
    text = next_text(
        decision(
            action="implement",
            reason="WP02 is the oldest planned WP",
            wp_id="WP02",
            cycle="1/3",
            claimed=True,
        )
    )
    assert text.splitlines() == [
        "IMPLEMENT WP02 (cycle 1/3) [claimed]",
        "why: WP02 is the oldest planned WP",
        "progress: 3/8 approved or done, 25% done, 42% weighted",
    ]


def test_next_without_a_wp_shows_the_bare_action_and_nothing_it_does_not_have() -> None:
    """A decision about no WP (wait, done) is only its action, why, and progress: no WP id,
    no cycle, no claim, and no empty `blocked by:` or `run:` headings."""
    text = next_text(decision(action="wait", reason="every WP is held by someone"))
    assert text == (
        "WAIT\n"
        "why: every WP is held by someone\n"
        "progress: 3/8 approved or done, 25% done, 42% weighted"
    )
    unclaimed = next_text(decision(action="review", reason="r", wp_id="WP05"))
    assert unclaimed.splitlines()[0] == "REVIEW WP05"


def test_next_lists_conflicts_with_every_resolving_command_then_blockers_then_commands() -> None:
    """Every open conflict with its line and time and each command that resolves it, the
    WPs that block the next step, then the commands to run, in this order."""
    conflicts = [
        {
            "message": "WP03 was already claimed",
            "line": 12,
            "at": "2026-01-02T03:04:05Z",
            "commands": ["kitty resolve WP03 --keep", "kitty move WP03 --force"],
        },
        {"message": "stale move", "line": 40, "at": "2026-01-03T00:00:00Z", "commands": ["r2"]},
    ]
    text = next_text(
        decision(
            action="resolve",
            reason="your moves conflict",
            wp_id="WP03",
            conflicts=conflicts,
            blocked_by=["WP01 (in_progress)", "WP02 (planned)"],
            commands=["kitty next --claim", "kitty status"],
        )
    )
    assert text.splitlines() == [
        "RESOLVE WP03",
        "why: your moves conflict",
        "progress: 3/8 approved or done, 25% done, 42% weighted",
        "conflict: WP03 was already claimed (line 12, 2026-01-02T03:04:05Z)",
        "  resolve: kitty resolve WP03 --keep",
        "  resolve: kitty move WP03 --force",
        "conflict: stale move (line 40, 2026-01-03T00:00:00Z)",
        "  resolve: r2",
        "blocked by:",
        "  - WP01 (in_progress)",
        "  - WP02 (planned)",
        "run:",
        "  kitty next --claim",
        "  kitty status",
    ]


def test_next_numbers_the_choices_from_one_with_their_commands_and_what_to_fill_in() -> None:
    """Alternatives are numbered from 1, each with its commands and every placeholder to
    fill in with what it means."""
    choices = [
        choice("approve", "kitty arbiter WP04 --approve --note <why>", {"<why>": "the reason"}),
        {
            "label": "send back",
            "commands": ["kitty move WP04 planned", "kitty next"],
            "fill": {"<a>": "one", "<b>": "two"},
        },
    ]
    text = next_text(
        decision(action="arbitrate", reason="cap reached", wp_id="WP04", choices=choices)
    )
    assert text.splitlines()[3:] == [
        "choose one (fill in each <...> first):",
        "  1. approve",
        "       kitty arbiter WP04 --approve --note <why>",
        "       <why>: the reason",
        "  2. send back",
        "       kitty move WP04 planned",
        "       kitty next",
        "       <a>: one",
        "       <b>: two",
    ]


def moved(**fields: Any) -> dict[str, Any]:
    """The result of a move as move_task answers it (the object of `kitty move --json`)."""
    return {
        "wp_id": "WP01",
        "from_lane": "planned",
        "to_lane": "claimed",
        "actor": None,
        "force": False,
        "review_ref": None,
        "review_cycles": 0,
        "arbiter": None,
        **fields,
    }


def test_a_plain_move_is_one_line_from_lane_to_lane() -> None:
    """Without an actor, force, feedback or arbiter, a move is just `WP: from → to`."""
    assert move_text(moved()) == "WP01: planned → claimed"


def test_a_move_names_its_actor_force_feedback_and_arbiter_decision() -> None:
    """Who moved it, that it was forced, where the reviewer's feedback was stored with the
    cycle it starts, and the arbiter's recorded decision: each on the lines a person reads."""
    text = move_text(
        moved(
            wp_id="WP07",
            from_lane="in_review",
            to_lane="planned",
            actor="codex",
            force=True,
            review_ref="feedback/WP07-1.md",
            review_cycles=2,
            arbiter={"decision": "send back with fixes"},
        )
    )
    assert text == (
        "WP07: in_review → planned (by codex) [forced]\n"
        "feedback stored: feedback/WP07-1.md (cycle 2)\n"
        "arbiter decision recorded: send back with fixes"
    )


def test_mark_status_lists_each_wps_subtasks_with_the_new_status() -> None:
    """`mark-status` names every WP with the subtasks it marked and their new status."""
    result = {
        "status": "done",
        "marked": {"WP01": {"T001": "done", "T002": "done"}, "WP03": {"T009": "done"}},
    }
    assert mark_text(result) == "WP01: T001, T002 → done; WP03: T009 → done"
