"""`kitty next` decisions: every kind, with its reason, in priority order."""

from __future__ import annotations

from kitty.core.decide import steps as decide
from kitty.core.log.state import Board, ReviewRecord, WPState
from kitty.core.model import WorkPackage

#: How one person gets a WP reviewed (`next`'s hint when it waits for a reviewer).
ALONE = (
    "review it under a second identity: `kitty agent action review {w} --mission m --agent "
    "claude:reviewer` (then its verdict with --agent claude:reviewer), or approve it as a "
    "recorded self-review: `kitty agent tasks move-task {w} --mission m --to approved --force "
    "--agent claude --self-review-fallback --intended-reviewer {intended} "
    "--reviewer-failure-reason 'one person works on this mission' "
    "--note 'Self-review fallback: no second reviewer'`"
)


MIN = 60 * 1_000_000
NOW = 1_000 * MIN


def wp(wp_id: str, *deps: str, estimate: float | None = None) -> WorkPackage:
    return WorkPackage(
        wp_id, f"title {wp_id}", deps, (), (), f"t/{wp_id}.md", wp_id, estimate=estimate
    )


def st(wp_id: str, lane: str | None, **kw: object) -> WPState:
    state = WPState(wp_id, lane=lane, lane_since_us=NOW - 12 * MIN)
    for key, value in kw.items():
        setattr(state, key, value)
    return state


def rejected(wp_id: str, times: int, lane: str = "planned", by: str = "claude") -> WPState:
    reviews = [
        ReviewRecord("changes_requested", "codex", "t", None, None, lane, f"{wp_id}{i}", i + 1)
        for i in range(times)
    ]
    return st(wp_id, lane, review_cycles=times, reviews=reviews, implementer=by)


def ctx(
    wps: list[WorkPackage],
    states: list[WPState],
    agent: str = "claude",
    lanes: dict[str, str] | None = None,
    accepted: bool = False,
) -> decide.Context:
    board = Board(wps={s.wp_id: s for s in states})
    specs = {w.wp_id: w for w in wps}
    return decide.Context(
        "m", agent, specs, board, lanes or {w: f"lane-{w}" for w in specs}, 3, accepted, NOW
    )


def run(*args: object, **kw: object) -> decide.Decision:
    return decide.decide(ctx(*args, **kw))  # type: ignore[arg-type]


def test_unfinalized_mission_is_blocked() -> None:
    d = run([wp("WP01")], [])
    assert d.action == "blocked" and "not finalized" in d.reason
    assert d.commands == ["kitty finalize --mission m"]
    assert run([], []).action == "blocked"


def test_implement_prefers_the_longest_chain_then_lowest_id() -> None:
    wps = [wp("WP01"), wp("WP02"), wp("WP03", "WP02"), wp("WP04", "WP03")]
    d = run(wps, [st(w.wp_id, "planned") for w in wps])
    assert (d.action, d.wp_id) == ("implement", "WP02")
    assert d.commands == ["kitty agent action implement WP02 --mission m --agent claude"]
    d = run(wps[:2], [st("WP01", "planned"), st("WP02", "planned")])
    assert d.wp_id == "WP01"
    weighted = [wp("WP01"), wp("WP02", estimate=4)]
    assert run(weighted, [st("WP01", "planned"), st("WP02", "planned")]).wp_id == "WP02"


def test_review_beats_implement_and_is_never_your_own() -> None:
    wps = [wp("WP01"), wp("WP02"), wp("WP03")]
    states = [
        st("WP01", "for_review", implementer="codex", lane_since_us=NOW - 5 * MIN),
        st("WP02", "for_review", implementer="codex", lane_since_us=NOW - 30 * MIN),
        st("WP03", "planned"),
    ]
    d = run(wps, states)
    assert (d.action, d.wp_id) == ("review", "WP02")  # the oldest first
    assert "implemented by codex" in d.reason
    d = run(wps, states, agent="codex")
    assert (d.action, d.wp_id) == ("implement", "WP03")


