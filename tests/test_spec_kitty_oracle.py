"""Differential test against Spec Kitty 3.2.7's own reader and reducer (tests/oracle).

Hypothesis writes histories in the shapes Spec Kitty's writers leave in
`status.events.jsonl` (and in the shapes its public repository's missions hold:
self-approval by actor `user`, for_review -> approved, claimed -> planned,
for_review -> done, in_progress -> approved, stale from_lanes, late or missing
bootstraps, review rollbacks stamped at the same instant as a forward move, repeated
event ids, lines merged out of order, annotations naming or releasing the agent).
Every WP must get the same lane and the same `agent` in kitty (both read paths) as in
Spec Kitty, and the same count per lane; kitty raises no conflict on history.

A second property writes what kitty itself writes (linked moves along its table,
forced moves, approvals by someone else): Spec Kitty must read those logs to the
same lanes too. Seeds are fixed in CI (derandomize); 1,000 + 300 histories.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kitty.core import lanes
from kitty.core.log.events import LINK_KEY
from kitty.core.log.read import parse_lines, scan_log
from kitty.core.log.snapshot import spec_kitty_progress
from kitty.core.log.state import Board, fold, replay
from tests import oracle

SETTINGS = settings(
    database=None,
    deadline=None,
    derandomize=os.environ.get("CI") == "true",
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
SLUG = "001-oracle"
T0 = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
DISPLAY = list(lanes.LANES)
#: The moves Spec Kitty's writers make from each lane (and the shapes its history holds).
TYPICAL = {
    "genesis": ["planned"],
    "planned": ["claimed", "in_progress", "blocked", "canceled"],
    "claimed": ["in_progress", "planned", "blocked"],
    "in_progress": ["for_review", "approved", "planned", "blocked", "canceled"],
    "for_review": ["in_review", "approved", "done", "in_progress", "blocked"],
    "in_review": ["approved", "done", "in_progress", "planned", "blocked"],
    "approved": ["done", "in_progress", "planned"],
    "blocked": ["in_progress", "planned", "canceled"],
    "done": ["in_progress"],
    "canceled": ["planned"],
}
ACTORS = ["user", "claude", "codex", "migration:backfill", "", "gemini"]
ULID_CHARS = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[oracle.Server]:
    serving = oracle.Server(tmp_path_factory.mktemp("oracle"))
    yield serving
    serving.close()


def ulids() -> st.SearchStrategy[str]:
    return st.text(ULID_CHARS, min_size=6, max_size=6).map(lambda tail: "01KQ" + "0" * 16 + tail)


def unique(event_id: str, index: int) -> str:
    """The id with its last two characters made from `index` (< 1024): distinct ids."""
    return event_id[:24] + ULID_CHARS[index // 32] + ULID_CHARS[index % 32]


def at_text(seconds: int, micro: int) -> str:
    """`at` as Spec Kitty writes it: `datetime.isoformat()` (no fraction when it is 0)."""
    return (T0 + timedelta(seconds=seconds, microseconds=micro)).isoformat()


class Tape:
    """Choices read off a list of integers Hypothesis draws (and shrinks toward zeros):
    one cheap draw per history instead of hundreds of small ones."""

    def __init__(self, values: bytes) -> None:
        self.values, self.at = values, 0

    def pick(self, n: int) -> int:
        value = self.values[self.at] if self.at < len(self.values) else 0
        self.at += 1
        return value % n

    def choice(self, options: list[Any]) -> Any:
        return options[self.pick(len(options))]

    def chance(self, one_in: int) -> bool:
        return self.pick(one_in) == one_in - 1

    def ulid(self) -> str:
        return "01KQ" + "0" * 16 + "".join(ULID_CHARS[self.pick(32)] for _ in range(6))


def actor(tape: Tape) -> Any:
    if not tape.chance(6):
        return tape.choice(ACTORS)
    return {
        "role": tape.choice(["implementer", "reviewer"]),
        "profile": tape.choice([None, "python-pedro"]),
        "tool": tape.choice(["claude", "codex", None]),
        "model": tape.choice([None, "opus"]),
    }


def transition(tape: Tape, wp: str, lane: str, clock: list[int]) -> dict[str, Any]:
    # mostly what a writer on one machine saw; else stale, or merged from elsewhere
    frm = lane if tape.pick(10) < 8 else tape.choice(["genesis", *DISPLAY])
    to = tape.choice(TYPICAL[frm]) if tape.pick(2) == 0 else tape.choice(DISPLAY)
    step = tape.choice([1, 0, 2, 0, 5, -3])
    clock[0] = max(0, clock[0] + step)
    if step:  # 0: the very same `at` as the move before (concurrent writers)
        clock[1] = tape.choice([0, 0, 1, 500000])
    record: dict[str, Any] = {
        "event_id": tape.ulid(),
        "wp_id": wp,
        "from_lane": frm,
        "to_lane": to,
        "at": at_text(clock[0], clock[1]),
        "actor": actor(tape),
        "force": tape.chance(2),
        "execution_mode": tape.choice(["worktree", "direct_repo"]),
        "mission_slug": SLUG,
        "reason": tape.choice([None, "Force move to done"]),
        "review_ref": tape.choice([None, None, "feedback://x/WP01/review-cycle-1.md"]),
        "evidence": None,
        "policy_metadata": None,
    }
    if tape.chance(2):
        policy: dict[str, Any] = {"agent": tape.choice(ACTORS)}
        if tape.chance(2):
            policy["shell_pid"] = 4242
        record["policy_metadata"] = policy
    review = tape.choice([None, None, "approved", "changes_requested"])
    if review is not None:
        record["review_result"] = {"reviewer": "codex", "verdict": review, "reference": "r"}
    return record


def gate_delta(code: int | None, failures: int) -> dict[str, Any]:
    """kitty.workflow.rules.gate's delta for a one-command gate run that exited `code`."""
    from kitty.workflow.rules import gate

    command: dict[str, Any] = {
        "name": "test",
        "line": "pytest -q",
        "exit": code,
        "exits": [code],
        "seconds": 1.5,
        "output": "/r/out.log",
        "passed": code == 0,
        "flaky": False,
    }
    if code != 0:
        command["tail"] = "1 failed"
    run = {
        "commit": "a" * 40,
        "clean": True,
        "output": "/r",
        "timeout": 900,
        "commands": [command],
        "result": gate.outcome([command]),
    }
    return gate.delta(run, failures, gate.LANE, ["WP09"] if failures else [])


