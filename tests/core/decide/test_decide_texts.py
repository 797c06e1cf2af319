"""`kitty next`: the exact texts and commands an agent reads and runs, and the edges of
the rules (stalled reviews, unfinalized WPs, ties), decided from data alone."""

from __future__ import annotations

from kitty.core.clock import format_at
from kitty.core.decide import steps as decide
from kitty.core.decide.context import stalled
from kitty.core.log.state import Board, WPState
from tests.core.decide.test_decide import MIN, NOW, ctx, rejected, run, st, wp


def test_an_empty_or_unfinalized_mission_says_exactly_what_to_do() -> None:
    empty = run([], [])
    assert (empty.action, empty.reason, empty.commands) == (
        "blocked",
        "the mission has no work packages",
        [],
    )
    assert empty.choices == [
        {
            "label": "add a work package",
            "commands": ['kitty wp add --mission m --title "<title>"'],
            "fill": {"<title>": "the work package's title"},
        }
    ]
    unfinalized = run([wp("WP01")], [])
    assert (unfinalized.action, unfinalized.reason) == ("blocked", "the mission is not finalized")


def test_a_choice_without_anything_to_fill_says_so() -> None:
    from kitty.core.decide.decision import choice

    assert choice("run it", "kitty status --mission m") == {
        "label": "run it",
        "commands": ["kitty status --mission m"],
        "fill": {},
    }


def test_a_panel_reviews_with_the_panel_and_implements_as_usual() -> None:
    """With review.panel set, the review command is the panel's; the agent id is quoted."""
    wps = [wp("WP01"), wp("WP02")]
    board = Board(
        wps={"WP01": st("WP01", "for_review", implementer="codex"), "WP02": st("WP02", "planned")}
    )
    lanes = {"WP01": "lane-a", "WP02": "lane-b"}
    specs = {w.wp_id: w for w in wps}
    agent = "claude (opus)"
    review = decide.decide(decide.Context("m", agent, specs, board, lanes, panel=True))
    assert review.commands == ["kitty review run WP01 --mission m --agent 'claude (opus)'"]
    implementer = decide.decide(decide.Context("m", "codex", specs, board, lanes, panel=True))
    assert implementer.commands == ["kitty agent action implement WP02 --mission m --agent codex"]


def test_a_context_without_settings_takes_the_defaults() -> None:
    """Cap 3 rejections, mission not accepted, no answered HALT questions."""
    specs = {"WP01": wp("WP01")}
    capped = Board(wps={"WP01": rejected("WP01", 3)})
    d = decide.decide(decide.Context("m", "gemini", specs, capped, {"WP01": "a"}))
    assert (d.action, d.cycle) == ("arbiter", "3/3")
    approved = Board(wps={"WP01": st("WP01", "approved")})
    assert decide.decide(decide.Context("m", "gemini", specs, approved, {})).action == "accept"
    halted = rejected("WP01", 1)
    halted.scalars = {"review_halt": "h.json", "review_halt_reason": "blocker", "review_round": 2}
    d = decide.decide(decide.Context("m", "gemini", specs, Board(wps={"WP01": halted}), {}))
    assert d.action == "arbiter"
    assert [c["label"] for c in d.choices] == [
        "approve WP01 as the arbiter",
        "escalate WP01 to a human (it parks in blocked)",
        "run the review panel again from round 1",
    ]


def test_a_decision_built_by_hand_prints_complete_json() -> None:
    """A decision made outside the rules (a lease takeover) keeps what it is given and
    prints empty lists and maps, never null."""
    bare = decide.Decision("review", "r").to_json()
    assert bare == {
        "schema": 1,
        "action": "review",
        "wp_id": None,
        "reason": "r",
        "cycle": None,
        "commands": [],
        "blocked_by": [],
        "progress": {},
        "mission": "",
        "lane": None,
        "claimed": False,
        "conflicts": [],
        "choices": [],
        "gate": None,
    }
    given = decide.Decision(
        "review", "r", "WP01", mission="m", progress={"total": 1}, conflicts=[{"id": "E1"}]
    )
    assert (given.mission, given.progress, given.conflicts) == ("m", {"total": 1}, [{"id": "E1"}])


def test_progress_counts_lanes_and_weights() -> None:
    wps = [wp("WP01"), wp("WP02"), wp("WP03"), wp("WP04")]
    states = [
        st("WP01", "done"),
        st("WP02", "approved"),
        st("WP03", "planned"),
        st("WP04", "canceled"),
    ]
    d = run(wps, states)
    assert d.progress == {
        "done_percentage": 33.3,
        "weighted_percentage": d.progress["weighted_percentage"],
        "total": 4,
        "approved_or_done": 2,
    }
    assert 33.3 < d.progress["weighted_percentage"] < 100


