"""Claims through a git remote (file:// and `git daemon`): one machine wins each WP."""

from __future__ import annotations

import json
import multiprocessing
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from kitty.core.log.read import parse_lines
from kitty.core.log.state import replay
from kitty.mission.workspace import Mission
from kitty.workflow.nextstep import next_step
from tests.helpers import git, kitty, ok
from tests.remotes import FIVE, clone, git_daemon, publish

CONFIG = "agents:\n  available: [claude, codex]\n"
SLUG = "demo-01ABCDEF"
#: 50 trials in all, run as 5 chunks so each test stays well inside the per-test timeout.
TRIALS = int(os.environ.get("KITTY_RACE_TRIALS", "50"))
CHUNKS = 5


def _claim(repo: str, agent: str, machine: str, barrier: Any, out: Any) -> None:
    os.environ["KITTY_MACHINE"] = machine
    barrier.wait(timeout=30)
    try:
        decision = next_step(Mission.open(Path(repo), None), agent, claim=True, remote="origin")
        out.put((machine, agent, decision.action, decision.wp_id, decision.claimed))
    except Exception as exc:  # reported to the parent, which fails the test
        out.put((machine, agent, "error", repr(exc), False))


def _reset(bare: Path, clones: list[Path]) -> None:
    git(bare, "update-ref", "-d", f"refs/heads/kitty/coord/{SLUG}")
    for repo in clones:
        git(repo, "checkout", "--", f"kitty-specs/{SLUG}/status.events.jsonl")
        git(repo, "update-ref", "-d", f"refs/kitty/remotes/origin/{SLUG}")


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_race_three_clones_four_claimers_five_wps(tmp_path: Path, chunk: int) -> None:
    trials = TRIALS // CHUNKS + (1 if chunk < TRIALS % CHUNKS else 0)
    bare = publish(tmp_path, CONFIG, FIVE)
    ctx = multiprocessing.get_context("fork")
    with git_daemon(tmp_path) as url:
        urls = [f"file://{bare}", f"{url}/remote.git", f"file://{bare}"]
        clones = [clone(u, tmp_path / f"m{i}") for i, u in enumerate(urls)]
        started = time.monotonic()
        for trial in range(trials):
            _reset(bare, clones)
            barrier = ctx.Barrier(12)
            out = ctx.Queue()
            procs = [
                ctx.Process(target=_claim, args=(str(c), f"agent{j}", c.name, barrier, out))
                for c in clones
                for j in range(4)
            ]
            for proc in procs:
                proc.start()
            results = [out.get(timeout=120) for _ in procs]
            for proc in procs:
                proc.join(timeout=30)
            errors = [r for r in results if r[2] == "error"]
            assert not errors, errors
            claimed = Counter(r[3] for r in results if r[4])
            assert sorted(claimed) == [w["wp_id"] for w in FIVE], (trial, results)
            assert set(claimed.values()) == {1}, (trial, results)  # 0 double claims
            assert sum(1 for r in results if r[2] == "wait") == 7
            # The coordination ref itself replays to five claims and no conflicts.
            log = git(bare, "cat-file", "blob", f"kitty/coord/{SLUG}:status.events.jsonl")
            board = replay(parse_lines(log.splitlines()).events)
            assert board.conflicts == []
            holders = {
                (st.agent, (st.runtime_claim or {}).get("machine"))
                for st in board.wps.values()
                if st.lane == "claimed"
            }
            assert len(holders) == 5
        elapsed = time.monotonic() - started
    print(f"\n{trials} trials x 12 claimers: 0 double claims, {elapsed:.1f}s")


def test_claims_reach_other_clones_and_status_shows_the_lease(tmp_path: Path) -> None:
    bare = publish(tmp_path, CONFIG, FIVE)
    a = clone(f"file://{bare}", tmp_path / "a")
    b = clone(f"file://{bare}", tmp_path / "b")
    os.environ["KITTY_MACHINE"] = "laptop-a"
    try:
        first = ok(a, "next", "--agent", "alice", "--claim", "--remote", "origin", "--json").json()
        os.environ["KITTY_MACHINE"] = "laptop-b"
        second = ok(b, "next", "--agent", "bob", "--claim", "--remote", "origin", "--json").json()
    finally:
        del os.environ["KITTY_MACHINE"]
    assert first["claimed"] and second["claimed"] and first["wp_id"] != second["wp_id"]
    view = ok(b, "status", "--json").json()  # b folded in a's claim before deciding
    by_id = {w["id"]: w for w in view["work_packages"]}
    lease = by_id[first["wp_id"]]["lease"]
    assert (lease["holder"], lease["machine"], lease["expired"]) == ("alice", "laptop-a", False)
    assert by_id[second["wp_id"]]["lease"]["machine"] == "laptop-b"
    assert "Lease " + first["wp_id"] + ": alice on laptop-a until" in ok(b, "status").out
    usage = kitty(a, "next", "--agent", "x", "--remote", "origin")
    assert usage.code == 2


def test_expired_lease_is_reclaimed_with_the_previous_holder(tmp_path: Path) -> None:
    config = CONFIG + "  lease_minutes: 0.02\n"  # 1.2 s
    bare = publish(tmp_path, config, FIVE[:1])
    a = clone(f"file://{bare}", tmp_path / "a")
    b = clone(f"file://{bare}", tmp_path / "b")
    ok(a, "next", "--agent", "alice", "--claim", "--remote", "origin")
    waiting = ok(b, "next", "--agent", "bob", "--claim", "--remote", "origin", "--json").json()
    assert waiting["action"] == "wait"
    time.sleep(1.3)
    taken = ok(b, "next", "--agent", "bob", "--claim", "--remote", "origin", "--json").json()
    assert (taken["action"], taken["wp_id"], taken["claimed"]) == ("implement", "WP01", True)
    assert "lease of alice" in taken["reason"] and "reclaimed by bob" in taken["reason"]
    ok(a, "sync")
    wp = ok(a, "status", "--json").json()["work_packages"][0]
    assert (wp["lane"], wp["implementer"]) == ("claimed", "bob")
    assert wp["reclaimed_from"]["previous_holder"] == "alice"
    assert ok(a, "status", "--json").json()["conflicts"] == []


def test_another_machines_agent_is_not_judged_by_its_pid(tmp_path: Path, monkeypatch: Any) -> None:
    bare = publish(tmp_path, CONFIG, FIVE[:1])
    a = clone(f"file://{bare}", tmp_path / "a")
    monkeypatch.setenv("KITTY_MACHINE", "far-away")
    ok(a, "next", "--agent", "alice", "--claim", "--remote", "origin")
    log = a / "kitty-specs" / SLUG / "status.events.jsonl"
    line = json.dumps(
        {
            "actor": "alice",
            "at": "2099-01-01T00:00:00+00:00",
            "delta": {"agent_pid": 2**22 + 12345},
            "event_id": "ZZZZ",
            "kind": "annotation",
            "wp_id": "WP01",
        }
    )
    log.write_text(log.read_text() + line + "\n")
    gone = ok(a, "status", "--json").json()["work_packages"][0]["stalled"]
    assert gone and "is gone" in gone  # on its own machine the pid is checked
    monkeypatch.setenv("KITTY_MACHINE", "here")
    assert ok(a, "status", "--json").json()["work_packages"][0]["stalled"] is None
