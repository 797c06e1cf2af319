"""`Context.changes`: the times a decision may change by the clock alone. A cached
`kitty next` is served until the earliest of them, so a decision taken at any moment
before it must be the very same decision (never late), whatever the board."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as s

from kitty.core.clock import format_at
from kitty.core.decide import steps as decide
from kitty.core.log.state import Board, WPState
from kitty.core.model import WorkPackage

SEC = 1_000_000
NOW = 10**9 * SEC
LANES = ["planned", "claimed", "in_progress", "for_review", "in_review", "approved", "done"]
AGENTS = ["claude", "codex", "qwen"]


@s.composite
def boards(draw: s.DrawFn) -> tuple[dict[str, WorkPackage], Board]:
    count = draw(s.integers(1, 4))
    ids = [f"WP0{i}" for i in range(1, count + 1)]
    wps, states = {}, {}
    for index, wp_id in enumerate(ids):
        deps = tuple(d for d in ids[:index] if draw(s.booleans()))
        wps[wp_id] = WorkPackage(wp_id, f"t {wp_id}", deps, (), (), f"t/{wp_id}.md", wp_id)
        ago = draw(s.integers(0, 3 * 86_400)) * SEC + draw(s.integers(0, SEC))
        st = WPState(wp_id, lane=draw(s.sampled_from(LANES)), lane_since_us=NOW - ago)
        who = draw(s.sampled_from(AGENTS))
        st.agent, st.implementer = who, draw(s.sampled_from(AGENTS))
        st.reviewer = who if st.lane == "in_review" else None
        if draw(s.booleans()):
            st.last_activity_us = NOW - draw(s.integers(0, ago // SEC + 1)) * SEC
        if st.lane == "in_review" and draw(s.booleans()):
            beat = NOW - draw(s.integers(0, 4 * 3600)) * SEC
            st.runtime_claim = {"heartbeat": format_at(beat)}
        states[wp_id] = st
    return wps, Board(wps=states)


def decision(
    wps: dict[str, WorkPackage],
    board: Board,
    agent: str,
    now: int,
    stall_us: int,
    changes: list[int] | None = None,
) -> dict[str, object]:
    lanes = {w: f"lane-{w}" for w in wps}
    ctx = decide.Context(
        "m", agent, wps, board, lanes, 3, False, now, stall_us=stall_us, changes=changes
    )
    return decide.decide(ctx).to_json()


@settings(max_examples=300, deadline=None)
@given(
    boards(),
    s.sampled_from(AGENTS),
    s.integers(0, 2 * 3600 * SEC),
    s.integers(1, 90 * 60).map(lambda seconds: seconds * SEC + 1),
    s.floats(0, 1),
)
def test_a_decision_holds_until_its_earliest_change(
    board: tuple[dict[str, WorkPackage], Board],
    agent: str,
    later: int,
    stall_us: int,
    where: float,
) -> None:
    wps, state = board
    now = NOW + later
    changes: list[int] = []
    taken = decision(wps, state, agent, now, stall_us, changes)
    # a tick may be named up to 1 ms early (float rounding), never late
    assert all(change > now - 1000 for change in changes)
    until = min(changes, default=now + 10 * 86_400 * SEC)
    if until <= now + 1:
        return  # no window: such a view is never kept (viewcache.store)
    for moment in (now + 1, until - 1, now + int((until - 1 - now) * where)):
        assert decision(wps, state, agent, moment, stall_us) == taken, (moment - now, until - now)


def test_the_changes_name_each_printed_age_and_the_stall_limit() -> None:
    """A review in its 29th minute: its age ticks at 30m, and it turns STALLED at the limit."""
    wp = WorkPackage("WP01", "t", (), (), (), "t/WP01.md", "WP01")
    st = WPState("WP01", lane="in_review", lane_since_us=NOW - (29 * 60 + 10) * SEC)
    st.reviewer = st.agent = "codex"
    st.implementer = "claude"
    board = Board(wps={"WP01": st})
    stall = (29 * 60 + 40) * SEC
    changes: list[int] = []
    decision({"WP01": wp}, board, "qwen", NOW, stall, changes)
    assert st.lane_since_us is not None
    assert min(changes) == st.lane_since_us + stall + 1  # before the age's tick at 30m
    assert decision({"WP01": wp}, board, "qwen", min(changes), stall)["action"] == "review"
    assert decision({"WP01": wp}, board, "qwen", min(changes) - 1, stall)["action"] == "wait"


def test_a_stalled_reviews_silence_ticks_by_its_last_sign_of_life() -> None:
    """The silence counts from the last heartbeat, not from the lane change: its own tick."""
    wp = WorkPackage("WP01", "t", (), (), (), "t/WP01.md", "WP01")
    st = WPState("WP01", lane="in_review", lane_since_us=NOW - (50 * 60 + 5) * SEC)
    st.reviewer = st.agent = "codex"
    st.implementer = "claude"
    beat = NOW - (31 * 60 + 20) * SEC
    st.runtime_claim = {"heartbeat": format_at(beat)}
    board = Board(wps={"WP01": st})
    changes: list[int] = []
    taken = decision({"WP01": wp}, board, "qwen", NOW, 30 * 60 * SEC, changes)
    assert "no activity for 31m" in str(taken["reason"])
    tick = beat + 32 * 60 * SEC
    assert NOW < min(changes) <= tick
    later = decision({"WP01": wp}, board, "qwen", tick + 1000, 30 * 60 * SEC)
    assert "no activity for 32m" in str(later["reason"])
