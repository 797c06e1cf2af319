"""A sprint's options and state: what it runs, what runs now, and the mission as last read.

The parts of a sprint (`kitty.sprint.records`, `sprint.start`, `sprint.finish`
and the loop in `kitty.sprint.runner`) share this state; a sprint across machines
(`kitty.sprint.team`) overrides the hooks at the end.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kitty.adapters import eventlog, snapshots
from kitty.agents.clis import Backend, backend_for, model_for
from kitty.core.clock import format_at
from kitty.core.decide.steps import Context
from kitty.core.record import replace
from kitty.mission.workspace import Mission
from kitty.sprint import supervise
from kitty.sprint.live import LiveFile, live_path
from kitty.sprint.preflight import check_options, require_trust
from kitty.sprint.report import WPStats
from kitty.sprint.rules import plan as sprintplan
from kitty.sprint.rules import spend
from kitty.sprint.rules.plan import Options
from kitty.sprint.supervise import Job, Meter
from kitty.workflow.nextstep import context

Emit = Callable[[dict[str, Any]], None]
#: Read the mission again at least this often even when no file changed: decisions
#: that depend on time (a lease running out), a WP file edited in place.
REREAD = 5.0
#: Save the log's snapshot again once this much was appended since (bytes; a command
#: that reads once waits for 256 KiB).
SNAPSHOT_TAIL = 16 * 1024


def run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + f"-{os.getpid()}"


def now_text() -> str:
    return format_at(eventlog.now_us())


class SprintState:
    def __init__(self, repo: Path, mission: str | None, opts: Options, emit: Emit) -> None:
        check_options(opts)
        self.repo = repo
        named = Mission.open(repo, mission)  # resolves the name; reads nothing yet
        self.slug = named.slug
        self.watched = [
            *(named.dir / name for name in ("status.events.jsonl", "tasks", "lanes.json")),
            *(named.dir / name for name in ("issue-matrix.json", "issue-matrix.md", "meta.json")),
            named.project.config_path,
        ]
        self.opts = opts
        self.run_id = run_id()
        self.live = (
            None
            if opts.dry_run
            else LiveFile(live_path(repo / ".kittify" / "runs", self.slug), self.slug, self.run_id)
        )
        self.view = emit
        self.jobs: dict[str, Job] = {}
        self.halted: dict[str, str] = {}
        self.failures: dict[tuple[str, str], int] = {}
        #: Why a WP's last implement run failed for want of committed work (issue 41).
        self.failed_runs: dict[str, str] = {}
        self.retry: list[sprintplan.Retry] = []  # re-dispatched before anything else
        self.stats: dict[str, WPStats] = {}
        self.waits: dict[tuple[str, str], int] = {}  # back-offs per (wp, role)
        self.waiting: dict[str, float] = {}  # WPs waiting out a rate limit: until when
        self.stopped: str | None = None  # why no new run starts (the budget)
        self.turn = 0
        self.meter = Meter(opts.parallel)
        self.cached: tuple[Mission, tuple[Any, ...], float] | None = None
        self.versions: list[Any] = []  # the agent CLIs' versions, read by the pre-flight
        self.nothing_at: tuple[tuple[Any, ...], float] | None = None  # no work found then
        probe = self.mission()
        names = [*opts.implementers, *opts.reviewers]
        if not opts.dry_run:  # pre-flight: nothing is claimed or started when this refuses
            # Before backend_for: an untrusted template is refused, never validated first.
            require_trust(probe, names, bool(opts.review_panel))
        self.backends = {name: backend_for(name, probe.config.raw) for name in names}

    def backend(self, mission: Mission, agent: str) -> Backend:
        backend = self.backends.get(agent)
        if backend is None:
            if not self.opts.dry_run:
                require_trust(mission, [agent], bool(self.opts.review_panel))
            backend = backend_for(agent, mission.config.raw)
            self.backends[agent] = backend
        return backend

    def emit(self, event: dict[str, Any]) -> None:
        """Show `event`, and keep the web board's view of the running sprint up to date."""
        self.view(event)
        if self.live is not None:
            self.live.update(event, self.spent())

    def model_of(self, mission: Mission, agent: str, role: str) -> str | None:
        """--implementer-model / --reviewer-model, else agents.models.<agent>.<role>."""
        chosen = (
            self.opts.implementer_model
            if role == sprintplan.IMPLEMENT
            else self.opts.reviewer_model
        )
        return chosen or model_for(mission.config.raw, agent, role)

    # -- reading -------------------------------------------------------------
    def mission(self) -> Mission:
        """The mission, read again only when one of its files changed since the last read
        (or `REREAD` seconds passed). The stats are taken before reading, so a change
        made while reading is seen next time."""
        now = time.monotonic()
        key = self.files_key()
        if self.cached is not None:
            mission, seen, at = self.cached
            if seen == key and now - at < REREAD:
                return mission
        mission = Mission.open(self.repo, self.slug)
        if self.opts.max_cycles is not None:
            mission.__dict__["config"] = replace(mission.config, max_cycles=self.opts.max_cycles)
        # The log grows all through a sprint: keep the snapshot's unparsed tail short, so
        # each read (here, under the write lock, in the agents' kitty commands) is cheap.
        mission.__dict__["log_state"] = snapshots.read_log(
            mission.events_path, mission.cache_dir, resave_tail=SNAPSHOT_TAIL
        )
        self.cached = (mission, key, now)
        return mission

    def files_key(self) -> tuple[Any, ...]:
        return supervise.change_key(self.watched)

    def state_key(self) -> tuple[Any, ...]:
        """What a dispatch decision depends on: the files and this sprint's own state."""
        return (
            self.files_key(),
            frozenset(self.jobs),
            tuple(self.retry),
            frozenset(self.halted),
            self.waiting_now(),
        )

    def waiting_now(self) -> frozenset[str]:
        """The WPs still waiting out a rate limit."""
        now = time.monotonic()
        return frozenset(w for w, until in self.waiting.items() if until > now)

    def runs(self) -> list[dict[str, Any]]:
        """The record of every run this sprint saw end, with its WP."""
        return [
            {**record, "wp_id": wp_id}
            for wp_id, stats in self.stats.items()
            for record in stats.records
        ]

    def spent(self) -> dict[str, Any]:
        return spend.total(run["usage"] for run in self.runs())

    def ctx(self, mission: Mission) -> Context:
        return context(mission, "sprint", mission.board, eventlog.now_us())

    def reviewed_by(self) -> dict[str, list[str]]:
        """The reviewers that already reviewed each WP in this sprint."""
        return {w: stats.reviewers for w, stats in self.stats.items()}

    @property
    def log_dir(self) -> Path:
        return self.repo / ".kittify" / "runs" / self.run_id

    # -- hooks for a sprint shared across machines (kitty.sprint.team) -----
    finished_by: str | None = None

    def owns_claim(self, claim: dict[str, Any]) -> bool:
        """Whether a runtime claim belongs to this machine (adopt only those)."""
        return True

    def others_active(self) -> bool:
        """Whether to keep waiting when nothing is left to dispatch here."""
        return False

    def claim_finish(self) -> bool:
        """Whether this sprint accepts and merges (one machine does, when shared)."""
        return True

    def after_finish(self, result: dict[str, Any]) -> None:
        """Called with the accept/merge result before the summary is emitted."""
