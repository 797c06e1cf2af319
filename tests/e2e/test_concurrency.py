"""Several real processes writing at once: nothing lost, claims never doubled.

Every writer here runs through tests/fakes/overlapping_writer.py: the writers meet
at a start barrier right before the lock and then hold the read → append window
open, so they really contend for the lock. Each test fails when the lock in
`kitty.adapters.eventlog.locked` is removed (checked by hand: replace its body
with a bare `yield` and run this file).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import make_mission, ok

WRITER = Path(__file__).resolve().parents[1] / "fakes" / "overlapping_writer.py"
HOLD = "0.4"  # seconds each writer keeps its read → append window open


def _spawn_all(
    repo: Path, barrier: Path, commands: list[list[str]], lock: str = "lock"
) -> list[subprocess.Popen[str]]:
    barrier.mkdir()
    root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    shim = [sys.executable, str(WRITER), str(barrier), str(len(commands)), HOLD, lock, "--"]
    return [
        subprocess.Popen(
            [*shim, "-C", str(repo), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for args in commands
    ]


def _finish(procs: list[subprocess.Popen[str]]) -> list[tuple[int, str, str]]:
    results = []
    for p in procs:
        out, err = p.communicate(timeout=90)
        assert "barrier timed out" not in err, err
        results.append((p.returncode, out, err))
    return results


def _events(mission: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (mission / "status.events.jsonl").read_text().splitlines()]


def _status_lanes(mission: Path) -> dict[str, str]:
    status = json.loads((mission / "status.json").read_text())
    return {wp_id: wp["lane"] for wp_id, wp in status["work_packages"].items()}


def test_parallel_moves_of_different_wps_all_land(repo: Path, tmp_path: Path) -> None:
    wps = [{"wp_id": f"WP{i:02d}"} for i in range(1, 7)]
    mission = make_mission(repo, wps=wps)
    commands = [["move", f"WP{i:02d}", "claimed", "--agent", f"a{i}"] for i in range(1, 7)]
    results = _finish(_spawn_all(repo, tmp_path / "barrier", commands))
    assert [code for code, _, _ in results] == [0] * 6, results
    claims = [e for e in _events(mission) if e.get("to_lane") == "claimed"]
    assert sorted(str(e["wp_id"]) for e in claims) == [f"WP{i:02d}" for i in range(1, 7)]
    ats = [str(e["at"]) for e in _events(mission)]
    assert ats == sorted(ats) and len(set(ats)) == len(ats)  # the hybrid clock: strictly later
    # The derived status.json is written by the last writer: it must know every move.
    assert _status_lanes(mission) == {f"WP{i:02d}": "claimed" for i in range(1, 7)}
    board = ok(repo, "status", "--json").json()
    assert {wp["id"]: wp["agent"] for wp in board["work_packages"]} == {
        f"WP{i:02d}": f"a{i}" for i in range(1, 7)
    }


def test_same_wp_claimed_by_two_processes_exactly_one_wins(repo: Path, tmp_path: Path) -> None:
    mission = make_mission(repo, wps=[{"wp_id": "WP01"}])
    names = ("a", "b", "c")
    commands = [["move", "WP01", "claimed", "--agent", name] for name in names]
    results = _finish(_spawn_all(repo, tmp_path / "barrier", commands))
    assert sorted(code for code, _, _ in results) == [0, 1, 1], results
    winner = next(name for name, (code, _, _) in zip(names, results, strict=True) if code == 0)
    for code, _, err in results:
        if code == 1:
            assert "WP01 is already in claimed" in err, err
    claims = [e for e in _events(mission) if e.get("to_lane") == "claimed"]
    assert [e["actor"] for e in claims] == [winner]


def test_the_harness_really_overlaps_writers(repo: Path, tmp_path: Path) -> None:
    """The same race with the lock skipped in the writers: every claim "wins".

    This is what the tests above would see if the lock were removed from kitty; it
    proves the barrier and the held window make the writers overlap, so those tests
    cannot pass by luck of timing.
    """
    mission = make_mission(repo, wps=[{"wp_id": "WP01"}])
    commands = [["move", "WP01", "claimed", "--agent", name] for name in ("a", "b", "c")]
    results = _finish(_spawn_all(repo, tmp_path / "barrier", commands, lock="no-lock"))
    assert [code for code, _, _ in results] == [0, 0, 0], results
    claims = [e for e in _events(mission) if e.get("to_lane") == "claimed"]
    assert sorted(str(e["actor"]) for e in claims) == ["a", "b", "c"]


def test_eight_agents_next_claim_get_distinct_wps(repo: Path, tmp_path: Path) -> None:
    mission = make_mission(repo, wps=[{"wp_id": f"WP{i:02d}"} for i in range(1, 6)])
    commands = [["next", "--agent", f"agent{i}", "--claim", "--json"] for i in range(8)]
    results = _finish(_spawn_all(repo, tmp_path / "barrier", commands))
    outputs = []
    for code, out, err in results:
        assert code == 0, err
        outputs.append(json.loads(out))
    claimed = [o["wp_id"] for o in outputs if o["claimed"]]
    assert sorted(claimed) == [f"WP{i:02d}" for i in range(1, 6)]
    assert sorted(o["action"] for o in outputs if not o["claimed"]) == ["wait"] * 3
    claims = [e for e in _events(mission) if e.get("to_lane") == "claimed"]
    assert sorted(str(e["wp_id"]) for e in claims) == sorted(claimed)
    assert set(_status_lanes(mission).values()) == {"claimed"}
