"""`kitty next` when the answer is someone's decision: the exact texts an agent reads
(why it waits, what blocks, the arbiter's and the HALT's choices) and the exact commands
it runs, for every kind of wait, block and HALT."""

from __future__ import annotations

from typing import Any

from kitty.core.decide import steps as decide
from kitty.core.log.state import Board, WPState
from tests.core.decide.test_decide import ALONE, NOW, rejected, st, wp

APPROVE = (
    "kitty agent tasks move-task WP01 --mission m --to approved --force --agent {who} "
    '--note "Arbiter decision: <why the work is acceptable>"'
)
ESCALATE = (
    "kitty agent tasks move-task WP01 --mission m --to blocked --force --agent {who} "
    '--note "Escalated to human: <the disagreement>"'
)
LONE_REVIEW = (
    "{w} awaits review, but its implementer claude is the only configured agent: add a "
    "reviewer to agents.available in .kittify/config.yaml, or "
    + ALONE.replace("{intended}", "claude:reviewer")
)
LONE_ARBITER = (
    "{w} needs an arbiter decision, and its implementer claude is the only configured agent: "
    "a person decides (or add an agent to agents.available)"
)


def next_for(
    states: list[WPState],
    agent: str = "claude",
    agents: tuple[str, ...] = (),
    questions: dict[str, list[dict[str, Any]]] | None = None,
    deps: dict[str, tuple[str, ...]] | None = None,
    lanes: dict[str, str] | None = None,
) -> decide.Decision:
    """`kitty next` for `agent` on mission m, whose WPs are those of `states`."""
    specs = {s.wp_id: wp(s.wp_id, *(deps or {}).get(s.wp_id, ())) for s in states}
    return decide.decide(
        decide.Context(
            "m",
            agent,
            specs,
            Board(wps={s.wp_id: s for s in states}),
            lanes or {w: f"lane-{w}" for w in specs},
            3,
            now_us=NOW,
            agents=agents,
            halt_questions=questions,
        )
    )


def halt(reason: str | None, lane: str = "planned") -> WPState:
    """WP01, implemented by claude, rejected once, then its review panel HALTed at round 2."""
    state = rejected("WP01", 1, lane=lane)
    state.scalars = {"review_halt": "halt/WP01-r2.json", "review_round": 2}
    if reason is not None:
        state.scalars["review_halt_reason"] = reason
    return state


def arbiter_options(who: str) -> list[dict[str, Any]]:
    return [
        {
            "label": "approve WP01 as the arbiter",
            "commands": [APPROVE.format(who=who)],
            "fill": {
                "<why the work is acceptable>": "why the work is acceptable as it is (recorded)"
            },
        },
        {
            "label": "escalate WP01 to a human (it parks in blocked)",
            "commands": [ESCALATE.format(who=who)],
            "fill": {"<the disagreement>": "what the implementer and the reviewers disagree on"},
        },
    ]


RERUN = {
    "label": "run the review panel again from round 1",
    "commands": ["kitty review run WP01 --mission m --agent gemini"],
    "fill": {},
}


def test_the_arbiter_reads_who_cannot_decide_even_when_the_log_does_not_name_them() -> None:
    nameless = rejected("WP01", 3)
    nameless.implementer = None
    d = next_for([nameless], agent="gemini")
    assert d.reason == (
        "WP01 was rejected 3 times (cap 3) and its implementer cannot decide on its own "
        "work: as the arbiter, choose to approve with a recorded override or to escalate"
    )


def test_a_blocker_halt_offers_each_answer_then_the_arbiter_then_a_fresh_panel() -> None:
    """Every option of every open question is a labelled, runnable command, followed by
    the arbiter's two decisions and a re-run from round 1; the decision names the WP, its
    lane, its cycle, the round and the HALT file to read."""
    questions = {
        "WP01": [
            {"id": "q1", "question": "Which user?", "options": ["error", "guest user"]},
            {"id": "q2", "question": "Keep the cache?", "options": ["yes"]},
        ]
    }
    d = next_for([halt("blocker")], agent="gemini", questions=questions)
    assert d.to_json() | {"progress": None} == {
        "schema": 1,
        "action": "arbiter",
        "wp_id": "WP01",
        "reason": "WP01: the review panel HALTed (blocker) at round 2; see "
        "halt/WP01-r2.json: choose one",
        "cycle": "1/3",
        "commands": [],
        "blocked_by": [],
        "progress": None,
        "mission": "m",
        "lane": "lane-WP01",
        "claimed": False,
        "conflicts": [],
        "choices": [
            {
                "label": "answer q1 (Which user?): error",
                "commands": [
                    "kitty review answer WP01 --mission m --answer q1=error --agent gemini"
                ],
                "fill": {},
            },
            {
                "label": "answer q1 (Which user?): guest user",
                "commands": [
                    "kitty review answer WP01 --mission m --answer 'q1=guest user' --agent gemini"
                ],
                "fill": {},
            },
            {
                "label": "answer q2 (Keep the cache?): yes",
                "commands": ["kitty review answer WP01 --mission m --answer q2=yes --agent gemini"],
                "fill": {},
            },
            *arbiter_options("gemini"),
            RERUN,
        ],
        "gate": None,
    }


def test_a_blocker_halt_with_every_question_answered_still_offers_the_arbiter() -> None:
    d = next_for([halt("blocker")], agent="gemini")
    assert d.choices == [*arbiter_options("gemini"), RERUN]


