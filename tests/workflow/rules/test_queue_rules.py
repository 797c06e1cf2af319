"""The merge queue's rules on data (kitty.workflow.rules.queue): the order, the culprit
search, holds, what is merged, and that a resumed step is the same step."""

from __future__ import annotations

from typing import Any

from kitty.workflow.rules import gate, queue

STEPS = [
    {"kind": "lane", "lane_id": "lane-a", "branch": "b/a", "wp_ids": ["WP01"]},
    {"kind": "lane", "lane_id": "lane-b", "branch": "b/b", "wp_ids": ["WP02", "WP04"]},
    {"kind": "lane", "lane_id": "lane-c", "branch": "b/c", "wp_ids": ["WP03"]},
    {"kind": "target", "branch": "kitty/mission-m", "target": "main"},
]
DEPS = {"WP03": ["WP02"], "WP04": ["WP02"]}
FAIL: dict[str, Any] = {"why": "gate", "run": {"output": "/runs/x"}}


def fresh(done: tuple[str, ...] = ()) -> dict[str, Any]:
    return queue.start(queue.lanes_in_order(STEPS, list(done), DEPS), "base", "main")


def test_lanes_keep_the_plans_order_and_skip_what_is_merged() -> None:
    lanes = queue.lanes_in_order(STEPS, ["WP01"], DEPS)
    assert [x["lane_id"] for x in lanes] == ["lane-b", "lane-c"]
    assert lanes[1]["needs"] == ["WP02"] and lanes[0]["needs"] == []  # WP04 -> WP02: same lane
    assert queue.lanes_in_order(STEPS, ["WP01", "WP02", "WP04", "WP03"], DEPS) == []


def test_a_batch_that_passes_moves_the_target_to_its_tree() -> None:
    state = fresh()
    assert queue.next_action(state) == (queue.BATCH, None)
    state = queue.after_batch(state, "tested", None)
    assert queue.next_action(state) == (queue.MOVE, None)
    assert state["kept"] == ["lane-a", "lane-b", "lane-c"] and state["head"] == "tested"
    state = queue.after_move(state, "tested")
    assert queue.next_action(state) == (queue.RECORD, None)
    assert queue.merged_wps(state) == ["WP01", "WP02", "WP04", "WP03"]
    assert queue.outcome(state)["sent_back"] == []


def test_a_failed_batch_tries_lane_by_lane_and_names_the_culprits_company() -> None:
    state = queue.after_batch(fresh(), None, FAIL)
    assert state["head"] == "base" and state["mode"] == queue.TRY
    action, lane = queue.next_action(state)
    assert action == queue.TRY and lane is not None and lane["lane_id"] == "lane-a"
    state = queue.after_try(state, "a-ok", None)
    action, lane = queue.next_action(state)
    assert lane is not None and lane["lane_id"] == "lane-b"
    state = queue.after_try(state, None, FAIL)  # lane-b breaks it, merged with WP01
    assert state["head"] == "a-ok"
    (culprit,) = state["culprits"]
    assert culprit["wp_ids"] == ["WP02", "WP04"] and culprit["with"] == ["WP01"]
    # lane-c needs WP02, left out: it waits instead of being tried
    action, lane = queue.next_action(state)
    assert action == queue.HOLD and lane is not None and lane["lane_id"] == "lane-c"
    state = queue.after_hold(state)
    assert state["held"] == [{"lane_id": "lane-c", "wp_ids": ["WP03"], "waits_for": ["WP02"]}]
    assert queue.next_action(state) == (queue.MOVE, None)  # to a-ok: its gate passed
    state = queue.after_move(queue.before_move(state), state["head"])
    assert state["final"] == "a-ok" and queue.merged_wps(state) == ["WP01"]
    assert queue.outcome(state)["sent_back"] == [
        {"lane_id": "lane-b", "wp_ids": ["WP02", "WP04"], "with": ["WP01"], "why": "gate"}
    ]


def test_nothing_passed_means_nothing_moves() -> None:
    state = queue.after_batch(fresh(), None, FAIL)
    for _ in range(3):
        action, _lane = queue.next_action(state)
        state = (
            queue.after_try(state, None, FAIL) if action == queue.TRY else queue.after_hold(state)
        )
    assert state["head"] == "base"
    assert queue.next_action(state) == (queue.RECORD, None)
    assert queue.merged_wps(state) == [] and queue.outcome(state)["merged_wps"] == []
    # the first culprit failed on the target alone: no other WP to name
    assert state["culprits"][0]["with"] == []


def test_the_last_try_on_the_batchs_tree_is_known_to_fail() -> None:
    state = queue.after_batch(fresh(), None, FAIL)
    state = queue.after_try(state, "a", None)
    assert queue.known_to_fail(state) is None  # lane-b on lane-a is not the batch's tree
    state = queue.after_try(state, "ab", None)
    assert queue.known_to_fail(state) == FAIL  # lane-c on lane-a + lane-b is
    conflict = queue.after_batch(fresh(), None, {"why": "conflict", "files": ["x"]})
    conflict = queue.after_try(queue.after_try(conflict, "a", None), "ab", None)
    assert queue.known_to_fail(conflict) is None  # a conflict says nothing of the tree


def test_a_lone_lane_that_fails_the_batch_is_the_culprit_without_a_second_gate() -> None:
    state = queue.start(queue.lanes_in_order(STEPS[:1], [], {}), "base", "main")
    state = queue.after_batch(state, None, FAIL)
    assert queue.known_to_fail(state) == FAIL


def test_the_next_step_depends_only_on_the_saved_state() -> None:
    """A step cut short by a kill is done again: the state before it names it."""
    state = queue.after_try(queue.after_batch(fresh(), None, FAIL), "a-ok", None)
    again = {**state}
    assert queue.next_action(state) == queue.next_action(again)
    assert queue.after_try(state, "ab", None) == queue.after_try(again, "ab", None)


def test_notes_name_the_culprit_its_company_and_the_target() -> None:
    culprit = {"lane_id": "lane-b", "wp_ids": ["WP02"], "with": ["WP01"], **FAIL}
    note = queue.fix_note(culprit, "main")
    assert "WP02 (lane-b) fails the test gate when merged together with WP01" in note
    assert "main never received it" in note and "/runs/x" in note
    alone = queue.fix_note({**culprit, "with": [], "why": "conflict", "files": ["a.py"]}, "main")
    assert "conflicts on a.py when merged onto main" in alone


def test_gate_rules_for_a_sprint() -> None:
    assert gate.after_gate(gate.PASSED, 0, 3) == gate.REVIEW
    assert gate.after_gate(gate.FLAKY, 2, 3) == gate.REVIEW
    assert gate.after_gate(gate.FAILED, 2, 3) == gate.FIX
    assert gate.after_gate(gate.FAILED, 3, 3) == gate.ESCALATE
    assert gate.needs_rerun([1]) and not gate.needs_rerun([0]) and not gate.needs_rerun([None])
    assert not gate.needs_rerun([1, 1])
    assert gate.attempt_verdict([1, 0]) == (True, True)
    assert gate.attempt_verdict([1, 1]) == (False, False)
    assert gate.attempt_verdict([None]) == (False, False)
    assert gate.tail("\n".join(str(i) for i in range(100)), lines=3) == "97\n98\n99"
    assert len(gate.tail("x" * 10_000)) == gate.TAIL_CHARS
