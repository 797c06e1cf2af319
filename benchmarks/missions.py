"""Generated missions for the benchmarks (and the snapshot-cache equivalence test).

Two formats:

* `spec_kitty_mission`: what Spec Kitty 3.2.7 writes: WP files with its long
  front matter (history, branch strategy, ...), lifecycle envelopes
  (`WPCreated`, ...) and transitions/annotations with its real payloads
  (`policy_metadata` with `shell_pid`, the pre-review gate report, actor
  objects, review results with feedback paths). ~27 log lines per WP.
* `kitty_mission`: kitty's own leaner WP files; `add_history` appends ~20
  events per WP to a finalized log.

Everything is deterministic for a given seed.
"""

from __future__ import annotations

import json
import random
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

#: Microseconds since the epoch (2026-09-21): a 10,000-WP history (about 16 days of
#: events) still ends in the past, so kitty's hybrid clock writes after it.
CLOCK0 = 1_790_000_000_000_000
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def iso(us: int) -> str:
    return datetime.fromtimestamp(us / 1e6, tz=UTC).isoformat(timespec="microseconds")


def ulid(us: int, rng: random.Random) -> str:
    ms = us // 1000
    head = "".join(CROCKFORD[(ms >> (5 * i)) & 31] for i in range(9, -1, -1))
    return head + "".join(rng.choice(CROCKFORD) for _ in range(16))


def init_repo(root: Path, agents: str = "[claude, codex]") -> None:
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    (root / ".kittify").mkdir()
    (root / ".kittify" / "config.yaml").write_text(f"agents:\n  available: {agents}\n")


def _meta(slug: str, mission_id: str, title: str) -> str:
    return (
        json.dumps(
            {
                "created_at": iso(CLOCK0),
                "friendly_name": title,
                "mission_id": mission_id,
                "mission_slug": slug,
                "mission_type": "software-dev",
                "slug": slug,
                "target_branch": "main",
                "vcs": "git",
            },
            indent=2,
            sort_keys=True,
        )
        + "\n"
    )


def _deps(rng: random.Random, i: int, width: int = 20) -> list[str]:
    if i == 1:
        return []
    return sorted(
        {f"WP{rng.randint(max(1, i - width), i - 1):02d}" for _ in range(rng.randint(0, 3))}
    )


# -- Spec Kitty's format ---------------------------------------------------------


def _sk_wp_file(wp: str, i: int, deps: list[str], subtasks: list[str], slug: str) -> str:
    dep_lines = "".join(f"- {d}\n" for d in deps) if deps else ""
    return (
        "---\n"
        f"work_package_id: {wp}\n"
        f"title: Module {i}\n"
        f"dependencies:{' []' if not deps else ''}\n{dep_lines}"
        "requirement_refs:\n"
        f"- FR-{i:03d}\n"
        "- NFR-001\n"
        "planning_base_branch: main\n"
        "merge_target_branch: main\n"
        "branch_strategy: Planning artifacts for this mission were generated on main. During "
        "/spec-kitty.implement this WP may branch from a dependency-specific base, but "
        "completed changes must merge back into main unless the human explicitly redirects "
        "the landing branch.\n"
        f"base_branch: kitty/mission-{slug}\n"
        "base_commit: c6c08ff43789a8a0f864460a92fd0bc00764b605\n"
        f"created_at: '{iso(CLOCK0)}'\n"
        "subtasks:\n" + "".join(f"- {t}\n" for t in subtasks) + "history:\n"
        "- at: '2026-11-29T00:00:00Z'\n"
        "  actor: system\n"
        "  action: Prompt generated via /spec-kitty.tasks\n"
        f"authoritative_surface: src/mod{i}/core.py\n"
        "create_intent:\n"
        f"- src/mod{i}/core.py\n"
        "execution_mode: code_change\n"
        "owned_files:\n"
        f"- src/mod{i}/**\n"
        f"- tests/test_mod{i}.py\n"
        "tags: []\n"
        "tracker_refs: []\n"
        "---\n\n"
        f"# Work Package Prompt: {wp} – Module {i}\n\n"
        f"## Objectives\nImplement src/mod{i}/core.py.\n\n"
        "## Subtasks\n" + "".join(f"- [ ] {t}: part of module {i}\n" for t in subtasks) + "\n"
        "## Activity Log\n"
    )


