"""Sprint reporting: per-WP statistics, the end summary and the dry-run plan.

The live board and the text of each event are rendered by the command
(`kitty/commands/sprint.py`, SprintView); this module builds the data.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any

from kitty.agents import grants
from kitty.agents.clis import MANUAL, Backend, Dispatch
from kitty.core.decide.steps import Queues
from kitty.mission.workspace import Mission
from kitty.mission.worktrees import lane_path
from kitty.sprint.rules.plan import IMPLEMENT, REVIEW
from kitty.workflow import actions


@dataclass
class WPStats:
    implementers: list[str] = field(default_factory=list)
    reviewers: list[str] = field(default_factory=list)
    seconds: float = 0.0
    runs: int = 0


def summary_rows(
    final: Mission,
    stats: dict[str, WPStats],
    halted: dict[str, str],
    failed_runs: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    """One row per WP for the `end` event: lane, cycles, who worked on it, for how long,
    and why its last implement run failed for want of committed work (`failed_run`)."""
    rows = []
    for wp_id in final.all_ids():
        st = final.board.wps.get(wp_id)
        wp_stats = stats.get(wp_id, WPStats())
        rows.append(
            {
                "wp_id": wp_id,
                "lane": st.lane if st else None,
                "review_cycles": st.review_cycles if st else 0,
                "implementers": sorted(set(wp_stats.implementers)),
                "reviewers": sorted(set(wp_stats.reviewers)),
                "agent_seconds": round(wp_stats.seconds, 1),
                "runs": wp_stats.runs,
                "halted": halted.get(wp_id),
                "failed_run": (failed_runs or {}).get(wp_id),
            }
        )
    return rows


def dry_run_order(queues: Queues, parallel: int) -> list[tuple[str, str]]:
    """(wp, role) of the first dispatches, in the order the sprint would start them."""
    order = queues.reviews + queues.fixes + queues.fresh
    return [(w, REVIEW if w in queues.reviews else IMPLEMENT) for w in order[: parallel * 4]]


def plan_entry(
    mission: Mission, wp_id: str, role: str, agent: str, backend: Backend, timeout: int
) -> dict[str, Any]:
    """What a dispatch would run: the claim command and the agent's exact command line."""
    wp = mission.wp(wp_id)
    lane_doc = next(
        (x for x in (mission.lanes_doc or {}).get("lanes", []) if wp_id in x["wp_ids"]),
        None,
    )
    workspace = lane_path(mission, lane_doc["lane_id"]) if lane_doc else mission.project.root
    prompt = actions.prompt_path(mission, wp_id, role)
    claim = (
        f"kitty agent action {role} {wp_id} --mission {mission.slug} --agent {shlex.quote(agent)}"
    )
    invocation = (
        None
        if backend.kind == MANUAL
        else backend.invocation(
            Dispatch(
                agent,
                role,
                f"<contents of {prompt}>",
                str(prompt),
                str(workspace),
                wp_id,
                mission.slug,
                str(mission.project.root),
                timeout,
                commands=grants.configured(mission.config.raw),
            )
        )
    )
    return {
        "wp_id": wp_id,
        "role": role,
        "agent": agent,
        "title": wp.title if wp else wp_id,
        "claim": claim,
        "command": ["manual"] if invocation is None else invocation.argv,
        # set over kitty's environment for the agent (opencode's permissions)
        "env": {} if invocation is None else dict(invocation.env),
        "available": backend.available(),
    }


def dry_run_event(
    mission: Mission, queues: Queues, plan: list[dict[str, Any]], parallel: int, arbiter: str
) -> dict[str, Any]:
    return {
        "event": "dry_run",
        "mission": mission.slug,
        "parallel": parallel,
        "first_wave": plan[:parallel],
        "queue": plan[parallel:],
        "arbiter": [{"wp_id": w, "policy": arbiter} for w in queues.capped],
        "lanes": (mission.lanes_doc or {}).get("lanes", []),
    }