def test_resuming_an_implementation_names_it() -> None:
    d = run([wp("WP01")], [st("WP01", "in_progress", implementer="claude", agent="claude")])
    assert d.reason == "you hold WP01 (in_progress by claude for 12m): continue the implementation"


def test_a_fix_names_only_the_subtasks_still_open() -> None:
    spec = decide.WorkPackage("WP01", "WP01", (), ("T1", "T2", "T3"), (), "t/WP01.md", "WP01")
    state = rejected("WP01", 1)
    state.subtasks = {"T1": "done", "T2": "planned"}
    d = run([spec], [state])
    assert d.reason == (
        "WP01 was sent back by codex with feedback; fix it (cycle 1/3); the rejection reset "
        "subtasks T2, T3: mark them done again (mark-status) before moving it to for_review"
    )


def test_accept_lists_every_unmarked_subtask_of_a_wp() -> None:
    spec = decide.WorkPackage("WP01", "WP01", (), ("T1", "T2"), (), "t/WP01.md", "WP01")
    d = run([spec], [st("WP01", "approved", subtasks={})])
    assert d.blocked_by == ["WP01 subtasks not done: T1, T2"]


def test_no_accept_while_a_wp_is_unfinalized() -> None:
    """Every finalized WP approved, one without state: finalize first, never accept."""
    d = run([wp("WP01"), wp("WP02")], [st("WP01", "approved")])
    assert d.action == "blocked"
    assert d.blocked_by == ["WP02 is not finalized"]
    assert d.commands == ["kitty finalize --mission m", "kitty status --mission m"]


def _review(wp_id: str, **kw: object) -> WPState:
    return st(wp_id, "in_review", reviewer="codex", implementer="claude", **kw)


def test_stalled_takeover_is_exact() -> None:
    silent = rejected("WP01", 1, lane="in_review")
    silent.reviewer = "codex"
    silent.lane_since_us = silent.last_activity_us = NOW - 120 * MIN
    d = run([wp("WP01")], [silent], agent="gemini", lanes={"WP01": "lane-a"})
    assert (d.action, d.cycle, d.lane) == ("review", "1/3", "lane-a")
    assert d.reason == (
        "WP01 is in_review by codex for 2h00m and STALLED (no activity for 2h00m): "
        "take the review over"
    )


def test_a_review_with_recent_activity_is_not_stalled_and_the_next_one_is() -> None:
    """Reviews go oldest first: an older review still active is passed over for a newer
    one that went silent."""
    active = _review("WP01", lane_since_us=NOW - 120 * MIN, last_activity_us=NOW - 5 * MIN)
    silent = _review("WP02", lane_since_us=NOW - 60 * MIN, last_activity_us=NOW - 60 * MIN)
    d = run([wp("WP01"), wp("WP02")], [active, silent], agent="gemini")
    assert (d.action, d.wp_id) == ("review", "WP02")
    assert run([wp("WP01")], [active], agent="gemini").action == "wait"


def test_a_review_without_any_time_is_never_stalled() -> None:
    """No lane time, no activity, no readable heartbeat: the silence cannot be measured."""
    c = ctx([wp("WP01")], [])
    for beat in (None, "not a time", 123):
        timeless = _review("WP01", lane_since_us=None)
        timeless.runtime_claim = {"heartbeat": beat}
        assert stalled(c, timeless) is None
    beating = _review("WP01", lane_since_us=None)
    beating.runtime_claim = {"heartbeat": format_at(NOW - 40 * MIN)}
    assert stalled(c, beating) == "no activity for 40m"


def test_only_a_review_stalls_by_silence() -> None:
    """A silent implementation is listed as in flight, never as STALLED."""
    busy = st("WP01", "in_progress", implementer="codex", agent="codex")
    busy.lane_since_us = busy.last_activity_us = NOW - 120 * MIN
    d = run([wp("WP01")], [busy], agent="gemini")
    assert d.blocked_by == ["WP01 is in_progress by codex for 2h00m"]
    assert stalled(ctx([wp("WP01")], [busy]), busy) is None


def test_ties_in_fixes_and_the_cap_go_by_number_an_id_without_one_first() -> None:
    wps = [wp("WP1"), wp("WP9"), wp("setup")]
    fixes = [rejected("WP1", 1), rejected("WP9", 1), rejected("setup", 1)]
    capped = [rejected("WP1", 3), rejected("setup", 3, lane="in_progress")]
    for s in fixes + capped:
        s.lane_since_us = NOW - MIN
    assert decide.work_queues(ctx(wps, fixes)).fixes == ["setup", "WP1", "WP9"]
    assert decide.work_queues(ctx(wps, capped)).capped == ["setup", "WP1"]