def test_fix_prefers_the_implementer_and_names_the_cycle() -> None:
    wps = [wp("WP01"), wp("WP02")]
    states = [rejected("WP01", 1, by="gemini"), rejected("WP02", 1, by="claude")]
    d = run(wps, states)
    assert (d.action, d.wp_id, d.cycle) == ("fix", "WP02", "1/3")
    assert "cycle 1/3" in d.reason
    assert run(wps, states, agent="gemini").wp_id == "WP01"


def test_arbiter_at_the_cap() -> None:
    d = run([wp("WP01")], [rejected("WP01", 3)], agent="gemini")
    assert (d.action, d.wp_id, d.cycle) == ("arbiter", "WP01", "3/3")
    # Issue 22.1: the two decisions are alternatives, never a sequence to run.
    assert d.commands == []
    approve, escalate = d.choices
    assert approve["commands"] == [
        "kitty agent tasks move-task WP01 --mission m --to approved --force --agent gemini "
        '--note "Arbiter decision: <why the work is acceptable>"'
    ]
    assert approve["fill"] == {
        "<why the work is acceptable>": "why the work is acceptable as it is (recorded)"
    }
    assert escalate["commands"] == [
        "kitty agent tasks move-task WP01 --mission m --to blocked --force --agent gemini "
        '--note "Escalated to human: <the disagreement>"'
    ]
    assert "<the disagreement>" in escalate["fill"]
    assert d.to_json()["choices"] == d.choices


def test_the_arbiter_is_never_the_implementer() -> None:
    """Issue 22.4: the implementer waits while another agent or a person decides."""
    d = run([wp("WP01")], [rejected("WP01", 3, by="claude")], agent="claude")
    assert d.action == "wait"
    assert (
        "WP01 waits for an arbiter decision (you implemented it): another agent or a "
        in (d.blocked_by[0])
    )
    lone = decide.decide(
        decide.Context(
            "m",
            "claude",
            {"WP01": wp("WP01")},
            Board(wps={"WP01": rejected("WP01", 3, by="claude")}),
            {"WP01": "lane-a"},
            3,
            agents=("claude",),
        )
    )
    assert lone.action == "blocked" and lone.commands == [
        "kitty status --mission m",
        "kitty agent config list",
    ]
    approve = lone.choices[0]
    assert approve["commands"][0].startswith(
        "kitty agent tasks move-task WP01 --mission m --to approved --force --agent '<arbiter>'"
    )
    assert set(approve["fill"]) == {"<arbiter>", "<why the work is acceptable>"}


def test_the_cap_counts_rejections_since_the_last_arbiter_decision() -> None:
    """Issue 22.3: escalated at 3, back to planned: the cap holds again after 3 more."""
    state = rejected("WP01", 3)
    state.arbiter = {"decision": "escalate", "cycles": 3, "to_lane": "blocked"}
    d = run([wp("WP01")], [state], agent="claude")
    assert (d.action, d.cycle) == ("fix", "0/3, 3 in all")
    for more in (4, 5):
        state = rejected("WP01", more)
        state.arbiter = {"decision": "escalate", "cycles": 3, "to_lane": "blocked"}
        assert run([wp("WP01")], [state], agent="claude").cycle == f"{more - 3}/3, {more} in all"
    state = rejected("WP01", 6)
    state.arbiter = {"decision": "escalate", "cycles": 3, "to_lane": "blocked"}
    d = run([wp("WP01")], [state], agent="gemini")
    assert (d.action, d.cycle) == ("arbiter", "3/3, 6 in all")


