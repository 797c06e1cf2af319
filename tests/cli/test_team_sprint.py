"""`kitty sprint --remote origin` on two machines at once shares one mission: every WP
is implemented once and merged once, and afterwards every clone shows the same board."""

from __future__ import annotations

import json
import os
import subprocess
from collections import Counter
from pathlib import Path

import pytest
import yaml

from kitty.services.demo import create_sample_repo
from tests.helpers import git, kitty_argv, ok, trust
from tests.remotes import clone

TIMEOUT = float(os.environ.get("KITTY_TEAM_TIMEOUT", "500"))


@pytest.mark.timeout(600)
def test_two_machines_one_sprint(tmp_path: Path) -> None:
    seed, slug = create_sample_repo(tmp_path)
    # One slot per machine and agents that take 1.5 s: a machine is busy with its first WP
    # (implementation, then its review) for ~3 s, so the other machine, however slowly it
    # starts, finds the second ready WP (the sample has two roots) and both do work. With
    # 0.1 s agents and two slots one fast machine could claim everything first (seen in CI).
    config = seed / ".kittify" / "config.yaml"
    commands = yaml.safe_load(config.read_text())
    for command in commands["agents"]["commands"].values():
        command += ["--delay", "1.5"]
    config.write_text(yaml.safe_dump(commands, sort_keys=False))
    git(seed, "commit", "-qam", "slower simulated agents")
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(seed, "push", "-q", str(bare), "main")
    machines = [clone(f"file://{bare}", tmp_path / name) for name in ("east", "west")]
    for repo in machines:
        trust(repo)  # each user trusts the sample's simulated-agent commands on their machine
    argv = [
        "sprint",
        "--implementer",
        "sim-coder",
        "--reviewer",
        "sim-reviewer",
        "--remote",
        "origin",
        "--merge",
        "--parallel",
        "1",
        "--no-caffeinate",
        "--json",
    ]
    procs = [
        subprocess.Popen(
            kitty_argv(repo, *argv),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(os.environ, KITTY_MACHINE=repo.name),
        )
        for repo in machines
    ]
    try:
        outputs = [p.communicate(timeout=TIMEOUT) for p in procs]
    finally:
        for proc in procs:
            proc.kill()
    streams = [
        [json.loads(line) for line in out.splitlines() if line.strip()] for out, _ in outputs
    ]
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, (out[-3000:], err[-3000:])
    first_runs = Counter(
        e["wp_id"]
        for stream in streams
        for e in stream
        if e.get("event") == "dispatch" and e["role"] == "implement" and e["cycle"] == 1
    )
    assert sorted(first_runs) == [f"WP0{i}" for i in range(1, 9)]
    assert set(first_runs.values()) == {1}  # each WP implemented once
    assert all(any(e.get("event") == "dispatch" for e in s) for s in streams)  # both worked
    merged = [e for stream in streams for e in stream if e.get("event") == "merged"]
    assert len(merged) == 1  # merged once
    for repo in machines:
        ok(repo, "sync")
    views = [ok(repo, "status", "--json").json() for repo in machines]
    assert views[0]["work_packages"] == views[1]["work_packages"]
    assert {w["lane"] for w in views[0]["work_packages"]} == {"done"}
    assert views[0]["conflicts"] == []
    merges = git(bare, "log", "--merges", "--format=%s", "main").splitlines()
    assert merges.count(f"Merge mission {slug} into main") == 1, merges
    lane_merges = Counter(
        m.split(" (")[0] for m in merges if m.startswith("Merge lane-") and m.endswith(slug)
    )
    assert lane_merges and set(lane_merges.values()) == {1}, merges
