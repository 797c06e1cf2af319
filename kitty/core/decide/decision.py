"""`kitty next`'s answer: the action it names (implement, review, ..., blocked), the
Decision with its commands and choices, one choice, and the answer that is work.

Pure, like the rest of kitty.core.decide.
"""

from __future__ import annotations

from typing import Any

from kitty import SCHEMA
from kitty.core import placeholders
from kitty.core.decide.context import Context, cycle_label, quote, state_of
from kitty.core.record import Record

IMPLEMENT, FIX, REVIEW, ARBITER = "implement", "fix", "review", "arbiter"
ACCEPT, MERGE, DONE, WAIT, BLOCKED = "accept", "merge", "done", "wait", "blocked"
CLAIMABLE = (IMPLEMENT, FIX, REVIEW)
#: The placeholder for a person's name in a choice only a person can make.
ARBITER_PERSON = placeholders.ARBITER


class Decision(Record):
    action: str
    reason: str
    wp_id: str | None
    cycle: str | None
    commands: list[str]
    blocked_by: list[str]
    progress: dict[str, Any]
    mission: str
    lane: str | None
    claimed: bool
    #: Open conflicts of this agent's own moves (strict replay), with resolving commands.
    conflicts: list[dict[str, Any]]
    #: Alternatives, one of which is chosen: {label, commands, fill: {placeholder: meaning}}.
    #: `commands` is always a sequence to run in order, with nothing to fill in.
    choices: list[dict[str, Any]]
    #: The test gate's latest result on `wp_id` (kitty.core.gateview.view), or None.
    gate: dict[str, Any] | None

    def __init__(
        self,
        action: str,
        reason: str,
        wp_id: str | None = None,
        cycle: str | None = None,
        commands: list[str] | None = None,
        blocked_by: list[str] | None = None,
        progress: dict[str, Any] | None = None,
        mission: str = "",
        lane: str | None = None,
        claimed: bool = False,
        conflicts: list[dict[str, Any]] | None = None,
        choices: list[dict[str, Any]] | None = None,
        gate: dict[str, Any] | None = None,
    ) -> None:
        self.action = action
        self.reason = reason
        self.wp_id = wp_id
        self.cycle = cycle
        self.commands = [] if commands is None else commands
        self.blocked_by = [] if blocked_by is None else blocked_by
        self.progress = {} if progress is None else progress
        self.mission = mission
        self.lane = lane
        self.claimed = claimed
        self.conflicts = [] if conflicts is None else conflicts
        self.choices = [] if choices is None else choices
        self.gate = gate

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "action": self.action,
            "wp_id": self.wp_id,
            "reason": self.reason,
            "cycle": self.cycle,
            "commands": self.commands,
            "blocked_by": self.blocked_by,
            "progress": self.progress,
            "mission": self.mission,
            "lane": self.lane,
            "claimed": self.claimed,
            "conflicts": self.conflicts,
            "choices": self.choices,
            "gate": self.gate,
        }


def choice(label: str, command: str, fill: dict[str, str] | None = None) -> dict[str, Any]:
    """One of a Decision's `choices`: a single command, with what to fill in (if anything)."""
    return {"label": label, "commands": [command], "fill": fill or {}}


def work_command(ctx: Context, verb: str, wp_id: str) -> str:
    """The command that starts (or reviews) `wp_id` for the asking agent."""
    if verb == REVIEW and ctx.panel:
        return f"kitty review run {wp_id} --mission {ctx.mission} --agent {quote(ctx.agent)}"
    return f"kitty agent action {verb} {wp_id} --mission {ctx.mission} --agent {quote(ctx.agent)}"


def work(ctx: Context, action: str, wp_id: str, reason: str) -> Decision:
    """The answer that is work on `wp_id`: its one command, its cycle, its lane."""
    st = state_of(ctx, wp_id)
    verb = REVIEW if action == REVIEW else IMPLEMENT
    return Decision(
        action,
        reason,
        wp_id,
        cycle_label(st, ctx.max_cycles),
        [work_command(ctx, verb, wp_id)],
        lane=ctx.wp_lane.get(wp_id),
    )