def test_a_silent_review_is_stalled_and_offered_for_takeover() -> None:
    """Issue 22.5: after the stall limit `next` offers the exact takeover command."""
    silent = st(
        "WP01",
        "in_review",
        reviewer="codex",
        implementer="claude",
        lane_since_us=NOW - 120 * MIN,
        last_activity_us=NOW - 120 * MIN,
    )
    d = run([wp("WP01")], [silent], agent="gemini")
    assert (d.action, d.wp_id) == ("review", "WP01")
    assert "STALLED (no activity for 2h00m)" in d.reason
    assert d.commands == [
        "kitty agent action review WP01 --mission m --agent gemini --takeover "
        '--note "codex\'s review was STALLED: no activity for 2h00m"'
    ]
    fresh = st("WP01", "in_review", reviewer="codex", implementer="claude")
    assert run([wp("WP01")], [fresh], agent="gemini").action == "wait"
    mine = run([wp("WP01")], [silent], agent="claude")
    assert mine.action == "wait" and "STALLED" in mine.blocked_by[0]


def test_blocker_halt_offers_concrete_answers() -> None:
    """Issue 22.7: every option of every open question is a runnable command."""
    state = rejected("WP01", 1)
    state.scalars = {"review_halt": "h.json", "review_halt_reason": "blocker", "review_round": 1}
    c = decide.Context(
        "m",
        "gemini",
        {"WP01": wp("WP01")},
        Board(wps={"WP01": state}),
        {"WP01": "lane-a"},
        halt_questions={
            "WP01": [{"id": "q1", "question": "Which user?", "options": ["error", "guest user"]}]
        },
    )
    d = decide.decide(c)
    assert d.action == "arbiter" and d.commands == []
    commands = [x["commands"] for x in d.choices]
    assert commands[:2] == [
        ["kitty review answer WP01 --mission m --answer q1=error --agent gemini"],
        ["kitty review answer WP01 --mission m --answer 'q1=guest user' --agent gemini"],
    ]
    assert all("<id>" not in c for cs in commands for c in cs)


def test_resume_own_work_first() -> None:
    wps = [wp("WP01"), wp("WP02")]
    states = [
        st("WP01", "in_review", reviewer="claude"),
        st("WP02", "for_review", implementer="codex"),
    ]
    assert (run(wps, states).action, run(wps, states).wp_id) == ("review", "WP01")
    states = [st("WP01", "in_progress", implementer="claude"), st("WP02", "planned")]
    d = run(wps, states)
    assert (d.action, d.wp_id) == ("implement", "WP01") and "continue" in d.reason


def test_lane_in_flight_blocks_a_second_wp_of_that_lane() -> None:
    wps = [wp("WP01"), wp("WP02")]
    lanes = {"WP01": "lane-a", "WP02": "lane-a"}
    d = run(
        wps,
        [st("WP01", "in_progress", implementer="codex", agent="codex"), st("WP02", "planned")],
        lanes=lanes,
    )
    assert d.action == "wait"
    assert any(
        b == "WP02 waits for its lane lane-a (WP01 in_progress by codex for 12m)"
        for b in d.blocked_by
    )


def test_wait_lists_exactly_what_blocks() -> None:
    wps = [wp("WP02"), wp("WP04", "WP02")]
    states = [
        st("WP02", "in_review", reviewer="codex", implementer="gemini"),
        st("WP04", "planned"),
    ]
    d = run(wps, states)
    assert d.action == "wait"
    assert "WP04 waits for WP02 (in_review by codex for 12m)" in d.blocked_by


def test_blocked_when_nothing_can_move() -> None:
    wps = [wp("WP01"), wp("WP02", "WP01")]
    d = run(wps, [st("WP01", "blocked", last_reason="needs a human"), st("WP02", "planned")])
    assert d.action == "blocked"
    assert "WP01 is blocked: needs a human" in d.blocked_by
    assert d.choices[0]["commands"] == ["kitty move WP01 planned --mission m --agent claude"]


def test_accept_merge_done() -> None:
    wps = [wp("WP01"), wp("WP02")]
    assert run(wps, [st("WP01", "approved"), st("WP02", "done")]).action == "accept"
    assert run(wps, [st("WP01", "approved"), st("WP02", "done")], accepted=True).action == "merge"
    assert run(wps, [st("WP01", "done"), st("WP02", "canceled")]).action == "done"


