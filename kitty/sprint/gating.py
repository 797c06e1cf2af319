"""The sprint's test gate: after an implementer's run leaves its WP in for_review, the
project's verification commands run in the lane worktree (kitty.workflow.gating.gate,
the same function as `kitty verify`) before any reviewer is dispatched. A failure sends
the WP back to its implementer in fix mode, the failing output at the top of the
prompt; at `gate.max_failures` failed gates it goes to a human."""

from __future__ import annotations

from kitty.core import lanes
from kitty.mission.workspace import Mission
from kitty.mission.worktrees import existing_workspace
from kitty.sprint.state import SprintState
from kitty.workflow import moves
from kitty.workflow.gating.gate import commands, verify_wp
from kitty.workflow.rules import gate as rules


class Gating(SprintState):
    def ungated(self, mission: Mission, wp_id: str) -> bool:
        """Whether `wp_id`'s lane HEAD has no gate result yet (a WP moved to for_review by
        hand, or left there by a sprint killed before its gate ran)."""
        if not commands(mission):
            return False
        from kitty.adapters.git import Git

        ws = existing_workspace(mission, wp_id)
        if not ws.path.is_dir() or ws.lane_id is None:
            return False
        st = mission.board.wps.get(wp_id)
        tested = st.scalars.get("gate_commit") if st is not None else None
        return tested != Git(ws.path).sha()

    def gate(self, mission: Mission, wp_id: str) -> None:
        """Run the gate on `wp_id` when it waits for review and commands are configured."""
        if mission.board.lane(wp_id) != lanes.FOR_REVIEW or not commands(mission):
            return
        _, cap = rules.settings(mission.config.raw)
        result = verify_wp(mission, wp_id, "sprint", log_dir=self.log_dir)
        self.emit(
            {
                "event": "gate",
                "wp_id": wp_id,
                "result": result["result"],
                "commit": result["commit"],
                "commands": [rules.describe(c) for c in result["commands"]],
                "output": result["output"],
                "failures": result["failures"],
            }
        )
        mission = self.mission()
        st = mission.board.wps[wp_id]
        then = rules.after_gate(result["result"], result["failures"], cap)
        if then == rules.REVIEW:
            return
        to_lane = lanes.BLOCKED if then == rules.ESCALATE else lanes.PLANNED
        note = (
            rules.escalate_note(st.scalars, cap)
            if then == rules.ESCALATE
            else rules.fix_note(st.scalars, cap, st.implementer)
        )
        moves.move_task(mission, wp_id, to_lane, agent="sprint", force=True, note=note)
        event = "blocked" if then == rules.ESCALATE else "gate_fix"
        self.emit({"event": event, "wp_id": wp_id, "reason": note})
