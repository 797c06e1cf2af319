"""Leases on claims made through a remote: who holds a WP, on which machine, until when.

A remote claim records `machine` and `lease_seconds` (config `agents.lease_minutes`,
default 30). Any later event on the WP that reaches the remote renews it — the
sprint's heartbeats, subtask marks, moves. Once a lease has expired, `kitty next
--claim --remote` on another machine may take the WP over: a forced release that
names the previous holder and machine, then a normal claim, in one atomic push.
"""

from __future__ import annotations

import shlex
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from kitty.core import lanes
from kitty.core.clock import format_at, parse_at
from kitty.core.log.state import HELD, Board, WPState, as_dict
from kitty.mission.workspace import Mission

if TYPE_CHECKING:  # `kitty status` reads leases without the scheduler
    from kitty.core.decide import steps as decide

DEFAULT_LEASE_MINUTES = 30
RECLAIM_ACTOR = "kitty-lease"


def lease_minutes(mission: Mission) -> float:
    value = as_dict(mission.config.raw.get("agents")).get("lease_minutes", DEFAULT_LEASE_MINUTES)
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        return DEFAULT_LEASE_MINUTES
    return float(value)


def remote_lease(mission: Mission) -> dict[str, Any]:
    """The lease a claim made through the remote carries: this machine, the lease length."""
    from kitty.teams.remote import machine_id

    return {"machine": machine_id(), "lease_seconds": int(lease_minutes(mission) * 60)}


def lease_of(st: WPState | None) -> dict[str, Any] | None:
    """The lease on a held WP: holder, machine, expiry (None when it has none)."""
    if st is None or st.lane not in HELD or not st.runtime_claim:
        return None
    claim = st.runtime_claim
    seconds = claim.get("lease_seconds")
    if not isinstance(seconds, int | float):
        return None
    starts = [st.last_activity_us or 0]
    for key in ("at", "heartbeat"):
        with suppress(KeyError, ValueError):
            starts.append(parse_at(str(claim[key])))
    expires_us = max(starts) + int(seconds * 1_000_000)
    return {
        "holder": claim.get("agent"),
        "machine": claim.get("machine"),
        "expires_at": format_at(expires_us),
        "expires_us": expires_us,
    }


def reclaim_expired(
    mission: Mission, who: str, board: Board, now_us: int, lease: dict[str, Any]
) -> tuple[decide.Decision, list[dict[str, Any]]] | None:
    """Take over the WP whose lease expired first (not one `who` holds on this machine)."""
    from kitty.core.decide import steps as decide

    found = _first_expired(mission, who, board, now_us, lease)
    if found is None:
        return None
    wp_id, st, info = found
    records, why = _takeover(mission, who, wp_id, st, info, lease)
    review = st.lane == lanes.IN_REVIEW
    verb = "review" if review else "implement"
    decision = decide.Decision(
        decide.REVIEW if review else decide.IMPLEMENT,
        f"{wp_id}: {why}",
        wp_id,
        commands=[
            f"kitty agent action {verb} {wp_id} --mission {mission.slug} --agent {shlex.quote(who)}"
        ],
        mission=mission.slug,
        claimed=True,
    )
    return decision, records


def _first_expired(
    mission: Mission, who: str, board: Board, now_us: int, lease: dict[str, Any]
) -> tuple[str, WPState, dict[str, Any]] | None:
    """The WP whose lease expired first, not counting one `who` holds on this machine."""
    expired = []
    for wp_id, st in board.wps.items():
        info = lease_of(st)
        if info is None or info["expires_us"] > now_us or wp_id not in mission.wps:
            continue
        if info["holder"] == who and info["machine"] == lease.get("machine"):
            continue
        expired.append((info["expires_us"], wp_id, st, info))
    if not expired:
        return None
    _, wp_id, st, info = min(expired)
    return wp_id, st, info


def _takeover(
    mission: Mission,
    who: str,
    wp_id: str,
    st: WPState,
    info: dict[str, Any],
    lease: dict[str, Any],
) -> tuple[list[dict[str, Any]], str]:
    """The two records of a takeover (release the expired hold, then claim it for `who`;
    a review stays a review) and why."""
    review = st.lane == lanes.IN_REVIEW
    release_to = lanes.FOR_REVIEW if review else lanes.PLANNED
    claim_to = lanes.IN_REVIEW if review else lanes.CLAIMED
    previous = {
        "previous_holder": info["holder"],
        "previous_machine": info["machine"],
        "lease_expired_at": info["expires_at"],
        "by": who,
    }
    why = (
        f"lease of {info['holder']} on {info['machine']} expired at {info['expires_at']}; "
        f"reclaimed by {who}"
    )
    records = [
        mission.transition(
            wp_id,
            st.lane or lanes.PLANNED,
            release_to,
            RECLAIM_ACTOR,
            force=True,
            reason=why,
            policy_metadata={"reclaim": previous},
        ),
        mission.transition(
            wp_id,
            release_to,
            claim_to,
            # a structured actor has all four keys, or Spec Kitty 3.2.7 refuses the log
            {
                "tool": who,
                "role": "reviewer" if review else "implementer",
                "profile": None,
                "model": None,
            },
            reason="reclaimed via kitty next --remote",
            policy_metadata={"agent": who, "reclaim": previous, **lease},
        ),
    ]
    return records, why


def foreign_holds(board: Board, who: str, machine: str) -> None:
    """Treat WPs `who` holds on another machine as someone else's (for this decision only).

    The same agent name often runs on several machines ("claude" on each laptop);
    without this, `next` on machine B would tell claude to resume machine A's WP.
    Mutates `board`, which callers replay fresh for every decision.
    """
    for st in board.wps.values():
        claim = st.runtime_claim or {}
        other = claim.get("machine")
        if not other or other == machine:
            continue
        label = f"{who}@{other}"
        if st.lane in (lanes.CLAIMED, lanes.IN_PROGRESS) and st.implementer == who:
            st.implementer = label
            st.agent = label
        elif st.lane == lanes.IN_REVIEW and st.reviewer == who:
            st.reviewer = label
            st.agent = label
