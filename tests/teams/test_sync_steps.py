"""`kitty sync` in-process (so `make mutation` can kill the mutants of
kitty/teams/sync.py; tests/teams/test_sync.py and test_sync_leftovers.py run syncs in
subprocesses too, which never run mutated code).

- a push rejected because someone pushed first is retried after a merge, and the
  retry is seen (`attempts`); a branch that keeps moving is given up on;
- only kitty's own files are committed;
- a sync killed earlier is recovered: its marker, its git locks, every log line;
- a checkout mid-merge, a detached HEAD, an unknown or unreachable remote, a push
  refused for another reason: a clear refusal, the marker gone.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from kitty.adapters.git import Git
from kitty.errors import GitError, GuardRefused, LockBusy
from kitty.teams import sync as syncmod
from tests.helpers import git, ok
from tests.remotes import FIVE, clone, publish

CONFIG = "agents:\n  available: [claude, codex]\n"
SLUG = "demo-01ABCDEF"
LOG = f"kitty-specs/{SLUG}/status.events.jsonl"


@pytest.fixture
def two(tmp_path: Path) -> tuple[Path, Path, Path]:
    bare = publish(tmp_path, CONFIG, FIVE[:2])
    return bare, clone(f"file://{bare}", tmp_path / "a"), clone(f"file://{bare}", tmp_path / "b")


@pytest.fixture(autouse=True)
def no_hangup_reaches_this_process() -> Iterator[None]:
    """Asking whether a marker's process still runs signals nobody, this process included
    (its pid is in the marker of its own sync)."""
    got: list[int] = []
    before = signal.signal(signal.SIGHUP, lambda signum, frame: got.append(signum))
    yield
    signal.signal(signal.SIGHUP, before)
    assert got == []


def marker(repo: Path) -> Path:
    return repo / ".git" / syncmod.MARKER


def moving_hook(repo: Path, other: Path, always: bool) -> None:
    """A pre-push hook in `repo` that first pushes a new commit of `other` (once, or every
    time), so `repo`'s push finds the branch moved ("fetch first")."""
    flag = repo.parent / f"{repo.name}-moved"
    once = "" if always else f'[ -e "{flag}" ] && exit 0\ntouch "{flag}"\n'
    hook = repo / ".git" / "hooks" / "pre-push"
    hook.write_text(
        "#!/bin/sh\nunset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE\n"
        + once
        + f'cd "{other}" && echo x >> other.txt && git add other.txt'
        + " && git commit -q -m other && git push -q origin HEAD:main\n"
    )
    hook.chmod(0o755)


