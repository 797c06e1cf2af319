"""The review panel runner's footing: the mission it works on, trust, the WP's lanes
(claim, park, record a verdict) and agent processes. panel/runner.py runs the loop."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from kitty.core.log.state import as_dict
from kitty.core.record import replace
from kitty.errors import GuardRefused
from kitty.mission.workspace import Mission
from kitty.panel.procs import stamp, start_agent, wait_all
from kitty.panel.rules.data import Settings, parse_concurrency
from kitty.panel.rules.personas import catalogue
from kitty.panel.rules.rounds import PanelSettings

Emit = Callable[[dict[str, Any]], None]


def concurrency(env: dict[str, str] | None = None) -> int:
    """KITTY_REVIEW_CONCURRENCY from `env` (default: the process environment)."""
    source = env if env is not None else dict(os.environ)
    return parse_concurrency(source.get("KITTY_REVIEW_CONCURRENCY", "6"))


class PanelBase:
    def __init__(self, repo: Path, slug: str | None, wp_text: str, opts: Settings, emit: Emit):
        self.repo = repo
        mission = Mission.open(repo, slug)
        self.slug = mission.slug
        self.wp_id = mission.resolve_wp(wp_text)
        self.opts = opts
        self.emit = emit
        self.env_concurrency = concurrency()
        wp = mission.wp(self.wp_id)
        self.task_dir = mission.dir / "tasks" / (wp.stem if wp else self.wp_id)
        self.review_dir = self.task_dir / "review"
        self.log_dir = mission.project.kittify / "runs" / f"review-{self.wp_id}-{stamp()}"
        self.carry_errors: list[str] = []
        self.catalogue = catalogue(as_dict(mission.config.raw.get("review")).get("personas"))
        configured = Settings.from_config(mission.config.raw, mission.config.max_cycles)
        #: review.test_command comes from the repository's config (not --test-command).
        self.test_from_config = bool(opts.test_command) and (
            opts.test_command == configured.test_command
        )

    def require_trust(self, mission: Mission, agents: list[str | None]) -> None:
        """Commands from the repository's config run only when the user trusts them."""
        from kitty.adapters import trust

        keys = ["review.test_command"] if self.test_from_config else []
        # From the raw config, never through backend_for: nothing validates (or formats) an
        # untrusted template before this refuses.
        defined = trust.repo_commands(mission.config.raw)
        keys += [f"agents.commands.{n}" for n in dict.fromkeys(a for a in agents if a)]
        keys = [k for k in keys if k in defined or k == "review.test_command"]
        if "agents.commands" in defined and agents:
            keys.append("agents.commands")
        if keys:
            trust.require(mission.project.root, mission.config.raw, sorted(keys))

    # -- reading --------------------------------------------------------------------------------
    def mission(self) -> Mission:
        mission = Mission.open(self.repo, self.slug)
        # One counter: the panel's max_rounds is the mission's max_cycles for this run.
        # (A soft cap has no hard limit: it warns every soft_warn_rounds instead.)
        if self.opts.cap == "hard":
            mission.__dict__["config"] = replace(mission.config, max_cycles=self.opts.max_rounds)
        return mission

    def rules(self) -> PanelSettings:
        """The settings the rules read: the options, the WP, block_at, the concurrency."""
        block_at = self.mission().config.block_at
        return PanelSettings(self.opts, self.wp_id, block_at, self.env_concurrency)

    def rel(self, path: Path) -> str:
        return str(path.relative_to(self.repo))

    def round_dir(self, round_no: int) -> Path:
        return self.review_dir / f"round-{round_no}"

    def implementer(self, mission: Mission) -> str:
        st = mission.board.wps[self.wp_id]
        who = self.opts.implementer or st.implementer
        if not who:
            raise GuardRefused(
                f"{self.wp_id} has no implementer to send fixes to", "pass --implementer NAME"
            )
        return who

    def settings_json(self) -> dict[str, Any]:
        return asdict(self.opts)

    # -- processes ------------------------------------------------------------------------------
    def spawn(
        self,
        mission: Mission,
        who: tuple[str, str],
        prompt: str,
        prompt_file: Path,
        workspace: str,
        log_name: str,
        extra: dict[str, str],
    ) -> Any:
        """who = (agent, role): one fresh agent process, logged under .kittify/runs."""
        agent, role = who
        self.require_trust(mission, [agent])  # before backend_for validates the template
        return start_agent(
            mission,
            (agent, role, self.wp_id),
            prompt,
            (prompt_file, self.log_dir / f"{log_name}.log"),
            workspace,
            self.opts.timeout,
            extra,
        )

    def wait(self, runs: list[tuple[Any, Any]]) -> list[int]:
        return wait_all(runs, self.opts.timeout)

    # -- the WP's lanes and records ---------------------------------------------------------------
    def annotate(self, mission: Mission, delta: dict[str, Any]) -> None:
        mission.record(lambda board: [mission.annotation(self.wp_id, self.opts.runner, delta)])
