"""Sprint resume: the WPs an earlier (killed) sprint left with agents.

All sprint state is in the event log: a WP held (claimed, in progress, in
review) whose runtime claim names an `agent_pid` was dispatched by a sprint. A
new sprint watches that agent while it is alive, or dispatches the WP again when
it is gone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kitty.core import lanes
from kitty.core.log.state import HELD
from kitty.mission.workspace import Mission
from kitty.sprint.rules.plan import IMPLEMENT, REVIEW
from kitty.teams import liveness


@dataclass(frozen=True)
class Adoption:
    wp_id: str
    role: str
    agent: str
    pid: Any
    cycle: int
    lane: str
    alive: bool

    def event(self) -> dict[str, Any]:
        how = (
            "watching the running agent"
            if self.alive
            else "its agent is gone: dispatching it again"
        )
        return {
            "event": "adopt",
            "wp_id": self.wp_id,
            "role": self.role,
            "agent": self.agent,
            "pid": self.pid,
            "how": how,
        }


def adoptions(mission: Mission, owns_claim: Callable[[dict[str, Any]], bool]) -> list[Adoption]:
    """Held WPs with a sprint's agent whose claim `owns_claim` (this machine's)."""
    found = []
    for wp_id in mission.all_ids():
        st = mission.board.wps.get(wp_id)
        if st is None or st.lane not in HELD or not st.runtime_claim:
            continue
        claim = st.runtime_claim
        if "agent_pid" not in claim or not owns_claim(claim):
            continue  # not dispatched by a sprint here: somebody else's work
        role = REVIEW if st.lane == lanes.IN_REVIEW else IMPLEMENT
        agent = (st.reviewer if role == REVIEW else st.implementer) or "unknown"
        pid = claim.get("agent_pid")
        alive = liveness.pid_alive(pid)
        found.append(Adoption(wp_id, role, agent, pid, st.review_cycles + 1, st.lane, alive))
    return found
