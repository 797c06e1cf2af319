"""Several real processes writing at once: nothing lost, claims never doubled."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.helpers import kitty_argv, make_mission


def _spawn(repo: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        kitty_argv(repo, *args),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )


def _events(mission: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (mission / "status.events.jsonl").read_text().splitlines()]


def test_parallel_moves_of_different_wps_all_land(repo: Path) -> None:
    wps = [{"wp_id": f"WP{i:02d}"} for i in range(1, 7)]
    mission = make_mission(repo, wps=wps)
    procs = [_spawn(repo, "move", f"WP{i:02d}", "claimed", "--agent", f"a{i}") for i in range(1, 7)]
    results = [(p.wait(timeout=60), p.communicate()) for p in procs]
    assert all(code == 0 for code, _ in results), results
    claims = [e for e in _events(mission) if e.get("to_lane") == "claimed"]
    assert sorted(str(e["wp_id"]) for e in claims) == [f"WP{i:02d}" for i in range(1, 7)]
    ats = [str(e["at"]) for e in _events(mission)]
    assert len(set(ats)) == len(ats)  # the hybrid clock never repeats a timestamp


def test_same_wp_claimed_by_two_processes_exactly_one_wins(repo: Path) -> None:
    make_mission(repo, wps=[{"wp_id": "WP01"}])
    procs = [_spawn(repo, "move", "WP01", "claimed", "--agent", name) for name in ("a", "b", "c")]
    codes = sorted(p.wait(timeout=60) for p in procs)
    for p in procs:
        p.communicate()
    assert codes == [0, 1, 1]


def test_eight_agents_next_claim_get_distinct_wps(repo: Path) -> None:
    mission = make_mission(repo, wps=[{"wp_id": f"WP{i:02d}"} for i in range(1, 6)])
    procs = [_spawn(repo, "next", "--agent", f"agent{i}", "--claim", "--json") for i in range(8)]
    outputs = []
    for p in procs:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
        outputs.append(json.loads(out))
    claimed = [o["wp_id"] for o in outputs if o["claimed"]]
    assert sorted(claimed) == [f"WP{i:02d}" for i in range(1, 6)]
    assert sorted(o["action"] for o in outputs if not o["claimed"]) == ["wait"] * 3
    lanes = [e for e in _events(mission) if e.get("to_lane") == "claimed"]
    assert len(lanes) == 5
