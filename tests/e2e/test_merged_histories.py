"""Two clones move the same WP offline; after the merge every clone shows the same
board, the losing move is a conflict (board, status --json, next, doctor), and the
winner cannot approve their own work."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import git, kitty, lane_commit, ok
from tests.remotes import clone, publish

CONFIG = "agents:\n  available: [claude, codex]\n  auto_commit: true\n"
SLUG = "demo-01ABCDEF"
ONE = [{"wp_id": "WP01", "title": "Part", "subtasks": ["T001"], "owned": ["src/**"]}]


def test_offline_double_claim_is_a_conflict_never_silent(tmp_path: Path) -> None:
    bare = publish(tmp_path, CONFIG, ONE)
    a = clone(f"file://{bare}", tmp_path / "a")
    b = clone(f"file://{bare}", tmp_path / "b")
    ok(a, "move", "WP01", "claimed", "--agent", "alice")
    ok(a, "move", "WP01", "in_progress", "--agent", "alice")
    ok(b, "move", "WP01", "claimed", "--agent", "bob")
    ok(b, "move", "WP01", "blocked", "--agent", "bob", "--note", "waiting on API")
    git(a, "push", "-q", "origin", "main")
    git(b, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")  # never stops
    git(b, "push", "-q", "origin", "main")
    git(a, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")

    views = [ok(c, "status", "--json").json() for c in (a, b)]
    assert views[0]["work_packages"] == views[1]["work_packages"]
    assert views[0]["conflicts"] == views[1]["conflicts"]
    wp = views[0]["work_packages"][0]
    assert (wp["lane"], wp["implementer"], wp["conflicts"]) == ("in_progress", "alice", 2)
    first, second = views[0]["conflicts"]
    assert (first["agent"], first["from_lane"], first["to_lane"]) == ("bob", "planned", "claimed")
    assert first["kind"] == "stale_from_lane" and first["holder"] == "alice"
    assert first["commands"][0].startswith(f"kitty resolve WP01 --mission {SLUG} --note")

    board = ok(a, "status").out
    assert "CONFLICT" in board and "Conflict WP01:" in board

    bob_next = ok(a, "next", "--agent", "bob", "--json").json()
    assert [c["event_id"] for c in bob_next["conflicts"]] == [first["event_id"], second["event_id"]]
    assert (
        "conflict: WP01 planned -> claimed by bob was not applied"
        in ok(a, "next", "--agent", "bob").out
    )
    assert ok(a, "next", "--agent", "alice", "--json").json()["conflicts"] == []

    doctor = kitty(a, "doctor")
    assert doctor.code == 1
    assert "conflict: WP01 planned -> claimed by bob was not applied" in doctor.out
    assert "kitty resolve WP01" in doctor.out

    # Alice finishes; she may not approve her own work, and bob's stale moves do not help her.
    ok(a, "agent", "tasks", "mark-status", "T001", "--status", "done", "--agent", "alice")
    lane_commit(a, "WP01")
    ok(a, "move", "WP01", "for_review", "--agent", "alice")
    ok(a, "move", "WP01", "in_review", "--agent", "alice")
    refused = kitty(a, "move", "WP01", "approved", "--agent", "alice")
    assert refused.code == 1 and "self-review" in refused.err

    # Resolving keeps the board and closes the conflicts everywhere after a pull.
    ok(a, "resolve", "WP01", "--note", "keep alice's claim: she was first")
    git(a, "push", "-q", "origin", "main")
    git(b, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
    assert ok(b, "status", "--json").json()["conflicts"] == []
    ok(b, "rebuild")  # a plain pull leaves status.json stale: doctor names that
    assert kitty(b, "doctor").code == 0


def test_hand_written_unforced_edge_is_reported(tmp_path: Path) -> None:
    bare = publish(tmp_path, CONFIG, ONE)
    a = clone(f"file://{bare}", tmp_path / "a")
    log = a / "kitty-specs" / SLUG / "status.events.jsonl"
    before = log.read_text()
    last = json.loads(before.splitlines()[-1])["event_id"]  # WP01's bootstrap
    line = {
        "actor": "mallory",
        "at": "2099-01-01T00:00:00+00:00",
        "event_id": "ZZ",
        "execution_mode": "worktree",
        "force": False,
        "from_lane": "planned",
        "to_lane": "done",
        "wp_id": "WP01",
    }
    # A line kitty's writer would have linked (`kitty_after`): the table applies.
    log.write_text(before + json.dumps(dict(line, kitty_after=last)) + "\n")
    view = ok(a, "status", "--json").json()
    assert view["work_packages"][0]["lane"] == "planned"
    assert [c["kind"] for c in view["conflicts"]] == ["illegal_edge"]
    doctor = kitty(a, "doctor")
    assert doctor.code == 1 and "planned -> done is not a legal move" in doctor.out
    # The same line without the link is history: Spec Kitty applies it, and so does kitty.
    log.write_text(before + json.dumps(line) + "\n")
    view = ok(a, "status", "--json").json()
    assert view["work_packages"][0]["lane"] == "done" and view["conflicts"] == []


def test_doctor_flags_conflict_markers(tmp_path: Path) -> None:
    bare = publish(tmp_path, CONFIG, ONE)
    a = clone(f"file://{bare}", tmp_path / "a")
    status = a / "kitty-specs" / SLUG / "status.json"
    status.write_text("<<<<<<< HEAD\n{}\n=======\n{}\n>>>>>>> theirs\n")
    doctor = kitty(a, "doctor")
    assert doctor.code == 1
    assert f"kitty-specs/{SLUG}/status.json:1: git conflict markers" in doctor.out
    assert f"kitty rebuild --mission {SLUG}" in doctor.out
    ok(a, "rebuild")
    assert kitty(a, "doctor").code == 0


TWO = [
    {"wp_id": "WP01", "title": "Part", "subtasks": ["T001"], "owned": ["src/a/**"]},
    {"wp_id": "WP02", "title": "Other", "subtasks": ["T002"], "owned": ["src/b/**"]},
]


def test_a_forks_losing_branch_stays_lost_after_sync(tmp_path: Path) -> None:
    """alice and bob both claim WP01 offline; bob also starts it. After `kitty sync`
    alice's claim wins on both clones: bob's start follows his refused claim, so it is
    refused too (its from_lane matching the lane alice's claim left changes nothing),
    alice's `next` keeps her on WP01, and the resolve hints name the lane as it is."""
    bare = publish(tmp_path, CONFIG, TWO)
    a = clone(f"file://{bare}", tmp_path / "a")
    b = clone(f"file://{bare}", tmp_path / "b")
    ok(a, "move", "WP01", "claimed", "--agent", "alice")
    ok(b, "move", "WP01", "claimed", "--agent", "bob")
    ok(b, "move", "WP01", "in_progress", "--agent", "bob")
    ok(a, "sync")
    ok(b, "sync")
    ok(a, "sync")
    views = [ok(c, "status", "--json").json() for c in (a, b)]
    assert views[0]["work_packages"] == views[1]["work_packages"]
    wp = views[0]["work_packages"][0]
    assert (wp["lane"], wp["implementer"], wp["conflicts"]) == ("claimed", "alice", 2)
    claim, start = views[0]["conflicts"]
    assert (claim["agent"], claim["to_lane"], start["agent"], start["to_lane"]) == (
        "bob",
        "claimed",
        "bob",
        "in_progress",
    )
    assert f"it follows {claim['event_id']}" in start["message"]
    for conflict in (claim, start):
        assert conflict["commands"][0].startswith(
            f'kitty resolve WP01 --mission {SLUG} --note "keep claimed:'
        )
    # the dropped start is offered as a forced move, exactly as printed
    assert start["commands"][1] == (
        f"kitty agent tasks move-task WP01 --mission {SLUG} --to in_progress --force "
        '--agent bob --note "resolve conflict: <why this move wins>"'
    )
    nxt = ok(a, "next", "--agent", "alice", "--json").json()
    assert (nxt["wp_id"], nxt["action"]) == ("WP01", "implement"), nxt
    # alice goes on with her claim: her start is applied, nothing new conflicts
    ok(a, "move", "WP01", "in_progress", "--agent", "alice")
    after = ok(a, "status", "--json").json()
    assert after["work_packages"][0]["lane"] == "in_progress"
    assert len(after["conflicts"]) == 2
    ok(a, "resolve", "WP01", "--note", "keep alice's claim: she was first")
    assert ok(a, "status", "--json").json()["conflicts"] == []
