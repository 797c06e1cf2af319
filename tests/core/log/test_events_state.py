"""Parsing every line kind, and replaying the log onto a board."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kitty.core.clock import format_at, hybrid_at, parse_at, ulid
from kitty.core.log.events import Annotation, LogWarning, Other, Transition, parse_record, serialize
from kitty.core.log.read import parse_lines
from kitty.core.log.state import replay
from tests.core.log.lines import T0, ann, tr


def test_four_line_kinds_are_classified() -> None:
    lines = [
        tr("WP01", "genesis", "planned", T0.format(1), "A"),
        ann("WP01", T0.format(2), "B", {"note": "hi"}),
        json.dumps({"event_id": "C", "event_type": "WPCreated", "payload": {}}),
        json.dumps({"type": "RetrospectiveCaptured", "event_id": "D"}),
    ]
    parsed = parse_lines(lines)
    kinds = [type(e) for e in parsed.events]
    assert kinds == [Transition, Annotation, Other, Other]
    assert parsed.warnings == []


def test_bad_lines_become_warnings_with_line_numbers() -> None:
    lines = [
        tr("WP01", "genesis", "planned", T0.format(1), "A"),
        "{not json",
        json.dumps({"event_id": "X", "wp_id": "WP01", "to_lane": "planned"}),
        tr("WP01", "planned", "flying", T0.format(2), "Y"),
        "[1, 2]",
        tr("WP01", "planned", "claimed", "yesterday", "Z"),
        '{"event_id": "torn", "wp_id": "WP0',
    ]
    parsed = parse_lines(lines, unterminated=True)
    messages = {w.line: w.message for w in parsed.warnings}
    assert messages[2] == "not valid JSON"
    assert "missing from_lane, at" in messages[3]
    assert "unknown to_lane 'flying'" in messages[4]
    assert messages[5] == "not a JSON object"
    assert "bad timestamp" in messages[6]
    assert "torn last line" in messages[7]
    assert len(parsed.events) == 1
    assert parsed.warnings[0].render("log.jsonl") == "log.jsonl:2: not valid JSON (line skipped)"


def test_serialize_round_trips_every_kind() -> None:
    records = [
        json.loads(tr("WP01", "planned", "claimed", T0.format(1), "A", actor={"tool": "claude"})),
        json.loads(ann("WP01", T0.format(2), "B", {"subtasks": {"T001": "done"}})),
        {"event_id": "C", "event_type": "MissionAccepted", "payload": {"by": "x"}},
    ]
    for record in records:
        line = serialize(record)
        assert line.endswith("\n") and line.count("\n") == 1
        assert list(json.loads(line)) == sorted(record)
        again = parse_record(json.loads(line))
        assert getattr(again, "data", None) == record


def test_replay_orders_by_time_then_id_and_drops_repeated_ids() -> None:
    lines = [
        tr("WP01", "genesis", "planned", T0.format(1), "A"),
        tr("WP01", "claimed", "in_progress", T0.format(3), "C"),  # written out of order
        tr("WP01", "planned", "claimed", T0.format(2), "B"),
        tr("WP01", "planned", "claimed", T0.format(2), "B"),  # union-merge duplicate
        tr("WP01", "in_progress", "doing", T0.format(3), "D"),  # same time: id breaks the tie
    ]
    board = replay(parse_lines(lines).events)
    st = board.wps["WP01"]
    assert st.lane == "in_progress"
    assert st.last_event_id == "D"
    assert board.event_count == 4
    assert board.warnings == []


def test_conflicting_duplicate_id_is_reported_and_first_wins() -> None:
    lines = [
        tr("WP01", "genesis", "planned", T0.format(1), "A"),
        tr("WP01", "genesis", "canceled", T0.format(1), "A"),
    ]
    board = replay(parse_lines(lines).events)
    assert board.wps["WP01"].lane == "planned"
    assert "repeats line 1" in board.warnings[0].message


def test_annotations_and_review_cycles() -> None:
    rejected = {"verdict": "changes_requested", "reviewer": "codex", "reference": "r1"}
    lines = [
        tr("WP01", "genesis", "planned", T0.format(1), "A"),
        tr("WP01", "planned", "claimed", T0.format(2), "B", policy_metadata={"agent": "claude"}),
        ann("WP01", T0.format(3), "C", {"subtasks": {"T001": "done"}, "model": "m1", "note": "n"}),
        tr("WP01", "claimed", "in_progress", T0.format(3), "C2"),
        tr("WP01", "in_progress", "for_review", T0.format(4), "D"),
        tr("WP01", "for_review", "in_review", T0.format(5), "E", actor={"tool": "codex"}),
        tr(
            "WP01", "in_review", "planned", T0.format(6), "F", actor="codex", review_result=rejected
        ),
        tr(
            "WP01",
            "planned",
            "approved",
            T0.format(7),
            "G",
            actor="lead",
            force=True,
            reason="Arbiter decision: ok",
        ),
    ]
    st = replay(parse_lines(lines).events).wps["WP01"]
    assert st.subtasks == {"T001": "done"}
    assert st.scalars["model"] == "m1"
    assert st.notes == ["n"]
    assert st.implementer == "claude" and st.reviewer == "codex"
    assert st.review_cycles == 1 and st.reviews[0].cycle == 1
    assert st.force_count == 1
    assert st.arbiter is not None and st.arbiter["to_lane"] == "approved"
    assert st.lane == "approved"


def test_wp_without_transition_has_no_lane() -> None:
    board = replay(parse_lines([ann("WP02", T0.format(1), "A", {"note": "x"})]).events)
    assert board.wps["WP02"].lane is None


def test_clock_helpers() -> None:
    us = parse_at("2026-11-29T22:19:56.764854+00:00")
    assert format_at(us) == "2026-11-29T22:19:56.764854+00:00"
    assert parse_at("2026-11-29T22:19:56Z") == parse_at("2026-11-29T22:19:56+00:00")
    assert parse_at("2026-11-29T23:19:56+01:00") == parse_at("2026-11-29T22:19:56")
    assert hybrid_at(100, None) == 100
    assert hybrid_at(100, 500) == 501  # a writer with a slow clock still sorts last
    assert hybrid_at(900, 500) == 900
    a = ulid(1_700_000_000_000, bytes(10))
    b = ulid(1_700_000_000_001, bytes(10))
    assert len(a) == 26 and a < b
    assert ulid(0, b"\xff" * 10).endswith("ZZZZZZZZZZZZZZZZ")


def test_every_warning_message_is_exact() -> None:
    lines = [
        json.dumps({"kind": "annotation", "event_id": "A", "wp_id": "", "at": T0.format(1)}),
        json.dumps(
            {"kind": "annotation", "event_id": "B", "wp_id": "WP01", "at": T0.format(1), "delta": 3}
        ),
        json.dumps(
            {"kind": "annotation", "event_id": "C", "wp_id": "WP01", "at": "soon", "delta": {}}
        ),
        json.dumps({"wp_id": "WP01", "from_lane": "", "to_lane": "planned"}),
        tr("WP01", "planned", "genesis", T0.format(2), "D"),
        tr("WP01", "planned", "claimed", "later", "E"),
        "   ",
        "{bad",
    ]
    parsed = parse_lines(lines)
    assert [(w.line, w.message) for w in parsed.warnings] == [
        (1, "annotation missing wp_id, delta"),
        (2, "annotation delta is not an object"),
        (3, "bad timestamp 'soon'"),
        (4, "lane transition missing event_id, from_lane, at"),
        (5, "unknown to_lane 'genesis'"),
        (6, "bad timestamp 'later'"),
        (8, "not valid JSON"),  # line 7 is blank: ignored; not torn: the file ended cleanly
    ]
    assert parsed.events == [] and parsed.unterminated is False


def test_parsed_fields_and_aliases() -> None:
    moved = parse_record(
        json.loads(tr("WP01", "doing", "doing", T0.format(3), "A", force=True)), line=7
    )
    assert isinstance(moved, Transition)
    assert (moved.event_id, moved.wp_id, moved.from_lane, moved.to_lane, moved.line) == (
        "A",
        "WP01",
        "in_progress",
        "in_progress",
        7,
    )
    assert moved.at == T0.format(3) and moved.at_us == parse_at(T0.format(3))
    assert moved.actor == "claude" and moved.force is True
    odd = parse_record(json.loads(tr("WP01", "someday", "planned", T0.format(3), "B")))
    assert isinstance(odd, Transition) and odd.from_lane == "someday"  # kept as written
    note = parse_record(json.loads(ann("WP01", T0.format(4), "C", {"note": "n"})), line=2)
    assert isinstance(note, Annotation)
    assert (note.event_id, note.wp_id, note.delta, note.actor, note.line) == (
        "C",
        "WP01",
        {"note": "n"},
        "user",
        2,
    )
    assert note.at_us == parse_at(T0.format(4))
    other = parse_record({"kind": "merge-note", "event_id": "D"})
    assert isinstance(other, Other) and other.event_id == "D"
    assert parse_record({"type": "x", "event_id": 5}).event_id is None  # type: ignore[union-attr]


def test_actor_tool() -> None:
    from kitty.core.log.events import actor_tool

    assert actor_tool("claude") == "claude"
    assert actor_tool("") is None
    assert actor_tool({"tool": "codex", "model": "m"}) == "codex"
    assert actor_tool({"tool": ""}) is None
    assert actor_tool({"tool": 3}) is None
    assert actor_tool(None) is None


def test_torn_is_only_the_last_line_of_an_unterminated_file() -> None:
    parsed = parse_lines(
        ["{bad", tr("WP01", "genesis", "planned", T0.format(1), "A"), "{torn"], unterminated=True
    )
    assert [(w.line, w.message) for w in parsed.warnings] == [
        (1, "not valid JSON"),
        (3, "torn last line (write interrupted)"),
    ]
    assert parsed.unterminated is True
    assert parse_lines([]).events == [] and parse_lines([]).warnings == []


def _lifecycle() -> list[str]:
    t = "2026-01-01T00:00:{:02d}+00:00"
    rej = {
        "verdict": "changes_requested",
        "reviewer": "codex",
        "reference": "r1",
        "feedback_path": "f.md",
    }
    sr = {"self_review_fallback": {"approved_by": "claude"}}
    return [
        tr("WP01", "genesis", "planned", t.format(1), "A"),
        tr(
            "WP01",
            "planned",
            "claimed",
            t.format(2),
            "B",
            policy_metadata={"agent": "claude", "shell_pid": 42},
        ),
        ann("WP01", t.format(3), "C", {"agent_pid": 77, "heartbeat": "x", "sprint_run": "r"}),
        tr(
            "WP01",
            "claimed",
            "in_progress",
            t.format(4),
            "D",
            actor="claude",
            policy_metadata={"shell_pid": 43},
        ),
        tr("WP01", "in_progress", "for_review", t.format(5), "E", actor="claude"),
        tr("WP01", "for_review", "in_review", t.format(6), "F", actor={"tool": "codex"}),
        tr(
            "WP01",
            "in_review",
            "planned",
            t.format(7),
            "G",
            actor="codex",
            review_result=rej,
            reason="changes requested: r1",
        ),
        ann(
            "WP01",
            t.format(8),
            "H",
            {
                "release_runtime_claim": True,
                "subtasks": {"T1": "planned"},
                "note": "again",
                "model": "m",
                "tags": ["x"],
            },
        ),
        tr("WP01", "planned", "claimed", t.format(9), "I", actor="gemini"),
        tr("WP01", "claimed", "in_progress", t.format(10), "J", actor="gemini"),
        tr("WP01", "in_progress", "for_review", t.format(11), "K", actor="gemini"),
        tr("WP01", "for_review", "in_review", t.format(12), "L", actor="claude"),
        tr(
            "WP01",
            "in_review",
            "approved",
            t.format(13),
            "M",
            actor="claude",
            force=True,
            reason="fallback",
            policy_metadata=sr,
            review_result={"verdict": "approved"},
        ),
    ]


def test_replay_of_a_whole_review_loop_field_by_field() -> None:
    t = "2026-01-01T00:00:{:02d}+00:00"
    lines = _lifecycle()

    def at(n: int) -> Any:
        return replay(parse_lines(lines[:n]).events).wps["WP01"]

    claimed = at(2)
    assert (claimed.lane, claimed.agent, claimed.implementer, claimed.reviewer) == (
        "claimed",
        "claude",
        "claude",
        None,
    )
    assert claimed.runtime_claim == {"agent": "claude", "shell_pid": 42, "at": t.format(2)}
    beat = at(3)
    assert beat.runtime_claim == {
        "agent": "claude",
        "shell_pid": 42,
        "at": t.format(3),
        "agent_pid": 77,
        "sprint_run": "r",
        "heartbeat": t.format(3),
    }
    assert beat.scalars == {"agent_pid": 77, "heartbeat": "x", "sprint_run": "r"}
    assert (beat.last_event_id, beat.lane_since_us) == ("C", parse_at(t.format(2)))
    started = at(4)  # claimed -> in_progress keeps the sprint's claim, takes the new shell pid
    assert started.runtime_claim is not None and started.runtime_claim["shell_pid"] == 43
    assert started.runtime_claim["agent_pid"] == 77
    rejected = at(7)
    assert (rejected.lane, rejected.agent, rejected.reviewer, rejected.actor) == (
        "planned",
        "codex",
        "codex",
        "codex",
    )
    assert rejected.runtime_claim is None and rejected.review_cycles == 1
    assert rejected.last_reason == "changes requested: r1"
    assert rejected.review_result == {
        "verdict": "changes_requested",
        "reviewer": "codex",
        "reference": "r1",
        "feedback_path": "f.md",
    }
    noted = at(8)
    assert (noted.notes, noted.subtasks, noted.scalars["model"]) == (
        ["again"],
        {"T1": "planned"},
        "m",
    )
    assert "tags" not in noted.scalars  # lists and dicts are structured, never scalars
    final = at(13)
    assert (final.lane, final.implementer, final.reviewer, final.force_count) == (
        "approved",
        "gemini",
        "claude",
        1,
    )
    assert final.self_review == {"approved_by": "claude", "at": t.format(13)}
    assert final.arbiter is None and final.conflicts == []
    first, second = final.reviews
    assert (
        first.verdict,
        first.reviewer,
        first.reference,
        first.feedback_path,
        first.to_lane,
        first.event_id,
        first.cycle,
        first.note,
    ) == ("changes_requested", "codex", "r1", "f.md", "planned", "G", 1, "changes requested: r1")
    assert (second.verdict, second.reviewer, second.cycle, second.note, second.at) == (
        "approved",
        "claude",
        None,
        "fallback",
        t.format(13),
    )
    board = replay(parse_lines(lines).events)
    assert (board.event_count, board.last_event_id, board.newest_at_us) == (
        13,
        "M",
        parse_at(t.format(13)),
    )


def test_materialize_and_wp_view_field_by_field() -> None:
    from kitty.core.log.snapshot import materialize, wp_view
    from kitty.core.model import WorkPackage

    t = "2026-01-01T00:00:{:02d}+00:00"
    board = replay(parse_lines(_lifecycle()[:7]).events)
    snap = materialize(board, "shop", {"mission_number": "007"})
    assert snap["work_packages"]["WP01"] == {
        "agent_pid": 77,
        "heartbeat": "x",
        "sprint_run": "r",
        "actor": "codex",
        "agent": "codex",
        "force_count": 0,
        "lane": "planned",
        "last_event_id": "G",
        "last_transition_at": t.format(7),
        "notes": [],
        "review_cycles": 1,
        "review_result": {
            "feedback_path": "f.md",
            "reference": "r1",
            "reviewer": "codex",
            "verdict": "changes_requested",
        },
        "review_status": "has_feedback",
        "subtasks": {},
    }
    assert {k: v for k, v in snap.items() if k not in ("work_packages", "summary")} == {
        "event_count": 7,
        "last_event_id": "G",
        "materialized_at": "2026-01-01T00:00:07.000000+00:00",
        "mission_number": "007",
        "mission_slug": "shop",
        "mission_type": "software-dev",
    }
    assert snap["summary"]["planned"] == 1 and sum(snap["summary"].values()) == 1
    empty = materialize(replay([]), "shop", {"mission_type": "research"})
    assert (empty["materialized_at"], empty["mission_number"], empty["mission_type"]) == (
        None,
        "",
        "research",
    )
    wp = WorkPackage("WP01", "Cart", ("WP02",), ("T1", "T2"), (), "t", "WP01")
    board.wps["WP01"].subtasks["T9"] = "done"  # a mark for a subtask no longer in the file
    assert wp_view("WP01", wp, board.wps["WP01"], board, 3) == {
        "id": "WP01",
        "title": "Cart",
        "lane": "planned",
        "dependencies": ["WP02"],
        "waits_for": ["WP02"],
        "agent": "codex",
        "holder": "codex",
        "implementer": "claude",
        "reviewer": "codex",
        "subtasks": {"T1": "planned", "T2": "planned", "T9": "done"},
        "review_cycles": 1,
        "cycle": "1/3",
        "cycles_since_arbiter": 1,
        "max_cycles": 3,
        "force_count": 0,
        "last_transition_at": t.format(7),
        "arbiter": None,
        "self_review": None,
        "reason": None,
        "review_halt": None,
        "review_round": None,
        "review_status": "has_feedback",
        "gate": None,
        "usage": None,
    }
    missing = wp_view("WP09", None, None, board, 5)
    assert (missing["title"], missing["lane"], missing["max_cycles"], missing["waits_for"]) == (
        "(no WP file)",
        None,
        5,
        [],
    )
    blocked = replay(
        parse_lines(
            [
                tr("WP01", "genesis", "planned", t.format(1), "A"),
                tr("WP01", "planned", "blocked", t.format(2), "B", reason="legal"),
            ]
        ).events
    )
    view = wp_view("WP01", wp, blocked.wps["WP01"], blocked, 3)
    assert (view["reason"], view["waits_for"]) == ("legal", [])


def test_empty_values_count_as_missing_and_every_kind_keeps_its_line() -> None:
    blank_id = json.loads(tr("", "planned", "claimed", T0.format(1), "A"))
    assert parse_record(blank_id, 3) == LogWarning(3, "lane transition missing wp_id")
    blank_note = json.loads(ann("WP01", T0.format(1), "", {}))
    assert parse_record(blank_note, 4) == LogWarning(4, "annotation missing event_id")
    envelope = parse_record({"event_type": "WPCreated", "event_id": "E"}, 5)
    other = parse_record({"type": "x"}, 6)
    foreign = parse_record({"kind": "merge-note"}, 7)
    assert [e.line for e in (envelope, other, foreign)] == [5, 6, 7]  # type: ignore[union-attr]
    assert parse_record({"type": "x"}).line == 0  # type: ignore[union-attr]
    moved = parse_record(json.loads(tr("WP01", "planned", "claimed", T0.format(1), "A")))
    assert moved.line == 0  # type: ignore[union-attr]


def test_a_record_for_something_that_is_not_a_wp_is_skipped_with_its_line() -> None:
    moved = json.loads(tr("wp1", "planned", "claimed", T0.format(1), "A"))
    assert parse_record(moved, 8) == LogWarning(8, "wp_id 'wp1' is not a work package id")
    note = json.loads(ann("WP1x", T0.format(1), "B", {}))
    assert parse_record(note, 9) == LogWarning(9, "wp_id 'WP1x' is not a work package id")
    for odd in ("XY12", "WPx1", "W1", "WPx", 5):
        record = dict(moved, wp_id=odd)
        assert isinstance(parse_record(record), LogWarning), odd
    assert isinstance(parse_record(dict(moved, wp_id="WP7")), Transition)


def test_extend_appends_only_newer_events_and_helpers_read_the_policy() -> None:
    from kitty.core.log.state import Board, event_agent, event_machine, extend

    t = "2026-01-01T00:00:{:02d}+00:00"
    first = parse_lines([tr("WP01", "genesis", "planned", t.format(1), "A")]).events
    board = replay(first)
    claim = tr(
        "WP01",
        "planned",
        "claimed",
        t.format(2),
        "B",
        policy_metadata={"agent": "gemini", "machine": "m2"},
    )
    newer = parse_lines([claim]).events
    extend(board, newer)
    assert (board.lane("WP01"), board.event_count, board.last_event_id) == ("claimed", 2, "B")
    assert board.wps["WP01"].agent == "gemini" and board.wps["WP01"].last_activity_us == parse_at(
        t.format(2)
    )
    stale = parse_lines([tr("WP01", "claimed", "in_progress", t.format(2), "C")]).events
    with pytest.raises(ValueError, match="extend\\(\\) needs events newer than the board"):
        extend(board, stale)
    assert extend(Board(), []).event_count == 0
    moved = newer[0]
    assert isinstance(moved, Transition)
    assert (event_agent(moved), event_machine(moved)) == ("gemini", "m2")
    plain = parse_lines(
        [tr("WP01", "planned", "claimed", t.format(2), "D", actor={"tool": "codex"})]
    ).events[0]
    assert isinstance(plain, Transition)
    assert (event_agent(plain), event_machine(plain)) == ("codex", None)
    assert Board().lane("WP09") is None
    assert Board().get("WP09").lane is None


def test_replay_counts_cycles_records_arbiters_and_reclaims() -> None:
    t = "2026-01-01T00:00:{:02d}+00:00"
    rej = {"verdict": "changes_requested", "reviewer": "codex"}
    lines = [
        tr("WP01", "genesis", "planned", t.format(1), "A"),
        tr("WP01", "genesis", "planned", t.format(2), "A2"),  # a repeated bootstrap: skipped
        tr("WP01", "planned", "claimed", t.format(3), "B", actor="claude"),
        ann(
            "WP01",
            t.format(4),
            "C",
            {"agent": "claude-2", "note": 5, "release_runtime_claim": False, "heartbeat": "x"},
        ),
        tr("WP01", "claimed", "in_progress", t.format(5), "D", actor="claude"),
        tr("WP01", "in_progress", "for_review", t.format(6), "E", actor="claude"),
        tr("WP01", "for_review", "in_review", t.format(7), "F", actor="codex"),
        tr(
            "WP01",
            "in_review",
            "planned",
            t.format(8),
            "G",
            actor={"tool": "codex"},
            review_result=rej,
        ),
        tr("WP01", "planned", "claimed", t.format(9), "H", actor="claude"),
        tr("WP01", "claimed", "in_progress", t.format(10), "I", actor="claude"),
        tr("WP01", "in_progress", "for_review", t.format(11), "J", actor="claude"),
        tr("WP01", "for_review", "in_review", t.format(12), "K", actor="gemini"),
        tr(
            "WP01",
            "in_review",
            "in_progress",
            t.format(13),
            "L",
            actor="gemini",
            review_result={"verdict": "changes_requested", "reviewer": 7},
        ),
        tr(
            "WP01",
            "in_progress",
            "blocked",
            t.format(14),
            "M",
            actor="lead",
            force=True,
            reason="Escalated to human: scope",
        ),
        tr(
            "WP01",
            "blocked",
            "approved",
            t.format(15),
            "N",
            actor="lead",
            force=True,
            reason="ok",
            policy_metadata={"arbiter": {"decision": "approve"}, "reclaim": {"from": "m1"}},
        ),
    ]

    def at(n: int) -> Any:
        return replay(parse_lines(lines[:n]).events).wps["WP01"]

    noted = at(
        4
    )  # an annotation may name the agent; a non-text note and a False release do nothing
    assert (noted.agent, noted.notes, noted.runtime_claim) == ("claude-2", [], None)
    assert noted.scalars == {"agent": "claude-2", "heartbeat": "x"}
    escalated = at(14)
    assert escalated.review_cycles == 2
    assert escalated.arbiter == {
        "note": "Escalated to human: scope",
        "at": t.format(14),
        "to_lane": "blocked",
        "by": "lead",
        "cycles": 2,  # the rejections when it was decided: the cap restarts there
    }
    final = at(15)
    assert [(r.reviewer, r.cycle) for r in final.reviews] == [
        ("codex", 1),
        ("gemini", 2),
    ]  # 7 is no name
    assert final.arbiter == {
        "decision": "approve",
        "at": t.format(15),
        "to_lane": "approved",
        "cycles": 2,
    }
    assert final.reclaim == {"from": "m1", "at": t.format(15)}
    assert final.conflicts == [] and final.lane == "approved"


def test_conflict_kinds_and_messages() -> None:
    t = "2026-01-01T00:00:{:02d}+00:00"
    same = {"agent": "claude", "machine": "m1"}
    # kitty's own lines (they carry the causal link `kitty_after`): only those conflict
    lines = [
        tr("WP01", "genesis", "planned", t.format(1), "A", kitty_after=None),
        tr(
            "WP01",
            "planned",
            "claimed",
            t.format(2),
            "B",
            actor="claude",
            policy_metadata=same,
            kitty_after="A",
        ),
        tr(
            "WP01",
            "planned",
            "claimed",
            t.format(3),
            "B2",
            actor="claude",
            policy_metadata=same,
            kitty_after="A",
        ),  # a replica
        tr("WP01", "planned", "claimed", t.format(4), "B3", actor=None, kitty_after="A"),
        tr("WP01", "claimed", "done", t.format(5), "C", actor="x", kitty_after="B"),
        tr("WP01", "claimed", "in_progress", t.format(6), "D", actor="claude", kitty_after="B"),
        tr(
            "WP01",
            "in_progress",
            "approved",
            t.format(7),
            "E",
            actor="claude",
            reason="self",
            kitty_after="D",
        ),
    ]
    board = replay(parse_lines(lines).events)
    assert [(c.kind, c.message, c.agent, c.holder, c.lane) for c in board.conflicts] == [
        (
            "stale_from_lane",
            "WP01 planned -> claimed by unknown was not applied: WP01 was already claimed",
            None,
            "claude",
            "claimed",
        ),
        (
            "illegal_edge",
            "WP01 claimed -> done is not a legal move without --force and was not applied",
            "x",
            "claude",
            "claimed",
        ),
        (
            "self_review",
            "claude implemented WP01 and approved it without the self-review fallback; "
            "the approval was not applied",
            "claude",
            "claude",
            "in_progress",
        ),
    ]
    assert board.wps["WP01"].lane == "in_progress"
    # The same lines without the link are history: folded as Spec Kitty folds them
    # (the last transition sets the lane), never a conflict.
    history = [
        json.dumps({k: v for k, v in json.loads(x).items() if k != "kitty_after"}) for x in lines
    ]
    folded = replay(parse_lines(history).events)
    assert folded.conflicts == [] and folded.wps["WP01"].lane == "approved"


def test_agent_run_records_are_summed_per_wp_and_kept_out_of_the_scalars() -> None:
    """A sprint's `agent_run` annotation (issue 38): its usage summed into the WP's
    `usage`, runs, refused calls and errors counted; nothing nested leaks to status.json."""
    run = {
        "role": "implement",
        "agent": "claude",
        "denials": ["Bash(x)"],
        "error": None,
        "usage": {"input_tokens": 10, "output_tokens": 5, "cost_usd": 0.25, "seconds": 2.0},
    }
    failed = {"role": "review", "agent": "codex", "denials": [], "error": "boom",
              "usage": {"input_tokens": 1, "turns": 2, "cost_usd": True}}  # fmt: skip
    lines = [
        tr("WP01", "genesis", "planned", T0.format(1), "A"),
        ann("WP01", T0.format(2), "B", {"agent_run": run}),
        ann("WP01", T0.format(3), "C", {"agent_run": failed}),
        ann("WP01", T0.format(4), "D", {"agent_run": "not a record"}),
    ]
    st = replay(parse_lines(lines).events).wps["WP01"]
    assert st.usage == {
        "input_tokens": 11, "output_tokens": 5, "cost_usd": 0.25, "seconds": 2.0, "turns": 2,
        "runs": 2, "denials": 1, "errors": 1, "tokens": 16,
    }  # fmt: skip
    assert st.scalars == {"agent_run": "not a record"}  # a string is a plain scalar
