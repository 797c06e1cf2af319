"""The sprint's dispatch decisions, without processes or files."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from kitty.core import sprintplan
from kitty.core.decide import Queues
from kitty.core.sprintplan import (
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


def test_the_halt_message_offers_three_commands_that_parse() -> None:
    message = sprintplan.halt_message(
        "m", "WP01", "codex", "exit 3", "claude", ["claude"], ["codex", "claude", "gemini"]
    )
    assert message.startswith("ERROR: Configured reviewer 'codex' failed (exit 3).\n")
    commands = [line.strip() for line in message.splitlines() if line.startswith("     kitty")]
    retry, switch, fallback = (shlex.split(c) for c in commands)
    assert retry == ["kitty", "sprint", "--mission", "m", "--implementer", "claude",
                     "--reviewer", "codex"]  # fmt: skip
    assert switch[-2:] == ["--agent", "gemini"]  # neither the failed reviewer nor the author
    assert fallback[fallback.index("--agent") + 1] == "claude"
    assert fallback[fallback.index("--reviewer-failure-reason") + 1] == "exit 3"
    nobody = sprintplan.halt_message("m", "WP01", "codex", "t", None, ["a"], ["codex"])
    assert "--agent gemini" in nobody and "--agent 'the implementer'" in nobody


def test_all_approved_ignores_canceled_work_but_needs_some() -> None:
    assert sprintplan.all_approved({"WP01": "approved", "WP02": "done", "WP03": "canceled"})
    assert not sprintplan.all_approved({"WP01": "approved", "WP02": "for_review"})
    assert not sprintplan.all_approved({"WP01": "canceled"})
    assert not sprintplan.all_approved({})