def test_a_soft_warn_halt_offers_one_more_round_first() -> None:
    d = next_for([halt("soft_warn", lane="in_progress")], agent="gemini")
    assert d.reason == (
        "WP01: the review panel HALTed (soft_warn) at round 2; see halt/WP01-r2.json: choose one"
    )
    assert d.choices == [
        {
            "label": "run one more panel round",
            "commands": ["kitty review answer WP01 --mission m --continue --agent gemini"],
            "fill": {},
        },
        *arbiter_options("gemini"),
        RERUN,
    ]


def test_any_other_halt_offers_the_arbiter_and_a_fresh_panel_only() -> None:
    """A HALT without a recorded reason reads `halt`; neither it nor another reason offers
    answers or one more round."""
    for reason, shown in ((None, "halt"), ("deadlock", "deadlock")):
        d = next_for([halt(reason)], agent="gemini")
        assert d.reason == (
            f"WP01: the review panel HALTed ({shown}) at round 2; see halt/WP01-r2.json: choose one"
        )
        assert d.choices == [*arbiter_options("gemini"), RERUN]


def test_a_review_nobody_configured_can_do_is_named_and_does_not_hide_other_work() -> None:
    """With claude the only configured agent, its WP in for_review waits forever: `next`
    says how to get out, and still lists (and waits for) the rest of the work in flight."""
    states = [
        st("WP01", "for_review", implementer="claude"),
        st("WP02", "in_progress", agent="codex", implementer="codex"),
    ]
    d = next_for(states, agents=("claude",))
    assert d.action == "wait"
    assert d.blocked_by == [LONE_REVIEW.format(w="WP01"), "WP02 is in_progress by codex for 12m"]
    alone = next_for(states[:1], agents=("claude",))
    assert (alone.action, alone.blocked_by) == ("blocked", [LONE_REVIEW.format(w="WP01")])
    assert alone.commands == ["kitty status --mission m", "kitty agent config list"]


def test_a_review_another_configured_agent_can_do_is_waited_for() -> None:
    for agents in (("codex",), ("claude", "codex")):
        d = next_for([st("WP01", "for_review", implementer="claude")], agents=agents)
        assert (d.action, d.blocked_by) == (
            "wait",
            [
                "WP01 awaits review by another agent (you implemented it); working alone, "
                + ALONE.format(w="WP01", intended="codex")
            ],
        )
        assert d.commands == ["kitty status --mission m", "kitty next --agent claude --mission m"]


def test_every_capped_wp_of_yours_is_listed_for_the_arbiter_in_planned_and_in_progress() -> None:
    """The implementer of capped work waits for an arbiter, for each such WP, whether it
    is parked in planned or still held in in_progress."""
    held = rejected("WP03", 3, lane="in_progress")
    states = [rejected("WP01", 3), rejected("WP02", 3), held]
    d = next_for(states)
    assert d.action == "wait"
    waits = (
        "{w} waits for an arbiter decision (you implemented it): another agent or a person decides"
    )
    assert d.blocked_by == [
        "WP03 is in_progress for 12m",
        waits.format(w="WP01"),
        waits.format(w="WP02"),
        waits.format(w="WP03"),
    ]


def test_capped_work_only_a_person_can_arbitrate_is_blocked_with_named_choices() -> None:
    """claude alone: each capped WP needs a person, who fills in their name."""
    d = next_for([rejected("WP01", 3), rejected("WP02", 3)], agents=("claude",))
    assert (d.action, d.reason) == ("blocked", "nothing can move without a human decision")
    assert d.blocked_by == [LONE_ARBITER.format(w="WP01"), LONE_ARBITER.format(w="WP02")]
    assert d.commands == ["kitty status --mission m", "kitty agent config list"]
    person = "your name (a person; not claude, who implemented it)"
    first = arbiter_options("'<arbiter>'")
    for option in first:
        option["fill"] = {"<arbiter>": person, **option["fill"]}
    assert d.choices[:2] == first
    assert [c["label"] for c in d.choices[2:]] == [
        "approve WP02 as the arbiter",
        "escalate WP02 to a human (it parks in blocked)",
    ]


def test_capped_work_is_listed_for_the_arbiter_and_every_other_planned_wp_says_why() -> None:
    """Capped work is listed once (for the arbiter), never again as waiting for its lane or
    dependencies; every planned WP after it still says what it waits for."""
    states = [
        st("WP01", "planned"),
        rejected("WP02", 3),
        st("WP03", "planned"),
        st("WP04", "in_progress", agent="codex", implementer="codex"),
        st("WP05", "planned"),
    ]
    deps = {"WP01": ("WP04",), "WP02": ("WP04",), "WP03": ("WP04",)}
    lanes = {"WP01": "b", "WP02": "a", "WP03": "b", "WP04": "a", "WP05": "a"}
    d = next_for(states, deps=deps, lanes=lanes)
    assert d.action == "wait"
    assert d.blocked_by == [
        "WP04 is in_progress by codex for 12m",
        "WP02 waits for an arbiter decision (you implemented it): another agent or a person "
        "decides",
        "WP01 waits for WP04 (in_progress by codex for 12m)",
        "WP03 waits for WP04 (in_progress by codex for 12m)",
        "WP05 waits for its lane a (WP04 in_progress by codex for 12m)",
    ]


def test_unblocking_choices_say_what_they_do() -> None:
    d = next_for([st("WP01", "blocked"), st("WP02", "blocked", last_reason="legal")])
    assert d.choices == [
        {
            "label": f"unblock {w} once a human has decided (back to planned)",
            "commands": [f"kitty move {w} planned --mission m --agent claude"],
            "fill": {},
        }
        for w in ("WP01", "WP02")
    ]
