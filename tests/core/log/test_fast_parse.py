"""The fast log reader gives exactly what the json-module reader gives.

`logread.parse_log` decodes a big log with msgspec and hands every line msgspec
refuses (NaN, lone surrogates, invalid UTF-8, a non-object...) to the json module;
`parse_lines` on the decoded text is the reference. Both readers run on random
logs made of plausible records and hostile lines, with the msgspec threshold at 0
(every line tries msgspec first) and out of reach (the json module alone), and the
events, warnings and replayed boards must be the same. `repr` is compared, so a
NaN (never equal to itself) and the order of keys count too.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kitty.core import lanes
from kitty.core.log import events
from kitty.core.log import read as logread
from kitty.core.log.events import ParsedLog
from kitty.core.log.read import parse_lines, parse_log, scan_log
from kitty.core.log.state import fold, replay

PROPERTY = settings(
    database=None,
    deadline=None,
    max_examples=200,
    suppress_health_check=[HealthCheck.too_slow],
)
T0 = "2026-01-01T00:00:{:02d}.{:06d}+00:00"

#: Lines that only the json module takes, or nobody: each reader must agree on them.
HOSTILE = [
    b'{"event_id": "X1", "wp_id": "WP01", "at": "2026-01-01T00:00:00+00:00", '
    b'"kind": "annotation", "delta": {"note": NaN}}',
    b'{"event_id": "X2", "wp_id": "WP01", "at": "2026-01-01T00:00:00+00:00", '
    b'"kind": "annotation", "delta": {"n": 123456789012345678901234567890}}',
    b'{"event_id": "X3", "wp_id": "WP01", "at": "2026-01-01T00:00:00+00:00", '
    b'"kind": "annotation", "delta": {"s": "\\ud800"}}',
    b'{"event_id": "X4", "wp_id": "WP01", "at": "2026-01-01T00:00:00+00:00", '
    b'"kind": "annotation", "delta": {"s": "\xff\xfe"}}',
    b'{"event_id": "X5", "wp_id": "WP01", "at": "2026-01-01T00:00:00+00:00", '
    b'"kind": "annotation", "delta": {"big": 1e400, "neg": -0, "f": 0.30000000000000004}}',
    b'{"event_id": "X6", "wp_id": "WP01", "wp_id": "WP02", "at": "2026-01-01T00:00:00+00:00", '
    b'"kind": "annotation", "delta": {"a": 1, "b": 2, "a": 3}}',
    b"\xef\xbb\xbf{}",
    b"[1, 2]",
    b"null",
    b"   ",
    b"\xe2\x80\xa8",  # a line separator alone: blank to str.strip
    b"\x1c",
    b'{"a": 1}\r',
    b'{"a": 1,}',
    b'{"a": "\x01"}',
    b"[" * 3000 + b"]" * 3000,
    b'{"a": ' + b"[" * 3000 + b"]" * 3000 + b"}",
    b"not json",
    b'{"event_id": "X7"',
]


def reference(data: bytes) -> ParsedLog:
    """What kitty did before the fast reader: decode the text, split it, parse_lines."""
    text = data.decode("utf-8", errors="replace")
    unterminated = bool(text) and not text.endswith("\n")
    lines = text.split("\n")
    if not unterminated:
        lines.pop()
    return parse_lines(lines, unterminated=unterminated)


def same(data: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = reference(data)
    board = repr(replay(expected.events))
    ids = {e for ev in expected.events if (e := ev.event_id)}
    for threshold in (0, 1 << 60):
        monkeypatch.setattr(logread, "FAST_DECODE_BYTES", threshold)
        got = parse_log(data)
        assert repr(got) == repr(expected), threshold
        assert repr(replay(got.events)) == board, threshold
        scan = scan_log(data)  # the snapshot cache's full read
        assert repr(fold(scan.events, scan.repeats)) == board, threshold
        assert repr(scan.warnings) == repr(expected.warnings), threshold
        assert (scan.ids, scan.unterminated) == (ids, expected.unterminated), threshold
        assert scan.lines == len(data.split(b"\n")) - (0 if scan.unterminated else 1)
    tail = parse_log(data, first_line=41)
    assert [w.line - 40 for w in tail.warnings] == [w.line for w in expected.warnings]


def record(rng: random.Random, i: int) -> dict[str, Any]:
    wp = f"WP{rng.randint(1, 3):02d}"
    at = T0.format(rng.randint(0, 59), rng.randint(0, 999_999))
    event_id = rng.choice([f"E{i:04d}", f"E{rng.randint(0, 5):04d}"])  # some repeat
    if rng.random() < 0.3:
        delta = rng.choice(
            [{"note": "n"}, {"subtasks": {"T1": "done"}}, {"agent": "codex", "x": 1.5}]
        )
        return {"actor": "claude", "at": at, "delta": delta, "event_id": event_id,
                "kind": "annotation", "wp_id": wp}  # fmt: skip
    if rng.random() < 0.1:
        return {"event_type": "WPCreated", "event_id": event_id, "payload": {"wp_id": wp}}
    frm, to = rng.choice([("planned", "claimed"), ("claimed", "in_progress"),
                          ("in_progress", "for_review"), ("for_review", "in_review"),
                          ("in_review", "approved"), ("in_review", "planned"),
                          ("genesis", "planned"), ("doing", "done")])  # fmt: skip
    data: dict[str, Any] = {"actor": rng.choice(["claude", {"tool": "codex"}, None]), "at": at,
                            "event_id": event_id, "force": rng.random() < 0.2,
                            "from_lane": frm, "to_lane": to, "wp_id": wp}  # fmt: skip
    if to == "planned" and frm == "in_review":
        data["review_result"] = {"verdict": "changes_requested", "reviewer": "codex"}
    if rng.random() < 0.3:
        data["policy_metadata"] = {"agent": "claude", "shell_pid": rng.randint(1, 99)}
    return data


@pytest.mark.parametrize("seed", range(12))
def test_random_logs_read_the_same_both_ways(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    lines = []
    for i in range(rng.randint(0, 120)):
        if rng.random() < 0.15:
            lines.append(rng.choice(HOSTILE))
        else:
            line = json.dumps(record(rng, i), sort_keys=rng.random() < 0.5)
            lines.append(line.encode())
    data = b"\n".join(lines)
    if rng.random() < 0.7:
        data += b"\n"  # else a torn last line
    same(data, monkeypatch)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
KEYS = ["event_id", "wp_id", "from_lane", "to_lane", "at", "kind", "delta", "actor", "force"]
plausible = st.one_of(
    json_values,
    st.sampled_from([*lanes.LANES, "genesis", "annotation", "WP01", "", "2026-01-01T00:00:00Z"]),
)
line_values = st.one_of(
    st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=4), plausible, max_size=8).map(
        lambda d: json.dumps(d).encode()
    ),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.binary(max_size=30),
    st.sampled_from(HOSTILE),
)


@PROPERTY
@given(st.lists(line_values, max_size=10), st.booleans())
def test_any_lines_read_the_same_both_ways(lines: list[bytes], terminated: bool) -> None:
    data = b"\n".join(lines) + (b"\n" if terminated and lines else b"")
    with pytest.MonkeyPatch.context() as monkeypatch:
        same(data, monkeypatch)


def test_a_line_nested_too_deep_is_a_warning_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    data = b"[]\n" + b"[" * 100_000 + b"]" * 100_000 + b"\n"
    for threshold in (0, 1 << 60):
        monkeypatch.setattr(logread, "FAST_DECODE_BYTES", threshold)
        parsed = parse_log(data)
        assert [(w.line, w.message) for w in parsed.warnings] == [
            (1, "not a JSON object"),
            (2, "not valid JSON"),
        ]


def reference_record(data: dict[str, Any], line: int = 0) -> Any:
    """parse_record as it was before its quick checks (kept here as the oracle)."""
    from kitty.core.clock import parse_at
    from kitty.core.log.events import (
        ANNOTATION_REQUIRED,
        TRANSITION_REQUIRED,
        Annotation,
        LogWarning,
        Other,
        Transition,
        actor_tool,
    )

    def missing(keys: tuple[str, ...]) -> list[str]:
        return [k for k in keys if data.get(k) in (None, "")]

    def is_wp(value: Any) -> bool:
        return isinstance(value, str) and value[:2] == "WP" and value[2:].isdigit()

    if "event_type" in data or "type" in data:
        return Other(data, line)
    if data.get("kind") == "annotation":
        if missing(ANNOTATION_REQUIRED):
            return LogWarning(line, f"annotation missing {', '.join(missing(ANNOTATION_REQUIRED))}")
        if not is_wp(data["wp_id"]):
            return LogWarning(line, f"wp_id {data['wp_id']!r} is not a work package id")
        if not isinstance(data["delta"], dict):
            return LogWarning(line, "annotation delta is not an object")
        try:
            at_us = parse_at(data["at"])
        except ValueError:
            return LogWarning(line, f"bad timestamp {data['at']!r}")
        return Annotation(
            str(data["event_id"]), str(data["wp_id"]), data["at"], at_us, data["delta"], data, line
        )
    if "kind" in data:
        return Other(data, line)
    gone = missing(TRANSITION_REQUIRED)
    if gone:
        return LogWarning(line, f"lane transition missing {', '.join(gone)}")
    if not is_wp(data["wp_id"]):
        return LogWarning(line, f"wp_id {data['wp_id']!r} is not a work package id")
    to_lane = lanes.canonical(str(data["to_lane"]))
    if to_lane is None or to_lane == lanes.GENESIS:
        return LogWarning(line, f"unknown to_lane {data['to_lane']!r}")
    from_lane = str(data["from_lane"])
    from_lane = lanes.canonical(from_lane) or from_lane
    try:
        at_us = parse_at(data["at"])
    except ValueError:
        return LogWarning(line, f"bad timestamp {data['at']!r}")
    policy, reason, result = (data.get(k) for k in ("policy_metadata", "reason", "review_result"))
    return Transition(
        str(data["event_id"]),
        str(data["wp_id"]),
        from_lane,
        to_lane,
        data["at"],
        at_us,
        data,
        line,
        actor_tool(data.get("actor")),
        policy if isinstance(policy, dict) else None,
        data.get("force") is True,
        reason if isinstance(reason, str) else None,
        result if isinstance(result, dict) else None,
    )


record_values = st.one_of(
    plausible,
    st.sampled_from([0, 1, True, False, {}, [], "doing", "DONE", " planned", "WP", "WP1x", 5]),
)
records = st.dictionaries(
    st.sampled_from([*KEYS, "event_type", "type", "policy_metadata"]), record_values, max_size=9
)


@PROPERTY
@given(records)
def test_parse_record_quick_checks_change_nothing(data: dict[str, Any]) -> None:
    assert repr(events.parse_record(data, 7)) == repr(reference_record(data, 7))


@PROPERTY
@given(st.sampled_from(["annotation", None]), st.data())
def test_parse_record_on_complete_records(kind: str | None, draw: st.DataObject) -> None:
    """Records with every required key present (the quick path) in all their shapes."""
    data: dict[str, Any] = {
        "event_id": draw.draw(record_values),
        "wp_id": draw.draw(st.sampled_from(["WP01", "WP0001", "WP", "wp01", 1, "WP1a"])),
        "at": draw.draw(st.sampled_from(["2026-01-01T00:00:00+00:00", "", "x", 0, None])),
        "from_lane": draw.draw(record_values),
        "to_lane": draw.draw(record_values),
        "delta": draw.draw(st.sampled_from([{}, {"note": "n"}, [], "", None, 0])),
    }
    if kind is not None:
        data["kind"] = kind
    assert repr(events.parse_record(data, 3)) == repr(reference_record(data, 3))
