"""Over MCP every command `next` can print is a tool call: each command of each decision
kind maps to a tool of `kitty mcp` whose schema takes exactly those arguments."""

from __future__ import annotations

import re
from typing import Any

from kitty.core.decide import steps as decide
from kitty.core.log.state import Board
from kitty.mcp.hints import call, for_mcp
from kitty.mcp.server import tools
from tests.core.decide.test_decide import NOW, ctx, rejected, st, wp

#: Commands no MCP tool runs (they start agents or read the shell's config): kept as
#: shell commands, and named so in `tool_calls`.
SHELL_ONLY = ("kitty review run ", "kitty agent config list")


def decisions() -> list[decide.Decision]:
    """One decision of every kind `next` answers, for implementer and others alike."""
    out = [decide.decide(ctx([], [])), decide.decide(ctx([wp("WP01")], []))]
    two = [wp("WP01"), wp("WP02", "WP01")]
    cases: list[tuple[list[Any], list[Any], dict[str, Any]]] = [
        (two, [st("WP01", "planned"), st("WP02", "planned")], {}),
        (two, [st("WP01", "for_review", implementer="codex"), st("WP02", "planned")], {}),
        (two, [st("WP01", "in_review", reviewer="claude"), st("WP02", "planned")], {}),
        (
            two,
            [
                st("WP01", "in_progress", implementer="claude", agent="claude"),
                st("WP02", "planned"),
            ],
            {},
        ),
        (two, [rejected("WP01", 1), st("WP02", "planned")], {}),
        (two, [rejected("WP01", 3), st("WP02", "planned")], {"agent": "codex"}),
        (two, [rejected("WP01", 3), st("WP02", "planned")], {}),
        (two, [st("WP01", "for_review", implementer="claude"), st("WP02", "planned")], {}),
        (two, [st("WP01", "blocked", last_reason="legal"), st("WP02", "planned")], {}),
        (two, [st("WP01", "approved"), st("WP02", "approved")], {}),
        (two, [st("WP01", "approved"), st("WP02", "approved")], {"accepted": True}),
    ]
    for wps, states, kw in cases:
        out.append(decide.decide(ctx(wps, states, **kw)))
    stalled = st("WP01", "in_review", reviewer="codex", implementer="gemini")
    stalled.lane_since_us = NOW - 200 * 60 * 1_000_000
    out.append(decide.decide(ctx([wp("WP01")], [stalled])))
    changed = st("WP01", "in_review", reviewer="claude", implementer="codex")
    changed.scalars = {
        "review_head": "abc+1@claude",
        "review_lane_changed": "abc+1@claude|HEAD moved",
    }
    for agent in ("claude", "gemini"):  # the reviewer that changed it, and another agent
        out.append(decide.decide(ctx([wp("WP01")], [changed], agent=agent)))
    lone = rejected("WP01", 3)
    c = decide.Context("m", "claude", {"WP01": wp("WP01")}, Board(wps={"WP01": lone}),
                       {"WP01": "a"}, agents=("claude",))  # fmt: skip
    out.append(decide.decide(c))
    for reason in ("blocker", "soft_warn"):
        halted = rejected("WP01", 1)
        halted.scalars = {"review_halt": "h.json", "review_halt_reason": reason, "review_round": 1}
        questions = {"WP01": [{"id": "q1", "question": "?", "options": ["a", "b c"]}]}
        c = decide.Context("m", "gemini", {"WP01": wp("WP01")}, Board(wps={"WP01": halted}),
                           {"WP01": "a"}, halt_questions=questions)  # fmt: skip
        out.append(decide.decide(c))
    return out


def _printed(d: decide.Decision) -> list[str]:
    commands = list(d.commands)
    commands += [c for choice in d.choices for c in choice["commands"]]
    for text in [d.reason, *d.blocked_by]:
        commands += re.findall(r"`(kitty [^`]*)`", text)
    return commands


def test_every_command_next_prints_is_a_tool_call_its_schema_takes() -> None:
    table = {t.name: t for t in tools()}
    kinds, seen = set(), 0
    for d in decisions():
        kinds.add(d.action)
        for command in _printed(d):
            made = call(command)
            if made is None:
                assert command.startswith(SHELL_ONLY), command
                continue
            seen += 1
            tool = table[made["tool"]]
            assert tool.arguments(made["arguments"]) == made["arguments"], command
    assert kinds == {"implement", "review", "fix", "arbiter", "accept", "merge", "wait",
                     "blocked"}  # fmt: skip
    assert seen > 20


def test_hints_name_the_tool_and_its_parameters() -> None:
    hint = (
        "an agent other than its implementer decides with one of: kitty agent tasks move-task "
        'WP01 --mission m --to approved --force --agent lead --note "Arbiter decision: <why>"'
    )
    assert for_mcp(hint) == (
        'an agent other than its implementer decides with one of: move(wp_id="WP01", '
        'mission="m", to="approved", force=true, agent="lead", note="Arbiter decision: <why>")'
    )
    assert for_mcp('pass --review-feedback-file FILE or --note "what must change"') == (
        'pass review_feedback_file=FILE or note="what must change"'
    )
    assert for_mcp("kitty doctor --mission m lists the problems") == (
        "kitty doctor --mission m lists the problems"  # no tool: left as it is
    )
