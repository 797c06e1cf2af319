"""The review panel runner's records: the WP's lanes (claim, park, resume), the verdicts,
merged.json, the HALT file and the result. What to record is decided by panel/rules/rounds.py."""

from __future__ import annotations

import shlex
import time
from typing import Any

from kitty.adapters import contain
from kitty.core import lanes
from kitty.errors import GuardRefused
from kitty.mission.workspace import Mission
from kitty.panel.base import PanelBase
from kitty.panel.procs import stamp, write_json, write_once
from kitty.panel.rules.data import CONVERGED, HALT
from kitty.panel.rules.report import (
    halt_artifact,
    halt_details,
    halt_hint,
    merged_json,
    result_json,
)
from kitty.panel.rules.rounds import (
    ArchiveRounds,
    ClearHalt,
    Halt,
    Results,
    RoundState,
    next_actions,
)
from kitty.workflow import moves
from kitty.workflow.rules.findings import Merged


class PanelLanes(PanelBase):
    def claim_review(self, mission: Mission) -> None:
        lane = mission.board.lane(self.wp_id)
        if lane == lanes.IN_REVIEW:
            holder = mission.board.wps[self.wp_id].reviewer
            if holder not in (self.opts.runner, None):
                raise GuardRefused(
                    f"{self.wp_id} is in review by {holder}",
                    f"let {holder} finish, or run the panel as them: --agent {shlex.quote(holder)}",
                )
            return
        if lane != lanes.FOR_REVIEW:
            raise GuardRefused(
                f"{self.wp_id} is {lane}, not for_review",
                "the panel reviews a WP that is ready for review",
            )
        moves.move_task(
            mission, self.wp_id, lanes.IN_REVIEW, agent=self.opts.runner, note="review panel"
        )

    def fresh_start(self, mission: Mission) -> None:
        """A new run starts at round 1; files of earlier runs are kept for audit only."""
        st = mission.board.wps[self.wp_id]
        old = sorted(self.review_dir.glob("round-*")) if self.review_dir.is_dir() else []
        found = Results(
            old_rounds=tuple(p.name for p in old),
            halted=bool(st.scalars.get("review_halt")),
            lane=mission.board.lane(self.wp_id),
        )
        for action in next_actions(RoundState(1, "started"), found, self.rules()):
            if isinstance(action, ArchiveRounds):
                archive = contain.check(self.review_dir / f"archive-{stamp()}")
                archive.mkdir(parents=True)
                for name in action.names:
                    (self.review_dir / name).rename(archive / name)
            elif isinstance(action, ClearHalt):
                note = "review panel resumed: fresh round 1"
                self.annotate(mission, {"review_halt": "", "note": note})
                if action.back_to_review:
                    note = "review panel resumed after HALT"
                    self.force_move(self.mission(), lanes.FOR_REVIEW, note)
        write_json(self.review_dir / "run.json", self.settings_json())

    def force_move(self, mission: Mission, to: str, note: str) -> None:
        """A forced move of this WP by the panel's runner, with the reason as its note."""
        moves.move_task(mission, self.wp_id, to, agent=self.opts.runner, force=True, note=note)

    def unreview(self) -> None:
        """in_review -> for_review: leaving review this way records no verdict (a move from
        in_review to planned or in_progress with a note is a rejection)."""
        mission = self.mission()
        if mission.board.lane(self.wp_id) == lanes.IN_REVIEW:
            self.force_move(
                mission, lanes.FOR_REVIEW, "review panel: leaving review without a verdict"
            )

    def park(self, why: str) -> None:
        """A HALTed WP waits in planned (the arbiter state) with its rejections counted."""
        self.unreview()
        mission = self.mission()
        if mission.board.lane(self.wp_id) not in (lanes.PLANNED,):
            self.force_move(mission, lanes.PLANNED, f"review panel HALT: {why}")

    def record(self, round_no: int, merged: Merged, suffix: str) -> dict[str, Any]:
        """The round's verdict through the existing review path (review-cycle file, count)."""
        from kitty.workflow.reviews import record_verdict

        return record_verdict(
            self.mission(), self.wp_id, self.opts.runner, merged, round_no, suffix, panel=True
        )

    def write_merged(self, round_no: int, merged: Merged, scope: dict[str, Any]) -> None:
        block_at = self.mission().config.block_at
        data = merged_json(round_no, merged, scope, block_at, int(time.time()))
        write_json(self.round_dir(round_no) / "merged.json", data)

    def converge(self, round_no: int, merged: Merged, scope: dict[str, Any]) -> dict[str, Any]:
        recorded = self.record(round_no, merged, f" (review panel: CONVERGED at round {round_no})")
        self.annotate(self.mission(), {"review_round": round_no, "review_halt": ""})
        self.emit({"event": "converged", "round": round_no})
        return self.result(round_no, CONVERGED, merged, scope, recorded=recorded)

    def reject(self, round_no: int, merged: Merged) -> dict[str, Any]:
        recorded = self.record(round_no, merged, f" (review panel round {round_no})")
        self.emit(
            {
                "event": "changes_requested",
                "round": round_no,
                "blocking": recorded["blocking"],
                "review": recorded.get("review_ref"),
            }
        )
        return recorded

    # -- HALT -------------------------------------------------------------------------------------
    def stop(
        self,
        action: Halt,
        merged: Merged | None,
        payload: dict[str, Any] | None = None,
        first: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Carry out a HALT action: park the WP (with the rule's note), then the HALT file."""
        if action.park_note:
            self.park(action.park_note)
        return self.halt(
            action.round_no,
            action.reason,
            merged,
            context=action.context,
            payload=payload if action.with_payload else None,
            extra={**(first or {}), **action.extra} or None,
        )

    def halt(
        self,
        round_no: int,
        reason: str,
        merged: Merged | None,
        context: str = "",
        payload: dict[str, Any] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        mission = self.mission()
        if mission.board.lane(self.wp_id) != lanes.PLANNED:
            self.park(reason)
            mission = self.mission()
        findings = merged.findings if merged else []
        artifact = halt_artifact(
            self.wp_id, self.slug, round_no, reason, findings, mission.config.block_at,
            payload, context, self.settings_json(), extra or {},
        )  # fmt: skip
        path = self.task_dir / f"review-halt-{round_no}-{stamp()}.json"
        write_once(path, artifact)
        self.annotate(
            mission,
            {
                "review_halt": self.rel(path),
                "review_halt_reason": reason,
                "review_round": round_no,
                "note": f"review panel HALT ({reason}) at round {round_no}",
            },
        )
        self.emit({"event": "halt", "round": round_no, "reason": reason, "file": self.rel(path)})
        result = self.result(round_no, HALT, merged, None, reason=reason, halt_file=self.rel(path))
        hint = halt_hint(self.wp_id, self.slug, reason, artifact["questions"])
        result.update(halt_details(artifact, hint))
        return result

    def result(
        self,
        round_no: int,
        loop_verdict: str,
        merged: Merged | None,
        scope: dict[str, Any] | None,
        **extra: Any,
    ) -> dict[str, Any]:
        block_at = self.mission().config.block_at
        path = self.round_dir(round_no) / "merged.json"
        written = self.rel(path) if path.exists() else None
        ids = (self.wp_id, self.slug, round_no)
        out = result_json(
            ids, loop_verdict, merged or Merged([]), scope or {}, block_at,
            (written, self.log_dir.name),
        )  # fmt: skip
        return {**out, **extra}