class _SKLog:
    """Writes Spec Kitty-shaped lines with a monotonic clock."""

    def __init__(self, slug: str, mission_id: str, rng: random.Random) -> None:
        self.slug, self.mission_id, self.rng = slug, mission_id, rng
        self.clock = CLOCK0
        self.lines: list[str] = []

    def tick(self) -> int:
        self.clock += self.rng.randint(1, 5_000_000)
        return self.clock

    def _write(self, record: dict[str, Any]) -> None:
        self.lines.append(json.dumps(record, sort_keys=True))

    def envelope(self, kind: str, aggregate: str, payload: dict[str, Any]) -> None:
        at = self.tick()
        self._write(
            {
                "aggregate_id": aggregate,
                "aggregate_type": "WorkPackage" if aggregate.startswith("WP") else "Mission",
                "event_id": ulid(at, self.rng),
                "event_type": kind,
                "payload": dict(payload, mission_slug=self.slug, mission_number=None),
                "project_slug": None,
                "project_uuid": None,
                "schema_version": "5.0.0",
                "timestamp": iso(at),
            }
        )

    def transition(self, wp: str, frm: str, to: str, actor: Any, **fields: Any) -> None:
        at = self.tick()
        record = {
            "actor": actor,
            "at": iso(at),
            "event_id": ulid(at, self.rng),
            "evidence": None,
            "execution_mode": "worktree",
            "force": False,
            "from_lane": frm,
            "mission_id": self.mission_id,
            "mission_slug": self.slug,
            "policy_metadata": None,
            "reason": None,
            "review_ref": None,
            "to_lane": to,
            "wp_id": wp,
        }
        record.update(fields)
        self._write(record)

    def annotation(self, wp: str, actor: Any, delta: dict[str, Any]) -> None:
        at = self.tick()
        self._write(
            {
                "actor": actor,
                "at": iso(at),
                "delta": delta,
                "event_id": ulid(at, self.rng),
                "kind": "annotation",
                "wp_id": wp,
            }
        )


def _agent_delta(role: str, pid: int | None = None, agent: str | None = None) -> dict[str, Any]:
    delta: dict[str, Any] = {
        "agent_profile": "__resolved_profile_absent__",
        "agent_profile_version": "__resolved_profile_version_absent__",
        "model": "__resolved_model_absent__",
        "provider": "__resolved_provider_absent__",
        "role": role,
    }
    if agent:
        delta["agent"] = agent
    if pid is not None:
        delta.update(shell_pid=pid, shell_pid_created_at=f"{1795990907 + pid}.31")
    return delta


_GATE = {
    "pre_review_gate": {
        "affected_shard_count": 0,
        "block_enabled": False,
        "blocked": False,
        "force_bypassed": False,
        "matched_composite_dirs": [],
        "matched_shard_groups": [],
        "new_failure_count": 0,
        "new_failure_nodeids": [],
        "outcome": "no_coverage",
        "pre_existing_failure_count": 0,
        "reason": "gate authorities unavailable — unverified: tests.architectural."
        "_gate_coverage is not importable: No module named 'tests'",
        "run_state": "completed",
        "test_targets": [],
    }
}