def test_same_input_same_decision() -> None:
    wps = [wp(f"WP{i:02d}", *([f"WP{i - 1:02d}"] if i % 3 else [])) for i in range(1, 12)]
    states = [st(w.wp_id, "planned") for w in wps]
    first = run(wps, states).to_json()
    assert all(run(wps, states).to_json() == first for _ in range(5))
    assert set(first) >= {
        "schema",
        "action",
        "wp_id",
        "reason",
        "cycle",
        "commands",
        "blocked_by",
        "progress",
        "mission",
    }


def test_fixes_go_oldest_rejection_first_whatever_the_id() -> None:
    old = rejected("WP02", 1, by="gemini")
    old.lane_since_us = NOW - 30 * MIN
    new = rejected("WP01", 1, by="gemini")
    new.lane_since_us = NOW - 5 * MIN
    wps = [wp("WP01"), wp("WP02")]
    d = run(wps, [new, old])  # claude implemented neither: pure age order
    assert (d.action, d.wp_id) == ("fix", "WP02")
    queues = decide.work_queues(ctx(wps, [new, old]))
    assert queues.fixes == ["WP02", "WP01"]
    old.lane_since_us, new.lane_since_us = new.lane_since_us, old.lane_since_us
    assert decide.work_queues(ctx(wps, [new, old])).fixes == ["WP01", "WP02"]


def test_full_json_of_a_review_decision() -> None:
    wps = [wp("WP01"), wp("WP02", "WP01"), wp("WP03")]
    states = [
        st("WP01", "for_review", implementer="gemini"),
        st("WP02", "planned"),
        st("WP03", "approved"),
    ]
    d = run(wps, states, lanes={"WP01": "lane-a", "WP02": "lane-b", "WP03": "lane-c"})
    assert d.to_json() == {
        "schema": 1,
        "action": "review",
        "wp_id": "WP01",
        "reason": "WP01 is waiting for review for 12m (implemented by gemini)",
        "cycle": None,
        "commands": ["kitty agent action review WP01 --mission m --agent claude"],
        "blocked_by": [],
        "progress": d.progress,
        "mission": "m",
        "lane": "lane-a",
        "claimed": False,
        "conflicts": [],
        "choices": [],
        "gate": None,
    }
    assert d.progress["total"] == 3 and d.progress["approved_or_done"] == 1


def test_reviews_go_oldest_first_then_by_number() -> None:
    wps = [wp("WP1"), wp("WP2"), wp("WP10"), wp("WP9"), wp("setup")]
    states = [
        st("WP1", "for_review", implementer="gemini", lane_since_us=NOW - 5 * MIN),
        st("WP2", "for_review", implementer="gemini", lane_since_us=NOW - 9 * MIN),
        st("WP10", "for_review", implementer="gemini", lane_since_us=NOW - 20 * MIN),
        st("WP9", "for_review", implementer="gemini", lane_since_us=NOW - 20 * MIN),
        st("setup", "for_review", implementer="gemini", lane_since_us=NOW - 5 * MIN),
    ]
    queues = decide.work_queues(ctx(wps, states))
    # same age: by number (WP9 before WP10), an id without a number first
    assert queues.reviews == ["WP9", "WP10", "WP2", "setup", "WP1"]
    assert decide.work_queues(ctx(wps, states), exclude=frozenset({"WP9"})).reviews == [
        "WP10",
        "WP2",
        "setup",
        "WP1",
    ]
    d = run(wps, states)
    assert (d.wp_id, d.reason) == (
        "WP9",
        "WP9 is waiting for review for 20m (implemented by gemini)",
    )


