"""The rules of a sprint shared across machines, in-process (so `make mutation` can kill
the mutants of kitty/sprint/team.py; tests/sprint/test_team_sprint.py runs whole
sprints on two machines in subprocesses, which never run mutated code).

- a WP is claimed once: the claim starts from the role's lane, one's own hold is
  resumed, another machine's hold (even by an agent of the same name) is not;
- a machine with nothing to do waits only while another machine visibly works;
- events reach the remote at most every PUBLISH_EVERY seconds unless forced;
- lane branches are pushed when they moved and fast-forwarded (never rewound) on fetch;
- exactly one machine finishes the mission.
"""

from __future__ import annotations

import os
import types
from pathlib import Path
from typing import Any

import pytest

from kitty.core import lanes
from kitty.core.clock import format_at, parse_at
from kitty.core.log.state import Board, WPState
from kitty.errors import GitError
from kitty.mission.workspace import Mission
from kitty.sprint import team as teamsprint
from kitty.sprint.runner import IMPLEMENT, Options
from kitty.sprint.team import (
    ACTIVE_WINDOW_US,
    HEARTBEAT_EVERY,
    RemoteSprint,
    active_elsewhere,
    claim_records,
)
from tests.helpers import git, make_mission
from tests.remotes import FIVE, clone, publish

REVIEW = "review"
CONFIG = "agents:\n  available: [claude, codex]\n"
SLUG = "demo-01ABCDEF"
T0 = parse_at("2026-06-01T12:00:00+00:00")
SEC = 1_000_000
LEASE = {"machine": "east", "lease_seconds": 1800}


def held(
    lane: str,
    implementer: str | None = None,
    reviewer: str | None = None,
    machine: str | None = "east",
    at_us: int = T0,
    seconds: float | None = 600,
    activity_us: int | None = None,
    wp_id: str = "WP01",
) -> WPState:
    claim: dict[str, Any] = {"agent": reviewer or implementer, "at": format_at(at_us)}
    if machine is not None:
        claim["machine"] = machine
    if seconds is not None:
        claim["lease_seconds"] = seconds
    st = WPState(wp_id, lane=lane, agent=reviewer or implementer, runtime_claim=claim)
    st.implementer, st.reviewer = implementer, reviewer
    st.last_activity_us = activity_us
    return st


@pytest.fixture
def mission(repo: Path) -> Mission:
    make_mission(repo, wps=FIVE[:2], config=CONFIG)
    return Mission.open(repo, None)


# -- who wins a claim ------------------------------------------------------------------


def test_an_implementer_claims_a_planned_wp_with_the_lease_and_a_complete_actor(
    mission: Mission,
) -> None:
    board = Board(wps={"WP01": WPState("WP01", lane=lanes.PLANNED)})
    won, records = claim_records(board, mission, "WP01", IMPLEMENT, "claude", "east", LEASE)
    assert won
    [event] = records
    assert (event["wp_id"], event["from_lane"], event["to_lane"]) == ("WP01", "planned", "claimed")
    assert event["actor"] == {
        "tool": "claude",
        "role": "implementer",
        "profile": None,
        "model": None,
    }
    assert event["reason"] == "claimed by kitty sprint on east"
    assert event["policy_metadata"] == {"agent": "claude", "machine": "east", "lease_seconds": 1800}


def test_a_reviewer_claims_a_wp_waiting_for_review(mission: Mission) -> None:
    board = Board(wps={"WP01": held(lanes.FOR_REVIEW, implementer="claude")})
    won, records = claim_records(board, mission, "WP01", REVIEW, "codex", "west", LEASE)
    assert won
    [event] = records
    assert (event["from_lane"], event["to_lane"]) == ("for_review", "in_review")
    assert event["actor"]["role"] == "reviewer" and event["actor"]["tool"] == "codex"
    assert event["reason"] == "claimed by kitty sprint on west"


@pytest.mark.parametrize(
    ("st", "role"),
    [
        (held(lanes.CLAIMED, implementer="claude"), IMPLEMENT),
        (held(lanes.IN_PROGRESS, implementer="claude"), IMPLEMENT),
        (held(lanes.IN_REVIEW, implementer="other", reviewer="claude"), REVIEW),
    ],
)
def test_one_s_own_hold_on_this_machine_is_resumed_without_a_new_event(
    mission: Mission, st: WPState, role: str
) -> None:
    board = Board(wps={"WP01": st})
    assert claim_records(board, mission, "WP01", role, "claude", "east", LEASE) == (True, [])


@pytest.mark.parametrize(
    ("st", "role"),
    [
        # another agent holds it
        (held(lanes.CLAIMED, implementer="bob"), IMPLEMENT),
        (held(lanes.IN_REVIEW, implementer="bob", reviewer="eve"), REVIEW),
        # the agent implemented it but someone else reviews it (and the reverse)
        (held(lanes.IN_REVIEW, implementer="claude", reviewer="eve"), REVIEW),
        (held(lanes.IN_PROGRESS, implementer="bob", reviewer="claude"), IMPLEMENT),
        # the same agent name holds it on another machine: someone else
        (held(lanes.CLAIMED, implementer="claude", machine="west"), IMPLEMENT),
        (held(lanes.IN_REVIEW, implementer="x", reviewer="claude", machine="west"), REVIEW),
        # not in the lane the role starts from
        (held(lanes.FOR_REVIEW, implementer="bob"), IMPLEMENT),
        (WPState("WP01", lane=lanes.PLANNED), REVIEW),
        (WPState("WP01", lane=lanes.DONE), IMPLEMENT),
    ],
)
def test_a_wp_held_elsewhere_or_in_another_lane_is_lost_without_an_event(
    mission: Mission, st: WPState, role: str
) -> None:
    board = Board(wps={"WP01": st})
    assert claim_records(board, mission, "WP01", role, "claude", "east", LEASE) == (False, [])