def agent_run(tape: Tape) -> dict[str, Any]:
    """A sprint's record of one agent run (kitty.sprint.outcomes.run_record, issue 38)."""
    return {
        "run": "20261207T120000Z-42",
        "role": tape.choice(["implement", "review"]),
        "agent": tape.choice(["claude", "codex"]),
        "cli": tape.choice(["claude", "codex", None]),
        "model": tape.choice(["claude-kitty-test", None]),
        "cycle": 1 + tape.pick(3),
        "outcome": "exit 1: API Error: 401 [auth]",
        "ok": tape.chance(2),
        "exit_code": tape.choice([0, 1, None]),
        "error": tape.choice([None, "Invalid API key · Fix external API key"]),
        "error_kind": tape.choice([None, "auth", "rate_limit"]),
        "denials": tape.choice([[], ["Bash(touch x\\ny)", "Write(/tmp/out.txt)"]]),
        "verify_refused": tape.choice([[], ["Bash(make test)"]]),
        "usage": {
            "input_tokens": tape.pick(900),
            "output_tokens": 12,
            "cost_usd": 0.0123,
            "turns": 2,
            "api_ms": 850,
            "seconds": 3.5,
        },
        "log": "/r/.kittify/runs/x/WP01-implement-1.log",
    }


def annotation(tape: Tape, wp: str, clock: list[int]) -> dict[str, Any]:
    delta: dict[str, Any] = {}
    if tape.chance(2):
        delta["agent"] = tape.choice(["claude", "codex", ""])
    if tape.chance(3):
        delta["release_runtime_claim"] = tape.choice([True, False])
    if tape.chance(3):
        delta["note"] = "a note"
    if tape.chance(3):
        delta["subtasks"] = {"T001": "done"}
    if tape.chance(4):
        delta["shell_pid"] = 4242
    if tape.chance(4):  # the test gate's result, as kitty verify / the sprint / the queue write it
        delta.update(gate_delta(tape.choice([0, 1, None]), tape.pick(3)))
    if tape.chance(4):  # the sprint's record of an agent run: refused calls, error, usage
        delta["agent_run"] = agent_run(tape)
    return {
        "event_id": tape.ulid(),
        "kind": "annotation",
        "wp_id": wp,
        "at": at_text(max(0, clock[0] + tape.pick(5) - 2), 0),
        "actor": actor(tape),
        "delta": delta,
    }


