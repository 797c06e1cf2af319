"""More of what `kitty sync` promises, in-process (so `make mutation` can kill the mutants
of kitty/teams/sync.py):

- every mission's coordination ref is folded in and given the clone's events; a branch
  whose name merely ends in such a ref is not one;
- git's own words reach the user whole when the remote is out of reach or a merge
  cannot start, and the message quotes their first 300 characters;
- a sync waits for each mission's lock, and names the mission it gave up on;
- a stale lock on the remote-tracking branch is named, with git's error alone;
- the recovery of a sync killed mid-merge keeps every line the log had, the merged-in
  ones too, though undoing the merge puts the file back;
- a sync ends with its own result or error when its marker was removed meanwhile
  (another sync of the same checkout finished first).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kitty.adapters import eventlog, layout
from kitty.adapters.git import Git
from kitty.errors import GitError, GuardRefused, LockBusy
from kitty.mission.workspace import Mission
from kitty.teams import remote
from kitty.teams import sync as syncmod
from tests.helpers import git, ok
from tests.remotes import FIVE, clone, publish

CONFIG = "agents:\n  available: [claude, codex]\n"
SLUG = "demo-01ABCDEF"
LOG = f"kitty-specs/{SLUG}/status.events.jsonl"
REF = f"refs/heads/kitty/coord/{SLUG}"


@pytest.fixture
def two(tmp_path: Path) -> tuple[Path, Path, Path]:
    bare = publish(tmp_path, CONFIG, FIVE[:2])
    return bare, clone(f"file://{bare}", tmp_path / "a"), clone(f"file://{bare}", tmp_path / "b")


def test_each_mission_s_coordination_ref_is_folded_in_and_given_the_clone_s_events(
    two: tuple[Path, Path, Path],
) -> None:
    bare, a, b = two
    git(bare, "branch", f"kitty/coord/old/{REF}", "main")  # ends in the ref's name: not it
    assert syncmod.sync(b)["coordinated"] == []
    assert git(bare, "for-each-ref", REF) == ""  # no coordination ref was made for it
    ok(a, "move", "WP01", "claimed", "--agent", "al")
    remote.transact(Mission.open(a, None), "origin", lambda board: [], "publish")
    ok(b, "move", "WP02", "claimed", "--agent", "bo")
    result = syncmod.sync(b)
    assert result["coordinated"] == [SLUG]
    coordination = git(bare, "cat-file", "blob", f"{REF}:status.events.jsonl")
    assert '"actor": "bo"' in coordination  # b's claim reached the coordination ref
    assert git(bare, "log", "-1", "--format=%s", REF).strip() == "kitty: sync"
    pushed = git(bare, "show", f"main:{LOG}")
    assert '"actor": "al"' in pushed and '"actor": "bo"' in pushed  # a's claim reached main


def test_an_unreachable_remote_is_said_with_git_s_whole_message(
    two: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    _, a, _ = two
    gone = tmp_path / ("gone-" + "x" * 240) / "remote.git"
    git(a, "remote", "set-url", "origin", str(gone))
    with pytest.raises(GitError) as listing:
        syncmod.sync(a)  # the default remote is origin
    said = listing.value.output
    assert "does not appear to be a git repository" in said and len(said) > 300
    assert listing.value.message == f"cannot reach origin: {said[:300]}"
    with pytest.raises(GitError) as fetching:
        syncmod._fetch(Git(a), "origin", "main")
    said = fetching.value.output
    assert "does not appear to be a git repository" in said and len(said) > 300
    assert fetching.value.message == f"git fetch origin main failed: {said[:300]}"


def test_a_merge_that_cannot_start_is_refused_with_git_s_reason(
    two: tuple[Path, Path, Path],
) -> None:
    _, a, b = two
    name = "n" * 220 + ".txt"
    (a / name).write_text("theirs\n")
    git(a, "add", name)
    git(a, "commit", "-q", "-m", "a file")
    syncmod.sync(a)
    ok(b, "move", "WP02", "claimed", "--agent", "bo")
    (b / name).write_text("mine\n")  # untracked: the merge would overwrite it
    with pytest.raises(GuardRefused) as caught:
        syncmod.sync(b)
    head = "merging origin/main stops on "
    tail = "; the merge was undone and kitty's own commits were kept"
    message = caught.value.message
    assert message.startswith(head) and message.endswith(tail)
    reason = message[len(head) : -len(tail)]
    assert reason.startswith(
        "error: The following untracked working tree files would be overwritten by merge:"
    )
    assert len(reason) == 300  # git's words, cut at 300 characters
    assert (b / name).read_text() == "mine\n"
    assert git(b, "log", "-1", "--format=%s").strip() == "kitty: sync"


def test_a_sync_waits_for_each_mission_s_lock_and_names_the_mission(
    two: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    bare, a, _ = two
    ok(a, "move", "WP01", "claimed", "--agent", "al")
    before = git(bare, "rev-parse", "main")
    monkeypatch.setenv("KITTY_LOCK_TIMEOUT", "0.3")
    lock = layout.find_project(a).lock_path(SLUG)
    with eventlog.locked(lock, "another writer"), pytest.raises(LockBusy) as caught:
        syncmod.sync(a)
    assert caught.value.message == f"mission {SLUG} is locked by another kitty process ({lock})"
    assert git(bare, "rev-parse", "main") == before  # nothing was pushed
    assert not (a / ".git" / syncmod.MARKER).exists()


def test_a_stale_lock_on_the_remote_tracking_branch_is_named(
    two: tuple[Path, Path, Path],
) -> None:
    _, a, b = two
    ok(b, "move", "WP02", "claimed", "--agent", "bo")
    syncmod.sync(b)  # origin/main moves, so a's fetch updates its remote-tracking branch
    lock = a / ".git" / "refs" / "remotes" / "origin" / "main.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text("")
    with pytest.raises(GitError) as caught:
        syncmod.sync(a)
    assert "origin/main.lock is left by a git command that was killed" in caught.value.hint
    said = caught.value.output
    assert said.startswith("error: cannot lock ref 'refs/remotes/origin/main'")
    assert "unable to update local ref" not in said  # git's error, not its table of refs
    assert caught.value.message == f"git fetch origin main failed: {said[:300]}"


def test_a_sync_ends_with_its_own_outcome_when_its_marker_was_removed_meanwhile(
    two: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, a, _ = two
    monkeypatch.setattr(syncmod.time, "sleep", lambda s: None)
    marker = a / ".git" / syncmod.MARKER
    hook = a / ".git" / "hooks" / "pre-push"

    def pre_push(then: str) -> None:
        """Another sync of this checkout finishes (and removes the marker) during the push."""
        hook.write_text(f'#!/bin/sh\nrm -f "{marker}"\n{then}\n')
        hook.chmod(0o755)

    pre_push("exit 0")
    ok(a, "move", "WP01", "claimed", "--agent", "al")
    assert syncmod.sync(a)["commits"]
    pre_push("echo 'no pushes today' >&2; exit 1")
    with pytest.raises(GitError, match="no pushes today"):
        syncmod.sync(a)
    pre_push("echo ' ! [rejected] main -> main (fetch first)' >&2; exit 1")
    with pytest.raises(LockBusy, match="gave up after 1 attempts"):
        syncmod.sync(a, attempts=1)
    assert not marker.exists()


def test_recovering_a_sync_killed_mid_merge_keeps_every_line_the_log_had(
    two: tuple[Path, Path, Path],
) -> None:
    _, a, b = two
    ok(b, "move", "WP02", "claimed", "--agent", "bo")
    syncmod.sync(b)
    ok(a, "move", "WP01", "claimed", "--agent", "al")
    git(a, "commit", "-q", "-m", "a's claim", "--", LOG)
    git(a, "fetch", "-q", "origin")
    git(a, "merge", "-q", "--no-commit", "--no-ff", "origin/main")  # the killed sync's merge
    (a / ".git" / syncmod.MARKER).write_text('{"pid": 4194311, "phase": "merge"}')
    assert syncmod.recover(Git(a), layout.find_project(a))
    assert not (a / ".git" / "MERGE_HEAD").exists()  # the merge was undone
    log = (a / LOG).read_text()
    assert '"actor": "al"' in log and '"actor": "bo"' in log  # and no line was lost