def test_a_wp_the_board_does_not_know_is_lost(mission: Mission) -> None:
    assert claim_records(Board(), mission, "WP01", IMPLEMENT, "claude", "east", LEASE) == (
        False,
        [],
    )


# -- waiting for the other machines ---------------------------------------------------------


def busy(lane: str = lanes.IN_PROGRESS, **kw: Any) -> WPState:
    kw.setdefault("implementer", "claude")
    kw.setdefault("machine", "west")
    kw.setdefault("activity_us", T0)
    return held(lane, **kw)


def test_a_wp_waiting_for_review_keeps_every_machine_waiting() -> None:
    board = Board(wps={"WP01": held(lanes.FOR_REVIEW, implementer="c", machine="east")})
    assert active_elsewhere(board, ["WP01"], "east", T0)


@pytest.mark.parametrize("lane", [lanes.CLAIMED, lanes.IN_PROGRESS, lanes.IN_REVIEW])
def test_another_machine_working_under_a_live_lease_keeps_us_waiting(lane: str) -> None:
    board = Board(wps={"WP01": busy(lane, reviewer="codex" if lane == lanes.IN_REVIEW else None)})
    assert active_elsewhere(board, ["WP01"], "east", T0 + SEC)
    assert not active_elsewhere(board, ["WP01"], "west", T0 + SEC)  # our own work
    assert not active_elsewhere(board, [], "east", T0 + SEC)  # our own running job


def test_work_left_behind_does_not_keep_us_waiting() -> None:
    live = busy(seconds=600)
    board = Board(wps={"WP01": live})
    expires = T0 + 600 * SEC
    assert active_elsewhere(board, ["WP01"], "east", T0 + ACTIVE_WINDOW_US - 1)
    # silent for the whole window: a killed sprint, even though its lease still runs
    assert not active_elsewhere(board, ["WP01"], "east", T0 + ACTIVE_WINDOW_US)
    # the lease ran out (at its very expiry instant), however recent the last event
    fresh = busy(seconds=1, at_us=T0 - SEC, activity_us=T0 - SEC)
    board = Board(wps={"WP01": fresh})
    assert active_elsewhere(board, ["WP01"], "east", T0 - 1)
    assert not active_elsewhere(board, ["WP01"], "east", T0)
    assert expires > T0 + ACTIVE_WINDOW_US  # the first case was not an expired lease


def test_a_wp_that_never_saw_an_event_is_not_being_worked_on() -> None:
    # no activity at all counts from time 0: at ACTIVE_WINDOW_US that is a full window
    st = busy(at_us=0, seconds=10_000, activity_us=None)
    assert not active_elsewhere(Board(wps={"WP01": st}), ["WP01"], "east", ACTIVE_WINDOW_US)
    assert active_elsewhere(Board(wps={"WP01": st}), ["WP01"], "east", ACTIVE_WINDOW_US - 1)


@pytest.mark.parametrize(
    "st",
    [
        busy(seconds=None),  # no lease (a local claim)
        busy(lane=lanes.PLANNED),
        busy(lane=lanes.DONE),
    ],
)
def test_no_lease_or_no_work_in_flight_does_not_keep_us_waiting(st: WPState) -> None:
    assert not active_elsewhere(Board(wps={"WP01": st}), ["WP01", "WP09"], "east", T0)


def test_any_wp_of_the_list_keeps_us_waiting() -> None:
    board = Board(wps={"WP01": busy(lane=lanes.DONE), "WP02": busy(wp_id="WP02")})
    assert active_elsewhere(board, ["WP09", "WP01", "WP02"], "east", T0)


# -- a RemoteSprint on two clones of one remote ---------------------------------------------


def sprint_on(
    repo: Path,
    machine: str,
    monkeypatch: pytest.MonkeyPatch,
    remote: str = "origin",
    mission: str = SLUG,
) -> RemoteSprint:
    monkeypatch.setenv("KITTY_MACHINE", machine)
    opts = Options(["claude"], ["codex"], dry_run=True, remote=remote)
    notes: list[dict[str, Any]] = []
    sprint = RemoteSprint(repo, mission, opts, notes.append)
    sprint.__dict__["notes"] = notes
    return sprint


@pytest.fixture
def machines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, RemoteSprint, RemoteSprint]:
    bare = publish(tmp_path, CONFIG, FIVE[:2])
    east = sprint_on(clone(f"file://{bare}", tmp_path / "east"), "east", monkeypatch)
    west = sprint_on(clone(f"file://{bare}", tmp_path / "west"), "west", monkeypatch)
    return bare, east, west


def on(sprint: RemoteSprint, monkeypatch: pytest.MonkeyPatch) -> RemoteSprint:
    """`sprint`, with KITTY_MACHINE set as in its own process (leases read it)."""
    monkeypatch.setenv("KITTY_MACHINE", sprint.machine)
    return sprint


