"""What a user sees of each kind of line in `status.events.jsonl`, read every way.

doctor names each wrongly typed key of a line; a value of the wrong type in an optional
key of a lane transition is read as absent (never a crash, never a different board);
a `kind` other than "annotation", even null, is a record that moves no lane; a review
rollback is recognised as Spec Kitty does; the snapshot cache's scan compares repeated
lines as the parser does; a big log is decoded with msgspec and a small one is not.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest

from kitty.adapters import eventlog
from kitty.core.log import read as logread
from kitty.core.log.events import Other, ParsedLog, field_problems
from kitty.core.log.read import ScannedLog, parse_lines, parse_log, replay_order, scan_log
from kitty.core.log.state import fold, replay
from tests.core.log.lines import T0, ann, tr


def board_of(lines: list[str]) -> Any:
    return replay(parse_lines(lines).events)


# -- doctor's strict view of an annotation's delta -------------------------------------

NOTE = {"kind": "annotation", "event_id": "A", "wp_id": "WP01", "at": T0.format(1)}


def test_doctor_is_silent_on_a_well_typed_annotation_delta() -> None:
    for delta in (
        {},
        {"subtasks": {"T001": "done", "T002": "planned"}},
        {"note": "n", "release_runtime_claim": True},
        {"release_runtime_claim": False, "subtasks": {}},
        {"agent": "codex", "shell_pid": "12"},
    ):
        assert field_problems(dict(NOTE, delta=delta)) == [], delta


def test_doctor_names_every_wrongly_typed_key_of_an_annotation_delta() -> None:
    delta = {"subtasks": ["T001"], "note": 5, "release_runtime_claim": "yes"}
    assert field_problems(dict(NOTE, actor=3, delta=delta)) == [
        "actor must be a string or an object, not a number",
        'delta.subtasks must map subtask ids to statuses, e.g. {"T001": "done"}',
        "delta.note must be a string, not a number",
        "delta.release_runtime_claim must be true or false, not 'yes'",
    ]
    subtasks = 'delta.subtasks must map subtask ids to statuses, e.g. {"T001": "done"}'
    for bad in ({"T001": 1}, {"T001": None}, {1: "done"}, "T001", 3):
        assert field_problems(dict(NOTE, delta={"subtasks": bad})) == [subtasks], bad
    assert field_problems(dict(NOTE, delta={"note": None})) == [
        "delta.note must be a string, not null"
    ]
    assert field_problems(dict(NOTE, delta={"release_runtime_claim": 0})) == [
        "delta.release_runtime_claim must be true or false, not 0"
    ]
    # A delta that is not an object is the parser's warning, not a field problem.
    assert field_problems(dict(NOTE, delta=[1])) == []


def test_doctor_names_a_from_lane_that_is_not_a_string() -> None:
    move = json.loads(tr("WP01", "planned", "claimed", T0.format(1), "A"))
    assert field_problems(dict(move, from_lane=3)) == ["from_lane must be a string, not a number"]
    assert field_problems(dict(move, from_lane=None, to_lane=[1])) == [
        "from_lane must be a string, not null",
        "to_lane must be a string, not a list",
    ]


# -- what replay reads of a lane transition ---------------------------------------------


@pytest.mark.parametrize(
    ("value", "shown"),
    [(5, "5"), (True, "True"), (["planned"], "['planned']")],
    ids=["n", "b", "l"],
)
def test_a_from_lane_that_is_not_a_string_is_named_as_written_in_its_conflict(
    value: Any, shown: str
) -> None:
    """Such a move is never applied (no lane is a number or a list); the conflict names
    the from_lane the line holds, so the user can find it."""
    move = json.loads(tr("WP01", "planned", "claimed", T0.format(2), "B", actor="alice"))
    move.update(from_lane=value, kitty_after="A")
    board = board_of([tr("WP01", "genesis", "planned", T0.format(1), "A"), json.dumps(move)])
    assert board.wps["WP01"].lane == "planned"
    assert [c.message for c in board.conflicts] == [
        f"WP01 {shown} -> claimed by alice was not applied: WP01 was already planned"
    ]


def test_an_optional_value_of_the_wrong_type_is_read_as_absent() -> None:
    """policy_metadata, reason, review_result and kitty_after of the wrong type: the
    board is the one of the same log without them (and replay does not crash)."""
    base = [
        tr("WP01", "genesis", "planned", T0.format(1), "A", kitty_after=None),
        tr("WP01", "planned", "claimed", T0.format(2), "B", kitty_after="A"),
        tr("WP01", "claimed", "in_progress", T0.format(3), "C", kitty_after="B"),
    ]
    odd = {
        "policy_metadata": ["x", "agent"],
        "reason": 7,
        "review_result": ["changes_requested"],
        "kitty_after": 5,
    }
    for key, value in odd.items():
        for at in (1, 2):  # kitty_after on the claim: a fork of the bootstrap if read as null
            lines = list(base)
            rec = json.loads(lines[at])
            clean = dict(rec, **{key: None})
            lines[at] = json.dumps(dict(rec, **{key: value}))
            got = board_of(lines)
            lines[at] = json.dumps(clean)
            assert repr(got) == repr(board_of(lines)), (key, at)
    moved = board_of([*base[:2], tr("WP01", "claimed", "blocked", T0.format(4), "D", reason="r")])
    assert moved.wps["WP01"].last_reason == "r"
    odd_reason = tr("WP01", "claimed", "blocked", T0.format(4), "D", reason=7)
    assert board_of([*base[:2], odd_reason]).wps["WP01"].last_reason is None


def test_a_record_whose_kind_is_not_annotation_moves_no_lane_even_a_null_kind() -> None:
    move = json.loads(tr("WP01", "genesis", "planned", T0.format(1), "A"))
    for kind in (None, "merge-note", ""):
        parsed = parse_lines([json.dumps(dict(move, kind=kind))])
        assert [type(e) for e in parsed.events] == [Other], kind
        assert parsed.warnings == []
        assert replay(parsed.events).lane("WP01") is None, kind
    assert board_of([json.dumps(move)]).lane("WP01") == "planned"


def test_a_review_rollback_is_recognised_as_spec_kitty_does() -> None:
    """At the very `at` of a review rollback, a forward move does not replace it. A move
    back to in_progress is a rollback from in_review, or from for_review with a
    review_ref; not from for_review without one, nor from another lane with one."""
    at = T0.format(5)

    def lane_after(frm: str, **back: Any) -> str:
        lines = [
            tr("WP01", "planned", frm, T0.format(1), "A"),
            tr("WP01", frm, "in_progress", at, "B", **back),
            tr("WP01", "in_progress", "for_review", at, "C"),  # the same instant, after B
        ]
        return str(board_of(lines).lane("WP01"))

    assert lane_after("in_review") == "in_progress"
    assert lane_after("for_review", review_ref="review-1") == "in_progress"
    assert lane_after("for_review") == "for_review"
    assert lane_after("for_review", review_ref=None) == "for_review"
    assert lane_after("claimed", review_ref="review-1") == "for_review"


@pytest.mark.parametrize(
    "tail", [b'{"event_id": "E', b"XX", b"\xff", b"}"], ids=["json", "xx", "not_utf8", "brace"]
)
def test_an_unterminated_last_line_that_is_not_json_is_named_torn_whatever_it_holds(
    tail: bytes,
) -> None:
    data = tr("WP01", "genesis", "planned", T0.format(1), "A").encode() + b"\nXX\n" + tail
    last = data.count(b"\n") + 1
    expected = [(2, "not valid JSON"), (last, "torn last line (write interrupted)")]
    for read in (parse_log, scan_log):
        got = read(data)
        assert [(w.line, w.message) for w in got.warnings] == expected, read
        assert got.unterminated


# -- the read records ---------------------------------------------------------------


def test_a_missing_log_reads_as_an_empty_log(tmp_path: Path) -> None:
    assert eventlog.read(tmp_path / "status.events.jsonl") == parse_log(b"")
    assert ParsedLog() == parse_log(b"")
    assert not ParsedLog().unterminated
    assert ScannedLog() == scan_log(b"")
    assert (ScannedLog().lines, ScannedLog().unterminated) == (0, False)


LOG = "\n".join(
    [
        tr("WP01", "genesis", "planned", T0.format(1), "A"),
        ann("WP01", T0.format(2), "B", {"note": "hi"}),
        tr("WP01", "genesis", "planned", T0.format(3), "A", actor="codex"),  # a repeat
        json.dumps({"event_type": "WPCreated", "event_id": "C", "payload": {}}),
        "{not json",
        tr("WP01", "planned", "claimed", T0.format(4), "D")[:30],  # torn
    ]
).encode()


def test_a_read_log_survives_a_pickle_round_trip_whole() -> None:
    parsed, scan = parse_log(LOG), scan_log(LOG)
    assert parsed.events and parsed.warnings and parsed.unterminated
    assert scan.events and scan.warnings and scan.repeats and scan.ids and scan.lines == 6
    assert pickle.loads(pickle.dumps(parsed)) == parsed
    assert pickle.loads(pickle.dumps(scan)) == scan


def test_a_scanned_event_keeps_only_what_the_fold_reads() -> None:
    """Its record is dropped: `data` is empty, so it reads no actor (none lingers)."""
    scan = scan_log(LOG)
    assert [e.event_id for e in scan.events] == ["A", "B"]
    assert all(e.data == {} and e.actor is None for e in scan.events)
    assert [e.actor for e in parse_log(LOG).events[:2]] == ["claude", "user"]


def test_repeated_lines_with_bytes_that_are_not_utf8_are_compared_as_the_parser_does() -> None:
    """Invalid UTF-8 reads as U+FFFD everywhere: the cache's scan reports the same repeats
    as replay (no crash), whether the repeat's bytes differ or only its key order does."""
    first = {"event_id": "E1", "wp_id": "WP01", "at": T0.format(1), "kind": "annotation"}
    one = json.dumps(dict(first, delta={"s": "@"}), sort_keys=True).encode()
    lines = [
        one.replace(b"@", b"\xff"),
        json.dumps(dict(first, delta={"s": "@"})).encode().replace(b"@", b"\xfe"),  # same
        json.dumps(dict(first, delta={"s": "@@"})).encode().replace(b"@@", b"\xff!"),  # not
    ]
    data = b"\n".join(lines) + b"\n"
    scan = scan_log(data)
    _, repeats = replay_order(parse_log(data).events)
    assert repr(scan.repeats) == repr(repeats)
    assert [(w.line, w.message) for w in repeats] == [
        (3, "event_id E1 repeats line 1 with different content")
    ]
    assert repr(fold(scan.events, scan.repeats)) == repr(replay(parse_log(data).events))


# -- which decoder reads a log ------------------------------------------------------------


def test_a_big_log_is_decoded_with_msgspec_line_by_line_and_a_small_one_is_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lines = [tr("WP01", "genesis", "planned", T0.format(1), "A").encode(), b"", b"{not json"]
    data = b"\n".join(lines) + b"\n"
    monkeypatch.setattr(logread, "_fast", None)
    monkeypatch.setattr(logread, "FAST_DECODE_BYTES", len(data))
    parse_log(data)
    decoder = logread._fast
    assert decoder is not None  # loaded once, kept for the next read
    seen: list[bytes] = []

    def spy(raw: bytes) -> Any:
        seen.append(raw)
        return decoder(raw)

    monkeypatch.setattr(logread, "_fast", spy)
    for read in (parse_log, scan_log):
        seen.clear()
        assert [e.event_id for e in read(data).events] == ["A"]
        assert seen == lines, read
        seen.clear()
        monkeypatch.setattr(logread, "FAST_DECODE_BYTES", len(data) + 1)  # one byte short
        assert [e.event_id for e in read(data).events] == ["A"]
        assert seen == [], read
        monkeypatch.setattr(logread, "FAST_DECODE_BYTES", len(data))
