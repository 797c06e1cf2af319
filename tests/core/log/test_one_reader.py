"""Every entry point that reads `status.events.jsonl` gives what the reader kitty had
before the one log reader (issue 20): the json-module decode of each line, the
first-wins dedupe of `replay` and its (at, event_id) order, kept here as the oracle.

Random logs mix Spec Kitty history (no `kitty_after`), kitty's linked transitions
(forks: two moves after the same predecessor), review rollbacks at the instant of a
forward move, annotations, lifecycle envelopes and other records, exact and
different repeats of an event id (also across kinds), corrupt lines and a torn or
unterminated last line. The entry points: `parse_log` (json module and msgspec),
`parse_lines`, `eventlog.read`, `replay`, `scan_log` + `fold`, the snapshot cache
(full read, hit, growth by a tail), `fold_tail`, doctor's streaming read, and the
web board's timeline order. `repr` is compared, so key order and NaN count too.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from kitty.adapters import eventlog, snapshots
from kitty.core import lanes
from kitty.core.clock import parse_at
from kitty.core.log.events import (
    LINK_KEY,
    Annotation,
    Event,
    LogWarning,
    Other,
    ParsedLog,
    Transition,
    actor_tool,
)
from kitty.core.log.read import parse_lines, parse_log, scan_log
from kitty.core.log.state import Board, fold, replay
from kitty.core.record import Record, fields

SEEDS = range(16)
T0 = "2026-01-01T00:00:{:02d}.{:06d}+00:00"

# -- the oracle: the reader as it was (decode, classify, dedupe, order) ----------------


def old_record(data: dict[str, Any], line: int) -> Event | LogWarning:
    """parse_record before the one reader, spelled plainly."""
    if "event_type" in data or "type" in data:
        return Other(data, line)

    def missing(keys: tuple[str, ...]) -> list[str]:
        return [k for k in keys if data.get(k) in (None, "")]

    def is_wp(value: Any) -> bool:
        return isinstance(value, str) and value[:2] == "WP" and value[2:].isdigit()

    if data.get("kind") == "annotation":
        gone = missing(("event_id", "wp_id", "at", "delta"))
        if gone:
            return LogWarning(line, f"annotation missing {', '.join(gone)}")
        if not is_wp(data["wp_id"]):
            return LogWarning(line, f"wp_id {data['wp_id']!r} is not a work package id")
        if not isinstance(data["delta"], dict):
            return LogWarning(line, "annotation delta is not an object")
        try:
            at_us = parse_at(data["at"])
        except ValueError:
            return LogWarning(line, f"bad timestamp {data['at']!r}")
        ident, wp = str(data["event_id"]), str(data["wp_id"])
        return Annotation(ident, wp, data["at"], at_us, data["delta"], data, line)
    if "kind" in data:
        return Other(data, line)
    gone = missing(("event_id", "wp_id", "from_lane", "to_lane", "at"))
    if gone:
        return LogWarning(line, f"lane transition missing {', '.join(gone)}")
    if not is_wp(data["wp_id"]):
        return LogWarning(line, f"wp_id {data['wp_id']!r} is not a work package id")
    to_lane = lanes.canonical(str(data["to_lane"]))
    if to_lane is None or to_lane == lanes.GENESIS:
        return LogWarning(line, f"unknown to_lane {data['to_lane']!r}")
    frm = str(data["from_lane"])
    from_lane = lanes.canonical(frm) or frm
    try:
        at_us = parse_at(data["at"])
    except ValueError:
        return LogWarning(line, f"bad timestamp {data['at']!r}")
    policy, reason, result = (data.get(k) for k in ("policy_metadata", "reason", "review_result"))
    after = data.get(LINK_KEY)
    raw_from = data["from_lane"]
    rollback = to_lane == lanes.IN_PROGRESS and (
        raw_from == lanes.IN_REVIEW
        or (raw_from == lanes.FOR_REVIEW and data.get("review_ref") is not None)
    )
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
        LINK_KEY in data,
        after if isinstance(after, str) else None,
        rollback,
    )


def old_parse(data: bytes, first_line: int = 1) -> ParsedLog:
    """The json module on the text, line by line."""
    text = data.decode("utf-8", errors="replace")
    unterminated = bool(text) and not text.endswith("\n")
    lines = text.split("\n")
    if not unterminated:
        lines.pop()
    result = ParsedLog(unterminated=unterminated)
    torn = first_line + len(lines) - 1 if unterminated else 0
    for number, line in enumerate(lines, first_line):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            why = "torn last line (write interrupted)" if number == torn else "not valid JSON"
            result.warnings.append(LogWarning(number, why))
            continue
        if not isinstance(record, dict):
            result.warnings.append(LogWarning(number, "not a JSON object"))
            continue
        parsed = old_record(record, number)
        if isinstance(parsed, LogWarning):
            result.warnings.append(parsed)
        else:
            result.events.append(parsed)
    return result


def old_order(events: list[Event]) -> tuple[list[Transition | Annotation], list[LogWarning]]:
    """replay's dedupe (first line of an id wins, across every kind; a different
    repeat is reported) and its order (at as a time, then event id)."""
    first: dict[str, Event] = {}
    repeats: list[LogWarning] = []
    ordered: list[Transition | Annotation] = []
    for ev in events:
        if ev.event_id:
            earlier = first.get(ev.event_id)
            if earlier is not None:
                if earlier.data != ev.data:
                    repeats.append(
                        LogWarning(
                            ev.line,
                            f"event_id {ev.event_id} repeats line {earlier.line} "
                            "with different content",
                        )
                    )
                continue
            first[ev.event_id] = ev
        if isinstance(ev, Transition | Annotation):
            ordered.append(ev)
    ordered.sort(key=lambda e: (e.at_us, e.event_id))
    return ordered, repeats


def old_board(data: bytes) -> Board:
    ordered, repeats = old_order(old_parse(data).events)
    return fold(ordered, repeats)


#: Fields a record gained after GOLDEN was recorded: left out while empty (a log without
#: the events that fill them folds to the board it always did).
ADDED_SINCE = frozenset({"usage"})


def canon(value: Any) -> str:
    """repr with every set sorted (their order depends on the process's hash seed)."""

    def walk(v: Any) -> Any:
        if isinstance(v, Record):
            named = [(name, getattr(v, name)) for name in fields(v)]
            kept = [(n, x) for n, x in named if not (n in ADDED_SINCE and x is None)]
            return (type(v).__name__, [(n, walk(x)) for n, x in kept])
        if isinstance(v, set | frozenset):
            return sorted(v, key=repr)
        if isinstance(v, dict):
            return [(k, walk(x)) for k, x in v.items()]
        if isinstance(v, list | tuple):
            return [walk(x) for x in v]
        return v

    return repr(walk(value))


# -- random logs -----------------------------------------------------------------------

CORRUPT = [
    b"not json",
    b"[1, 2]",
    b"   ",
    b'{"event_id": "C1", "wp_id": "WP01", "from_lane": "planned", '
    b'"at": "2026-01-01T00:00:00+00:00"}',
    b'{"event_id": "C2", "wp_id": "W1", "from_lane": "planned", "to_lane": "claimed", '
    b'"at": "2026-01-01T00:00:00+00:00"}',
    b'{"event_id": "C3", "wp_id": "WP01", "from_lane": "planned", "to_lane": "claimed", "at": "x"}',
    b'{"event_id": "C4", "wp_id": "WP01", "from_lane": "planned", "to_lane": "nowhere", '
    b'"at": "2026-01-01T00:00:00+00:00"}',
    b'{"event_id": "C5", "wp_id": "WP02", "at": "2026-01-01T00:00:01+00:00", '
    b'"kind": "annotation", "delta": {"note": NaN}}',
    b'{"event_id": "C6", "wp_id": "WP02", "at": "2026-01-01T00:00:01+00:00", '
    b'"kind": "annotation", "delta": {"s": "\xff\xfe"}}',
    b'{"event_id": "C7", "kind": "annotation", "wp_id": "WP01", "at": "2026-01-01T00:00:00Z", '
    b'"delta": []}',
]
EDGES = [
    ("genesis", "planned"),
    ("planned", "claimed"),
    ("claimed", "in_progress"),
    ("in_progress", "for_review"),
    ("for_review", "in_review"),
    ("in_review", "approved"),
    ("in_review", "in_progress"),  # a review rollback
    ("in_review", "planned"),
    ("approved", "done"),
    ("doing", "for_review"),  # a legacy alias
    ("planned", "approved"),  # illegal unless forced
]


class LogMaker:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.lines: list[bytes] = []
        self.records: list[dict[str, Any]] = []
        self.transitions: list[str] = []

    def at(self) -> str:
        rng = self.rng
        return T0.format(rng.randint(0, 20), rng.choice([0, 0, 500_000, rng.randint(0, 999_999)]))

    def ident(self) -> str:
        return f"E{len(self.lines):04d}"

    def add(self, record: dict[str, Any]) -> None:
        self.records.append(record)
        self.lines.append(json.dumps(record, sort_keys=True).encode())

    def transition(self) -> None:
        rng = self.rng
        frm, to = rng.choice(EDGES)
        agent = rng.choice(["claude", "codex", "gemini"])
        rec: dict[str, Any] = {
            "actor": rng.choice([agent, {"tool": agent, "role": "implementer"}, None]),
            "at": self.at(),
            "event_id": self.ident(),
            "force": rng.random() < 0.2,
            "from_lane": frm,
            "to_lane": to,
            "wp_id": f"WP{rng.randint(1, 3):02d}",
        }
        if rng.random() < 0.5:  # kitty's own: linked (forks when two share a predecessor)
            rec[LINK_KEY] = rng.choice([None, *self.transitions[-4:]])
        if rng.random() < 0.3:
            rec["policy_metadata"] = {"agent": agent, "shell_pid": rng.randint(1, 99)}
        if to in ("planned", "in_progress") and frm == "in_review":
            rec["review_result"] = {"verdict": "changes_requested", "reviewer": "codex"}
        if rng.random() < 0.1 and self.records:  # a move at the instant of the one before
            rec["at"] = self.records[-1].get("at", rec["at"])
        self.transitions.append(rec["event_id"])
        self.add(rec)

    def annotation(self) -> None:
        rng = self.rng
        delta = rng.choice(
            [
                {"note": "n"},
                {"subtasks": {"T1": "done"}},
                {"agent": "codex", "shell_pid": "12"},
                {"release_runtime_claim": True},
                {"conflicts_resolved": True},
                {"review_status": "acknowledged", "heartbeat": True},
            ]
        )
        wp = f"WP{rng.randint(1, 3):02d}"
        self.add(
            {
                "actor": "claude",
                "at": self.at(),
                "delta": delta,
                "event_id": self.ident(),
                "kind": "annotation",
                "wp_id": wp,
            }
        )

    def step(self) -> None:
        rng = self.rng
        roll = rng.random()
        if roll < 0.45:
            self.transition()
        elif roll < 0.62:
            self.annotation()
        elif roll < 0.67:
            self.add({"event_type": "WPCreated", "event_id": self.ident(), "payload": {}})
        elif roll < 0.70:
            self.add({"type": "KittyDispatch", "event_id": self.ident(), "wp_id": "WP01"})
        elif roll < 0.78 and self.lines:  # the same line again
            self.lines.append(rng.choice(self.lines))
        elif roll < 0.84 and self.records:  # the same id, other content (or other key order)
            rec = dict(rng.choice(self.records))
            if rng.random() < 0.5:
                rec["at"] = self.at()
            self.lines.append(json.dumps(rec, sort_keys=rng.random() < 0.5).encode())
        elif roll < 0.88 and self.records:  # an envelope taking a later event's id first
            self.add({"event_type": "Claimed", "event_id": f"E{len(self.lines) + 1:04d}"})
        elif roll < 0.95:
            self.lines.append(rng.choice(CORRUPT))
        else:
            self.lines.append(b"")

    def log(self, n: int) -> bytes:
        for _ in range(n):
            self.step()
        body = b"".join(line + b"\n" for line in self.lines)
        ending = self.rng.random()
        if ending < 0.15:
            body += b'{"event_id": "torn", "kind": "annot'  # a torn last line
        elif ending < 0.25:
            body = body[:-1]  # a complete but unterminated last line
        return body


def random_log(seed: int, n: int = 60) -> bytes:
    return LogMaker(seed).log(n)


# -- the comparisons -------------------------------------------------------------------


def _fast_module() -> Any:
    """The module whose FAST_DECODE_BYTES decides between msgspec and the json module."""
    import importlib

    for name in ("kitty.core.log.read", "kitty.core.log.events"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        if hasattr(module, "FAST_DECODE_BYTES"):
            return module
    raise AssertionError("no FAST_DECODE_BYTES")


@pytest.mark.parametrize("seed", SEEDS)
def test_every_bytes_reader_gives_the_old_result(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = random_log(seed)
    expected = old_parse(data)
    board = canon(old_board(data))
    ids = {e for ev in expected.events if (e := ev.event_id)}
    for threshold in (0, 1 << 60):  # msgspec first, and the json module alone
        monkeypatch.setattr(_fast_module(), "FAST_DECODE_BYTES", threshold)
        got = parse_log(data)
        assert repr(got) == repr(expected)
        assert canon(replay(got.events)) == board
        scan = scan_log(data)
        assert canon(fold(scan.events, scan.repeats)) == board
        assert repr(scan.warnings) == repr(expected.warnings)
        assert (scan.ids, scan.unterminated) == (ids, expected.unterminated)
        assert scan.lines == len(data.split(b"\n")) - (0 if scan.unterminated else 1)
    text = data.decode("utf-8", errors="replace")
    lines = text.split("\n")
    if not expected.unterminated:
        lines.pop()
    assert repr(parse_lines(lines, unterminated=expected.unterminated)) == repr(expected)
    tail = parse_log(data, first_line=41)
    assert repr(tail) == repr(old_parse(data, first_line=41))


#: repr(board) digests of the oracle, recorded before the one reader: the fold's rules
#: (forks, history, rollbacks, annotations) did not move with the code.
GOLDEN = {
    0: "9e93a082e115857f",
    1: "8bb044f05c28920a",
    2: "5534c3e124f1f44d",
    3: "8f31ce0864f25a47",
    4: "dbd8fd4e77aa5db9",
    5: "63e7523c2827f55e",
    6: "c8bb56601091184e",
    7: "69f8bd1411dfe7e3",
    8: "45e5b54a3b3be3c1",
    9: "44fcaa61a38117ad",
    10: "b8edc9a87c4fd7fc",
    11: "78a58407aad889c5",
    12: "869b6064331b6d8e",
    13: "ef16556ac78f8e59",
    14: "82bdc6e54dd8849f",
    15: "cdff4231e7694955",
}


def test_the_fold_keeps_its_golden_boards() -> None:
    got = {
        seed: hashlib.sha256(canon(old_board(random_log(seed))).encode()).hexdigest()[:16]
        for seed in SEEDS
    }
    assert got == GOLDEN


@pytest.mark.parametrize("seed", SEEDS)
def test_the_snapshot_cache_and_its_tail_fold_give_the_old_board(
    seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = random_log(seed)
    expected = old_parse(data)
    board = canon(old_board(data))
    path, cache = tmp_path / "status.events.jsonl", tmp_path / "cache"
    path.write_bytes(data)
    assert repr(eventlog.read(path)) == repr(expected)  # remote reads this way
    for cache_dir in (None, cache, cache):  # no cache, building it, a hit
        state = snapshots.read_log(path, cache_dir)
        assert canon(state.board) == board
        assert repr(state.warnings) == repr(expected.warnings)
    # Growth: a snapshot of a prefix, then the rest appended.
    cut = data.rfind(b"\n", 0, len(data) // 2) + 1
    grown_path, grown_cache = tmp_path / "grown.jsonl", tmp_path / "grown-cache"
    grown_path.write_bytes(data[:cut])
    snapshots.read_log(grown_path, grown_cache)
    with grown_path.open("ab") as handle:
        handle.write(data[cut:])
    state = snapshots.read_log(grown_path, grown_cache)
    assert canon(state.board) == board
    assert repr(state.warnings) == repr(expected.warnings)
    # fold_tail, the live board's and the cache's rule: when it folds, the same board.
    head = data[:cut]
    start = fold(*old_order(old_parse(head).events))
    seen = {e for ev in old_parse(head).events if (e := ev.event_id)}
    folded = snapshots.fold_tail(start, seen, data[cut:], head.count(b"\n") + 1)
    if folded is not None:
        assert canon(start) == board
        tail_warnings = [w for w in expected.warnings if w.line > head.count(b"\n")]
        assert repr(folded[1]) == repr(tail_warnings)


def test_a_tail_of_newer_events_is_folded_without_reading_the_head(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    maker = LogMaker(3)
    head = maker.log(200)
    head = head if head.endswith(b"\n") else head[: head.rfind(b"\n") + 1]
    path, cache = tmp_path / "status.events.jsonl", tmp_path / "cache"
    path.write_bytes(head)
    snapshots.read_log(path, cache)
    tail = b"".join(
        json.dumps(
            {
                "at": f"2026-01-02T00:00:{i:02d}+00:00",
                "event_id": f"N{i:03d}",
                "from_lane": "planned",
                "to_lane": "claimed",
                "wp_id": "WP07",
                "actor": "x",
            }
        ).encode()
        + b"\n"
        for i in range(5)
    )
    with path.open("ab") as handle:
        handle.write(tail)

    def full_read(data: bytes) -> Any:
        raise AssertionError("a full read of a log whose tail folds")

    monkeypatch.setattr(snapshots, "_full", full_read)
    state = snapshots.read_log(path, cache)
    assert canon(state.board) == canon(old_board(head + tail))


class _Mission(SimpleNamespace):
    pass


@pytest.mark.parametrize("seed", SEEDS)
def test_the_web_board_timeline_is_replay_order(seed: int) -> None:
    from kitty.web.board import ordered_events

    data = random_log(seed)
    ordered, _ = old_order(old_parse(data).events)
    mission = _Mission(log=parse_log(data))
    assert [e.event_id for e in ordered_events(mission)] == [e.event_id for e in ordered]  # type: ignore[arg-type]


def test_an_envelope_that_took_an_id_first_hides_the_move_from_the_timeline() -> None:
    from kitty.web.board import ordered_events

    lines = [
        '{"event_type": "Claimed", "event_id": "E1"}',
        '{"at": "2026-01-01T00:00:00+00:00", "event_id": "E1", "from_lane": "planned", '
        '"to_lane": "claimed", "wp_id": "WP01", "actor": "claude"}',
    ]
    parsed = parse_lines(lines)
    assert replay(parsed.events).lane("WP01") is None  # replay drops the repeat
    assert ordered_events(_Mission(log=parsed)) == []  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", [0, 5, 9])
def test_doctor_streams_the_old_board(seed: int, repo: Path) -> None:
    from kitty.core.clock import parse_at as at_of
    from kitty.mission.workspace import Mission
    from kitty.project.doctor import stream_log
    from tests.helpers import make_mission

    make_mission(repo, wps=[{"wp_id": "WP01", "title": "One"}])
    data = random_log(seed)
    first = Mission.open(repo, None)
    first.events_path.write_bytes(data)
    mission = Mission.open(repo, None)
    stream_log(mission, at_of("2026-01-01T00:00:00+00:00"))
    assert canon(mission.board) == canon(old_board(data))
    assert canon(Mission.open(repo, None).board) == canon(old_board(data))