def coord_log(bare: Path) -> str:
    return git(bare, "cat-file", "blob", f"kitty/coord/{SLUG}:status.events.jsonl")


def test_heartbeats_run_at_least_every_ten_seconds_in_a_shared_sprint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare = publish(tmp_path, CONFIG, FIVE[:1])
    repo = clone(f"file://{bare}", tmp_path / "east")
    monkeypatch.setenv("KITTY_MACHINE", "east")
    slow = Options(["claude"], ["codex"], dry_run=True, remote="origin", heartbeat_every=60)
    assert RemoteSprint(repo, SLUG, slow, print).opts.heartbeat_every == HEARTBEAT_EVERY == 10
    fast = Options(["claude"], ["codex"], dry_run=True, remote="origin", heartbeat_every=3)
    sprint = RemoteSprint(repo, SLUG, fast, print)
    assert sprint.opts.heartbeat_every == 3
    assert (sprint.remote, sprint.machine, sprint.pushed, sprint.finished_by) == (
        "origin",
        "east",
        {},
        None,
    )


def test_the_same_agent_name_on_two_machines_claims_a_wp_once(
    machines: tuple[Path, RemoteSprint, RemoteSprint], monkeypatch: pytest.MonkeyPatch
) -> None:
    bare, east, west = machines
    assert on(east, monkeypatch).claim(east.mission(), "WP01", IMPLEMENT, "claude")
    assert not on(west, monkeypatch).claim(
        west.mission(), "WP01", IMPLEMENT, "claude"
    )  # east holds it
    assert on(east, monkeypatch).claim(
        east.mission(), "WP01", IMPLEMENT, "claude"
    )  # resumed, no new event
    assert coord_log(bare).count('"to_lane": "claimed"') == 1
    assert '"machine": "east"' in coord_log(bare)
    # west learnt the claim: east is working, so west waits; east has no one to wait for
    assert on(west, monkeypatch).others_active()
    assert not on(east, monkeypatch).others_active()
    # a lost claim in start() is reported and starts nothing
    assert not on(west, monkeypatch).start(west.mission(), "WP01", IMPLEMENT, "claude")
    assert {"event": "lost_claim", "wp_id": "WP01", "role": IMPLEMENT, "agent": "claude"} in (
        west.__dict__["notes"]
    )
    assert on(west, monkeypatch).claim(west.mission(), "WP02", IMPLEMENT, "claude")


def test_a_review_waits_until_the_implementers_commit_has_arrived(
    machines: tuple[Path, RemoteSprint, RemoteSprint],
) -> None:
    _, east, _ = machines
    mission = east.mission()
    missing = "0123456789abcdef0123456789abcdef01234567"
    mission.board.get("WP01").scalars["base_commit"] = missing
    assert not east.start(mission, "WP01", REVIEW, "codex")
    assert east.__dict__["notes"] == [{"event": "wait_branch", "wp_id": "WP01", "role": REVIEW}]


def test_events_reach_the_remote_at_most_every_publish_every_seconds_unless_forced(
    machines: tuple[Path, RemoteSprint, RemoteSprint], monkeypatch: pytest.MonkeyPatch
) -> None:
    bare, east, _ = machines
    clock = [1000.0]
    monkeypatch.setattr(teamsprint, "time", types.SimpleNamespace(monotonic=lambda: clock[0]))

    def note(actor: str) -> None:
        mission = east.mission()
        from kitty.adapters import eventlog

        eventlog.append(
            mission.events_path,
            [{"actor": actor, "at": format_at(eventlog.now_us()), "event_id": actor,
              "kind": "annotation", "wp_id": "WP01", "delta": {}}],
        )  # fmt: skip

    note("first")
    east.publish()
    assert '"first"' in coord_log(bare)
    note("second")
    clock[0] += teamsprint.PUBLISH_EVERY - 0.01
    east.publish()  # too soon
    assert '"second"' not in coord_log(bare)
    clock[0] += 0.01
    east.publish()  # exactly PUBLISH_EVERY later
    assert '"second"' in coord_log(bare)
    note("third")
    east.publish(force=True)
    assert '"third"' in coord_log(bare)
    note("fourth")
    clock[0] += 0.5  # the forced publish counts as the last one
    east.publish()
    assert '"fourth"' not in coord_log(bare)


