"""Is the agent holding a WP still alive? (pid checks for `status` and `sprint`)."""

from __future__ import annotations

import os
from typing import Any

from kitty.core.clock import duration_ticks_at, humanize_duration, parse_at
from kitty.core.lanes import IN_REVIEW
from kitty.core.log.state import HELD, Board

#: A running agent writes a heartbeat at most once a minute; silence past this is a stall.
SILENCE_LIMIT_US = 15 * 60 * 1_000_000


def pid_alive(pid: Any) -> bool:
    try:
        number = int(pid)
    except (TypeError, ValueError):
        return False
    if number <= 0:
        return False
    try:
        os.kill(number, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _zombie(number)


def _zombie(pid: int) -> bool:
    """A dead process nobody reaped yet (common in containers without an init) is dead."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            return handle.read().rsplit(")", 1)[-1].split()[0] == "Z"
    except (OSError, IndexError):
        return False


def this_machine() -> str:
    from kitty.teams.remote import machine_id

    return machine_id()


def mark_stalled(
    work_packages: list[dict[str, Any]],
    board: Board,
    now_us: int,
    review_stall_us: int = 30 * 60 * 1_000_000,
    changes: list[int] | None = None,
) -> None:
    """Set `stalled` on in-flight WPs whose sprint-dispatched agent is gone or silent, and
    on reviews with nothing recorded for review.stall_minutes (started by hand, abandoned:
    `kitty next` offers their takeover). `changes`, when given, receives when a verdict
    changes by the clock alone (and `now_us` when it depends on a process: any time)."""
    found: list[int] = [] if changes is None else changes
    for view in work_packages:
        view["stalled"] = None
        st = board.wps.get(view["id"])
        if st is None or st.lane not in HELD:
            continue
        claim = st.runtime_claim or {}
        if "agent_pid" not in claim:
            # only sprint-dispatched agents carry a pid kitty can judge; a review by hand
            # is judged by its silence
            quiet = max(st.last_activity_us or 0, st.lane_since_us or 0)
            if st.lane == IN_REVIEW and quiet and now_us - quiet > review_stall_us:
                view["stalled"] = (
                    f"review silent for {humanize_duration((now_us - quiet) / 1e6)}: "
                    "`kitty next` offers the takeover"
                )
                found.append(quiet + duration_ticks_at(now_us - quiet))
            elif st.lane == IN_REVIEW and quiet:
                found.append(quiet + review_stall_us + 1)
            continue
        found.append(now_us)  # a process's life: no time is safe
        elsewhere = claim.get("machine") not in (None, this_machine())
        if not elsewhere and not pid_alive(claim.get("agent_pid")):
            view["stalled"] = f"agent process {claim.get('agent_pid')} is gone"
            continue  # another machine's pid means nothing here: judge its heartbeats
        last = claim.get("heartbeat") or claim.get("at")
        if last and now_us - parse_at(str(last)) > SILENCE_LIMIT_US:
            view["stalled"] = f"no heartbeat since {last}"
