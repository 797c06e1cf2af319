"""Coordination through a git remote, in-process: the edges (test_remote_coord.py has
the main paths; both run under `make mutation` for kitty/teams/remote.py).

- the coordination ref only moves forward: each transaction builds on the tip it read,
  so the remote's history lists every transaction;
- every event of a transaction that records several reaches the other clones intact;
- a machine beaten to the last piece of work retries, sees it taken, pushes nothing;
- bytes that are not UTF-8 (a torn write) in either log do not stop coordination;
- a clone without a local log yet publishes nothing and takes the remote's events;
- before the ref exists nothing else in the clone is read as the remote's log;
- the wait before a retry is the backoff times a jitter between 0.5 and 1.5;
- what the error says when a push is refused or the fetched tip cannot be recorded.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from kitty.adapters import eventlog
from kitty.core.clock import format_at
from kitty.core.log.state import Board
from kitty.errors import GitError, LockBusy
from kitty.mission.workspace import Mission
from kitty.teams import remote
from tests.helpers import git
from tests.remotes import FIVE, clone, publish
from tests.teams.test_remote_coord import (
    BASE,
    CONFIG,
    REF,
    SLUG,
    local_lines,
    note,
    nothing,
    remote_lines,
)


@pytest.fixture
def two(tmp_path: Path) -> tuple[Path, Mission, Mission]:
    bare = publish(tmp_path, CONFIG, FIVE[:2])
    a = clone(f"file://{bare}", tmp_path / "a")
    b = clone(f"file://{bare}", tmp_path / "b")
    return bare, Mission.open(a, None), Mission.open(b, None)


def readable(data: bytes) -> list[str]:
    return [line for line in data.decode("utf-8", "replace").split("\n") if line]


def git_bytes(cwd: Path, *args: str) -> bytes:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True).stdout


def actors(lines: list[str]) -> list[str]:
    return [json.loads(line)["actor"] for line in lines]


def test_each_transaction_builds_on_the_tip_it_read(two: tuple[Path, Mission, Mission]) -> None:
    bare, a, b = two
    first = remote.transact(a, "origin", lambda _: [note("alice")], "alice")
    second = remote.transact(b, "origin", lambda _: [note("bob")], "bob")
    assert second.tip == git(bare, "rev-parse", REF).strip()
    assert git(bare, "rev-parse", f"{REF}^").strip() == first.tip
    assert git(bare, "log", "--format=%s", REF).split("\n")[:2] == ["kitty: bob", "kitty: alice"]


def test_the_lease_alone_decides_a_compare_and_swap(two: tuple[Path, Mission, Mission]) -> None:
    bare, a, _ = two
    g = remote.Git(a.project.root)
    first = remote._commit(g, b"1\n", None, "one")
    assert remote.push_cas(g, "origin", SLUG, first, None)
    unrelated = remote._commit(g, b"2\n", None, "a new start")  # not built on `first`
    assert remote.push_cas(g, "origin", SLUG, unrelated, first)
    assert git(bare, "rev-parse", REF).strip() == unrelated
    assert g.rev(remote.tracking_ref("origin", SLUG)) == unrelated


def test_every_event_of_a_transaction_reaches_the_other_clones(
    two: tuple[Path, Mission, Mission],
) -> None:
    bare, a, b = two
    out = remote.transact(a, "origin", lambda _: [note("x"), note("y"), note("z")], "three")
    assert actors(remote_lines(bare)) == ["x", "y", "z"]
    remote.transact(b, "origin", nothing, "fold")
    assert local_lines(b) == local_lines(a)
    assert [json.loads(line)["event_id"] for line in local_lines(b)] == [
        r["event_id"] for r in out.records
    ]


def test_a_machine_beaten_to_the_last_work_retries_and_pushes_nothing(
    two: tuple[Path, Mission, Mission],
) -> None:
    bare, a, b = two
    decisions: list[int] = []

    def claim_if_free(board: Board) -> list[dict[str, Any]]:
        decisions.append(board.event_count)
        if len(decisions) == 1:  # b takes the last piece between a's fetch and a's push
            remote.transact(b, "origin", lambda _: [note("bob", "B1")], "bob takes it")
            return [note("alice")]
        return []  # the retry sees it taken: nothing left to claim

    out = remote.transact(a, "origin", claim_if_free, "alice claims")
    assert (out.pushed, out.records, out.attempts) == (False, [], 2)
    assert out.tip == git(bare, "rev-parse", REF).strip()
    assert decisions == [BASE, BASE + 1]
    assert actors(remote_lines(bare)) == ["bob"]
    assert actors(local_lines(a)) == ["bob"]


def test_bytes_that_are_not_utf8_in_either_log_do_not_stop_coordination(
    two: tuple[Path, Mission, Mission],
) -> None:
    bare, a, b = two
    at = format_at(eventlog.now_us())
    good1, good2 = (
        json.dumps({**note(who, f"G{n}"), "at": at}) for n, who in ((1, "one"), (2, "two"))
    )
    # a write torn inside a multi-byte character, on the remote
    body = good1.encode() + b'\n{"actor": "\xe2\x82\n' + good2.encode() + b"\n"
    commit = remote._commit(remote.Git(a.project.root), body, None, "hand-made")
    git(a.project.root, "push", "-q", "origin", f"{commit}:refs/heads/{REF}")
    # ... and in b's own log
    with b.events_path.open("ab") as handle:
        handle.write(b'{"actor": "\xc3\n')
    out = remote.transact(b, "origin", lambda _: [note("bob")], "bob")
    assert out.pushed
    lines = [json.loads(x) for x in readable(b.events_path.read_bytes()) if x.endswith("}")]
    assert [line["actor"] for line in lines[BASE:]] == ["one", "two", "bob"]
    assert b.board.event_count == BASE + 3
    published = readable(git_bytes(bare, "cat-file", "blob", f"{REF}:{remote.LOG_NAME}"))
    assert [json.loads(x)["actor"] for x in published if x.endswith("}")][-1] == "bob"


def test_a_clone_without_a_local_log_takes_the_remotes_events_and_publishes_nothing(
    two: tuple[Path, Mission, Mission],
) -> None:
    bare, a, b = two
    remote.transact(a, "origin", lambda _: [note("alice")], "alice")
    tip = git(bare, "rev-parse", REF).strip()
    b.events_path.unlink()
    out = remote.transact(b, "origin", nothing, "fold")
    assert (out.pushed, out.tip) == (False, tip)
    assert git(bare, "rev-parse", REF).strip() == tip
    assert b.events_path.read_text() == git(bare, "cat-file", "blob", f"{REF}:{remote.LOG_NAME}")


def test_before_the_ref_exists_no_branch_of_the_clone_is_read_as_the_remote_log(
    two: tuple[Path, Mission, Mission],
) -> None:
    bare, a, _ = two
    # a branch named None, holding a file named like the coordination log
    other = json.dumps(note("stranger", "S1"))
    commit = remote._commit(remote.Git(a.project.root), f"{other}\n".encode(), None, "x")
    git(a.project.root, "branch", "None", commit)
    out = remote.transact(a, "origin", lambda _: [note("alice")], "alice")
    assert out.pushed
    assert actors(remote_lines(bare)) == ["alice"]
    assert "stranger" not in a.events_path.read_text()


def test_the_wait_before_a_retry_is_the_backoff_times_a_jitter_from_half_to_one_and_a_half(
    two: tuple[Path, Mission, Mission], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, a, b = two
    slept: list[float] = []
    drawn: list[tuple[float, float]] = []
    monkeypatch.setattr(remote.time, "sleep", slept.append)

    def extreme(lo: float, hi: float) -> float:  # the lowest jitter, then the highest
        drawn.append((lo, hi))
        return lo if len(drawn) % 2 else hi

    monkeypatch.setattr(remote.random, "uniform", extreme)

    def build(board: Board) -> list[dict[str, Any]]:
        remote.transact(b, "origin", lambda _: [note("bob")], "bob again")
        return [note("alice")]

    with pytest.raises(LockBusy):
        remote.transact(a, "origin", build, "never", attempts=4)
    assert slept == pytest.approx([0.04 * 0.5, 0.08 * 1.5, 0.16 * 0.5, 0.32 * 1.5])


def test_a_refused_push_says_gits_reasons_on_one_line_cut_at_300_characters(
    two: tuple[Path, Mission, Mission],
) -> None:
    bare, a, _ = two
    hook = bare / "hooks" / "pre-receive"
    hook.write_text(f"#!/bin/sh\necho 'no pushes today' >&2\necho '{'x' * 400}' >&2\nexit 1\n")
    hook.chmod(0o755)
    with pytest.raises(GitError) as caught:
        remote.transact(a, "origin", lambda _: [note("alice")], "refused")
    prefix = f"cannot push refs/heads/{REF} to origin: "
    message = caught.value.message
    assert message.startswith(prefix) and len(message) == len(prefix) + 300
    # git's lines (its status line, then the hook's) joined by one space each
    assert "\n" not in message
    assert "[remote rejected] (pre-receive hook declined) " in message
    assert " remote: no pushes today" in message


def test_a_fetched_tip_the_clone_cannot_record_is_an_error_with_gits_reasons_only(
    two: tuple[Path, Mission, Mission],
) -> None:
    _, a, b = two
    remote.transact(b, "origin", lambda _: [note("bob")], "bob")
    # a leftover ref where the tracking ref must go
    tracking = remote.tracking_ref("origin", SLUG)
    git(a.project.root, "update-ref", f"{tracking}/old", "HEAD")
    with pytest.raises(GitError) as caught:
        remote.transact(a, "origin", lambda _: [note("alice")], "alice")
    message = caught.value.message
    assert message.startswith(f"cannot fetch refs/heads/{REF} from origin: error: cannot lock ref")
    assert f"'{tracking}/old' exists" in message
    # git's errors, not its list of fetched refs
    assert "From " not in message and "unable to update local ref" not in message
    assert caught.value.hint == "check `git remote -v` and that origin is reachable"
    assert "alice" not in a.events_path.read_text()