def test_fresh_work_breaks_ties_by_number_and_capped_work_is_listed_by_number() -> None:
    wps = [wp("WP10"), wp("WP9"), wp("WP11"), wp("WP12")]
    states = [
        st("WP10", "planned"),
        st("WP9", "planned"),
        rejected("WP12", 3),
        rejected("WP11", 3, lane="in_progress"),
    ]
    queues = decide.work_queues(ctx(wps, states))
    assert queues.fresh == ["WP9", "WP10"]
    assert queues.capped == ["WP11", "WP12"]
    d = run(wps, [st("WP10", "approved"), st("WP9", "approved"), *states[2:]], agent="codex")
    assert d.to_json()["action"] == "arbiter" and d.wp_id == "WP11"
    assert d.reason == (
        "WP11 was rejected 3 times (cap 3) and claude cannot decide on its own work: as the "
        "arbiter, choose to approve with a recorded override or to escalate"
    )
    assert d.lane == "lane-WP11"


def test_resume_messages_are_exact() -> None:
    wps = [wp("WP01"), wp("WP02")]
    review = run(wps, [st("WP01", "in_review", reviewer="claude"), st("WP02", "planned")])
    assert review.reason == (
        "you are reviewing WP01 (in_review for 12m): finish the review and record the verdict"
    )
    assert review.commands == ["kitty agent action review WP01 --mission m --agent claude"]
    fixing = rejected("WP01", 1, lane="in_progress")
    fixing.agent = "claude"
    d = run(wps, [fixing, st("WP02", "planned")])
    assert (d.action, d.cycle) == ("fix", "1/3")
    assert (
        d.reason
        == "you hold WP01 (in_progress by claude for 12m): continue fixing the review feedback"
    )
    assert d.commands == ["kitty agent action implement WP01 --mission m --agent claude"]
    fix = run(wps, [rejected("WP01", 2), st("WP02", "approved")])
    assert fix.reason == "WP01 was sent back by codex with feedback; fix it (cycle 2/3)"
    fresh = run([wp("WP01"), wp("WP02", "WP01")], [st("WP01", "planned"), st("WP02", "planned")])
    assert fresh.reason == (
        "WP01 is ready (dependencies approved) and heads the longest remaining chain (weight 2)"
    )
    assert fresh.cycle is None


def test_wait_and_blocked_are_exact() -> None:
    wps = [wp("WP01"), wp("WP02", "WP01"), wp("WP03"), wp("WP04")]
    states = [
        st("WP01", "for_review", implementer="claude"),
        st("WP02", "planned"),
        st("WP03", "blocked", last_reason="waits for legal"),
        st("WP04", "blocked"),
    ]
    d = run(wps, states)
    assert d.to_json() | {"progress": None} == {
        "schema": 1,
        "action": "wait",
        "wp_id": None,
        "reason": "nothing is ready for you yet; other work is in flight",
        "cycle": None,
        "commands": ["kitty status --mission m", "kitty next --agent claude --mission m"],
        "blocked_by": [
            "WP01 awaits review by another agent (you implemented it); working alone, "
            + ALONE.format(w="WP01", intended="claude:reviewer"),
            "WP02 waits for WP01 (for_review for 12m)",
            "WP03 is blocked: waits for legal",
            "WP04 is blocked",
        ],
        "progress": None,
        "mission": "m",
        "lane": None,
        "claimed": False,
        "conflicts": [],
        "choices": [],
        "gate": None,
    }
    blocked = run([*wps, wp("WP05")], [st("WP01", "approved"), st("WP02", "blocked"), *states[2:]])
    assert (blocked.action, blocked.reason) == (
        "blocked",
        "nothing can move without a human decision",
    )
    assert blocked.blocked_by == [
        "WP02 is blocked",
        "WP03 is blocked: waits for legal",
        "WP04 is blocked",
        "WP05 is not finalized",
    ]
    assert blocked.commands == ["kitty finalize --mission m", "kitty status --mission m"]
    # Unblocking is a human's decision: alternatives, not steps (issue 22.1).
    assert [c["commands"] for c in blocked.choices] == [
        ["kitty move WP02 planned --mission m --agent claude"],
        ["kitty move WP03 planned --mission m --agent claude"],
        ["kitty move WP04 planned --mission m --agent claude"],
    ]