def history(tape: Tape) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for number in range(1, tape.pick(3) + 2):
        wp = f"WP{number:02d}"
        clock = [tape.pick(6), 0]  # seconds, microseconds
        lane = "planned"
        if not tape.chance(4):  # most logs start with the bootstrap
            boot = transition(tape, wp, "genesis", clock)
            boot.update(from_lane="genesis", to_lane="planned", force=False)
            records.append(boot)
        for _ in range(tape.pick(9)):
            if tape.chance(5):
                records.append(annotation(tape, wp, clock))
                continue
            record = transition(tape, wp, lane, clock)
            records.append(record)
            lane = record["to_lane"]
        if tape.chance(4):  # parallel worktrees: a review rollback and a move at one instant
            back = transition(tape, wp, "in_review", clock)
            back.update(from_lane=tape.choice(["in_review", "for_review"]), to_lane="in_progress")
            back["review_ref"] = back["review_ref"] or tape.choice([None, "feedback://x"])
            ahead = transition(tape, wp, tape.choice(DISPLAY), clock)
            ahead["at"] = back["at"]
            records += [back, ahead] if tape.pick(2) else [ahead, back]
    # Distinct ids (Spec Kitty writes ULIDs; kitty drops a repeated id of any kind, Spec
    # Kitty repeats an annotation): their random part decides ties at one instant.
    for index, record in enumerate(records):
        record["event_id"] = unique(record["event_id"], index)
    if records and tape.chance(6):  # a repeated transition id (the first line wins)
        copy = dict(tape.choice(records))
        if "kind" not in copy:
            copy["to_lane"] = tape.choice(DISPLAY)
            records.append(copy)
    if tape.chance(2):  # lines of several clones merged: file order is not time order
        for index in range(len(records) - 1, 0, -1):
            other = tape.pick(index + 1)
            records[index], records[other] = records[other], records[index]
    return records


tapes = st.binary(min_size=200, max_size=400)


def text_of(records: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, sort_keys=True) + "\n" for r in records)


def kitty_view(board: Board) -> dict[str, Any]:
    lanes_ = {wp: st.lane or "uninitialized" for wp, st in board.wps.items()}
    summary = {lane: 0 for lane in DISPLAY}
    for lane in lanes_.values():
        if lane in summary:
            summary[lane] += 1
    return {
        "lanes": lanes_,
        "agents": {wp: st.sk_agent for wp, st in board.wps.items()},
        "shell_pids": {wp: st.sk_slots.get("shell_pid") for wp, st in board.wps.items()},
        "summary": summary,
        "progress_percentage": spec_kitty_progress(board),
    }


def compare(server: oracle.Server, records: list[dict[str, Any]]) -> Board:
    text = text_of(records)
    expected = server.ask({"log": text})
    assert "error" not in expected, (expected, text)
    board = replay(parse_lines(text.splitlines()).events)
    scan = scan_log(text.encode())
    lean = fold(scan.events, scan.repeats)
    assert kitty_view(board) == expected, text
    assert kitty_view(lean)["lanes"] == expected["lanes"], text
    return board


@settings(SETTINGS, max_examples=int(os.environ.get("ORACLE_N", "1000")))
@given(tape=tapes)
def test_history_reads_as_spec_kitty_reads_it(server: oracle.Server, tape: bytes) -> None:
    board = compare(server, history(Tape(tape)))
    assert board.conflicts == []


def kitty_log(tape: Tape) -> list[dict[str, Any]]:
    """What kitty writes: linked moves along its table (or forced), one clock."""
    records: list[dict[str, Any]] = []
    clock = 0
    for number in range(1, tape.pick(3) + 2):
        wp = f"WP{number:02d}"
        lane, last, implementer = "genesis", None, None
        for _ in range(tape.pick(9) + 1):
            targets = lanes.legal_targets(lane)
            forced = not targets or tape.chance(6)
            to = tape.choice([x for x in DISPLAY if x != lane] if forced else targets)
            agent = tape.choice(["claude", "codex", "gemini"])
            if to == "approved" and agent == implementer:
                agent = "reviewer-" + agent  # kitty refuses a self-approval
            clock += tape.pick(3) + 1
            record = {
                "event_id": unique(tape.ulid(), len(records)),
                "wp_id": wp,
                "from_lane": lane,
                "to_lane": to,
                "at": at_text(clock, 1),
                "actor": agent,
                "force": forced,
                "execution_mode": "worktree",
                "mission_slug": SLUG,
                "reason": "why" if forced else None,
                "review_ref": None,
                "evidence": None,
                "policy_metadata": {"agent": agent} if to in ("claimed", "in_progress") else None,
                LINK_KEY: last,
            }
            if to == "claimed" or (to == "in_progress" and lane in ("planned", "claimed")):
                implementer = agent  # who kitty's guard takes for the implementer
            records.append(record)
            lane, last = to, record["event_id"]
    return records


@settings(SETTINGS, max_examples=200)
@given(tape=tapes)
def test_spec_kitty_reads_what_kitty_writes(server: oracle.Server, tape: bytes) -> None:
    board = compare(server, kitty_log(Tape(tape)))
    assert board.conflicts == []


def test_the_oracle_is_spec_kitty_3_2_7(server: oracle.Server) -> None:
    """The oracle refuses what Spec Kitty refuses (a `type` record kitty used to write)."""
    line = {"type": "kitty_dispatch", "wp_id": "WP01", "event_id": "x", "at": at_text(0, 0)}
    result = server.ask({"log": text_of([line])})
    assert result == {"error": "Invalid event structure on line 1: 'from_lane'"}
