"""`agents.auto_commit_delay`: a stream of rapid moves shares commits, and every event
ends committed: by the background committer once the log is quiet, by the next
committer when one was killed, or by `kitty doctor --fix` (the flush)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from tests.helpers import git, kitty, kitty_argv, ok
from tests.workflow.commits.test_autocommit import _commits, _env, _kitty_dirty, _moves, _planned

MARKS = Path(".git/kitty/deferred")
LOCK = Path(".git/kitty/committer.lock")


def _delay(repo: Path, seconds: float) -> None:
    (repo / ".kittify" / "config.yaml").write_text(
        "agents:\n  available: [claude, codex]\n  auto_commit: true\n"
        f"  auto_commit_delay: {seconds}\n"
    )
    git(repo, "commit", "-qam", "defer auto-commits")


def _committer_running(repo: Path) -> bool:
    import fcntl

    fd = os.open(repo / LOCK, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def _settled(repo: Path, timeout: float = 60.0) -> None:
    """Wait until no committer runs and no mark is left."""
    deadline = time.monotonic() + timeout
    while _committer_running(repo) or any((repo / MARKS).glob("*")):
        assert time.monotonic() < deadline, "the committer never finished"
        time.sleep(0.05)


def _move(repo: Path, wp: str) -> None:
    done = subprocess.run(
        kitty_argv(repo, "move", wp, "claimed", "--agent", "claude"),
        capture_output=True,
        text=True,
        env=_env(),
        timeout=60,
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr


def test_rapid_sequential_moves_share_one_commit_once_the_log_is_quiet(repo: Path) -> None:
    """A long delay keeps the committer waiting however slow the machine is; making
    the mark old (the log quiet) lets it commit: one commit for the four moves."""
    mission = _planned(repo, 4)
    _delay(repo, 600)
    before = _commits(repo)
    for i in range(1, 5):
        _move(repo, f"WP{i:02d}")
    assert _commits(repo) == before  # no move waited for a commit of its own
    assert _committer_running(repo)
    assert "not committed (yet: agents.auto_commit_delay" in ok(repo, "status").err
    quiet = time.time() - 601
    os.utime(repo / MARKS / mission.name, (quiet, quiet))
    _settled(repo)
    assert _moves(mission) == ["WP01", "WP02", "WP03", "WP04"]
    assert _kitty_dirty(repo) == ""
    assert _commits(repo) - before == 1
    message = git(repo, "log", "-1", "--format=%B")
    assert message.startswith("kitty: WP01 planned -> claimed and 3 more moves\n"), message
    for i in range(1, 5):
        assert f"WP{i:02d} planned -> claimed (claude)" in message


def test_a_short_delay_commits_by_itself(repo: Path) -> None:
    mission = _planned(repo, 2)
    _delay(repo, 0.2)
    before = _commits(repo)
    _move(repo, "WP01")
    _move(repo, "WP02")
    _settled(repo)
    assert _moves(mission) == ["WP01", "WP02"] and _kitty_dirty(repo) == ""
    assert 1 <= _commits(repo) - before <= 2


def test_a_killed_committer_is_reported_and_doctor_fix_commits_its_events(repo: Path) -> None:
    mission = _planned(repo, 2)
    _delay(repo, 600)
    _move(repo, "WP01")
    deadline = time.monotonic() + 30
    while not (repo / LOCK).exists() or not (repo / LOCK).read_text().strip():
        assert time.monotonic() < deadline, "no committer started"
        time.sleep(0.05)
    os.kill(int((repo / LOCK).read_text()), signal.SIGKILL)
    while _committer_running(repo):
        time.sleep(0.05)
    assert "WP01" in _moves(mission) and _kitty_dirty(repo) != ""
    old = time.time() - 7200
    os.utime(repo / MARKS / mission.name, (old, old))  # the committer died long ago
    report = kitty(repo, "doctor")
    assert report.code != 0
    assert "no committer is running (it was killed): `kitty doctor --fix`" in report.out
    fixed = ok(repo, "doctor", "--fix")
    assert f"committed the deferred auto-commits of {mission.name}" in fixed.out
    assert _kitty_dirty(repo) == "" and not any((repo / MARKS).glob("*"))
    assert "kitty: WP01 planned -> claimed" in git(repo, "log", "-1", "--format=%s")


def test_after_a_killed_committer_the_next_move_starts_one_that_commits_both(
    repo: Path,
) -> None:
    mission = _planned(repo, 2)
    _delay(repo, 600)
    _move(repo, "WP01")
    deadline = time.monotonic() + 30
    while not (repo / LOCK).exists() or not (repo / LOCK).read_text().strip():
        assert time.monotonic() < deadline, "no committer started"
        time.sleep(0.05)
    os.kill(int((repo / LOCK).read_text()), signal.SIGKILL)
    while _committer_running(repo):
        time.sleep(0.05)
    _delay(repo, 0.2)
    _move(repo, "WP02")
    _settled(repo)
    assert _moves(mission) == ["WP01", "WP02"]
    assert _kitty_dirty(repo) == ""


def test_without_a_delay_each_move_commits_before_it_exits(repo: Path) -> None:
    """A delay of 0 (the default) never defers: the contract of test_autocommit."""
    _planned(repo, 1)
    before = _commits(repo)
    ok(repo, "move", "WP01", "claimed", "--agent", "claude")
    assert _commits(repo) == before + 1 and not (repo / MARKS).exists()


def test_a_bad_delay_is_refused_before_anything_is_written(repo: Path) -> None:
    mission = _planned(repo, 1)
    (repo / ".kittify" / "config.yaml").write_text(
        "agents:\n  available: [claude]\n  auto_commit: true\n  auto_commit_delay: soon\n"
    )
    before = (mission / "status.events.jsonl").read_bytes()
    run = kitty(repo, "move", "WP01", "claimed", "--agent", "claude")
    assert run.code != 0
    assert "agents.auto_commit_delay must be a number of seconds" in run.err
    assert "Traceback" not in run.err
    assert (mission / "status.events.jsonl").read_bytes() == before


def test_parallel_deferred_moves_all_end_committed(repo: Path) -> None:
    """Six movers at once, each deciding whether a committer runs while another may be
    starting or leaving: every event ends committed and no mark is left."""
    mission = _planned(repo, 6)
    _delay(repo, 0.3)
    procs = [
        subprocess.Popen(
            kitty_argv(repo, "move", f"WP{i:02d}", "claimed", "--agent", f"a{i}"),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(),
        )
        for i in range(1, 7)
    ]
    errors = [proc.communicate(timeout=120)[1] for proc in procs]
    assert [proc.returncode for proc in procs] == [0] * 6, errors
    _settled(repo)
    assert _moves(mission) == [f"WP{i:02d}" for i in range(1, 7)]
    assert _kitty_dirty(repo) == ""