def test_describe_names_the_holder_only_in_flight() -> None:
    wps = [wp("WP01"), wp("WP02")]
    c = ctx(
        wps,
        [
            st("WP01", "in_review", reviewer="codex", agent="claude"),
            st("WP02", "approved", agent="claude"),
        ],
    )
    assert decide.describe(c, "WP01") == "in_review by codex for 12m"
    assert decide.describe(c, "WP02") == "approved for 12m"
    assert decide.describe(c, "WP09") == "not finalized"
    timeless = decide.Context("m", "claude", c.wps, c.board, c.wp_lane)
    assert decide.describe(timeless, "WP01") == "in_review by codex"


def test_accept_and_merge_commands() -> None:
    wps = [wp("WP01")]
    accept = run(wps, [st("WP01", "approved")])
    assert (accept.reason, accept.commands) == (
        "every work package is approved: accept the mission",
        ["kitty accept --mission m"],
    )
    merge = run(wps, [st("WP01", "approved")], accepted=True)
    assert (merge.reason, merge.commands) == (
        "the mission is accepted: merge it",
        ["kitty merge --mission m"],
    )
    done = run(wps, [st("WP01", "done")])
    assert (done.reason, done.commands) == (
        "every work package is done: the mission is merged",
        [],
    )
    assert run([], []).commands == []
    assert run([], []).choices[0]["commands"] == ['kitty wp add --mission m --title "<title>"']
    unfinal = run(wps, [])
    assert unfinal.blocked_by == ["WP01 has no state yet"]


def test_capped_work_you_hold_goes_to_the_arbiter_not_back_to_you() -> None:
    held = rejected("WP01", 3, lane="in_progress")
    held.agent = "claude"
    d = run([wp("WP01")], [held], agent="gemini")
    assert (d.action, d.wp_id, d.cycle) == ("arbiter", "WP01", "3/3")
    assert run([wp("WP01")], [held]).action == "wait"  # claude implemented it


def test_fallback_names_when_the_log_lacks_them() -> None:
    anonymous = st("WP01", "for_review")  # no implementer recorded
    d = run([wp("WP01")], [anonymous])
    assert d.reason == "WP01 is waiting for review for 12m (implemented by another agent)"
    bare = st("WP01", "planned", review_cycles=1, implementer="claude")  # no review records
    assert run([wp("WP01")], [bare]).reason == (
        "WP01 was sent back by review with feedback; fix it (cycle 1/3)"
    )


def test_only_your_own_conflicts_are_attached() -> None:
    from kitty.core.log.state import Conflict

    def conflict(agent: str) -> Conflict:
        return Conflict(
            f"E-{agent}",
            "WP01",
            2,
            "t",
            agent,
            None,
            "planned",
            "claimed",
            "claimed",
            "stale_from_lane",
            "m",
        )

    states = [st("WP01", "claimed", agent="codex", implementer="codex")]
    c = ctx([wp("WP01")], states)
    c.board.conflicts.extend([conflict("claude"), conflict("codex")])
    d = decide.decide(c)
    assert [x["agent"] for x in d.conflicts] == ["claude"]
    assert d.conflicts[0]["commands"][0].startswith("kitty resolve WP01 --mission m ")
    assert decide.decide(ctx([wp("WP01")], states)).conflicts == []


