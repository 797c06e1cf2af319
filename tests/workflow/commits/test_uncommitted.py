"""`agents.auto_commit: false` leaves kitty's files for you to commit: `status` (text) and
`doctor` say so, with the command that commits them; `status --json` stays as it was."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from kitty import fastpath
from tests.helpers import git, kitty, make_mission, ok

SLUG = "unc-01UNCOMMI"
NOTE = "not committed"


@pytest.fixture
def committed(repo: Path) -> Path:
    make_mission(repo, slug=SLUG, wps=[{"wp_id": "WP01"}, {"wp_id": "WP02"}])
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plan")
    return repo


def _command(text: str) -> str:
    line = next(x for x in text.splitlines() if NOTE in x)
    return line.split("`")[1]


def test_status_and_doctor_name_uncommitted_kitty_files(
    committed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = committed
    assert NOTE not in kitty(repo, "status").err
    ok(repo, "move", "WP01", "claimed", "--agent", "claude")
    run = ok(repo, "status")
    assert NOTE in run.err and f"kitty-specs/{SLUG}" in run.err
    assert "auto_commit" in run.err
    assert NOTE not in ok(repo, "status", "--json").out  # agents' reads: unchanged
    code = fastpath.run(["-C", str(repo), "status"])
    fast = capsys.readouterr()
    assert (code, fast.out, fast.err) == (run.code, run.out, run.err)
    doctor = kitty(repo, "doctor")
    assert doctor.code == 0, doctor.out + doctor.err  # a warning, not a problem
    assert NOTE in doctor.err
    assert any(NOTE in w for w in ok(repo, "doctor", "--json").json()["warnings"])
    # the command printed runs as printed, and then nothing is said
    subprocess.run(["sh", "-c", _command(run.err)], cwd=repo, check=True, capture_output=True)
    assert NOTE not in kitty(repo, "status").err
    assert NOTE not in kitty(repo, "doctor").err
    assert git(repo, "status", "--porcelain", "--", "kitty-specs") == ""


def test_auto_commit_leaves_nothing_to_say(repo: Path) -> None:
    make_mission(
        repo,
        slug=SLUG,
        wps=[{"wp_id": "WP01"}],
        config="agents:\n  available: [claude, codex]\n  auto_commit: true\n",
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plan")
    ok(repo, "move", "WP01", "claimed", "--agent", "claude")
    assert NOTE not in ok(repo, "status").err


def test_outside_git_status_says_nothing(committed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ok(committed, "move", "WP01", "claimed", "--agent", "claude")
    monkeypatch.setenv("PATH", "/nonexistent")  # no git on PATH: the check is skipped
    run = ok(committed, "status")
    assert NOTE not in run.err


def test_the_warning_is_said_once_per_change_of_the_set(
    committed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = committed
    monkeypatch.delenv("KITTY_WARN_UNCOMMITTED")  # the default
    ok(repo, "move", "WP01", "claimed", "--agent", "claude")
    assert NOTE in ok(repo, "status").err
    for _ in range(2):  # the same files: nothing more to say (the warm cache alike)
        assert NOTE not in ok(repo, "status").err
        assert NOTE not in ok(repo, "status", "--list").err
    assert NOTE not in ok(repo, "next", "--agent", "codex").err
    assert NOTE in ok(repo, "doctor").err  # doctor always says it
    ok(repo, "move", "WP02", "claimed", "--agent", "codex")  # the set changes: said again?
    # the log was already uncommitted; a new file joins the set only when one is added
    ok(repo, "wp", "add", "--title", "More", "--objective", "more")
    assert NOTE in ok(repo, "status").err
    assert NOTE not in ok(repo, "status").err
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "all")
    assert NOTE not in ok(repo, "status").err
    ok(repo, "move", "WP01", "in_progress", "--agent", "claude")
    assert NOTE in ok(repo, "status").err  # new again after a commit emptied the set


def test_init_says_which_auto_commit_a_newcomer_gets_and_why(repo: Path) -> None:
    out = ok(repo, "init", "--agents", "claude,codex").out
    assert "auto_commit: false (the default: kitty never commits on its own" in out
    assert "agents.auto_commit: true" in out
