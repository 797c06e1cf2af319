"""The sprint's dispatch decisions, without processes or files."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

import click

from kitty.cli import cli
from kitty.core.decide.steps import Context, Queues
from kitty.core.log.state import Board, WPState
from kitty.sprint.rules import plan as sprintplan
from kitty.sprint.rules.plan import (
    ARBITRATE,
    DONE,
    GIVE_UP,
    HALT,
    HALT_REVIEW,
    IMPLEMENT,
    PANEL,
    RETRY,
    REVIEW,
    START,
    Step,
)


def queues(
    reviews: Sequence[str] = (),
    fixes: Sequence[str] = (),
    capped: Sequence[str] = (),
    fresh: Sequence[str] = (),
) -> Queues:
    return Queues(list(reviews), list(fixes), list(capped), list(fresh), {})


def test_a_retry_comes_first_and_retries_of_running_or_halted_wps_are_dropped() -> None:
    retry = [("WP01", IMPLEMENT, "a"), ("WP02", REVIEW, "b"), ("WP03", IMPLEMENT, "c")]
    step, rest = sprintplan.take_retry(retry, running={"WP01"}, halted=set())
    assert step == Step(START, "WP02", REVIEW, "b") and rest == [("WP03", IMPLEMENT, "c")]
    step, rest = sprintplan.take_retry(retry, running={"WP01"}, halted={"WP02"})
    assert step == Step(START, "WP03", IMPLEMENT, "c") and rest == []
    assert sprintplan.take_retry(retry, running={"WP01", "WP02", "WP03"}, halted=()) == (None, [])
    assert sprintplan.take_retry([], running=(), halted=()) == (None, [])


def test_reviews_then_the_arbiter_then_fixes_then_fresh_work() -> None:
    args = ({"WP01": "claude", "WP03": "gemini"}, {}, ["claude", "gemini"], ["codex"], 0)
    every = queues(reviews=["WP01"], capped=["WP02"], fixes=["WP03"], fresh=["WP04"])
    assert sprintplan.choose(every, *args) == (Step(START, "WP01", REVIEW, "codex"), 0)
    assert sprintplan.choose(queues(capped=["WP02"], fixes=["WP03"]), *args) == (
        Step(ARBITRATE, "WP02"),
        0,
    )
    step, turn = sprintplan.choose(queues(fixes=["WP03"], fresh=["WP04"]), *args)
    assert step == Step(START, "WP03", IMPLEMENT, "gemini") and turn == 0  # back to its author
    step, turn = sprintplan.choose(queues(fresh=["WP04"]), *args)
    assert step == Step(START, "WP04", IMPLEMENT, "claude") and turn == 1  # round-robin
    step, turn = sprintplan.choose(queues(fresh=["WP05"]), *args[:4], turn)
    assert step == Step(START, "WP05", IMPLEMENT, "gemini") and turn == 2
    assert sprintplan.choose(queues(), *args) == (None, 0)


def test_a_review_panel_takes_every_review() -> None:
    step, _ = sprintplan.choose(
        queues(reviews=["WP02"], fresh=["WP01"]), {}, {}, ["claude"], ["codex"], 0, panel=True
    )
    assert step == Step(START, "WP02", REVIEW, PANEL)


def test_never_the_implementer_reviews_and_a_fresh_reviewer_first() -> None:
    assert sprintplan.pick_reviewer("claude", ["claude", "codex"], used=[]) == "codex"
    assert sprintplan.pick_reviewer("x", ["codex", "gemini"], used=["codex"]) == "gemini"
    assert sprintplan.pick_reviewer("x", ["codex"], used=["codex"]) == "codex"
    assert sprintplan.pick_reviewer("codex", ["codex"], used=[]) is None
    step, _ = sprintplan.choose(
        queues(reviews=["WP01"]), {"WP01": "codex"}, {}, ["codex"], ["codex"], 0
    )
    # Issue 22.10: the halt names the configured reviewer, and its options run.
    assert step == Step(HALT, "WP01", REVIEW, "codex", "every configured reviewer implemented it")
    message = sprintplan.halt_message(
        "m", "WP01", "codex", "every configured reviewer implemented it", "codex", ["codex"],
        ["codex", "claude"],
    )  # fmt: skip
    assert message.startswith("ERROR: Configured reviewer 'codex' failed")
    assert "--reviewer codex" not in message  # retrying the implementer fails again
    assert "kitty sprint --mission m --implementer codex --reviewer claude" in message
    assert sprintplan.no_second_reviewer(["codex"], ["codex"]) is not None
    assert sprintplan.no_second_reviewer(["codex", "claude"], ["codex", "claude"]) is None


def test_a_fix_by_an_implementer_no_longer_in_the_sprint_goes_round_robin() -> None:
    assert sprintplan.pick_implementer("old", ["claude", "gemini"], 3) == ("gemini", 4)
    assert sprintplan.pick_implementer(None, ["claude"], 0) == ("claude", 1)


def test_what_an_exit_means() -> None:
    assert sprintplan.after_exit(IMPLEMENT, "for_review", 0, 2) == DONE
    assert sprintplan.after_exit(IMPLEMENT, "blocked", 0, 2) == DONE  # moved on by itself
    assert sprintplan.after_exit(IMPLEMENT, "in_progress", 1, 2) == RETRY
    assert sprintplan.after_exit(IMPLEMENT, "claimed", 3, 2) == GIVE_UP
    assert sprintplan.after_exit(REVIEW, "approved", 0, 2) == DONE
    assert sprintplan.after_exit(REVIEW, "planned", 0, 2) == DONE  # rejected: a fix is due
    assert sprintplan.after_exit(REVIEW, "in_review", 1, 2) == HALT_REVIEW
    assert sprintplan.after_exit(REVIEW, "for_review", 1, 2) == HALT_REVIEW


def test_an_implementer_gets_exactly_retries_re_runs() -> None:
    """`failures` counts this failed run too: with --retries R the WP runs R + 1 times, so
    failure R is still retried (the boundary) and failure R + 1 gives up."""
    for retries in (0, 1, 2, 5):
        verdicts = [
            sprintplan.after_exit(IMPLEMENT, "in_progress", failures, retries)
            for failures in range(1, retries + 3)
        ]
        assert verdicts == [RETRY] * retries + [GIVE_UP, GIVE_UP], retries


def test_the_arbiter_follows_its_policy_but_a_panel_question_goes_to_a_human() -> None:
    approve = sprintplan.arbiter("m", "WP01", "approve", 3)
    assert approve.to_lane == "approved" and "after 3 review cycles" in approve.text
    escalate = sprintplan.arbiter("m", "WP01", "escalate", 3)
    assert escalate.to_lane == "blocked" and escalate.text.startswith("Escalated to human")
    question = sprintplan.arbiter("m", "WP01", "approve", 3, "blocker", 2, "which API?")
    assert question.to_lane is None
    assert question.text.endswith(  # runs as printed (issue 22.7): it lists the questions
        "kitty review answer WP01 --mission m    # shows the open questions; "
        "answer with --answer ID=LABEL"
    )
    soft = sprintplan.arbiter("m", "WP01", "escalate", 3, "soft_warn", 2, "style")
    assert soft.to_lane is None and soft.text.endswith("--continue")
    # any other halt reason (the cycle cap itself) follows the policy
    assert sprintplan.arbiter("m", "WP01", "approve", 3, "max_rounds").to_lane == "approved"


def runs_as_printed(line: str) -> list[str]:
    """`line` split as a shell splits it, after checking that kitty knows its command
    and every option (click raises otherwise)."""
    words = shlex.split(line)
    assert words[0] == "kitty", line
    args = words[1:]
    command: click.Command = cli
    name = "kitty"
    while isinstance(command, click.Group):
        name, found, args = command.resolve_command(click.Context(command), args)
        assert found is not None, line
        command = found
    command.make_context(str(name), list(args))
    return words


def test_the_halt_message_offers_three_commands_that_run_as_printed() -> None:
    message = sprintplan.halt_message(
        "m", "WP01", "codex", "exit 3", "claude", ["claude"], ["codex", "claude", "gemini"]
    )
    assert message.splitlines() == [
        "ERROR: Configured reviewer 'codex' failed (exit 3).",
        "WP01 is back in for_review.",
        "Options:",
        "  a) Retry with 'codex' after fixing the error:",
        "     kitty sprint --mission m --implementer claude --reviewer codex",
        "  b) Switch reviewer:",  # neither the failed reviewer nor the author
        "     kitty agent action review WP01 --mission m --agent gemini",
        "  c) Proceed with self-review -- WARNING: no independent review:",
        "     kitty agent tasks move-task WP01 --mission m --to approved --force --agent claude"
        " --self-review-fallback --intended-reviewer codex --reviewer-failure-reason 'exit 3'"
        " --note 'Self-review fallback after reviewer failure: codex could not review'",
    ]
    commands = [line.strip() for line in message.splitlines() if line.startswith("     kitty")]
    assert len(commands) == 3
    fallback = runs_as_printed(commands[2])
    assert fallback[fallback.index("--reviewer-failure-reason") + 1] == "exit 3"
    for command in commands[:2]:
        runs_as_printed(command)
    nobody = sprintplan.halt_message("m", "WP01", "codex", "t", None, ["a"], ["codex"])
    assert "--agent gemini" in nobody and "--agent 'the implementer'" in nobody


def test_a_reviewer_listed_twice_that_implemented_the_wp_halts_and_is_not_offered_again() -> None:
    """`--reviewer codex,codex` on a WP codex implemented: the HALT names the reviewers as
    configured, and the retry it offers names another reviewer, never codex again."""
    step, turn = sprintplan.choose(
        queues(reviews=["WP01"]), {"WP01": "codex"}, {}, ["claude", "gemini"], ["codex"] * 2, 4
    )
    why = "every configured reviewer implemented it"
    assert (step, turn) == (Step(HALT, "WP01", REVIEW, "codex,codex", why), 4)
    message = sprintplan.halt_message(
        "m", "WP01", step.agent, why, "codex", ["claude", "gemini"], ["codex", "codex", "claude"]
    )
    lines = message.splitlines()
    assert lines[0] == f"ERROR: Configured reviewer 'codex,codex' failed ({why})."
    assert lines[3:7] == [
        "  a) Retry with a second reviewer identity (not codex):",
        "     kitty sprint --mission m --implementer claude,gemini --reviewer claude",
        "  b) Switch reviewer:",
        "     kitty agent action review WP01 --mission m --agent claude",
    ]
    assert runs_as_printed(lines[4].strip())[-4:] == [
        "--implementer", "claude,gemini", "--reviewer", "claude"
    ]  # fmt: skip


def test_a_wp_back_for_another_review_goes_to_a_reviewer_that_has_not_seen_it() -> None:
    args = ({"WP01": "claude"}, {"WP01": ["codex"]}, ["claude"], ["codex", "gemini"], 0)
    assert sprintplan.choose(queues(reviews=["WP01"]), *args) == (
        Step(START, "WP01", REVIEW, "gemini"),
        0,
    )


def test_a_lone_self_reviewer_is_told_how_to_configure_a_second_identity() -> None:
    """The suggestions never name the agent that cannot review: another agent, or the
    same built-in CLI under a second name (no config needed), or, for a configured
    command, a copy of it under a second name."""
    head = (
        "no reviewer can review a WP codex implements: a reviewer never reviews its own WP, "
        "and --reviewer names only codex. Configure a second reviewer identity: "
    )
    assert sprintplan.no_second_reviewer(["claude", "codex"], ["codex"], ["codex"]) == (
        head + "another agent (--reviewer claude), or the same CLI under a second name "
        "(--reviewer codex:reviewer)"
    )
    assert sprintplan.no_second_reviewer(["codex"], ["codex"]) == (
        head + "another agent (--reviewer claude), or the same command under a second name "
        "(copy agents.commands.codex in .kittify/config.yaml to "
        "agents.commands.codex-reviewer, run `kitty trust`, then --reviewer codex-reviewer)"
    )
    for who in ("claude", "claude:opus", "claude:opus:v2"):
        message = sprintplan.no_second_reviewer([who], [who], [who]) or ""
        assert "another agent (--reviewer codex)" in message
        assert message.endswith(f"(--reviewer {who}:reviewer)")


def test_all_approved_ignores_canceled_work_but_needs_some() -> None:
    assert sprintplan.all_approved({"WP01": "approved", "WP02": "done", "WP03": "canceled"})
    assert not sprintplan.all_approved({"WP01": "approved", "WP02": "for_review"})
    assert not sprintplan.all_approved({"WP01": "canceled"})
    assert not sprintplan.all_approved({})


# -- what the sprint module decided inline before issue 20.5 moved it here ---------------

MIN = 60 * 1_000_000
NOW = 1_000 * MIN


def wp_state(wp_id: str, lane: str, **kw: object) -> WPState:
    state = WPState(
        wp_id, lane=lane, lane_since_us=NOW - 120 * MIN, last_activity_us=NOW - 120 * MIN
    )
    for key, value in kw.items():
        setattr(state, key, value)
    return state


def stall_ctx(states: list[WPState]) -> Context:
    board = Board(wps={s.wp_id: s for s in states})
    return Context("m", "sprint", {}, board, {}, 3, False, NOW)


def test_a_stalled_review_goes_to_another_reviewer_unless_busy_or_fresh() -> None:
    silent = wp_state("WP01", "in_review", reviewer="codex", implementer="claude")
    fresh = wp_state("WP02", "in_review", reviewer="codex", implementer="claude",
                     lane_since_us=NOW - MIN, last_activity_us=NOW - MIN)  # fmt: skip
    wps = {"WP01": silent, "WP02": fresh}
    ctx = stall_ctx([silent, fresh])
    found = sprintplan.stalled_review(ctx, wps, ["WP01", "WP02"], (), ["codex", "gemini"], {})
    assert found == ("WP01", "gemini", "codex's review was STALLED: no activity for 2h00m")
    # running in this sprint, or halted: not a stalled review
    assert sprintplan.stalled_review(ctx, wps, ["WP01", "WP02"], {"WP01"}, ["gemini"], {}) is None
    # only the stalled reviewer itself is configured: it takes its own review over
    only = sprintplan.stalled_review(ctx, wps, ["WP01"], (), ["codex"], {})
    assert only is not None and only[1] == "codex"
    # never the implementer; a reviewer that has not reviewed it yet first
    assert sprintplan.stalled_review(ctx, wps, ["WP01"], (), ["claude"], {}) is None
    used = sprintplan.stalled_review(
        ctx, wps, ["WP01"], (), ["codex", "gemini", "qwen"], {"WP01": ["gemini"]}
    )
    assert used is not None and used[1] == "qwen"


def test_a_stalled_review_is_found_behind_unknown_busy_and_fresh_wps() -> None:
    """The search goes on past a WP with no state yet, one this sprint is busy with and
    one whose reviewer is still active."""
    silent = wp_state("WP04", "in_review", reviewer="codex", implementer="claude")
    busy = wp_state("WP02", "in_review", reviewer="codex", implementer="claude")
    fresh = wp_state("WP03", "in_review", reviewer="codex", implementer="claude",
                     lane_since_us=NOW - MIN, last_activity_us=NOW - MIN)  # fmt: skip
    wps = {"WP02": busy, "WP03": fresh, "WP04": silent}
    ids = ["WP01", "WP02", "WP03", "WP04"]  # WP01: a WP file with no event yet
    found = sprintplan.stalled_review(
        stall_ctx([busy, fresh, silent]), wps, ids, {"WP02"}, ["codex", "gemini"], {}
    )
    assert found == ("WP04", "gemini", "codex's review was STALLED: no activity for 2h00m")


def test_foreign_holds_name_the_holder_and_a_release_command_that_parses() -> None:
    wps = {
        "WP01": wp_state("WP01", "in_progress", implementer="my agent"),
        "WP02": wp_state("WP02", "claimed", implementer="claude"),  # this sprint's job
        "WP03": wp_state("WP03", "claimed", runtime_claim={"sprint_run": "run-1"}),
        "WP04": wp_state("WP04", "for_review", implementer="codex"),
        "WP05": wp_state("WP05", "claimed"),
    }
    found = sprintplan.foreign_holds("m", wps, sorted(wps), {"WP02"}, "run-1")
    assert len(found) == 2
    assert found[0].startswith("WP01 is in_progress by my agent, which this sprint does not run")
    command = found[0].split("releases it: ", 1)[1]
    assert shlex.split(command) == ["kitty", "move", "WP01", "planned", "--mission", "m",
                                    "--agent", "my agent", "--note", "claim released"]  # fmt: skip
    assert found[1].startswith("WP05 is claimed by unknown")


def test_the_end_reason_and_the_lanes_a_verdict_leaves() -> None:
    assert sprintplan.finish_reason(True, True) == "every work package is merged"
    assert sprintplan.finish_reason(True, False) == "every work package is approved"
    assert sprintplan.finish_reason(False, False).endswith("; acceptance failed")
    assert sprintplan.review_lanes("approved") == ("approved", "done")
    assert sprintplan.review_lanes("changes_requested") == ("planned", "in_progress")
    assert sprintplan.review_lanes(None) == ()


def test_a_manual_dispatch_says_where_what_and_how_to_hand_back() -> None:
    text = sprintplan.manual_message("WP01", REVIEW, "human", "/w/WP01", "/p/WP01.md")
    assert text.splitlines() == [
        "Manual dispatch required for agent: human",
        "Workspace: cd /w/WP01",
        "Prompt: cat /p/WP01.md",
        "When done, move WP01 to approved (or planned with feedback) with "
        "kitty agent tasks move-task",
    ]
    assert "move WP01 to for_review" in sprintplan.manual_message("WP01", IMPLEMENT, "h", "w", "p")
