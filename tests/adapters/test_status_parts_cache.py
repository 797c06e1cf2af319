"""status.json after a write re-encodes only the WPs the write touched
(kitty/adapters/statusparts.py): its bytes must always be those of the whole log
replayed and dumped, whatever happened to the log, the WP files or the caches
in between (the random operations of test_snapshot_cache)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from kitty.adapters.eventlog import read
from kitty.adapters.files import dump_json
from kitty.adapters.specs import load_meta
from kitty.core.log.snapshot import materialize
from kitty.core.log.state import replay
from kitty.mission.workspace import Mission
from tests.adapters.test_snapshot_cache import SLUG, WEIGHTED, Ops
from tests.helpers import git, kitty, make_mission

WRITES = ("move", "claim", "mark")


def replayed(mission: Path) -> str:
    board = replay(read(mission / "status.events.jsonl").events)
    return dump_json(materialize(board, SLUG, load_meta(mission, SLUG)))


@pytest.mark.parametrize("seed", [3, 5, 6])
def test_status_json_after_each_write_is_the_whole_log_replayed(repo: Path, seed: int) -> None:
    rng = random.Random(seed)
    wps = [
        {"wp_id": f"WP0{i}", "title": f"Module {i}", "subtasks": [f"T{2 * i - 1:03d}"]}
        for i in range(1, 7)
    ]
    mission = make_mission(repo, slug=SLUG, wps=wps)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "mission")
    ops = Ops(repo, mission, rng)
    # rewrite_same_size is left out: a move right after a same-size hand edit of the
    # log gives a status.json unlike the replay with or without this cache (a finding
    # of its own, see the report of issue 37).
    names = [
        name for name, weight in WEIGHTED if name != "rewrite_same_size" for _ in range(weight)
    ]
    names += list(WRITES) * 6  # mostly writes following writes: the incremental path
    status = mission / "status.json"
    parts = ops.cache / "status-parts.pickle"
    reused = 0
    done: list[str] = []
    for _ in range(40):
        done.append(rng.choice(names))
        kept = parts.read_bytes() if parts.exists() else None
        log = ops.log.read_bytes()
        getattr(ops, done[-1])()
        if done[-1] in WRITES and ops.log.read_bytes() != log:  # it appended
            assert status.read_text() == replayed(mission), " ".join(done)
            reused += kept is not None
    assert reused, "no write reused the parts of the one before"


def test_status_json_of_a_new_wp_and_of_an_unknown_one(repo: Path) -> None:
    """A write that brings a WP the kept parts do not have (a move of a WP that had no
    event) and one after the parts were deleted give the replayed file."""
    wps = [{"wp_id": f"WP0{i}", "title": f"Module {i}"} for i in range(1, 4)]
    mission = make_mission(repo, slug=SLUG, wps=wps)
    kitty(repo, "move", "WP01", "claimed", "--agent", "claude")
    kitty(repo, "move", "WP02", "claimed", "--agent", "claude")
    assert (mission / "status.json").read_text() == replayed(mission)
    for path in (repo / ".git" / "kitty" / "cache" / SLUG).glob("status-parts.pickle"):
        path.write_bytes(b"garbage")
    kitty(repo, "move", "WP03", "claimed", "--agent", "claude")
    assert (mission / "status.json").read_text() == replayed(mission)


def test_status_json_after_an_agent_run_annotation(repo: Path) -> None:
    """The sprint records each agent run's usage as an annotation (summed into the WP's
    `usage`): written after a move that kept its parts, status.json is still the replay."""
    wps = [{"wp_id": f"WP0{i}", "title": f"Module {i}"} for i in range(1, 4)]
    mission = make_mission(repo, slug=SLUG, wps=wps)
    kitty(repo, "move", "WP01", "claimed", "--agent", "claude")
    kitty(repo, "move", "WP02", "claimed", "--agent", "claude")
    run = {"role": "implement", "usage": {"input_tokens": 120, "output_tokens": 30}}
    for _ in range(2):
        opened = Mission.open(repo, SLUG)
        event = opened.annotation("WP02", "claude", {"agent_run": run})
        opened.record(lambda board, event=event: [event])
    assert (mission / "status.json").read_text() == replayed(mission)
    assert '"input_tokens": 240' in kitty(repo, "status", "--json").out