def test_lane_branches_are_pushed_when_they_moved_and_fast_forwarded_never_rewound(
    machines: tuple[Path, RemoteSprint, RemoteSprint],
) -> None:
    bare, east, west = machines
    mission = east.mission()
    lane = teamsprint.lane_of(mission, "WP01")
    assert lane is not None
    branches = [
        teamsprint.mission_branch(mission),
        teamsprint.lane_branch(mission, str(lane["lane_id"])),
    ]
    for name in branches:
        git(east.repo, "branch", name)
    east.push_branches("WP01")
    head = git(east.repo, "rev-parse", "HEAD").strip()
    for name in branches:
        assert git(bare, "rev-parse", name).strip() == head
    assert east.pushed == dict.fromkeys(branches, head)
    # west gets them as local branches, and no other branch
    before = set(git(west.repo, "branch", "--format=%(refname:short)").split())
    west.fetch_branches()
    for name in branches:
        assert git(west.repo, "rev-parse", name).strip() == head
    assert set(git(west.repo, "branch", "--format=%(refname:short)").split()) == before | set(
        branches
    )
    # unchanged since the last push: nothing is pushed
    git(bare, "branch", "-D", branches[1])
    east.push_branches("WP01")
    assert branches[1] not in git(bare, "branch", "--list")
    # east moves the lane branch on: west fast-forwards
    git(east.repo, "checkout", "-q", branches[1])
    git(east.repo, "commit", "-q", "--allow-empty", "-m", "work")
    east.push_branches("WP01")
    ahead = git(east.repo, "rev-parse", "HEAD").strip()
    assert east.pushed[branches[1]] == ahead
    west.fetch_branches()
    assert git(west.repo, "rev-parse", branches[1]).strip() == ahead
    # a branch checked out in a worktree is fast-forwarded there (its files too)
    worktree = west.repo.parent / "west-lane"
    git(west.repo, "worktree", "add", "-q", str(worktree), branches[1])
    (east.repo / "lane.txt").write_text("the lane's work\n")
    git(east.repo, "add", "lane.txt")
    git(east.repo, "commit", "-q", "-m", "more")
    east.push_branches("WP01")
    newer = git(east.repo, "rev-parse", "HEAD").strip()
    west.fetch_branches()
    assert git(worktree, "rev-parse", "HEAD").strip() == newer
    assert (worktree / "lane.txt").read_text() == "the lane's work\n"
    assert git(worktree, "status", "--porcelain") == ""  # nothing left half-updated
    # west's own commit on the mission branch is never rewound by a fetch
    git(west.repo, "checkout", "-q", branches[0])
    git(west.repo, "commit", "-q", "--allow-empty", "-m", "west's own")
    mine = git(west.repo, "rev-parse", "HEAD").strip()
    west.fetch_branches()
    assert git(west.repo, "rev-parse", branches[0]).strip() == mine