def test_accept_first_asks_to_mark_subtasks_a_rejection_reset() -> None:
    def task_wp(wp_id: str, *tasks: str) -> decide.WorkPackage:
        return decide.WorkPackage(wp_id, wp_id, (), tasks, (), f"t/{wp_id}.md", wp_id)

    wps = [
        task_wp("WP01", "T1", "T2"),
        task_wp("WP02", "T3"),
        task_wp("WP03", "T4"),
        task_wp("WP04", "T5"),
    ]
    states = [
        st("WP01", "approved", subtasks={"T1": "done", "T2": "planned"}),
        st("WP02", "approved", subtasks={"T3": "done"}),
        st("WP03", "done", subtasks={}),  # done: merged, not checked again
        st("WP04", "approved", subtasks={}),
    ]
    d = run(wps, states)
    assert (d.action, d.reason) == (
        "accept",
        "every work package is approved: accept the mission; subtasks of WP01, WP04 are not "
        "marked done (reset by a rejection, then approved without re-implementation): "
        "`kitty accept` records them done as actor accept, naming the approval, in the "
        "acceptance record",
    )
    # Issue 22.8: never a bulk re-mark in the asking agent's name.
    assert d.commands == ["kitty accept --mission m"]
    assert d.blocked_by == ["WP01 subtasks not done: T2", "WP04 subtasks not done: T5"]
    board = ctx(wps, states).board
    assert (
        decide.unmarked_subtasks(board, {w.wp_id: w for w in wps}, ["WP02", "WP03", "WP09"]) == {}
    )


def test_dependencies_and_waits_name_only_what_is_missing() -> None:
    wps = [
        wp("WP01"),
        wp("WP02", "WP01"),
        wp("WP03", "WP01", "WP04", "WP05"),
        wp("WP04"),
        wp("WP05"),
    ]
    states = [
        st("WP01", "approved"),
        st("WP02", "planned"),
        st("WP03", "planned"),
        st("WP04", "in_progress", agent="codex", implementer="codex"),
        st("WP05", "claimed", agent="gemini", implementer="gemini"),
    ]
    d = run(wps, states)
    assert (d.action, d.wp_id) == ("implement", "WP02")  # WP01 approved: WP02 is ready
    busy = run(
        wps, [st("WP01", "approved"), st("WP02", "in_review", reviewer="gemini"), *states[2:]]
    )
    assert busy.action == "wait"
    assert busy.blocked_by == [
        "WP02 is in_review by gemini for 12m",
        "WP04 is in_progress by codex for 12m",
        "WP05 is claimed by gemini for 12m",
        "WP03 waits for WP04 (in_progress by codex for 12m), WP05 (claimed by gemini for 12m)",
    ]


def test_blocked_without_blocked_wps_when_a_dependency_is_unfinalized() -> None:
    d = run([wp("WP01", "WP02"), wp("WP02")], [st("WP01", "planned")])
    assert (d.action, d.blocked_by) == (
        "blocked",
        ["WP01 waits for WP02 (not finalized)", "WP02 is not finalized"],
    )
    assert d.commands == ["kitty finalize --mission m", "kitty status --mission m"]


def test_queues_keep_rejected_work_out_of_fresh_and_sort_by_number() -> None:
    wps = [wp("WP9"), wp("WP10"), wp("WP1"), wp("setup"), wp("WP20"), wp("WP3")]
    states = [
        rejected("WP10", 1),
        rejected("WP9", 1),
        st("WP1", "planned"),
        st("setup", "planned"),
        rejected("WP20", 3),
        rejected("WP3", 3),
    ]
    for s in states:
        s.lane_since_us = NOW - MIN  # same age: ties go by number
    queues = decide.work_queues(ctx(wps, states))
    assert queues.fixes == ["WP9", "WP10"]
    assert queues.fresh == ["setup", "WP1"]
    assert queues.capped == ["WP3", "WP20"]


def test_a_fix_names_the_subtasks_the_rejection_reset() -> None:
    """Issue 22.8: the fixer meets the reset in `next`, not as a refusal at for_review."""
    spec = decide.WorkPackage("WP01", "WP01", (), ("T1", "T2"), (), "t/WP01.md", "WP01")
    state = rejected("WP01", 1)
    state.subtasks = {"T1": "planned", "T2": "planned"}
    d = run([spec], [state])
    assert (d.action, d.wp_id) == ("fix", "WP01")
    assert d.reason.endswith(
        "; the rejection reset subtasks T1, T2: mark them done again (mark-status) before "
        "moving it to for_review"
    )
