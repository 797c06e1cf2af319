"""Lease promises, in-process (so `make mutation` can kill the mutants of
kitty/teams/leases.py; tests/teams/test_remote_claims.py runs them across real clones).

- a claim's lease runs from its newest sign of life (claim, heartbeat, any later event);
- only an expired lease is taken over, the one that expired first, never one's own;
- the takeover names the previous holder and machine, and keeps the WP's stage;
- the same agent name on another machine is someone else.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kitty.core import lanes
from kitty.core.clock import format_at, parse_at
from kitty.core.decide import steps as decide
from kitty.core.log.state import Board, WPState
from kitty.mission.workspace import Mission
from kitty.teams import leases
from tests.helpers import make_mission

T0 = parse_at("2026-06-01T12:00:00+00:00")
SEC = 1_000_000
WPS = [{"wp_id": "WP01", "title": "One"}, {"wp_id": "WP02", "title": "Two"}]


def mission_with(repo: Path, config: str = "agents:\n  available: [claude]\n") -> Mission:
    make_mission(repo, wps=WPS, config=config)
    return Mission.open(repo, None)


def held(
    wp_id: str = "WP01",
    lane: str = lanes.CLAIMED,
    agent: str = "alice",
    machine: str | None = "laptop-a",
    at_us: int = T0,
    seconds: float | None = 60,
    heartbeat_us: int | None = None,
    activity_us: int | None = None,
) -> WPState:
    claim: dict[str, object] = {"agent": agent, "at": format_at(at_us)}
    if machine is not None:
        claim["machine"] = machine
    if seconds is not None:
        claim["lease_seconds"] = seconds
    if heartbeat_us is not None:
        claim["heartbeat"] = format_at(heartbeat_us)
    st = WPState(wp_id, lane=lane, agent=agent, runtime_claim=claim, last_activity_us=activity_us)
    if lane == lanes.IN_REVIEW:
        st.reviewer = agent
    else:
        st.implementer = agent
    return st


@pytest.mark.parametrize(
    ("value", "minutes"),
    [(None, 30.0), (5, 5.0), (0.5, 0.5), (0, 30.0), (-3, 30.0), (True, 30.0), ("10", 30.0)],
)
def test_the_lease_length_comes_from_the_config_or_defaults_to_30_minutes(
    repo: Path, value: object, minutes: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    line = "" if value is None else f"  lease_minutes: {value!r}\n".replace("'", '"')
    if value is True:
        line = "  lease_minutes: true\n"
    mission = mission_with(repo, "agents:\n  available: [claude]\n" + line)
    assert leases.lease_minutes(mission) == minutes
    monkeypatch.setenv("KITTY_MACHINE", "box-7")
    assert leases.remote_lease(mission) == {
        "machine": "box-7",
        "lease_seconds": int(minutes * 60),
    }


def test_a_lease_runs_from_the_newest_sign_of_life() -> None:
    assert leases.lease_of(held()) == {
        "holder": "alice",
        "machine": "laptop-a",
        "expires_at": format_at(T0 + 60 * SEC),
        "expires_us": T0 + 60 * SEC,
    }
    later = T0 + 500 * SEC
    info = leases.lease_of(held(heartbeat_us=later))
    assert info is not None and info["expires_us"] == later + 60 * SEC
    info = leases.lease_of(held(heartbeat_us=T0 + 5 * SEC, activity_us=later))
    assert info is not None and info["expires_us"] == later + 60 * SEC  # any later event renews
    info = leases.lease_of(held(at_us=later, activity_us=T0))
    assert info is not None and info["expires_us"] == later + 60 * SEC
    info = leases.lease_of(held(seconds=1.5))
    assert info is not None and info["expires_us"] == T0 + 1_500_000


def test_a_broken_timestamp_does_not_hide_the_lease() -> None:
    st = held(activity_us=T0)
    assert st.runtime_claim is not None
    st.runtime_claim["at"] = "not a time"
    info = leases.lease_of(st)
    assert info is not None and info["expires_us"] == T0 + 60 * SEC
    del st.runtime_claim["at"]
    info = leases.lease_of(st)
    assert info is not None and info["expires_us"] == T0 + 60 * SEC


@pytest.mark.parametrize("lane", [lanes.CLAIMED, lanes.IN_PROGRESS, lanes.IN_REVIEW])
def test_every_held_lane_has_a_lease(lane: str) -> None:
    assert leases.lease_of(held(lane=lane)) is not None


def test_no_lease_without_a_remote_claim() -> None:
    assert leases.lease_of(None) is None
    assert leases.lease_of(held(lane=lanes.PLANNED)) is None
    assert leases.lease_of(held(lane=lanes.FOR_REVIEW)) is None
    assert leases.lease_of(held(lane=lanes.DONE)) is None
    assert leases.lease_of(held(seconds=None)) is None  # a local claim
    st = held()
    st.runtime_claim = {}
    assert leases.lease_of(st) is None
    st.runtime_claim = {"lease_seconds": "60", "at": format_at(T0)}
    assert leases.lease_of(st) is None


def board_of(*states: WPState) -> Board:
    return Board(wps={st.wp_id: st for st in states})


LEASE = {"machine": "laptop-b", "lease_seconds": 60}


def test_a_live_lease_is_never_taken_over(repo: Path) -> None:
    mission = mission_with(repo)
    board = board_of(held())
    ends = T0 + 60 * SEC  # the lease ends at this instant
    assert leases.reclaim_expired(mission, "bob", board, ends - 1, LEASE) is None
    assert leases.reclaim_expired(mission, "bob", board, ends, LEASE) is not None


def test_ones_own_expired_lease_on_this_machine_is_not_a_takeover(repo: Path) -> None:
    mission = mission_with(repo)
    late = T0 + 3600 * SEC
    mine = {"machine": "laptop-a", "lease_seconds": 60}
    assert leases.reclaim_expired(mission, "alice", board_of(held()), late, mine) is None
    # the same name on another machine, or another name on the same machine, takes over
    assert leases.reclaim_expired(mission, "alice", board_of(held()), late, LEASE) is not None
    assert leases.reclaim_expired(mission, "bob", board_of(held()), late, mine) is not None


def test_a_wp_no_longer_in_the_mission_is_not_taken_over(repo: Path) -> None:
    mission = mission_with(repo)
    board = board_of(held(wp_id="WP09"))
    assert leases.reclaim_expired(mission, "bob", board, T0 + 3600 * SEC, LEASE) is None


def test_the_takeover_names_the_previous_holder_and_keeps_the_stage(repo: Path) -> None:
    mission = mission_with(repo)
    board = board_of(
        held("WP01", at_us=T0 + 10 * SEC),
        held("WP02", lane=lanes.IN_PROGRESS, agent="carol", machine="box", at_us=T0),
    )
    found = leases.reclaim_expired(mission, "bob", board, T0 + 3600 * SEC, LEASE)
    assert found is not None
    decision, records = found
    expired = format_at(T0 + 60 * SEC)
    why = f"lease of carol on box expired at {expired}; reclaimed by bob"
    assert (decision.action, decision.wp_id, decision.claimed) == (decide.IMPLEMENT, "WP02", True)
    assert decision.reason == f"WP02: {why}"
    assert decision.commands == [
        f"kitty agent action implement WP02 --mission {mission.slug} --agent bob"
    ]
    assert decision.mission == mission.slug
    release, claim = records
    previous = {
        "previous_holder": "carol",
        "previous_machine": "box",
        "lease_expired_at": expired,
        "by": "bob",
    }
    assert (release["from_lane"], release["to_lane"]) == (lanes.IN_PROGRESS, lanes.PLANNED)
    assert (release["actor"], release["force"], release["reason"]) == ("kitty-lease", True, why)
    assert release["policy_metadata"] == {"reclaim": previous}
    assert (claim["from_lane"], claim["to_lane"], claim["force"]) == (
        lanes.PLANNED,
        lanes.CLAIMED,
        False,
    )
    assert claim["actor"] == {"tool": "bob", "role": "implementer", "profile": None, "model": None}
    assert claim["reason"] == "reclaimed via kitty next --remote"
    assert claim["policy_metadata"] == {"agent": "bob", "reclaim": previous, **LEASE}


def test_an_expired_review_is_taken_over_as_a_review(repo: Path) -> None:
    mission = mission_with(repo)
    board = board_of(held("WP01", lane=lanes.IN_REVIEW, agent="rev", machine="m"))
    found = leases.reclaim_expired(mission, "bob", board, T0 + 3600 * SEC, LEASE)
    assert found is not None
    decision, (release, claim) = found
    assert decision.action == decide.REVIEW
    assert decision.commands[0].startswith("kitty agent action review WP01 ")
    assert (release["from_lane"], release["to_lane"]) == (lanes.IN_REVIEW, lanes.FOR_REVIEW)
    assert (claim["from_lane"], claim["to_lane"]) == (lanes.FOR_REVIEW, lanes.IN_REVIEW)
    assert claim["actor"] == {"tool": "bob", "role": "reviewer", "profile": None, "model": None}


def test_foreign_holds_relabels_only_the_same_name_on_another_machine() -> None:
    board = board_of(
        held("WP01", agent="claude", machine="laptop-a"),
        held("WP02", agent="claude", machine="laptop-b"),
        held("WP03", lane=lanes.IN_REVIEW, agent="claude", machine="laptop-a"),
        held("WP04", lane=lanes.IN_PROGRESS, agent="codex", machine="laptop-a"),
        held("WP05", agent="claude", machine=None),
        held("WP06", lane=lanes.IN_PROGRESS, agent="claude", machine="laptop-a"),
    )
    board.wps["WP07"] = WPState("WP07", lane=lanes.PLANNED)
    board.wps["WP08"] = held("WP08", lane=lanes.IN_REVIEW, agent="codex", machine="laptop-a")
    leases.foreign_holds(board, "claude", "laptop-b")
    got = {w: (st.agent, st.implementer, st.reviewer) for w, st in board.wps.items()}
    assert got == {
        "WP01": ("claude@laptop-a", "claude@laptop-a", None),
        "WP02": ("claude", "claude", None),
        "WP03": ("claude@laptop-a", None, "claude@laptop-a"),
        "WP04": ("codex", "codex", None),
        "WP05": ("claude", "claude", None),
        "WP06": ("claude@laptop-a", "claude@laptop-a", None),
        "WP07": (None, None, None),
        "WP08": ("codex", None, "codex"),  # another agent's review is left alone
    }


def test_every_expired_lease_is_found_whatever_comes_before_it(repo: Path) -> None:
    """WPs without a lease, or held by the caller itself, do not stop the search."""
    mission = mission_with(repo)
    late = T0 + 3600 * SEC
    free = WPState("WP01", lane=lanes.PLANNED)
    found = leases.reclaim_expired(
        mission, "bob", board_of(free, held("WP02", agent="carol")), late, LEASE
    )
    assert found is not None and found[0].wp_id == "WP02"
    own = held("WP01", agent="bob", machine="laptop-b")
    found = leases.reclaim_expired(
        mission, "bob", board_of(own, held("WP02", agent="carol")), late, LEASE
    )
    assert found is not None and found[0].wp_id == "WP02"
