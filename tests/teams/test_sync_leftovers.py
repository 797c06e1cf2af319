"""What a `kill -9`'d `kitty sync` leaves (issue 27.7, issue 25.3): the next sync recovers,
doctor names it, `doctor --fix` removes stale git locks, and sync's error names the lock.

The kills are deterministic: a `git` wrapper first on PATH does what git does up to a
point (takes `index.lock` as git does, or merges without committing and takes
`HEAD.lock` and the branch's ref lock), says so, and waits; the test then kills the
sync's whole process group with SIGKILL, as a terminal's kill or the OOM killer would.
A bounded random-kill test covers the rest (the wrapper and the kills: tests/killing.py).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import time
from pathlib import Path

import pytest

from tests.helpers import git, kitty, ok
from tests.killing import install_git_wrapper, kill_at, kill_randomly
from tests.remotes import FIVE, clone, publish

CONFIG = "agents:\n  available: [claude, codex]\n"
LOG = "kitty-specs/demo-01ABCDEF/status.events.jsonl"


@pytest.fixture
def wrapped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return install_git_wrapper(tmp_path, monkeypatch)


def age(path: Path, seconds: float = 60) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def event_ids(text: str) -> set[str]:
    return {json.loads(line)["event_id"] for line in text.splitlines() if line.strip()}


def two_clones(tmp_path: Path) -> tuple[Path, Path, Path]:
    bare = publish(tmp_path, CONFIG, FIVE)
    return bare, clone(f"file://{bare}", tmp_path / "a"), clone(f"file://{bare}", tmp_path / "b")


def test_kill_during_commit_leaves_index_lock_and_the_next_sync_recovers(
    tmp_path: Path, wrapped: Path
) -> None:
    bare, a, _ = two_clones(tmp_path)
    ok(a, "move", "WP01", "claimed", "--agent", "al")
    kill_at(a, "commit", wrapped, "sync")
    lock = a / ".git" / "index.lock"
    assert lock.exists()  # exactly what a killed `git commit` leaves
    doctor = kitty(a, "doctor")
    assert doctor.code == 1 and "kitty sync" in doctor.out and "killed" in doctor.out, doctor.out
    done = ok(a, "sync", "--json").json()
    assert done["recovered"] and done["commits"]
    assert not lock.exists()
    assert event_ids((a / LOG).read_text()) == event_ids(git(bare, "show", f"main:{LOG}"))
    assert kitty(a, "doctor").code == 0


def test_kill_during_merge_leaves_head_and_ref_locks_and_the_next_sync_recovers(
    tmp_path: Path, wrapped: Path
) -> None:
    bare, a, b = two_clones(tmp_path)
    ok(b, "move", "WP02", "claimed", "--agent", "bo")
    ok(b, "sync")  # the remote moves: a's sync has to merge
    ok(a, "move", "WP01", "claimed", "--agent", "al")
    kill_at(a, "merge", wrapped, "sync")
    gitdir = a / ".git"
    left = [gitdir / "MERGE_HEAD", gitdir / "HEAD.lock", gitdir / "refs" / "heads" / "main.lock"]
    assert all(p.exists() for p in left), [p for p in left if not p.exists()]
    for path in left[1:]:
        age(path)
    doctor = kitty(a, "doctor")
    assert doctor.code == 1
    for needle in ("MERGE_HEAD", "HEAD.lock", "refs/heads/main.lock", "kitty sync"):
        assert needle in doctor.out, (needle, doctor.out)
    done = ok(a, "sync", "--json").json()
    assert done["recovered"] and done["merged"]
    assert not any(p.exists() for p in left)
    assert git(a, "status", "--porcelain", "--untracked-files=no") == ""
    ids = event_ids((a / LOG).read_text())
    assert ids == event_ids(git(bare, "show", f"main:{LOG}"))
    assert ids >= event_ids((b / LOG).read_text())
    assert kitty(a, "doctor").code == 0


def test_a_stale_index_lock_is_named_by_sync_and_doctor_and_removed_by_doctor_fix(
    tmp_path: Path,
) -> None:
    """No marker (git itself was killed): sync fails naming the lock, in --json too."""
    _, a, _ = two_clones(tmp_path)
    ok(a, "move", "WP01", "claimed", "--agent", "al")
    lock = a / ".git" / "index.lock"
    fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    os.write(fd, b"DIRC")
    os.close(fd)
    failed = kitty(a, "sync")
    assert failed.code == 1
    assert "index.lock" in failed.err and "kitty doctor --fix" in failed.err, failed.err
    error = kitty(a, "sync", "--json").json()["error"]
    assert "index.lock" in error["git_message"] and "File exists" in error["git_message"]
    assert "kitty doctor --fix" in error["hint"] and "above" not in error["hint"]
    # Fresh: a git command may own it; doctor leaves it alone.
    fresh = kitty(a, "doctor", "--fix")
    assert lock.exists() and "index.lock" not in fresh.out, fresh.out
    age(lock)
    report = kitty(a, "doctor")
    assert report.code == 1 and ".git/index.lock" in report.out and "--fix" in report.out
    fixed = kitty(a, "doctor", "--fix")
    assert not lock.exists(), fixed.out
    assert "removed" in fixed.out and "index.lock" in fixed.out
    ok(a, "sync")


def test_doctor_leaves_a_lock_alone_while_git_runs_in_the_repository(tmp_path: Path) -> None:
    _, a, _ = two_clones(tmp_path)
    lock = a / ".git" / "HEAD.lock"
    lock.write_bytes(b"")
    age(lock)
    # A live git process working in the repository (a pager-less `git cat-file --batch`).
    proc = subprocess.Popen(
        ["git", "cat-file", "--batch"], cwd=a, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL
    )
    # Under load the child can still be the forked python (not yet exec'd into git) when
    # doctor looks: wait until /proc shows it as git, as doctor sees processes.
    deadline = time.monotonic() + 20
    while Path(f"/proc/{proc.pid}/comm").read_text().strip() != "git":
        assert time.monotonic() < deadline, "git cat-file never started"
        time.sleep(0.01)
    try:
        kitty(a, "doctor", "--fix")
        assert lock.exists()
    finally:
        proc.communicate(b"")
    ok(a, "doctor", "--fix")
    assert not lock.exists()


def test_random_kill_9_of_the_whole_sync_always_recovers(tmp_path: Path) -> None:
    """Bounded: six kills of kitty sync and its git children at random points."""
    bare, a, b = two_clones(tmp_path)
    rng = random.Random(27)
    for round_ in range(6):
        ok(b, "agent", "tasks", "mark-status", "T001", "--status", "done", "--agent", f"b{round_}")
        ok(b, "sync")
        ok(a, "agent", "tasks", "mark-status", "T002", "--status", "done", "--agent", f"a{round_}")
        kill_randomly(a, rng, 0.5, "sync")
        ok(a, "sync")  # whatever was left, the next sync recovers
        assert not (a / ".git" / "MERGE_HEAD").exists()
        assert not list((a / ".git").glob("*.lock"))
    ok(b, "sync")
    assert event_ids((a / LOG).read_text()) == event_ids((b / LOG).read_text())
    assert event_ids((a / LOG).read_text()) == event_ids(git(bare, "show", f"main:{LOG}"))
    assert kitty(a, "doctor").code == 0