def test_a_rejected_push_is_retried_after_a_merge_and_the_retry_is_seen(
    two: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    bare, a, b = two
    monkeypatch.setattr(syncmod.time, "sleep", lambda s: None)
    ok(a, "move", "WP01", "claimed", "--agent", "al")
    moving_hook(a, b, always=False)
    result = syncmod.sync(a, "origin")
    assert result["attempts"] == 2 and result["merged"], result
    assert (result["remote"], result["branch"], result["recovered"]) == ("origin", "main", False)
    assert result["head"] == git(bare, "rev-parse", "main").strip()
    assert len(result["commits"]) == 1  # kitty's commit, made once
    assert "other.txt" in git(bare, "ls-tree", "--name-only", "main")
    merge = git(a, "log", "--merges", "-1", "--format=%s%n%P", "HEAD").split()
    assert " ".join(merge[:4]) == "kitty: sync with origin/main" and len(merge) == 6
    assert '"to_lane": "claimed"' in git(bare, "show", f"main:{LOG}")
    assert not marker(a).exists()


def test_a_branch_that_keeps_moving_is_given_up_on(
    two: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, a, b = two
    slept: list[float] = []
    monkeypatch.setattr(syncmod.time, "sleep", slept.append)
    monkeypatch.setattr(syncmod.random, "uniform", lambda lo, hi: hi)  # the longest jitter
    ok(a, "move", "WP01", "claimed", "--agent", "al")
    moving_hook(a, b, always=True)
    with pytest.raises(LockBusy) as caught:
        syncmod.sync(a, "origin", attempts=3)
    assert caught.value.message == "origin/main kept moving: gave up after 3 attempts"
    assert caught.value.hint == "run kitty sync again"
    assert slept == pytest.approx([0.15, 0.3, 0.6])
    assert not marker(a).exists()
    assert not (a / ".git" / "MERGE_HEAD").exists()


def test_the_backoff_is_capped_at_two_seconds(
    two: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, a, _ = two
    slept: list[float] = []
    monkeypatch.setattr(syncmod.time, "sleep", slept.append)
    monkeypatch.setattr(syncmod.random, "uniform", lambda lo, hi: (lo + hi) / 2 / 1.0)
    hook = a / ".git" / "hooks" / "pre-push"
    hook.write_text("#!/bin/sh\necho 'non-fast-forward (simulated)' >&2\nexit 1\n")
    hook.chmod(0o755)
    with pytest.raises(LockBusy):
        syncmod.sync(a, "origin", attempts=6)
    assert slept == pytest.approx([0.1, 0.2, 0.4, 0.8, 1.6, 2.0])


def test_only_kittys_own_files_are_committed(two: tuple[Path, Path, Path]) -> None:
    _, a, _ = two
    mission = a / "kitty-specs" / SLUG
    ok(a, "move", "WP01", "claimed", "--agent", "al")
    (mission / "tasks" / "WP01").mkdir()
    (mission / "tasks" / "WP01" / "review-cycle-1.md").write_text("review\n")  # kitty's
    (a / "notes.txt").write_text("mine\n")
    # names where mutation testing puts its markers around '--' and an option: the
    # user's files all the same, left alone
    users = ("XX--XX", "XX--porcelain=v1XX", "XX--untracked-files=allXX")
    for name in users:
        (a / name).write_text("mine too\n")
    (a / "README.md").write_text("edited\n")
    (mission / "spec.md").write_text("a spec draft\n")
    result = syncmod.sync(a, "origin")
    [commit] = result["commits"]
    changed = git(a, "show", "--name-only", "--format=", commit).split()
    assert sorted(changed) == sorted([LOG, f"kitty-specs/{SLUG}/tasks/WP01/review-cycle-1.md"])
    assert git(a, "log", "-1", "--format=%s", commit).strip() == "kitty: sync"
    porcelain = git(a, "status", "--porcelain")
    assert "?? notes.txt" in porcelain and " M README.md" in porcelain
    assert all(f"?? {name}" in porcelain for name in users)
    assert f"kitty-specs/{SLUG}/spec.md" in porcelain
    # nothing of kitty's changed and nothing new upstream: no commit, no merge
    again = syncmod.sync(a, "origin")
    assert (again["commits"], again["merged"]) == ([], False)


def test_a_tracked_status_json_that_changed_is_committed(two: tuple[Path, Path, Path]) -> None:
    _, a, _ = two
    status = a / "kitty-specs" / SLUG / "status.json"
    status.write_text("{}\n")
    git(a, "add", "-f", str(status))
    git(a, "commit", "-q", "-m", "track status.json")
    status.write_text('{"changed": true}\n')
    (a / "README.md").write_text("the user's edit\n")  # not kitty's: never listed
    assert syncmod._own_dirty(Git(a)) == [f"kitty-specs/{SLUG}/status.json"]
    status.unlink()  # a tracked status.json that is gone has changed too
    assert syncmod._own_dirty(Git(a)) == [f"kitty-specs/{SLUG}/status.json"]


def test_refusals_leave_no_marker(two: tuple[Path, Path, Path], tmp_path: Path) -> None:
    _, a, _ = two
    with pytest.raises(GuardRefused, match="no git remote named 'upstream'") as caught:
        syncmod.sync(a, "upstream")
    assert caught.value.hint == "git remote -v lists the remotes"
    assert not marker(a).exists()
    git(a, "checkout", "-q", "--detach")
    with pytest.raises(GuardRefused) as detached:
        syncmod.sync(a, "origin")
    assert detached.value.message == "HEAD is detached: kitty sync needs a branch"
    assert detached.value.hint == "git switch <branch>"
    assert not marker(a).exists()
    git(a, "checkout", "-q", "main")
    git(a, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    with pytest.raises(GitError) as err:
        syncmod.sync(a, "origin")
    assert err.value.message.startswith("cannot reach origin: ") and "gone.git" in err.value.message
    assert err.value.hint == "check `git remote -v` and that origin is reachable"
    assert not marker(a).exists()


def test_a_fetch_or_push_that_fails_for_another_reason_is_an_error(
    two: tuple[Path, Path, Path],
) -> None:
    bare, a, _ = two
    git(a, "checkout", "-q", "-b", "topic")
    result = syncmod.sync(a, "origin")  # no upstream branch yet: pushed as new
    assert (result["branch"], result["merged"]) == ("topic", False)
    assert git(bare, "rev-parse", "topic").strip() == result["head"]
    hook = bare / "hooks" / "pre-receive"
    hook.write_text(f"#!/bin/sh\necho 'no pushes today: {'z' * 300}' >&2\nexit 1\n")
    hook.chmod(0o755)
    ok(a, "move", "WP01", "claimed", "--agent", "al")
    with pytest.raises(GitError) as caught:
        syncmod.sync(a, "origin")
    said = caught.value.output  # git's whole answer, the refused ref in its porcelain line
    assert "!\tHEAD:refs/heads/topic\t[remote rejected] (pre-receive hook declined)" in said
    assert "no pushes today" in said and len(said) > 300
    assert caught.value.message == f"git push origin topic failed: {said[:300]}"
    assert caught.value.hint == "check that you may push to origin"
    assert not marker(a).exists()
    # a fetch that fails (not a missing branch) is an error too
    assert syncmod._fetch(Git(a), "origin", "nope") is None
    git(a, "remote", "set-url", "origin", str(bare.parent / "gone.git"))
    with pytest.raises(GitError) as fetch:
        syncmod._fetch(Git(a), "origin", "main")
    assert fetch.value.message.startswith("git fetch origin main failed: ")
    assert "gone.git" in fetch.value.message
    assert fetch.value.hint == "check that origin is reachable"


def test_a_merge_that_stops_is_undone_and_named(two: tuple[Path, Path, Path]) -> None:
    _, a, b = two
    for repo, text in ((a, "alice\n"), (b, "bob\n")):
        (repo / "README.md").write_text(text)
        (repo / "notes.md").write_text(text)
        (repo / repo.name).write_text(text)
        git(repo, "add", "notes.md", repo.name)
        git(repo, "commit", "-q", "-am", "readme")
    syncmod.sync(a, "origin")
    (b / "b").write_text("an edit of b's, not committed\n")  # the merge does not touch it
    with pytest.raises(GuardRefused) as caught:
        syncmod.sync(b, "origin")
    assert caught.value.message == (
        "merging origin/main stops on README.md, notes.md; the merge was undone and kitty's own "
        "commits were kept"
    )
    assert caught.value.hint == "git pull origin main, resolve those files, then run kitty sync"
    assert not (b / ".git" / "MERGE_HEAD").exists() and not marker(b).exists()
    assert (b / "b").read_text() == "an edit of b's, not committed\n"
    subprocess.run(["git", "merge", "origin/main"], cwd=b, capture_output=True, check=False)
    with pytest.raises(GuardRefused) as busy:
        syncmod.sync(b, "origin")
    assert (
        busy.value.message == "the checkout is in the middle of a merge; kitty sync leaves it alone"
    )
    assert busy.value.hint == (
        "finish it (git commit / git rebase --continue) or abort it, then run kitty sync"
    )
    assert not marker(b).exists()


@pytest.mark.parametrize(
    ("name", "what"),
    [
        ("MERGE_HEAD", "a merge"),
        ("rebase-merge", "a rebase"),
        ("rebase-apply", "a rebase"),
        ("CHERRY_PICK_HEAD", "a cherry-pick"),
    ],
)
def test_what_is_in_progress_is_named(repo: Path, name: str, what: str) -> None:
    g = Git(repo)
    assert syncmod._in_progress(g) is None
    (repo / ".git" / name).write_text("x\n")
    assert syncmod._in_progress(g) == what


def test_a_killed_sync_is_recovered_and_every_log_line_kept(
    two: tuple[Path, Path, Path],
) -> None:
    bare, a, _ = two
    ok(a, "move", "WP01", "claimed", "--agent", "al")
    lock = a / ".git" / "index.lock"
    lock.write_bytes(b"DIRC")
    marker(a).write_text(json.dumps({"pid": 2**22 + 7, "phase": "sync"}))
    result = syncmod.sync(a, "origin")
    assert result["recovered"] is True and result["commits"]
    assert not lock.exists() and not marker(a).exists()
    assert '"to_lane": "claimed"' in git(bare, "show", f"main:{LOG}")
    assert syncmod.sync(a, "origin")["recovered"] is False


def test_a_marker_of_a_running_sync_refuses_and_one_s_own_or_a_broken_one_does_not(
    two: tuple[Path, Path, Path],
) -> None:
    _, a, _ = two
    g = Git(a)
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        marker(a).write_text(json.dumps({"pid": sleeper.pid}))
        with pytest.raises(LockBusy) as caught:
            syncmod.recover(g, syncmod.layout.find_project(a))
        assert caught.value.message == "another `kitty sync` is running"
        assert caught.value.hint == "wait for it to finish"
        assert marker(a).exists()
        with pytest.raises(subprocess.TimeoutExpired):  # asked whether it runs: not signalled
            sleeper.wait(timeout=0.3)
    finally:
        sleeper.kill()
        sleeper.wait()
    project = syncmod.layout.find_project(a)
    marker(a).write_text(json.dumps({"pid": os.getpid()}))
    assert syncmod.recover(g, project) and not marker(a).exists()
    for text in ("[1, 2]", '{"pid": "x"}', "{}"):
        marker(a).write_text(text)
        assert syncmod.recover(g, project) and not marker(a).exists()
    marker(a).write_text("{torn")
    assert syncmod.recover(g, project) is False  # not a marker kitty wrote: left alone
    assert marker(a).exists()


def test_two_syncs_recovering_the_same_killed_one_both_finish(
    two: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, a, _ = two
    marker(a).write_text(json.dumps({"pid": 2**22 + 7, "phase": "sync"}))
    restore = syncmod._restore_lines

    def and_the_other_one_ends(path: Path, before: bytes) -> None:
        restore(path, before)
        marker(a).unlink()  # the other sync removes the marker first

    monkeypatch.setattr(syncmod, "_restore_lines", and_the_other_one_ends)
    assert syncmod.recover(Git(a), syncmod.layout.find_project(a)) is True
    assert not marker(a).exists()


def test_a_sync_killed_before_git_wrote_merge_head_puts_the_files_back(
    two: tuple[Path, Path, Path],
) -> None:
    _, a, _ = two
    (a / "README.md").write_text("half-merged\n")
    git(a, "add", "README.md")
    marker(a).write_text(json.dumps({"pid": 2**22 + 7, "phase": "merge"}))
    assert syncmod.recover(Git(a), syncmod.layout.find_project(a))
    assert git(a, "status", "--porcelain", "--untracked-files=no") == ""
    marker(a).write_text(json.dumps({"pid": 2**22 + 7, "phase": "sync"}))
    (a / "README.md").write_text("the user's edit\n")
    (a / "staged.md").write_text("the user's new file\n")
    git(a, "add", "staged.md")
    assert syncmod.recover(Git(a), syncmod.layout.find_project(a))
    # phase sync: no reset, the user's edit and staged file stay as they were
    assert (a / "README.md").read_text() == "the user's edit\n"
    assert (a / "staged.md").read_text() == "the user's new file\n"
    assert git(a, "diff", "--cached", "--name-only") == "staged.md\n"


def test_log_lines_a_recovery_removed_are_appended_back(tmp_path: Path) -> None:
    path = tmp_path / "status.events.jsonl"
    one = json.dumps({"event_id": "E1"})
    two_ = json.dumps({"event_id": "E2"})
    three = json.dumps({"event_id": "E3"})
    before = f"{one}\n{two_}\n{{torn\n[1]\n\n{three}\n".encode()
    path.write_bytes(f"{one}\n".encode())
    syncmod._restore_lines(path, before)
    ids = [json.loads(x)["event_id"] for x in path.read_text().splitlines()]
    assert ids == ["E1", "E2", "E3"]
    gone = tmp_path / "gone.jsonl"
    syncmod._restore_lines(gone, f"{one}\n".encode())
    assert [json.loads(x)["event_id"] for x in gone.read_text().splitlines()] == ["E1"]


def test_a_lock_left_by_a_killed_git_is_named_with_the_way_out() -> None:
    exc = GitError(
        "git commit failed",
        "hint",
        output="fatal: Unable to create '/r/.git/index.lock': File exists.",
    )
    named = syncmod._name_lock(exc)
    assert named.message == "git commit failed" and named.output == exc.output
    assert named.hint == (
        "/r/.git/index.lock is left by a git command that was killed: if no git command is "
        "running in this repository, `kitty doctor --fix` removes it (or delete the file), "
        "then run kitty sync again"
    )
    in_message = GitError("Unable to create '/r/.git/HEAD.lock': File exists", "h")
    assert syncmod._name_lock(in_message).hint.startswith("/r/.git/HEAD.lock is left")
    other = GitError("git push failed", "h", output="fatal: no")
    assert syncmod._name_lock(other) is other


def test_a_crash_inside_sync_keeps_the_marker_for_the_next_one(
    two: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, a, _ = two

    def crash(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(syncmod, "_rebuild_all", crash)
    with pytest.raises(KeyboardInterrupt):
        syncmod.sync(a, "origin")
    state = json.loads(marker(a).read_text())
    assert state["pid"] == os.getpid() and state["phase"] == "sync" and state["at"] > 0
    monkeypatch.undo()
    assert syncmod.sync(a, "origin")["recovered"] is True


def test_a_sync_killed_during_its_merge_says_so_and_the_next_one_recovers(
    two: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, a, b = two
    ok(b, "move", "WP02", "claimed", "--agent", "bo")
    syncmod.sync(b, "origin")  # the remote moves: a's sync has to merge
    ok(a, "move", "WP01", "claimed", "--agent", "al")
    real = Git.status

    def status(self: Git, *args: str, stdin: bytes | None = None) -> tuple[int, str, str]:
        if args[0] == "merge" and "--abort" not in args:
            raise KeyboardInterrupt  # killed while merging
        return real(self, *args, stdin=stdin)

    monkeypatch.setattr(Git, "status", status)
    with pytest.raises(KeyboardInterrupt):
        syncmod.sync(a, "origin")
    assert json.loads(marker(a).read_text())["phase"] == "merge"
    monkeypatch.undo()
    done = syncmod.sync(a, "origin")
    assert done["recovered"] and done["merged"]
    assert not marker(a).exists()