def _sk_cycle(
    log: _SKLog, root: str, wp: str, stem: str, subtasks: list[str], cycle: int, end: str
) -> None:
    """One implement-review round; `end` is where it stops (a lane or a verdict)."""
    rng = log.rng
    impl, rev = ("claude", "codex") if rng.random() < 0.5 else ("codex", "claude")
    pid = rng.randint(1000, 60000)
    policy = {"agent": impl, "shell_pid": pid, "shell_pid_created_at": f"{pid}.31"}
    actor = {"model": None, "profile": None, "role": "implementer", "tool": impl}
    log.transition(wp, "planned", "claimed", actor, policy_metadata=policy)
    if end == "claimed":
        return
    log.transition(wp, "claimed", "in_progress", actor, policy_metadata=policy)
    log.annotation(wp, actor, _agent_delta("implementer", pid))
    if end == "in_progress":
        return
    log.annotation(wp, "user", {"subtasks": {subtasks[0]: "done"}})
    log.annotation(wp, "user", {"subtasks": dict.fromkeys(subtasks, "done")})
    note = f"Ready for review: {wp} implemented (round {cycle})"
    log.transition(wp, "in_progress", "for_review", impl, policy_metadata=_GATE, reason=note)
    log.annotation(wp, impl, {"note": note})
    if end == "for_review":
        return
    rpid = rng.randint(1000, 60000)
    ractor = {"model": None, "profile": None, "role": "reviewer", "tool": rev}
    rpolicy = {"agent": rev, "shell_pid": rpid, "shell_pid_created_at": f"{rpid}.01"}
    log.transition(
        wp,
        "for_review",
        "in_review",
        ractor,
        policy_metadata=rpolicy,
        reason="Started review via action command",
        review_ref="action-review-claim",
    )
    log.annotation(wp, ractor, _agent_delta("reviewer", rpid, rev))
    if end == "in_review":
        return
    ref = f"review-cycle://{log.slug}/{stem}/review-cycle-{cycle}.md"
    result = {
        "feedback_path": f"{root}/kitty-specs/{log.slug}/tasks/{stem}/review-cycle-{cycle}.md",
        "reference": ref,
        "reviewer": rev,
    }
    if end == "rejected":
        log.transition(
            wp,
            "in_review",
            "planned",
            "user",
            force=True,
            reason=f"backward rewind: in_review -> planned: {ref}",
            review_ref=ref,
            review_result=dict(result, verdict="changes_requested"),
        )
        log.annotation(
            wp,
            "user",
            {
                "release_runtime_claim": True,
                "review": {"actor": "", "at": "", "reason": "", "wp_id": ""},
                "subtasks": dict.fromkeys(subtasks, "planned"),
            },
        )
        return
    log.transition(
        wp,
        "in_review",
        "approved",
        ractor,
        evidence={"review": {"reference": ref, "reviewer": rev, "verdict": "approved"}},
        policy_metadata={"model": None, "profile": None, "tool": rev},
        reason="LGTM",
        review_ref=ref,
        review_result=dict(result, verdict="approved"),
    )
    log.annotation(wp, ractor, _agent_delta("reviewer"))
    log.annotation(wp, rev, {"note": "LGTM"})
    if end == "approved":
        return
    log.transition(
        wp,
        "approved",
        "done",
        "merge",
        evidence={
            "review": {"reference": f"lane-approved:{wp}", "reviewer": rev, "verdict": "approved"}
        },
        policy_metadata={"merge_phase": "lane_integrated", "target_branch": "main"},
        reason=f"Merged {wp} into main",
    )


def spec_kitty_mission(root: Path, n: int, seed: int = 13) -> str:
    """A Spec Kitty-written mission of `n` WPs, ~80 % done, ~28 log lines per WP; its slug."""
    rng = random.Random(seed)
    mission_id = ulid(CLOCK0, rng)
    slug = f"sk-bench-{n}-{mission_id[:8]}"
    mission = root / "kitty-specs" / slug
    (mission / "tasks").mkdir(parents=True)
    (mission / "meta.json").write_text(_meta(slug, mission_id, f"Spec Kitty benchmark {n}"))
    log = _SKLog(slug, mission_id, rng)
    log.envelope("MissionCreated", mission_id, {"friendly_name": slug, "wp_count": 0})
    log.envelope("TasksStarted", slug, {"actor": "spec-kitty agent mission finalize-tasks"})
    plan = []
    for i in range(1, n + 1):
        wp = f"WP{i:02d}"
        deps = _deps(rng, i)
        subtasks = [f"T{3 * i + k:03d}" for k in range(2)]
        stem = f"{wp}-module-{i}"
        (mission / "tasks" / f"{stem}.md").write_text(
            _sk_wp_file(wp, i, deps, subtasks, slug), encoding="utf-8"
        )
        log.envelope(
            "WPCreated",
            wp,
            {
                "actor": "spec-kitty agent mission finalize-tasks",
                "depends_on": deps,
                "wp_id": wp,
                "wp_path": f"kitty-specs/{slug}/tasks/{stem}.md",
                "wp_title": f"Module {i}",
            },
        )
        plan.append((wp, stem, subtasks))
    log.envelope("TasksCompleted", slug, {"actor": "finalize-tasks", "wp_count": n})
    for wp, _, _ in plan:
        log.transition(wp, "genesis", "planned", "finalize-tasks", reason="canonical bootstrap")
    done_until = int(n * 0.8)
    for index, (wp, stem, subtasks) in enumerate(plan):
        rejections = rng.choice((0, 1, 1, 2, 2, 3))
        if index < done_until:
            final = "done"
        elif index < done_until + n // 12:
            final = rng.choice(("claimed", "in_progress", "for_review", "in_review", "approved"))
        else:
            continue  # still planned
        for cycle in range(1, rejections + 1):
            _sk_cycle(log, str(root), wp, stem, subtasks, cycle, "rejected")
        _sk_cycle(log, str(root), wp, stem, subtasks, rejections + 1, final)
    (mission / "status.events.jsonl").write_text("\n".join(log.lines) + "\n", encoding="utf-8")
    return slug


