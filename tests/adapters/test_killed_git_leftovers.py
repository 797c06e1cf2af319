"""What a `kill -9` in the middle of kitty's own git commands leaves, and who repairs it
(issue 35.2): kitty itself (the next sync, the next auto-commit), and `kitty doctor`
names each leftover that nobody has repaired yet, with `--fix` repairing it.

(a) a sync killed inside its `git commit`, after the branch moved and before the index
    was written: the index is one commit behind HEAD (and `index.lock` is left);
(b) a sync killed while `git merge` was checking out a teammate's new files: they are
    left untracked (and `index.lock`);
(c) a `kitty move` killed during its own auto-commit: `index.lock` is left.

Each state is made deterministically by a `git` wrapper first on PATH that does what
git does up to that point, says so and waits to be killed (tests/killing.py);
bounded random-kill loops cover the rest.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.helpers import git, kitty, ok
from tests.killing import install_git_wrapper, kill_at, kill_randomly
from tests.remotes import FIVE, clone, publish
from tests.teams.test_sync_leftovers import LOG, event_ids, two_clones

AUTO = "agents:\n  available: [claude, codex]\n  auto_commit: true\n"


@pytest.fixture
def wrapped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return install_git_wrapper(tmp_path, monkeypatch)


def _index_behind(repo: Path) -> bool:
    """The index holds an older log than HEAD and the work tree (a commit half done)."""
    return bool(git(repo, "diff", "--cached", "--name-only", "--", LOG).strip()) and not git(
        repo, "diff", "--name-only", "HEAD", "--", LOG
    )


def test_a_sync_killed_inside_its_commit_is_repaired_by_the_next_sync(
    tmp_path: Path, wrapped: Path
) -> None:
    bare, a, _ = two_clones(tmp_path)
    ok(a, "move", "WP01", "claimed", "--agent", "al")
    kill_at(a, "commit-ref", wrapped, "sync")
    assert _index_behind(a) and (a / ".git" / "index.lock").exists()
    done = ok(a, "sync", "--json").json()
    assert done["recovered"]
    assert not _index_behind(a) and not (a / ".git" / "index.lock").exists()
    assert git(a, "status", "--porcelain", "--untracked-files=no") == ""
    assert event_ids((a / LOG).read_text()) == event_ids(git(bare, "show", f"main:{LOG}"))
    ok(a, "sync")
    assert kitty(a, "doctor").code == 0


def test_doctor_names_an_index_behind_head_and_fix_repairs_it(
    tmp_path: Path, wrapped: Path
) -> None:
    """The same state once nothing of the killed sync is left to tell (no marker, no
    lock): doctor names it, --fix resets kitty's files in the index, sync works."""
    _, a, _ = two_clones(tmp_path)
    ok(a, "move", "WP01", "claimed", "--agent", "al")
    kill_at(a, "commit-ref", wrapped, "sync")
    (a / ".git" / "index.lock").unlink()
    (a / ".git" / "kitty-sync.json").unlink()
    assert _index_behind(a)
    report = kitty(a, "doctor")
    assert report.code == 1 and "index" in report.out and "behind HEAD" in report.out, report.out
    assert "kitty doctor --fix" in report.out
    fixed = ok(a, "doctor", "--fix")
    assert "index" in fixed.out and not _index_behind(a), fixed.out
    ok(a, "sync")
    assert kitty(a, "doctor").code == 0


def _teammate_adds_a_file(b: Path) -> str:
    """b commits a new WP file and pushes it: a's next sync merges it in."""
    ok(b, "wp", "add", "--title", "Extra", "--objective", "more")
    ok(b, "finalize")
    git(b, "add", "-A")
    git(b, "commit", "-qm", "extra WP")
    ok(b, "sync")
    return next(
        p for p in git(b, "ls-files", "kitty-specs").split() if "WP06" in p and p.endswith(".md")
    )


def test_a_sync_killed_while_merge_checks_out_files_is_repaired_by_the_next_sync(
    tmp_path: Path, wrapped: Path
) -> None:
    bare, a, b = two_clones(tmp_path)
    added = _teammate_adds_a_file(b)
    ok(a, "move", "WP01", "claimed", "--agent", "al")
    kill_at(a, "merge-checkout", wrapped, "sync")
    assert (a / added).is_file() and added in git(a, "status", "--porcelain")
    done = ok(a, "sync", "--json").json()
    assert done["recovered"] and done["merged"]
    assert git(a, "status", "--porcelain", "--untracked-files=all") == ""
    assert git(a, "ls-files", added).strip() == added
    assert event_ids((a / LOG).read_text()) == event_ids(git(bare, "show", f"main:{LOG}"))
    assert kitty(a, "doctor").code == 0


