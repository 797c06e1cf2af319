"""A `kill -9` of `kitty merge` at random moments of a merge queue: each time the target
holds either its old tip or a tree whose suite passes; `kitty merge --resume` (or
`--abort`, or a fresh `kitty merge` when nothing had started) then finishes it, with
the same outcome as a queue never killed and no WP merged twice (real git, real
pytest; a bounded number of kills at seeded random moments)."""

from __future__ import annotations

import json
import random
import subprocess
import time
from pathlib import Path

import pytest

from tests.helpers import git, kitty_argv
from tests.workflow.gating.project import SLUG, approve, implement, project
from tests.workflow.gating.test_merge_queue import lanes_of, suite_passes_on

pytestmark = pytest.mark.usefixtures("spec_kitty_reads_what_is_left")


def state_file(repo: Path) -> Path:
    return repo / ".git" / "kitty" / f"queue-{SLUG}.json"


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns


def killed_after(repo: Path, args: list[str], saves: int, seconds: float) -> int | None:
    """Run `kitty merge ARGS` and SIGKILL it (and the gate's pytest with it) right after
    its `saves`-th write of the queue's state (each step writes it first), or after
    `seconds` (in the middle of a gate); its exit code if it ended first."""
    import os
    import signal

    proc = subprocess.Popen(
        kitty_argv(repo, "merge", "--json", *args),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    seen, count, deadline = _stamp(state_file(repo)), 0, time.monotonic() + seconds
    while proc.poll() is None:
        now = _stamp(state_file(repo))
        if now != seen:
            seen, count = now, count + 1
        if count >= saves or time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return None
        time.sleep(0.001)
    return proc.returncode


def ready(repo: Path) -> str:
    project(repo, wps=3)
    for wp, text in (("WP01", "clash\n"), ("WP02", "clash\n"), ("WP03", "three\n")):
        implement(repo, wp, text)
        approve(repo, wp)
    subprocess.run(kitty_argv(repo, "accept"), check=True, capture_output=True)
    return git(repo, "rev-parse", "main").strip()


def next_args(repo: Path) -> list[str]:
    return ["--resume"] if state_file(repo).is_file() else []


@pytest.mark.timeout(240)
@pytest.mark.parametrize("seed", [2, 3, 5])
def test_kill_9_at_random_moments_then_resume(repo: Path, tmp_path: Path, seed: int) -> None:
    base = ready(repo)
    rng = random.Random(seed)
    start = time.monotonic()
    phases: set[str] = set()  # where the kills landed (on a quiet machine: integrate, record)
    for _ in range(8):
        if (
            killed_after(repo, next_args(repo), rng.randint(1, 10), rng.uniform(0.5, 12))
            is not None
        ):
            break
        if state_file(repo).is_file():
            phases.add(json.loads(state_file(repo).read_text())["phase"])
        tip = git(repo, "rev-parse", "main").strip()
        assert tip == base or suite_passes_on(repo, tip, tmp_path), "main holds an untested tree"
    finish = subprocess.run(
        kitty_argv(repo, "merge", "--json", *next_args(repo)), capture_output=True, text=True
    )
    assert not state_file(repo).exists(), finish.stdout + finish.stderr
    assert time.monotonic() - start < 200
    # Where the kills land depends on the machine's speed (on a loaded one a run may finish
    # before its kill): the promises below hold wherever they landed, or if none did.
    expect = {"WP01": "done", "WP02": "planned", "WP03": "done"}
    if lanes_of(repo) == {"WP01": "approved", "WP02": "approved", "WP03": "approved"}:
        # the killed runs never got past the integration; nothing was recorded yet
        subprocess.run(kitty_argv(repo, "merge", "--json"), capture_output=True, check=False)
    assert lanes_of(repo) == expect
    tip = git(repo, "rev-parse", "main").strip()
    assert suite_passes_on(repo, tip, tmp_path)
    files = sorted(git(repo, "ls-tree", "--name-only", "main", "src/").split())
    assert files == ["src/base.txt", "src/wp01.txt", "src/wp03.txt"]
    log = repo / "kitty-specs" / SLUG / "status.events.jsonl"
    done = [
        json.loads(x)["wp_id"]
        for x in log.read_text().splitlines()
        if json.loads(x).get("to_lane") == "done"
    ]
    assert sorted(done) == ["WP01", "WP03"]  # each merged once
    assert not (repo / ".worktrees" / f"{SLUG}-queue").exists()


@pytest.mark.timeout(120)
def test_kill_9_then_abort_leaves_the_target_as_it_was(repo: Path) -> None:
    base = ready(repo)
    assert killed_after(repo, [], 3, 10) is None
    assert state_file(repo).is_file()
    done = subprocess.run(
        kitty_argv(repo, "merge", "--abort", "--json"), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["aborted"]
    assert git(repo, "rev-parse", "main").strip() == base
    assert not state_file(repo).exists()
    assert not (repo / ".worktrees" / f"{SLUG}-queue").exists()
    assert lanes_of(repo) == {"WP01": "approved", "WP02": "approved", "WP03": "approved"}
    again = subprocess.run(kitty_argv(repo, "merge", "--json"), capture_output=True, text=True)
    assert json.loads(again.stdout)["done"] == ["WP01", "WP03"]