# -- kitty's format ----------------------------------------------------------------

LIFECYCLE = [
    ("planned", "claimed"),
    ("claimed", "in_progress"),
    ("in_progress", "for_review"),
    ("for_review", "in_review"),
    ("in_review", "planned"),
    ("planned", "claimed"),
    ("claimed", "in_progress"),
    ("in_progress", "for_review"),
    ("for_review", "in_review"),
    ("in_review", "approved"),
]


def kitty_mission(root: Path, n: int, seed: int = 7, deps: bool = True) -> str:
    """kitty-written WP files for `n` WPs (not finalized). Returns the slug."""
    rng = random.Random(seed)
    slug = f"bench-{n}-01BENCH0"
    mission = root / "kitty-specs" / slug
    (mission / "tasks").mkdir(parents=True)
    (mission / "meta.json").write_text(_meta(slug, "01BENCH0000000000000000000", f"Bench {n}"))
    task = 1
    for i in range(1, n + 1):
        wp_deps = (
            sorted(
                {f"WP{rng.randint(max(1, i - 20), i - 1):04d}" for _ in range(rng.randint(0, 3))}
            )
            if deps and i > 1
            else []
        )
        subtasks = [f"T{task + k:05d}" for k in range(3)]
        task += 3
        owned = [f"src/mod{i:04d}/**", f"tests/test_mod{i:04d}.py"]
        front = (
            f"---\nwork_package_id: WP{i:04d}\ntitle: Module {i}\n"
            "dependencies:" + ("".join(f"\n- {d}" for d in wp_deps) if wp_deps else " []") + "\n"
            "subtasks:" + "".join(f"\n- {t}" for t in subtasks) + "\n"
            "owned_files:" + "".join(f"\n- '{o}'" for o in owned) + "\n"
            "execution_mode: code_change\n---\n\n"
            f"# Work Package Prompt: WP{i:04d} – Module {i}\n\n## Objectives\n\nBody text.\n"
        )
        (mission / "tasks" / f"WP{i:04d}-module-{i}.md").write_text(front)
    return slug


def add_history(mission: Path, n: int, seed: int = 7) -> int:
    """Append ~20 events per WP (up to two review cycles) to a finalized log.

    They start a second from now, 1 ms apart: after finalize's bootstrap events and,
    even at 10,000 WPs (about 200 s ahead), well inside the clock's plausible bound.
    """
    rng = random.Random(seed)
    lines = []
    clock = time.time_ns() // 1000 + 1_000_000
    for i in range(1, n + 1):
        wp = f"WP{i:04d}"
        steps = LIFECYCLE[: rng.randint(4, len(LIFECYCLE))]
        for frm, to in steps:
            clock += 1000
            # The reviewer is never the implementer (else replay flags a self-review).
            actor = "codex" if frm in ("for_review", "in_review") else "claude"
            lines.append(
                {
                    "actor": actor,
                    "at": iso(clock),
                    "event_id": f"E{clock}",
                    "evidence": None,
                    "execution_mode": "worktree",
                    "force": False,
                    "from_lane": frm,
                    "mission_id": "01BENCH0000000000000000000",
                    "mission_slug": mission.name,
                    "policy_metadata": {"agent": actor, "shell_pid": 1},
                    "reason": None,
                    "review_ref": None,
                    "review_result": None,
                    "to_lane": to,
                    "wp_id": wp,
                }
            )
            for _ in range(2):
                clock += 1000
                lines.append(
                    {
                        "actor": "claude",
                        "at": iso(clock),
                        "event_id": f"A{clock}",
                        "kind": "annotation",
                        "wp_id": wp,
                        "delta": {"note": f"step {to}", "model": "m"},
                    }
                )
    with (mission / "status.events.jsonl").open("a") as handle:
        for record in lines:
            handle.write(json.dumps(record, sort_keys=True) + "\n")
    return len(lines)