def test_doctor_names_files_a_killed_merge_left_and_fix_removes_them(
    tmp_path: Path, wrapped: Path
) -> None:
    _, a, b = two_clones(tmp_path)
    added = _teammate_adds_a_file(b)
    ok(a, "move", "WP01", "claimed", "--agent", "al")
    kill_at(a, "merge-checkout", wrapped, "sync")
    (a / ".git" / "index.lock").unlink()
    (a / ".git" / "kitty-sync.json").unlink()
    mine = a / "notes.txt"  # an untracked file of the user's own: never touched
    mine.write_text("mine\n")
    report = kitty(a, "doctor")
    assert report.code == 1 and added in report.out and "untracked" in report.out, report.out
    assert "notes.txt" not in report.out
    fixed = ok(a, "doctor", "--fix")
    assert added in fixed.out and not (a / added).exists() and mine.exists(), fixed.out
    ok(a, "sync")
    assert (a / added).is_file() and git(a, "ls-files", added).strip() == added
    assert kitty(a, "doctor").code == 0


EIGHT = [{"wp_id": f"WP0{i}", "title": f"Part {i}", "subtasks": [f"T00{i}"]} for i in range(1, 9)]


def _auto_clone(tmp_path: Path, wps: list[dict[str, object]] = FIVE) -> Path:
    bare = publish(tmp_path, AUTO, wps)
    return clone(f"file://{bare}", tmp_path / "a")


def test_a_move_killed_during_its_auto_commit_leaves_a_lock_the_next_write_removes(
    tmp_path: Path, wrapped: Path
) -> None:
    a = _auto_clone(tmp_path)
    kill_at(a, "commit", wrapped, "move", "WP01", "claimed", "--agent", "al")
    lock = a / ".git" / "index.lock"
    assert lock.exists()
    report = kitty(a, "doctor")
    assert report.code == 1 and "index.lock" in report.out and "auto-commit" in report.out
    head = git(a, "rev-parse", "HEAD")
    moved = kitty(a, "move", "WP02", "claimed", "--agent", "al")
    assert moved.code == 0 and "not committed" not in moved.err, moved.err
    assert git(a, "rev-parse", "HEAD") != head and not lock.exists()
    assert git(a, "status", "--porcelain", "--untracked-files=no") == ""
    assert kitty(a, "doctor").code == 0


def test_doctor_fix_removes_a_lock_a_killed_auto_commit_left(tmp_path: Path, wrapped: Path) -> None:
    a = _auto_clone(tmp_path)
    kill_at(a, "commit", wrapped, "move", "WP01", "claimed", "--agent", "al")
    lock = a / ".git" / "index.lock"
    fixed = ok(a, "doctor", "--fix")  # fresh, but its owner is known dead: removed now
    assert not lock.exists() and "index.lock" in fixed.out, fixed.out
    assert kitty(a, "doctor").code == 0


@pytest.mark.timeout(600)
def test_random_kills_of_auto_committed_moves_and_syncs_always_recover(tmp_path: Path) -> None:
    """Bounded: eight kills of an auto-committed move, eight of a sync merging a
    teammate's new files, at random moments; the next command always succeeds."""
    rng = random.Random(35)
    a = _auto_clone(tmp_path / "auto", EIGHT)
    for round_ in range(8):
        wp = f"WP0{round_ + 1}"
        kill_randomly(a, rng, 0.6, "move", wp, "claimed", "--agent", "al")
        head = git(a, "rev-parse", "HEAD")
        moved = kitty(a, "move", wp, "doing", "--agent", "al")  # from planned or claimed
        assert moved.code == 0 and "not committed" not in moved.err, moved.err
        assert git(a, "rev-parse", "HEAD") != head
        assert not list((a / ".git").glob("*.lock")), round_
        assert git(a, "status", "--porcelain", "--untracked-files=no") == ""
    _, c, d = two_clones(tmp_path / "sync")
    for round_ in range(8):
        ok(d, "wp", "add", "--title", f"Extra {round_}", "--objective", "more")
        ok(d, "finalize")
        git(d, "add", "-A")
        git(d, "commit", "-qm", f"extra {round_}")
        ok(d, "sync")
        ok(c, "agent", "tasks", "mark-status", "T001", "--status", "done", "--agent", f"c{round_}")
        kill_randomly(c, rng, 0.6, "sync")
        ok(c, "sync")
        assert git(c, "status", "--porcelain", "--untracked-files=all") == ""
    ok(d, "sync")
    assert event_ids((c / LOG).read_text()) == event_ids((d / LOG).read_text())
    assert kitty(c, "doctor").code == 0
