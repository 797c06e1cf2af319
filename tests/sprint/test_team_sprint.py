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

from kitty.project.demo import create_sample_repo
from tests.helpers import git, kitty_argv, ok, trust
from tests.remotes import clone

#: Spec Kitty 3.2.7 reads every mission these sprints leave behind (issue 21).
pytestmark = pytest.mark.usefixtures("spec_kitty_reads_what_is_left")

TIMEOUT = float(os.environ.get("KITTY_TEAM_TIMEOUT", "500"))


ARGV = [
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


def _machines(
    tmp_path: Path, delay: float, lease_minutes: float | None = None
) -> tuple[str, Path, list[Path]]:
    """The demo's sample mission on a bare remote, cloned by two machines (east, west)
    whose users trust its simulated agents, which take `delay` seconds a run."""
    seed, slug = create_sample_repo(tmp_path)
    config = seed / ".kittify" / "config.yaml"
    commands = yaml.safe_load(config.read_text())
    for command in commands["agents"]["commands"].values():
        command += ["--delay", str(delay)]
    if lease_minutes is not None:
        commands["agents"]["lease_minutes"] = lease_minutes
    config.write_text(yaml.safe_dump(commands, sort_keys=False))
    git(seed, "commit", "-qam", "slower simulated agents")
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(seed, "push", "-q", str(bare), "main")
    machines = [clone(f"file://{bare}", tmp_path / name) for name in ("east", "west")]
    for repo in machines:
        trust(repo)  # each user trusts the sample's simulated-agent commands on their machine
    return slug, bare, machines


def _sprint(repo: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        kitty_argv(repo, *ARGV),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, KITTY_MACHINE=repo.name),
    )


@pytest.mark.timeout(600)
def test_two_machines_one_sprint(tmp_path: Path) -> None:
    # One slot per machine and agents that take 1.5 s: a machine is busy with its first WP
    # (implementation, then its review) for ~3 s, so the other machine, however slowly it
    # starts, finds the second ready WP (the sample has two roots) and both do work. With
    # 0.1 s agents and two slots one fast machine could claim everything first (seen in CI).
    slug, bare, machines = _machines(tmp_path, 1.5)
    procs = [_sprint(repo) for repo in machines]
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


@pytest.mark.timeout(600)
def test_a_machine_that_dies_mid_sprint_loses_no_work(tmp_path: Path) -> None:
    """east's sprint and its agent are killed (-9) right after its first dispatch, as when
    a laptop dies. west then runs alone: it does what does not wait on east's claim and
    stops, naming it. east comes back: its sprint dispatches the dead agent's WP again and
    the mission is finished and merged exactly once, with the same board on both clones."""
    import contextlib
    import signal

    slug, bare, (east, west) = _machines(tmp_path, 0.3, lease_minutes=0.02)
    dying = _sprint(east)
    assert dying.stdout is not None
    dispatch: dict[str, object] = {}
    for line in dying.stdout:
        event = json.loads(line)
        if event.get("event") == "dispatch":
            dispatch = event
            break
    assert dispatch, dying.stderr.read() if dying.stderr else ""
    dying.kill()  # SIGKILL: no cleanup, no last publish
    pid = dispatch.get("pid")
    if isinstance(pid, int):
        with contextlib.suppress(ProcessLookupError):  # it may have finished already
            os.kill(pid, signal.SIGKILL)
    dying.communicate(timeout=60)
    held = str(dispatch["wp_id"])

    alone = _sprint(west)
    out, err = alone.communicate(timeout=TIMEOUT)
    stream = [json.loads(line) for line in out.splitlines() if line.strip()]
    end = stream[-1]
    assert end["event"] == "end" and not end["merged"], (out[-3000:], err[-3000:])
    assert held not in {e.get("wp_id") for e in stream if e.get("event") == "dispatch"}

    back = _sprint(east)
    out, err = back.communicate(timeout=TIMEOUT)
    assert back.returncode == 0, (out[-3000:], err[-3000:])
    stream = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert any(e.get("event") == "adopt" and e["wp_id"] == held for e in stream), out[-3000:]
    assert stream[-1]["merged"]
    for repo in (east, west):
        ok(repo, "sync")
    views = [ok(repo, "status", "--json").json() for repo in (east, west)]
    assert views[0]["work_packages"] == views[1]["work_packages"]
    assert {w["lane"] for w in views[0]["work_packages"]} == {"done"}
    merges = git(bare, "log", "--merges", "--format=%s", "main").splitlines()
    assert merges.count(f"Merge mission {slug} into main") == 1, merges