def test_a_failed_branch_push_or_fetch_is_a_notice_not_a_crash(
    machines: tuple[Path, RemoteSprint, RemoteSprint], tmp_path: Path
) -> None:
    _, east, _ = machines
    mission = east.mission()
    name = teamsprint.mission_branch(mission)
    git(east.repo, "branch", name)
    git(east.repo, "branch", teamsprint.lane_branch(mission, "lane-a"))
    git(east.repo, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    east.push_branches("WP01")
    east.fetch_branches()
    assert [n["event"] for n in east.__dict__["notes"]] == ["notice", "notice"]
    notes = [n["message"] for n in east.__dict__["notes"]]
    assert notes[0].startswith(f"pushing {name}, {name}-lane-a: ") and "gone.git" in notes[0], notes
    assert notes[1].startswith("fetching branches failed: ") and "gone.git" in notes[1], notes
    assert east.pushed == {}


def test_exactly_one_machine_finishes_the_mission(
    machines: tuple[Path, RemoteSprint, RemoteSprint],
) -> None:
    bare, east, west = machines
    assert east.claim_finish()
    assert east.finished_by is None
    assert not west.claim_finish()
    assert west.finished_by == "another machine"
    assert west.__dict__["notes"] == []  # losing is not an error
    message = git(bare, "log", "-1", "--format=%s", f"kitty/coord/{SLUG}-finish")
    assert message.strip() == f"kitty: east finishes {SLUG}"


def test_after_the_merge_the_target_branch_reaches_the_remote_and_a_failed_sync_is_a_notice(
    machines: tuple[Path, RemoteSprint, RemoteSprint], monkeypatch: pytest.MonkeyPatch
) -> None:
    bare, east, _ = machines
    log = f"kitty-specs/{SLUG}/status.events.jsonl"
    assert on(east, monkeypatch).claim(east.mission(), "WP01", IMPLEMENT, "claude")
    east.after_finish({"merged": False})  # nothing merged: the branch is not synced
    assert '"to_lane": "claimed"' not in git(bare, "show", f"main:{log}")
    east.after_finish({"merged": True})
    assert '"to_lane": "claimed"' in git(bare, "show", f"main:{log}")
    assert east.__dict__["notes"] == []
    git(east.repo, "checkout", "-q", "--detach")
    east.after_finish({"merged": True})
    [note] = east.__dict__["notes"]
    assert note == {
        "event": "notice",
        "message": "kitty sync failed: HEAD is detached: kitty sync needs a branch",
    }


def test_only_claims_of_this_machine_or_of_no_machine_are_its_own(
    machines: tuple[Path, RemoteSprint, RemoteSprint],
) -> None:
    _, east, _ = machines
    assert east.owns_claim({"agent": "claude"})
    assert east.owns_claim({"agent": "claude", "machine": None})
    assert east.owns_claim({"agent": "claude", "machine": "east"})
    assert not east.owns_claim({"agent": "claude", "machine": "west"})


def test_a_reviewer_gets_the_implementers_lane_branch_as_pushed(
    machines: tuple[Path, RemoteSprint, RemoteSprint],
) -> None:
    _, east, west = machines
    mission = east.mission()
    ws = teamsprint.existing_workspace(mission, "WP01")
    assert ws.branch is not None
    west.checkout_for_review("WP01")  # no such branch yet: nothing happens
    where = west.repo / ws.path.relative_to(east.repo)
    assert not where.exists()
    git(east.repo, "branch", ws.branch)
    git(east.repo, "checkout", "-q", ws.branch)
    git(east.repo, "commit", "-q", "--allow-empty", "-m", "the work")
    east.push_branches("WP01")
    west.fetch_branches()
    west.checkout_for_review("WP01")
    assert git(where, "rev-parse", "HEAD") == git(east.repo, "rev-parse", "HEAD")
    assert git(where, "branch", "--show-current").strip() == ws.branch
    west.checkout_for_review("WP01")  # already there: left alone
    assert git(where, "rev-parse", "HEAD") == git(east.repo, "rev-parse", "HEAD")


def add_note(sprint: RemoteSprint, actor: str) -> None:
    from kitty.adapters import eventlog

    eventlog.append(
        sprint.mission().events_path,
        [{"actor": actor, "at": format_at(eventlog.now_us()), "event_id": actor,
          "kind": "annotation", "wp_id": "WP01", "delta": {}}],
    )  # fmt: skip


def test_an_agent_exit_pushes_the_implementers_branches_and_publishes_at_once(
    machines: tuple[Path, RemoteSprint, RemoteSprint], monkeypatch: pytest.MonkeyPatch
) -> None:
    bare, east, _ = machines
    settled: list[tuple[Any, str]] = []
    monkeypatch.setattr(
        teamsprint.Sprint, "settle", lambda self, job, how: settled.append((job, how))
    )
    name = teamsprint.mission_branch(east.mission())
    lane = teamsprint.lane_branch(east.mission(), "lane-a")
    git(east.repo, "branch", name)
    git(east.repo, "branch", lane)
    review = types.SimpleNamespace(role=REVIEW, wp_id="WP01")
    east.last_publish = teamsprint.time.monotonic()  # just published: only a forced one goes
    add_note(east, "review-done")
    east.settle(review, "exit 0")
    assert settled == [(review, "exit 0")]
    assert '"review-done"' in coord_log(bare)
    assert name not in git(bare, "branch", "--list")  # a review pushes no branch
    implement = types.SimpleNamespace(role=IMPLEMENT, wp_id="WP01")
    add_note(east, "implement-done")
    east.settle(implement, "exit 0")
    assert '"implement-done"' in coord_log(bare)
    assert settled[-1] == (implement, "exit 0")
    assert {name, lane} <= set(git(bare, "branch", "--format=%(refname:short)").split())


def test_each_dispatch_publishes_first(
    machines: tuple[Path, RemoteSprint, RemoteSprint], monkeypatch: pytest.MonkeyPatch
) -> None:
    bare, east, _ = machines
    monkeypatch.setattr(teamsprint.Sprint, "dispatch", lambda self: "parent's answer")
    add_note(east, "before-dispatch")
    assert east.dispatch() == "parent's answer"
    assert '"before-dispatch"' in coord_log(bare)


def test_finishing_publishes_at_once_even_right_after_a_publish(
    machines: tuple[Path, RemoteSprint, RemoteSprint],
) -> None:
    bare, east, _ = machines
    east.publish(force=True)
    add_note(east, "last-words")
    assert east.claim_finish()
    assert '"last-words"' in coord_log(bare)


def refuse_finish(bare: Path, words: str) -> None:
    hook = bare / "hooks" / "pre-receive"
    hook.write_text(
        "#!/bin/sh\nwhile read old new ref; do case $ref in *-finish)"
        f" echo '{words}' >&2; exit 1;; esac; done\nexit 0\n"
    )
    hook.chmod(0o755)


def test_a_finish_push_refused_for_another_reason_is_a_notice(
    machines: tuple[Path, RemoteSprint, RemoteSprint],
) -> None:
    bare, east, _ = machines
    refuse_finish(bare, "no finishing here")
    assert not east.claim_finish()
    assert east.finished_by == "another machine"
    [note] = east.__dict__["notes"]
    assert note["event"] == "notice" and note["message"].startswith("finish lock: ")
    assert "no finishing here" in note["message"] and note["message"] == note["message"].strip()
    assert set(note) == {"event", "message"}
    # one line: the refused ref and git's reason first, then what the remote said
    ref = teamsprint.coord_ref(SLUG) + "-finish"
    assert (
        f":{ref} [remote rejected] (pre-receive hook declined); remote: no finishing here; "
        in (note["message"])
    )
    assert "\n" not in note["message"] and "hint:" not in note["message"]


def test_a_finish_ref_that_already_exists_is_no_notice(
    machines: tuple[Path, RemoteSprint, RemoteSprint],
) -> None:
    bare, east, _ = machines
    refuse_finish(bare, "that ref already exists")
    assert not east.claim_finish()
    assert east.__dict__["notes"] == []


def test_a_won_claim_starts_the_agent_and_publishes_at_once(
    machines: tuple[Path, RemoteSprint, RemoteSprint], monkeypatch: pytest.MonkeyPatch
) -> None:
    bare, east, _ = machines
    started: list[tuple[Any, ...]] = []

    def start(self: Any, mission: Mission, wp_id: str, role: str, agent: str) -> str:
        started.append((mission.slug, wp_id, role, agent))
        add_note(self, f"started-{role}")
        return "parent's answer"

    monkeypatch.setattr(teamsprint.Sprint, "start", start)
    on(east, monkeypatch)
    east.last_publish = teamsprint.time.monotonic()  # just published: only a forced one goes
    assert east.start(east.mission(), "WP01", IMPLEMENT, "claude") == "parent's answer"
    assert started == [(SLUG, "WP01", IMPLEMENT, "claude")]
    assert f'"started-{IMPLEMENT}"' in coord_log(bare)
    # a review whose base commit is here: claimed, checked out, started
    mission = east.mission()
    st = mission.board.get("WP02")
    st.lane = lanes.FOR_REVIEW
    st.scalars["base_commit"] = git(east.repo, "rev-parse", "HEAD").strip()
    checked: list[str] = []
    monkeypatch.setattr(RemoteSprint, "checkout_for_review", lambda self, w: checked.append(w))
    monkeypatch.setattr(
        RemoteSprint, "claim", lambda self, m, w, r, a: (w, r, a) == ("WP02", REVIEW, "codex")
    )
    assert east.start(mission, "WP02", REVIEW, "codex") == "parent's answer"
    assert checked == ["WP02"] and started[-1] == (SLUG, "WP02", REVIEW, "codex")
    assert east.__dict__["notes"] == []


# -- what the other machines see ------------------------------------------------------------


def lane_of_wp01(sprint: RemoteSprint) -> str:
    return teamsprint.lane_branch(sprint.mission(), "lane-a")


def lane_on_both(east: RemoteSprint, west: RemoteSprint) -> str:
    """WP01's lane branch, made on east, pushed, and fetched by west: its name."""
    lane = lane_of_wp01(east)
    git(east.repo, "branch", lane)
    east.push_branches("WP01")
    west.fetch_branches()
    return lane


def commit_on(repo: Path, branch: str, words: str) -> str:
    """A commit of `words` on `branch`, leaving whatever was checked out checked out."""
    where = git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip()
    git(repo, "checkout", "-q", branch)
    git(repo, "commit", "-q", "--allow-empty", "-m", words)
    sha = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", where)
    return sha


def test_a_claim_shows_the_agent_on_the_other_machines_and_in_the_remote_history(
    machines: tuple[Path, RemoteSprint, RemoteSprint], monkeypatch: pytest.MonkeyPatch
) -> None:
    bare, east, west = machines
    assert on(east, monkeypatch).claim(east.mission(), "WP01", IMPLEMENT, "claude")
    subject = git(bare, "log", "-1", "--format=%s", f"kitty/coord/{SLUG}").strip()
    assert subject == "kitty: claude on east claims WP01"
    on(west, monkeypatch).publish(force=True)  # folds east's claim in
    st = west.mission().board.get("WP01")
    assert (st.lane, st.implementer) == (lanes.CLAIMED, "claude")
    lease = teamsprint.lease_of(st)
    assert lease is not None and (lease["holder"], lease["machine"]) == ("claude", "east")


def test_finishing_publishes_the_last_events_at_once_even_right_after_a_publish(
    machines: tuple[Path, RemoteSprint, RemoteSprint],
) -> None:
    bare, east, _ = machines
    east.publish(force=True)
    add_note(east, "done-and-merged")
    east.after_finish({"merged": False})
    assert '"done-and-merged"' in coord_log(bare)


def test_the_merged_target_branch_reaches_the_shared_remote_whatever_its_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare = publish(tmp_path, CONFIG, FIVE[:1])
    repo = clone(f"file://{bare}", tmp_path / "east")
    git(repo, "remote", "rename", "origin", "team")
    east = sprint_on(repo, "east", monkeypatch, remote="team")
    assert east.claim(east.mission(), "WP01", IMPLEMENT, "claude")
    east.after_finish({"merged": True})
    log = git(bare, "show", f"main:kitty-specs/{SLUG}/status.events.jsonl")
    assert '"to_lane": "claimed"' in log
    assert east.__dict__["notes"] == []


def test_a_lane_branch_another_machine_advanced_is_not_rewound_and_the_notice_says_which(
    machines: tuple[Path, RemoteSprint, RemoteSprint],
) -> None:
    bare, east, west = machines
    lane = lane_on_both(east, west)
    theirs = commit_on(west.repo, lane, "west's work")
    west.push_branches("WP01")
    before = dict(east.pushed)
    commit_on(east.repo, lane, "east's work")
    east.push_branches("WP01")
    assert git(bare, "rev-parse", lane).strip() == theirs
    assert east.pushed == before  # refused: tried again when the lane moves
    [note] = east.__dict__["notes"]
    name = teamsprint.mission_branch(east.mission())
    url = git(east.repo, "remote", "get-url", "origin").strip()
    assert note == {
        "event": "notice",
        "message": f"pushing {name}, {lane}: refs/heads/{lane}:refs/heads/{lane} [rejected]"
        f" (fetch first); error: failed to push some refs to '{url}'",
    }


def test_commits_of_this_machine_on_a_lane_branch_are_never_rewound_by_a_fetch(
    machines: tuple[Path, RemoteSprint, RemoteSprint],
) -> None:
    _, east, west = machines
    lane = lane_on_both(east, west)
    mine = commit_on(west.repo, lane, "west's work, not pushed yet")
    west.fetch_branches()  # the remote is behind west
    assert git(west.repo, "rev-parse", lane).strip() == mine
    commit_on(east.repo, lane, "east's work")
    east.push_branches("WP01")
    west.fetch_branches()  # the two have diverged
    assert git(west.repo, "rev-parse", lane).strip() == mine
    assert west.__dict__["notes"] == []


def test_fetching_lane_branches_leaves_this_clones_tags_alone(
    machines: tuple[Path, RemoteSprint, RemoteSprint],
) -> None:
    _, east, west = machines
    lane = lane_of_wp01(east)
    git(east.repo, "branch", lane)
    work = commit_on(east.repo, lane, "east's work")
    for tag in ("v1", "east-only"):
        git(east.repo, "tag", tag, work)
        git(east.repo, "push", "-q", "origin", tag)
    east.push_branches("WP01")
    own = git(west.repo, "rev-parse", "HEAD").strip()
    git(west.repo, "tag", "v1", own)  # west's own v1, elsewhere
    west.fetch_branches()
    assert west.__dict__["notes"] == []
    assert git(west.repo, "rev-parse", lane).strip() == work
    assert git(west.repo, "tag", "--list").split() == ["v1"]
    assert git(west.repo, "rev-parse", "v1^{commit}").strip() == own


def test_a_fetch_stopped_by_a_stale_lock_is_one_notice_with_gits_reason(
    machines: tuple[Path, RemoteSprint, RemoteSprint],
) -> None:
    _, east, west = machines
    lane = lane_of_wp01(east)
    git(east.repo, "branch", lane)
    east.push_branches("WP01")
    lock = west.repo / ".git" / "refs" / "kitty" / "remotes" / "origin" / "branches" / lane
    lock = lock.with_name(lock.name + ".lock")
    lock.parent.mkdir(parents=True)
    lock.write_text("")  # left by a git process that crashed
    west.fetch_branches()
    [note] = west.__dict__["notes"]
    assert note["event"] == "notice"
    assert note["message"].startswith("fetching branches failed: error: cannot lock ref "), note
    assert "\nFrom " not in note["message"]  # git's reason, not its progress report
    assert git(west.repo, "branch", "--list", lane) == ""


def test_a_reviewers_lane_branch_checked_out_elsewhere_fails_with_gits_reason(
    machines: tuple[Path, RemoteSprint, RemoteSprint], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reviewer's lane branch is checked out in the main clone: git refuses the
    worktree. The review cannot start; the sprint reports it as any start that fails
    (git's reason, the WP blocked with it) and goes on, never ending on the error."""
    _, east, west = machines
    ws = teamsprint.existing_workspace(east.mission(), "WP01")
    assert ws.branch is not None
    git(east.repo, "branch", ws.branch)
    east.push_branches("WP01")
    west.fetch_branches()
    git(west.repo, "checkout", "-q", ws.branch)  # the user works on it in the main clone
    with pytest.raises(GitError) as failed:
        west.checkout_for_review("WP01")
    assert failed.value.message.startswith("git worktree failed: fatal: "), failed.value.message
    assert ws.branch in failed.value.message
    mission = on(west, monkeypatch).mission()
    st = mission.board.get("WP01")
    st.lane = lanes.FOR_REVIEW
    st.scalars["base_commit"] = git(west.repo, "rev-parse", "HEAD").strip()
    monkeypatch.setattr(RemoteSprint, "claim", lambda self, m, w, r, a: True)
    monkeypatch.setattr(teamsprint.Sprint, "start", lambda *a: pytest.fail("agent started"))
    assert west.start(mission, "WP01", REVIEW, "codex") is True
    error = next(n for n in west.__dict__["notes"] if n["event"] == "error")
    assert (error["wp_id"], error["role"], error["agent"]) == ("WP01", REVIEW, "codex")
    assert (
        error["message"].startswith("git worktree failed: fatal: ")
        and ws.branch in error["message"]
    )
    after = west.mission().board.get("WP01")
    assert after.lane == lanes.BLOCKED
    assert after.last_reason is not None and after.last_reason.startswith(
        "sprint could not start review by codex: git worktree failed: fatal: "
    )


def test_finishing_never_reads_the_terminal(
    machines: tuple[Path, RemoteSprint, RemoteSprint],
) -> None:
    bare, east, _ = machines
    read_end, write_end = os.pipe()
    os.write(write_end, b"typed at the terminal\n")
    os.close(write_end)
    saved = os.dup(0)
    os.dup2(read_end, 0)  # what the sprint's own stdin holds
    try:
        won = east.claim_finish()
    finally:
        os.dup2(saved, 0)
        os.close(saved)
        os.close(read_end)
    assert won
    tree = git(bare, "log", "-1", "--format=%T", f"kitty/coord/{SLUG}-finish").strip()
    assert tree == git(bare, "hash-object", "-t", "tree", "/dev/null").strip()  # empty


def test_the_first_publish_always_goes_whatever_the_clock_reads(
    machines: tuple[Path, RemoteSprint, RemoteSprint], monkeypatch: pytest.MonkeyPatch
) -> None:
    bare, east, _ = machines
    for reading in (0.0, 1.5):  # a clock that starts at zero, or just after
        monkeypatch.setattr(
            teamsprint, "time", types.SimpleNamespace(monotonic=lambda at=reading: at)
        )
        fresh = sprint_on(east.repo, "east", monkeypatch)
        add_note(fresh, f"first-at-{reading}")
        fresh.publish()
        assert f'"first-at-{reading}"' in coord_log(bare)


def test_a_publish_sends_the_running_implementers_branches_first_and_says_who_published(
    machines: tuple[Path, RemoteSprint, RemoteSprint],
) -> None:
    bare, east, _ = machines
    lane_a = lane_of_wp01(east)
    lane_b = teamsprint.lane_branch(east.mission(), "lane-b")
    lane = teamsprint.lane_of(east.mission(), "WP02")
    assert lane is not None and lane["lane_id"] == "lane-b"
    for name in (lane_a, lane_b):
        git(east.repo, "branch", name)
    east.jobs.update(
        {
            "WP01": types.SimpleNamespace(role=IMPLEMENT, wp_id="WP01"),
            "WP02": types.SimpleNamespace(role=REVIEW, wp_id="WP02"),
        }
    )
    add_note(east, "working")
    east.publish(force=True)
    remote = set(git(bare, "branch", "--format=%(refname:short)").split())
    assert lane_a in remote and lane_b not in remote  # a review's branch is not its to push
    subject = git(bare, "log", "-1", "--format=%s", f"kitty/coord/{SLUG}").strip()
    assert subject == "kitty: sprint on east"


def test_a_sprint_runs_the_mission_it_was_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare = publish(tmp_path, CONFIG, FIVE[:1])
    repo = clone(f"file://{bare}", tmp_path / "east")
    other = "other-01GHJKMN"
    make_mission(repo, slug=other, wps=FIVE[:1], config=CONFIG)
    for slug in (SLUG, other):
        assert sprint_on(repo, "east", monkeypatch, mission=slug).slug == slug


def test_a_checked_out_lane_branch_gets_the_pushed_commits_even_where_git_merges_without_ff(
    machines: tuple[Path, RemoteSprint, RemoteSprint],
) -> None:
    _, east, west = machines
    lane = lane_on_both(east, west)
    worktree = west.repo.parent / "west-lane"
    git(west.repo, "worktree", "add", "-q", str(worktree), lane)
    git(west.repo, "config", "merge.ff", "false")  # the user's own habit
    work = commit_on(east.repo, lane, "east's work")
    east.push_branches("WP01")
    west.fetch_branches()
    assert git(worktree, "rev-parse", "HEAD").strip() == work  # no merge commit of its own


def test_a_commit_that_lands_on_a_lane_branch_during_the_fetch_is_never_lost(
    machines: tuple[Path, RemoteSprint, RemoteSprint], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, east, west = machines
    lane = lane_on_both(east, west)
    commit_on(east.repo, lane, "east's work")
    east.push_branches("WP01")
    landed: list[str] = []
    real_ok = west.git.ok

    def ok(*args: str) -> bool:
        if args[0] == "merge-base":  # decided to fast-forward, then a commit lands
            landed.append(commit_on(west.repo, lane, "another process's commit"))
        return real_ok(*args)

    monkeypatch.setattr(west.git, "ok", ok)
    west.fetch_branches()  # a notice, not the end of the sprint
    assert landed and git(west.repo, "rev-parse", lane).strip() == landed[0]
    [note] = west.__dict__["notes"]
    assert note["event"] == "notice"
    assert note["message"].startswith(f"lane branch {lane} left as it is: "), note
    assert "cannot lock ref" in note["message"] or "but expected" in note["message"], note


def test_a_checked_out_lane_with_uncommitted_changes_is_left_alone_with_a_notice(
    machines: tuple[Path, RemoteSprint, RemoteSprint],
) -> None:
    """Another machine pushed to a lane this clone has checked out with uncommitted work
    on the same file: git refuses the fast-forward. The sprint goes on with a notice
    naming the lane and git's reason, the user's change stays, and once the worktree is
    clean the next fetch brings the commits in."""
    _, east, west = machines
    lane = lane_on_both(east, west)
    worktree = west.repo.parent / "west-lane"
    git(west.repo, "worktree", "add", "-q", str(worktree), lane)
    before = git(worktree, "rev-parse", "HEAD").strip()
    where = git(east.repo, "rev-parse", "--abbrev-ref", "HEAD").strip()
    git(east.repo, "checkout", "-q", lane)
    (east.repo / "notes.txt").write_text("east's work\n")
    git(east.repo, "add", "notes.txt")
    git(east.repo, "commit", "-q", "-m", "east's work")
    work = git(east.repo, "rev-parse", "HEAD").strip()
    git(east.repo, "checkout", "-q", where)
    east.push_branches("WP01")
    changed = ["notes.txt"]
    (worktree / changed[0]).write_text("west's uncommitted edit\n")
    west.fetch_branches()
    [note] = west.__dict__["notes"]
    assert note["event"] == "notice"
    assert note["message"].startswith(f"lane branch {lane} left as it is: "), note
    assert "overwritten by merge" in note["message"], note
    assert git(worktree, "rev-parse", "HEAD").strip() == before
    assert (worktree / changed[0]).read_text() == "west's uncommitted edit\n"
    (worktree / changed[0]).unlink()  # the user drops the edit
    west.fetch_branches()
    assert git(worktree, "rev-parse", "HEAD").strip() == work
    assert len(west.__dict__["notes"]) == 1
