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
from kitty.agents.reports import NO_COST, READS
from kitty.core.decide.steps import Queues
from kitty.mission.workspace import Mission
from kitty.mission.worktrees import lane_path
from kitty.sprint.rules import spend
from kitty.sprint.rules.plan import IMPLEMENT, REVIEW
from kitty.workflow import actions


@dataclass
class WPStats:
    implementers: list[str] = field(default_factory=list)
    reviewers: list[str] = field(default_factory=list)
    seconds: float = 0.0
    runs: int = 0
    records: list[dict[str, Any]] = field(default_factory=list)  # each ended run's record


def summary_rows(
    final: Mission,
    stats: dict[str, WPStats],
    halted: dict[str, str],
    failed_runs: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    """One row per WP for the `end` event: lane, cycles, who worked on it, for how long,
    and why its last implement run failed for want of committed work (`failed_run`); every
    refused call, every agent error in the agent's words, tokens and cost, and the calls
    to a verification command its implementer was refused (`verify_refused`)."""
    rows = []
    for wp_id in final.all_ids():
        st = final.board.wps.get(wp_id)
        wp_stats = stats.get(wp_id, WPStats())
        records = wp_stats.records
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
                "denials": [d for r in records for d in r["denials"]],
                "verify_refused": [d for r in records for d in r.get("verify_refused", [])],
                "errors": [error_of(r) for r in records if r["error"]],
                "models": sorted({f"{r['role']}: {r['model']}" for r in records if r["model"]}),
                "usage": spend.total(r["usage"] for r in records),
            }
        )
    return rows


def error_of(record: dict[str, Any]) -> dict[str, Any]:
    """A run's error as the summary names it: who, in which role, what kind, in its words."""
    return {
        "agent": record["agent"],
        "role": record["role"],
        "kind": record["error_kind"],
        "error": record["error"],
    }


def usage_summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The sprint's spend: in all, and per role and per agent (where each CLI reports
    nothing, say so)."""
    return {
        "total": spend.total(r["usage"] for r in runs),
        "by_role": spend.grouped(runs, "role"),
        "by_agent": spend.grouped(runs, "agent"),
        "not_reported": sorted(
            {NO_COST[r["cli"]] for r in runs if r.get("cli") in NO_COST}
            | {f"{r['agent']} reports no usage" for r in runs if r.get("cli") not in READS}
        ),
    }


def dry_run_order(queues: Queues, parallel: int) -> list[tuple[str, str]]:
    """(wp, role) of the first dispatches, in the order the sprint would start them."""
    order = queues.reviews + queues.fixes + queues.fresh
    return [(w, REVIEW if w in queues.reviews else IMPLEMENT) for w in order[: parallel * 4]]


def plan_entry(
    mission: Mission, wp_id: str, role: str, agent: str, backend: Backend, timeout: int,
    model: str | None = None,
) -> dict[str, Any]:  # fmt: skip
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
                model=model,
            )
        )
    )
    return {
        "wp_id": wp_id,
        "role": role,
        "agent": agent,
        "title": wp.title if wp else wp_id,
        "model": model,
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
