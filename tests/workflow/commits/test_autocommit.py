"""`agents.auto_commit: true`: kitty commits its own files with plain git, robustly.

Once an event is appended the move has happened: the command exits 0 whatever git
says, a commit that cannot be made is a warning with the fix, and the next write
commits what is left. Kitty's own commits queue on one commit lock, so concurrent
writers never collide on git's index.lock, and a writer that finds its event already
committed by another (a batch) makes no commit of its own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.helpers import git, kitty_argv, make_mission, ok

WRITER = Path(__file__).resolve().parents[2] / "fakes" / "overlapping_writer.py"
CONFIG = "agents:\n  available: [claude, codex]\n  auto_commit: true\n"


def _planned(repo: Path, count: int) -> Path:
    mission = make_mission(repo, wps=[{"wp_id": f"WP{i:02d}"} for i in range(1, count + 1)])
    (repo / ".kittify" / "config.yaml").write_text(CONFIG)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plan the mission")
    return mission


def _commits(repo: Path) -> int:
    return int(git(repo, "rev-list", "--count", "HEAD"))


def _kitty_dirty(repo: Path) -> str:
    return git(repo, "status", "--porcelain", "--untracked-files=all", "--", "kitty-specs")


def _env() -> dict[str, str]:
    root = str(Path(__file__).resolve().parents[3])
    return dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))


def _moves(mission: Path) -> list[str]:
    lines = (mission / "status.events.jsonl").read_text().splitlines()
    return sorted(str(e["wp_id"]) for e in map(json.loads, lines) if e.get("to_lane") == "claimed")


def test_twelve_parallel_auto_committed_moves_all_exit_0(repo: Path, tmp_path: Path) -> None:
    """Issue 25.12: twelve real processes meet at the mission lock, append one after
    the other and then all commit at once; none may report failure (each event is in
    the log), and afterwards every kitty file is committed in at most twelve commits."""
    mission = _planned(repo, 12)
    before = _commits(repo)
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    shim = [sys.executable, str(WRITER), str(barrier), "12", "0", "lock", "--"]
    procs = [
        subprocess.Popen(
            [*shim, "-C", str(repo), "move", f"WP{i:02d}", "claimed", "--agent", f"a{i}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(),
        )
        for i in range(1, 13)
    ]
    results = [(p.wait(timeout=120), p.stderr.read() if p.stderr else "") for p in procs]
    for proc in procs:
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()
    assert [code for code, _ in results] == [0] * 12, results
    assert all("warning" not in err for _, err in results), results
    assert _moves(mission) == [f"WP{i:02d}" for i in range(1, 13)]
    assert _kitty_dirty(repo) == "", git(repo, "log", "--format=%B")
    assert 1 <= _commits(repo) - before <= 12


def test_rapid_moves_leave_nothing_uncommitted(repo: Path) -> None:
    """Sequential moves through the real entry point (the fast path): everything is
    committed, in at most one commit per move, and only kitty's files."""
    mission = _planned(repo, 4)
    (repo / "user.txt").write_text("mine\n")
    git(repo, "add", "user.txt")
    before = _commits(repo)
    for i in range(1, 5):
        done = subprocess.run(
            kitty_argv(repo, "move", f"WP{i:02d}", "claimed", "--agent", "claude"),
            capture_output=True,
            text=True,
            env=_env(),
            timeout=60,
        )
        assert done.returncode == 0 and done.stderr == "", done.stderr
    assert _moves(mission) == ["WP01", "WP02", "WP03", "WP04"]
    assert _kitty_dirty(repo) == ""
    assert 1 <= _commits(repo) - before <= 4
    assert "A  user.txt" in git(repo, "status", "--porcelain")
    touched = set(
        git(repo, "diff", "--name-only", f"HEAD~{_commits(repo) - before}", "HEAD").split()
    )
    assert touched == {
        "kitty-specs/demo-01ABCDEF/status.events.jsonl",
        "kitty-specs/demo-01ABCDEF/status.json",
    }


def test_a_busy_git_index_is_waited_for(repo: Path) -> None:
    """Someone else's git holds .git/index.lock for a moment: kitty retries."""
    _planned(repo, 1)
    lock = repo / ".git" / "index.lock"
    lock.write_text("")
    timer = threading.Timer(0.6, lock.unlink)
    timer.start()
    try:
        run = ok(repo, "move", "WP01", "claimed", "--agent", "claude")
    finally:
        timer.join()
    assert "warning" not in run.err
    assert _kitty_dirty(repo) == ""


def test_a_stuck_index_lock_is_a_warning_and_the_next_write_commits(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KITTY_COMMIT_RETRY_SECONDS", "0.3")
    _planned(repo, 2)
    before = _commits(repo)
    lock = repo / ".git" / "index.lock"
    lock.write_text("")
    run = ok(repo, "move", "WP01", "claimed", "--agent", "claude")
    assert "warning: WP01 planned -> claimed is recorded but not committed" in run.err
    assert "index.lock" in run.err
    assert "the next kitty write commits it" in run.err
    assert _commits(repo) == before
    lock.unlink()
    run = ok(repo, "move", "WP02", "claimed", "--agent", "claude")
    assert "warning" not in run.err
    assert _kitty_dirty(repo) == ""
    assert _commits(repo) == before + 1
    subject = git(repo, "log", "-1", "--format=%B")
    assert "WP01 planned -> claimed" in subject and "WP02 planned -> claimed" in subject


def test_the_printed_fix_commits_what_is_pending(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KITTY_COMMIT_RETRY_SECONDS", "0")
    _planned(repo, 1)
    lock = repo / ".git" / "index.lock"
    lock.write_text("")
    run = ok(repo, "move", "WP01", "claimed", "--agent", "claude")
    lock.unlink()
    fix = next(line for line in run.err.splitlines() if "git -C" in line)
    command = fix[fix.index("git -C") :]
    done = subprocess.run(command, shell=True, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert _kitty_dirty(repo) == ""


def test_the_auto_commit_move_path_never_imports_gitpython(repo: Path) -> None:
    _planned(repo, 1)
    probe = (
        "import sys\n"
        "from kitty.entry import main\n"
        "try:\n"
        "    main()\n"
        "finally:\n"
        "    print('GIT=' + str('git' in sys.modules), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, "-C", str(repo), "move", "WP01", "claimed"],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "GIT=False" in done.stderr, done.stderr
    assert _kitty_dirty(repo) == ""


def test_a_move_without_auto_commit_starts_no_subprocess_machinery(repo: Path) -> None:
    """The auto-commit code is imported by every move; its git (and subprocess, shlex)
    is imported only when a commit is to be made."""
    make_mission(repo, wps=[{"wp_id": "WP01"}])
    probe = (
        "import sys\n"
        "from kitty.entry import main\n"
        "try:\n"
        "    main()\n"
        "finally:\n"
        "    names = ('subprocess', 'shlex', 'git')\n"
        "    print('LOADED=' + ','.join(m for m in names if m in sys.modules), file=sys.stderr)\n"
    )
    args = ["-C", str(repo), "move", "WP01", "claimed", "--agent", "claude"]
    done = subprocess.run(
        [sys.executable, "-c", probe, *args], capture_output=True, text=True, env=_env(), timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[-1] == "LOADED=", done.stderr
