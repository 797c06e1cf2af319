"""Coordination through a git remote, in-process (so `make mutation` can kill the mutants
of kitty/teams/remote.py; tests/teams/test_remote_claims.py races real processes).

- every event of a clone reaches the coordination ref, and every event on the ref
  reaches every clone, once (by event id; a line without one by its text);
- a push beaten by another machine is retried on the fresher log, and the retry is
  seen; a ref that keeps moving is given up on with a clear error;
- a torn line on the remote stays out of the local log;
- a remote without the ref, or no remote at all, is said plainly;
- a remote that does not offer atomic pushes coordinates all the same.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kitty.core.clock import parse_at
from kitty.core.log.state import Board
from kitty.errors import GitError, LockBusy
from kitty.mission.workspace import Mission
from kitty.teams import remote
from tests.helpers import git
from tests.remotes import FIVE, clone, publish

CONFIG = "agents:\n  available: [claude, codex]\n"
SLUG = "demo-01ABCDEF"
REF = f"kitty/coord/{SLUG}"
LOG = f"kitty-specs/{SLUG}/status.events.jsonl"
BASE = 2  # the finalize events every clone starts with


@pytest.fixture
def two(tmp_path: Path) -> tuple[Path, Mission, Mission]:
    bare = publish(tmp_path, CONFIG, FIVE[:2])
    a = clone(f"file://{bare}", tmp_path / "a")
    b = clone(f"file://{bare}", tmp_path / "b")
    return bare, Mission.open(a, None), Mission.open(b, None)


def note(actor: str, event_id: str | None = None) -> dict[str, Any]:
    rec: dict[str, Any] = {"actor": actor, "kind": "annotation", "wp_id": "WP01", "delta": {}}
    if event_id:
        rec["event_id"] = event_id
    return rec


def nothing(board: Board) -> list[dict[str, Any]]:
    return []


def remote_lines(bare: Path) -> list[str]:
    """The coordination log's lines after the mission's own (the finalize events)."""
    text = git(bare, "cat-file", "blob", f"{REF}:status.events.jsonl")
    return [line for line in text.split("\n") if line][BASE:]


def local_lines(mission: Mission) -> list[str]:
    return [line for line in mission.events_path.read_text().split("\n") if line][BASE:]


def test_names_of_the_refs_and_of_this_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    assert remote.coord_ref("m-1") == "refs/heads/kitty/coord/m-1"
    assert remote.tracking_ref("up", "m-1") == "refs/kitty/remotes/up/m-1"
    monkeypatch.setenv("KITTY_MACHINE", "box-7")
    assert remote.machine_id() == "box-7"
    monkeypatch.setenv("KITTY_MACHINE", "")
    monkeypatch.setattr(remote.socket, "gethostname", lambda: "host-9")
    assert remote.machine_id() == "host-9"
    monkeypatch.setattr(remote.socket, "gethostname", lambda: "")
    assert remote.machine_id() == "unknown"


@pytest.mark.parametrize(
    "text",
    [
        " ! [rejected] x -> y (fetch first)",
        " ! [rejected] x -> y (non-fast-forward)",
        " ! [rejected] x -> y (stale info)",
        "error: failed to update ref",
        "error: cannot lock ref 'refs/heads/x'",
    ],
)
def test_a_push_beaten_by_another_writer_is_a_lost_race(text: str) -> None:
    assert remote.lost_race(text)


def test_other_push_failures_are_not_a_lost_race() -> None:
    assert not remote.lost_race("fatal: could not read from remote repository")
    assert not remote.lost_race("")


def test_events_travel_both_ways_once(two: tuple[Path, Mission, Mission]) -> None:
    bare, a, b = two
    first = remote.transact(a, "origin", lambda board: [note("alice")], "alice notes")
    assert (first.pushed, first.attempts, len(first.records)) == (True, 1, 1)
    assert first.tip == git(bare, "rev-parse", REF).strip()
    assert git(bare, "log", "-1", "--format=%s", REF).strip() == "kitty: alice notes"
    rec = first.records[0]
    assert len(rec["event_id"]) == 26 and parse_at(rec["at"]) > 0
    assert [json.loads(line)["actor"] for line in remote_lines(bare)] == ["alice"]
    assert local_lines(a)[-1] == remote_lines(bare)[-1]
    # b folds in a's event and publishes its own
    second = remote.transact(b, "origin", lambda board: [note("bob")], "bob notes")
    assert second.pushed
    assert [json.loads(x)["actor"] for x in remote_lines(bare)] == ["alice", "bob"]
    assert [json.loads(x)["actor"] for x in local_lines(b)] == ["alice", "bob"]
    # b's stamp comes after every event it has seen
    assert parse_at(json.loads(local_lines(b)[-1])["at"]) > parse_at(rec["at"])
    # nothing new anywhere: no push, the same tip
    again = remote.transact(b, "origin", nothing, "idle")
    assert (again.pushed, again.records, again.tip) == (False, [], second.tip)
    # a folds in bob's event without pushing anything
    back = remote.transact(a, "origin", nothing, "idle")
    assert not back.pushed and [json.loads(x)["actor"] for x in local_lines(a)] == ["alice", "bob"]
    assert a.board.event_count == BASE + 2  # the status files were rewritten from the new log


def test_local_events_written_without_the_remote_are_published(
    two: tuple[Path, Mission, Mission],
) -> None:
    bare, a, _ = two
    from kitty.adapters import eventlog

    eventlog.append(a.events_path, [note("offline", "E1"), note("offline2", "E2")])
    out = remote.transact(a, "origin", nothing, "publish")
    assert out.pushed and out.records == []
    assert [json.loads(x)["event_id"] for x in remote_lines(bare)] == ["E1", "E2"]
    assert remote.transact(a, "origin", nothing, "again").pushed is False


def test_lines_are_matched_by_event_id_and_lines_without_one_by_their_text(
    two: tuple[Path, Mission, Mission],
) -> None:
    bare, a, b = two
    same = json.dumps(note("x", "SAME"), sort_keys=True)
    other_text = json.dumps({**note("y"), "event_id": "SAME"}, sort_keys=True)
    no_id = json.dumps(note("z"), sort_keys=True)
    with a.events_path.open("a") as handle:
        handle.write(same + "\n" + no_id + "\n")
    with b.events_path.open("a") as handle:
        handle.write(other_text + "\n" + no_id + "\n")
    remote.transact(a, "origin", nothing, "a")
    remote.transact(b, "origin", nothing, "b")
    # b's line with the same event id (a different text) and the same id-less line
    # are already on the remote: nothing of b's is added, nothing of a's is folded in
    assert remote_lines(bare) == [same, no_id]
    assert local_lines(b) == [other_text, no_id]


def test_an_id_is_a_non_empty_string_of_a_json_object() -> None:
    assert remote._event_id('{"event_id": "E1", "x": 1}') == "E1"
    assert remote._event_id('{"event_id": ""}') is None
    assert remote._event_id('{"event_id": 7}') is None
    assert remote._event_id('{"other": "E1"}') is None
    assert remote._event_id('["event_id"]') is None
    assert remote._event_id("{torn") is None


def test_a_torn_remote_line_stays_out_of_the_local_log(
    two: tuple[Path, Mission, Mission], tmp_path: Path
) -> None:
    bare, a, b = two
    good1 = json.dumps(note("one", "G1"))
    good2 = json.dumps(note("two", "G2"))
    body = f'{good1}\n{{"torn": \n[1, 2]\n{good2}\n'.encode()
    commit = remote._commit(remote.Git(a.project.root), body, None, "hand-made")
    git(a.project.root, "push", "-q", "origin", f"{commit}:refs/heads/{REF}")
    remote.transact(b, "origin", nothing, "fold")
    assert [json.loads(x)["event_id"] for x in local_lines(b)] == ["G1", "G2"]
    tree = git(bare, "ls-tree", REF)
    assert tree.split("\t")[1].strip() == "status.events.jsonl" and tree.startswith("100644 blob")


def test_a_push_beaten_by_another_machine_is_retried_on_the_fresher_log(
    two: tuple[Path, Mission, Mission],
) -> None:
    bare, a, b = two
    seen: list[int] = []

    def build(board: Board) -> list[dict[str, Any]]:
        seen.append(board.event_count)
        if len(seen) == 1:  # b pushes between a's fetch and a's push
            remote.transact(b, "origin", lambda _: [note("bob", "B1")], "bob first")
        return [note("alice")]

    out = remote.transact(a, "origin", build, "alice after a retry")
    assert out.attempts == 2 and out.pushed
    assert seen == [BASE, BASE + 1]  # the second decision saw bob's event
    assert [json.loads(x)["actor"] for x in remote_lines(bare)] == ["bob", "alice"]
    assert [json.loads(x)["actor"] for x in local_lines(a)] == ["bob", "alice"]  # once each


def test_a_ref_that_keeps_moving_is_given_up_on(
    two: tuple[Path, Mission, Mission], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, a, b = two
    calls: list[int] = []

    def build(board: Board) -> list[dict[str, Any]]:
        calls.append(1)
        remote.transact(b, "origin", lambda _: [note("bob")], "bob again")
        return [note("alice")]

    monkeypatch.setattr(remote.time, "sleep", lambda s: None)
    with pytest.raises(LockBusy) as caught:
        remote.transact(a, "origin", build, "never", attempts=3)
    assert caught.value.message == (
        f"refs/heads/{REF} on origin kept moving: gave up after 3 attempts"
    )
    assert caught.value.hint == "retry in a moment"
    assert len(calls) == 3
    monkeypatch.setenv("KITTY_REMOTE_ATTEMPTS", "2")
    calls.clear()
    with pytest.raises(LockBusy, match="gave up after 2 attempts"):
        remote.transact(a, "origin", build, "never")
    assert len(calls) == 2
    assert "alice" not in a.events_path.read_text()  # a lost push writes nothing locally


def test_the_backoff_grows_with_the_attempt_and_is_capped(
    two: tuple[Path, Mission, Mission], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, a, b = two
    slept: list[float] = []
    monkeypatch.setattr(remote.time, "sleep", slept.append)
    monkeypatch.setattr(remote.random, "uniform", lambda lo, hi: (lo, hi) and 1.0)

    def build(board: Board) -> list[dict[str, Any]]:
        remote.transact(b, "origin", lambda _: [note("bob")], "bob again")
        return [note("alice")]

    with pytest.raises(LockBusy):
        remote.transact(a, "origin", build, "never", attempts=6)
    assert slept == pytest.approx([0.04, 0.08, 0.16, 0.32, 0.64, 1.0])


def test_no_coordination_ref_yet_and_an_unreachable_remote(
    two: tuple[Path, Mission, Mission], tmp_path: Path
) -> None:
    _, a, _ = two
    a.events_path.write_text("")  # nothing to publish
    git_a = remote.Git(a.project.root)
    tracking = remote.tracking_ref("origin", SLUG)
    git(a.project.root, "update-ref", f"{tracking}", "HEAD")  # a stale tracking ref
    assert remote.fetch_tip(git_a, "origin", SLUG) is None
    assert git_a.rev(tracking) is None  # dropped: the remote has no such ref
    out = remote.transact(a, "origin", nothing, "idle")
    assert (out.pushed, out.tip) == (False, None)
    # a 200-character path wherever tmp_path is (a pytest-xdist worker's is longer): git's
    # message is longer than 300, its second line starts before the cut
    room = 200 - len(str(tmp_path / "gone.git")) - 1
    gone = tmp_path / ("far-" * 50)[:room] / "gone.git"
    assert len(str(gone)) == 200
    git(a.project.root, "remote", "set-url", "origin", str(gone))
    with pytest.raises(GitError) as caught:
        remote.fetch_tip(git_a, "origin", SLUG)
    prefix = f"cannot fetch refs/heads/{REF} from origin: "
    message = caught.value.message
    assert message.startswith(prefix + "fatal: ") and "gone.git" in message
    # git's lines joined by one space, cut at 300 characters
    assert "a git repository fatal: Could not" in message
    assert len(message) == len(prefix) + 300
    assert caught.value.hint == "check `git remote -v` and that origin is reachable"


def test_a_push_refused_for_another_reason_is_an_error(
    two: tuple[Path, Mission, Mission],
) -> None:
    bare, a, _ = two
    hook = bare / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'no pushes today' >&2\nexit 1\n")
    hook.chmod(0o755)
    with pytest.raises(GitError) as caught:
        remote.transact(a, "origin", lambda _: [note("alice")], "refused")
    assert caught.value.message.startswith(f"cannot push refs/heads/{REF} to origin: ")
    assert "no pushes today" in caught.value.message
    assert caught.value.hint == "check that you may push to origin"
    assert "alice" not in a.events_path.read_text()


def test_a_remote_without_atomic_pushes_coordinates_all_the_same(
    two: tuple[Path, Mission, Mission],
) -> None:
    bare, a, b = two
    git(bare, "config", "receive.advertiseAtomic", "false")
    assert remote.transact(a, "origin", lambda _: [note("alice")], "alice").pushed
    assert remote.transact(b, "origin", lambda _: [note("bob")], "bob").pushed
    assert [json.loads(x)["actor"] for x in remote_lines(bare)] == ["alice", "bob"]


def test_push_cas_moves_the_ref_only_from_the_expected_tip(
    two: tuple[Path, Mission, Mission],
) -> None:
    bare, a, _ = two
    g = remote.Git(a.project.root)
    first = remote._commit(g, b"1\n", None, "one")
    assert remote.push_cas(g, "origin", SLUG, first, None)
    assert g.rev(remote.tracking_ref("origin", SLUG)) == first
    second = remote._commit(g, b"2\n", first, "two")
    assert not remote.push_cas(g, "origin", SLUG, second, None)  # it exists already
    stale = remote._commit(g, b"3\n", None, "three")
    assert not remote.push_cas(g, "origin", SLUG, stale, second)  # not where it was
    assert git(bare, "rev-parse", REF).strip() == first
    assert remote.push_cas(g, "origin", SLUG, second, first)
    assert git(bare, "rev-parse", REF).strip() == second
    assert git(bare, "rev-parse", f"{REF}^").strip() == first


def test_coordination_commits_need_no_configured_identity(
    two: tuple[Path, Mission, Mission], monkeypatch: pytest.MonkeyPatch
) -> None:
    bare, a, _ = two
    monkeypatch.setenv("KITTY_MACHINE", "ci-runner")
    g = remote.Git(a.project.root)
    assert remote._identity(g) == []  # the clone has user.email
    git(a.project.root, "config", "--unset", "user.email")
    for var in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL", "GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        monkeypatch.delenv(var, raising=False)
    home = a.project.root.parent / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / "none"))
    assert remote._identity(g) == ["-c", "user.name=kitty", "-c", "user.email=kitty@ci-runner"]
    assert remote.transact(a, "origin", lambda _: [note("alice")], "no identity").pushed
    who = git(bare, "log", "-1", "--format=%cn <%ce>", REF).strip()
    assert who == "kitty <kitty@ci-runner>"


def test_the_coordination_fetch_brings_no_tags(two: tuple[Path, Mission, Mission]) -> None:
    bare, a, b = two
    remote.transact(a, "origin", lambda _: [note("alice")], "alice")
    git(bare, "tag", "on-coord", REF)  # a tag on the coordination commit
    remote.transact(b, "origin", nothing, "fold")
    assert git(b.project.root, "tag", "--list") == ""


def test_stamps_follow_every_event_already_logged_and_each_other(
    two: tuple[Path, Mission, Mission],
) -> None:
    _, a, _ = two
    from kitty.adapters import eventlog
    from kitty.core.clock import format_at

    ahead = eventlog.now_us() + 30 * 1_000_000  # another machine's clock, 30 s ahead
    eventlog.append(a.events_path, [{**note("fast clock", "F1"), "at": format_at(ahead)}])
    out = remote.transact(a, "origin", lambda _: [note("x"), note("y"), note("z")], "three")
    stamps = [parse_at(r["at"]) for r in out.records]
    assert stamps[0] > ahead
    assert stamps[0] < stamps[1] < stamps[2]
    # each event id is a ULID of its own stamp (milliseconds)
    crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    for rec, at in zip(out.records, stamps, strict=True):
        ms = 0
        for char in rec["event_id"][:10]:
            ms = ms * 32 + crockford.index(char)
        assert ms == at // 1000


def test_a_transaction_waits_for_the_missions_local_lock(
    two: tuple[Path, Mission, Mission], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, a, _ = two
    from kitty.adapters import eventlog

    monkeypatch.setenv("KITTY_LOCK_TIMEOUT", "0")
    with (
        eventlog.locked(a.project.lock_path(SLUG), "a move"),
        pytest.raises(LockBusy) as caught,
    ):
        remote.transact(a, "origin", lambda _: [note("alice")], "locked out")
    assert caught.value.message.startswith(f"mission {SLUG} is locked by another kitty process")
