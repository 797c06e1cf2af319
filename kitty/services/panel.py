"""`kitty review run`: the review-fix loop of seeds 000-003 as one engine.

Each round runs every panel entry (a persona on an agent) as a fresh process on
the full base..head diff, in waves of at most KITTY_REVIEW_CONCURRENCY, merges
their files (REVIEW-LOOP.md §2), optionally has a contrarian challenge the
findings, and ends with a verdict: CONVERGED (approved), changes requested (the
implementer gets a fix dispatch, then `review.test_command`), or HALT (a
write-once artifact; the WP waits for an arbiter or `kitty review answer`).

Lanes: a round's verdict is recorded with the existing review path (review-cycle
file, cycle count), so status, next, the board and the sprint understand it.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kitty.adapters import contain
from kitty.adapters.files import atomic_write
from kitty.core import lanes
from kitty.core.findings import (
    Finding,
    Merged,
    Report,
    blocking,
    counts,
    merge,
    report_verdict,
)
from kitty.core.formats import read_report
from kitty.core.personas import DiffFacts, Roster, catalogue, select
from kitty.core.state import as_dict
from kitty.errors import GuardRefused, KittyError, NotFound, UsageError
from kitty.services import moves
from kitty.services.workspace import Mission

Emit = Callable[[dict[str, Any]], None]
RUNNER = "review-panel"
CONVERGED, CHANGES, HALT = "CONVERGED", "changes requested", "HALT"
HALT_OPTIONS = ["proceed-with-gaps", "replay", "hand-edit"]
MAX_TEST_ATTEMPTS = 3  # re-dispatches after a failing review.test_command, per round
MAX_BLOCKER_REDISPATCH = 2  # per round (seed 000's blocker_round cap)
QUESTIONS_PER_ASK = 4


def concurrency(env: dict[str, str] | None = None) -> int:
    raw = (env if env is not None else dict(os.environ)).get("KITTY_REVIEW_CONCURRENCY", "6")
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise UsageError(
            f"KITTY_REVIEW_CONCURRENCY must be a whole number >= 1, not {raw!r}",
            "unset it (default 6) or set e.g. KITTY_REVIEW_CONCURRENCY=4",
        )
    return value


def waves(entries: list[Any], size: int) -> list[list[Any]]:
    """Every entry, in order, at most `size` at a time; never truncated."""
    return [entries[i : i + size] for i in range(0, len(entries), size)]


def chunks(questions: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    return waves(questions, QUESTIONS_PER_ASK)


def stamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")


def blocker_problems(payload: dict[str, Any]) -> list[str]:
    """Seed 000's blocker shape: questions[{id, question, header, options[2..4]}]."""
    questions = payload.get("questions")
    if not isinstance(questions, list) or not questions:
        return ["questions: must be a non-empty list"]
    problems = []
    for i, q in enumerate(questions):
        if not isinstance(q, dict):
            problems.append(f"questions[{i}]: must be an object")
            continue
        for key in ("id", "question", "header"):
            if not isinstance(q.get(key), str) or not q[key].strip():
                problems.append(f"questions[{i}].{key}: missing")
        options = q.get("options")
        if not isinstance(options, list) or not 2 <= len(options) <= 4:
            problems.append(f"questions[{i}].options: needs 2 to 4 options")
        else:
            for j, o in enumerate(options):
                if not (isinstance(o, dict) and isinstance(o.get("label"), str)):
                    shape = json.dumps(o)[:60]
                    problems.append(
                        f"questions[{i}].options[{j}]: {shape} is not an object with a label "
                        '(each option is {"label": "...", "description": "..."})'
                    )
    return problems


@dataclass
class Settings:
    """review.* in .kittify/config.yaml, with command-line overrides."""

    panel: list[str] | None = None  # fixed personas; None: chosen from the diff
    agents: list[str] = field(default_factory=list)
    max_rounds: int = 3
    challenge: bool = False
    challenger: str | None = None
    test_command: list[str] | None = None
    cap: str = "hard"  # hard: HALT at max_rounds; soft: warn every soft_warn_rounds
    soft_warn_rounds: int = 5
    depth: str = "auto"
    timeout: int = 1800
    implementer: str | None = None
    runner: str = RUNNER

    @classmethod
    def from_config(cls, raw: dict[str, Any], max_cycles: int) -> Settings:
        review = as_dict(raw.get("review"))
        panel = review.get("panel")
        test = review.get("test_command")
        agents = review.get("panel_agents") or as_dict(raw.get("agents")).get("available") or []
        rounds = review.get("max_rounds", review.get("max_cycles", max_cycles))
        if not isinstance(rounds, int) or isinstance(rounds, bool) or rounds < 1:
            raise UsageError(
                "review.max_rounds must be a whole number >= 1",
                "for example review: {max_rounds: 5}",
            )
        return cls(
            panel=[str(p) for p in panel] if isinstance(panel, list) and panel else None,
            agents=[str(a) for a in agents],
            max_rounds=rounds,
            challenge=bool(review.get("challenge", False)),
            test_command=(shlex.split(test) if isinstance(test, str) else [str(t) for t in test])
            if test
            else None,
            cap="soft" if review.get("cap") == "soft" else "hard",
            soft_warn_rounds=int(review.get("soft_warn_rounds", 5)),
            depth=str(review.get("depth", "auto")),
        )


def panel_configured(raw: dict[str, Any]) -> bool:
    """The mission reviews with a panel: `review.panel` is set in the config."""
    return bool(as_dict(raw.get("review")).get("panel"))


@dataclass
class Entry:
    reviewer_id: str
    agent: str
    persona: str
    scope_kind: str
    paths: list[str]

    @property
    def name(self) -> str:
        return f"{self.persona}@{self.agent}"


class Halted(KittyError):
    """The loop stopped with a HALT verdict (exit 1); the result is attached."""

    code = "review_halt"

    def __init__(self, result: dict[str, Any]) -> None:
        super().__init__(
            f"HALT: {result['reason']} at round {result['round']} ({result['halt_file']})",
            result.get("hint", ""),
        )
        self.result = result


class Loop:
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

    # -- reading ----------------------------------------------------------------
    def mission(self) -> Mission:
        mission = Mission.open(self.repo, self.slug)
        # One counter: the panel's max_rounds is the mission's max_cycles for this run.
        # (A soft cap has no hard limit: it warns every soft_warn_rounds instead.)
        if self.opts.cap == "hard":
            mission.__dict__["config"] = replace(mission.config, max_cycles=self.opts.max_rounds)
        return mission

    def rel(self, path: Path) -> str:
        return str(path.relative_to(self.repo))

    def round_dir(self, round_no: int) -> Path:
        return self.review_dir / f"round-{round_no}"

    def scope(self, mission: Mission) -> dict[str, Any]:
        from kitty.adapters.git import Git
        from kitty.services.worktrees import existing_workspace

        st = mission.board.wps[self.wp_id]
        ws = existing_workspace(mission, self.wp_id)
        git = Git(mission.project.root, gitpython=True)
        head_ref = ws.branch if ws.branch and git.branch_exists(ws.branch) else "HEAD"
        base = str(st.scalars.get("base_commit") or "")
        if not base:
            target = str(mission.meta.get("target_branch") or "main")
            base = (
                git.run("merge-base", target, head_ref).strip()
                if git.branch_exists(target)
                else head_ref
            )
        head = git.sha(head_ref)
        diff = git.run("diff", f"{base}..{head}")
        files = [f for f in git.run("diff", "--name-only", f"{base}..{head}").splitlines() if f]
        return {
            "base": base,
            "branch": ws.branch or git.run("rev-parse", "--abbrev-ref", "HEAD").strip(),
            "head_sha": head,
            "pr_url": None,
            "files_changed": len(files),
            "files": files,
            "workspace": str(ws.path),
            "diff": diff,
        }

    # -- the plan -----------------------------------------------------------------
    def plan(
        self, mission: Mission, scope: dict[str, Any], round_no: int
    ) -> tuple[list[Entry], Roster]:
        implementer = self.implementer(mission)
        agents = [a for a in self.opts.agents if a != implementer]
        if not agents:
            raise UsageError(
                f"the panel needs a reviewer agent other than the implementer ({implementer})",
                "pass --agents codex,gemini (or set review.panel_agents)",
            )
        facts = DiffFacts.from_diff(
            scope["diff"], has_solutions=(Path(scope["workspace"]) / "docs" / "solutions").is_dir()
        )
        roster = select(self.catalogue, facts, round_no, self.opts.depth, self.opts.panel)
        entries = [
            Entry(persona, agents[i % len(agents)], persona, "diff", scope["files"])
            for i, persona in enumerate(roster.personas)
        ]
        return entries, roster

    def implementer(self, mission: Mission) -> str:
        st = mission.board.wps[self.wp_id]
        who = self.opts.implementer or st.implementer
        if not who:
            raise GuardRefused(
                f"{self.wp_id} has no implementer to send fixes to", "pass --implementer NAME"
            )
        return who

    # -- processes --------------------------------------------------------------------
    def spawn(
        self,
        mission: Mission,
        agent: str,
        role: str,
        prompt: str,
        prompt_file: Path,
        workspace: str,
        log_name: str,
        extra: dict[str, str],
    ) -> Any:
        from kitty.adapters.agentrun import AgentRun
        from kitty.adapters.agents import MANUAL, Dispatch, backend_for

        self.require_trust(mission, [agent])  # before backend_for validates the template
        backend = backend_for(agent, mission.config.raw)
        if backend.kind == MANUAL:
            raise UsageError(f"{agent} is a manual agent", "the panel needs agent CLIs")
        atomic_write(prompt_file, prompt)
        invocation = backend.invocation(
            Dispatch(
                agent,
                role,
                prompt,
                str(prompt_file),
                workspace,
                self.wp_id,
                self.slug,
                str(mission.project.root),
                self.opts.timeout,
                extra,
            )
        )
        log_path = contain.check(self.log_dir / f"{log_name}.log")  # `.kittify/runs` symlink
        self.log_dir.mkdir(parents=True, exist_ok=True)
        contain.check_final(log_path)
        log = log_path.open("a", encoding="utf-8")
        log.write(f"# command: {shlex.join(invocation.argv)}\n# cwd: {invocation.cwd}\n")
        log.flush()
        return AgentRun(invocation, agent, log), log

    def wait(self, runs: list[tuple[Any, Any]]) -> list[int]:
        deadline = time.monotonic() + self.opts.timeout
        codes: list[int | None] = [None] * len(runs)
        while any(c is None for c in codes):
            for i, (run, _) in enumerate(runs):
                if codes[i] is None:
                    codes[i] = run.poll()
            if time.monotonic() > deadline:
                for i, (run, _) in enumerate(runs):
                    if codes[i] is None:
                        run.kill()
                        codes[i] = -9
            time.sleep(0.05)
        for _, log in runs:
            log.close()
        return [int(c if c is not None else -1) for c in codes]

    # -- one round ------------------------------------------------------------------------
    def review_round(
        self, round_no: int, prior: Merged | None
    ) -> tuple[Merged, dict[str, Any], list[Entry], Roster]:
        mission = self.mission()
        self.claim_review(mission)
        mission = self.mission()
        scope = self.scope(mission)
        entries, roster = self.plan(mission, scope, round_no)
        rdir = contain.check(self.round_dir(round_no))
        rdir.mkdir(parents=True, exist_ok=True)
        plan = {
            "fan_out": [asdict(e) for e in entries],
            "max_rounds": self.opts.max_rounds,
            "rationale": "lite roster (small, low-risk diff)"
            if roster.lite
            else "; ".join(f"{k}: {v}" for k, v in roster.reasons.items()),
        }
        atomic_write(rdir / "plan.json", json.dumps(plan, indent=2) + "\n")
        self.annotate(
            mission,
            {
                "review_round": round_no,
                "note": f"review panel round {round_no}: {len(entries)} reviewer(s)",
            },
        )
        size = self.env_concurrency
        reports: list[Report] = []
        failures: list[str] = []
        from kitty.services.lanecheck import changes, fingerprint

        workspace = Path(scope["workspace"])
        before = fingerprint(workspace)  # reviewers are read-only (seed 002's mutation check)
        for number, wave in enumerate(waves(entries, size), 1):
            self.emit(
                {
                    "event": "wave",
                    "round": round_no,
                    "wave": number,
                    "reviewers": [e.reviewer_id for e in wave],
                }
            )
            runs = []
            for entry in wave:
                out = rdir / f"{entry.reviewer_id}.json"
                prompt = self.reviewer_prompt(mission, entry, scope, round_no, out, prior)
                runs.append(
                    self.spawn(
                        mission,
                        entry.agent,
                        "review",
                        prompt,
                        rdir / f"{entry.reviewer_id}.prompt.md",
                        scope["workspace"],
                        f"r{round_no}-{entry.reviewer_id}",
                        {
                            "findings_file": str(out),
                            "persona": entry.persona,
                            "round": str(round_no),
                        },
                    )
                )
            codes = self.wait(runs)
            for entry, code in zip(wave, codes, strict=True):
                out = rdir / f"{entry.reviewer_id}.json"
                try:
                    if code != 0:
                        raise KittyError(f"exit {code}")
                    if not out.is_file():
                        raise KittyError("wrote no findings file")
                    report = read_report(
                        self.rel(out), out.read_text(encoding="utf-8"), None, entry.name
                    )
                    reports.append(
                        replace(
                            report,
                            reviewer=entry.name,
                            findings=[replace(f, reviewers=[entry.name]) for f in report.findings],
                        )
                    )
                except KittyError as exc:
                    failures.append(f"{entry.reviewer_id} ({entry.agent}): {exc.message}")
        changed = changes(workspace, before) if before else None
        if changed:
            names = ", ".join(e.reviewer_id for e in entries)
            failures.append(
                f"the lane changed during review round {round_no} ({names}): {changed}; "
                "nothing is approved"
            )
        if failures:
            raise _ReviewerFailed(failures)
        return merge(reports, round_no), scope, entries, roster

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

    # -- challenge ------------------------------------------------------------------------
    def challenge(
        self, round_no: int, merged: Merged, entries: list[Entry], scope: dict[str, Any]
    ) -> None:
        targets = [f for f in merged.findings if f.validity == "unchallenged"]
        if not targets:
            return
        mission = self.mission()
        implementer = self.implementer(mission)
        agent = self.opts.challenger or next(
            (a for a in self.opts.agents if a != implementer), None
        )
        if agent is None or agent == implementer:
            raise UsageError(
                "the challenge needs an agent other than the implementer", "pass --challenger NAME"
            )
        rdir = self.round_dir(round_no)
        out = rdir / "challenge.json"
        lines = [
            f"# Challenge review findings of {self.wp_id} (round {round_no})",
            "",
            f"Mission: --mission {self.slug}",
            "You are the contrarian. For each finding below, read the code at the cited",
            "location and decide: VALID (the problem exists; make the required fix concrete)",
            "or INVALID (cite the exact path:line that disproves it; without one it stays VALID).",
            f"Round: {round_no}",
            f"Write your verdicts to: {out}",
            'as {"verdicts": [{"id": "RC<round>-<n>", "validity": "VALID|INVALID", '
            '"evidence": "path:line ...", "fix": "..."}]}',
            "",
        ]
        for f in targets:
            lines += [
                f"### {f.rc_id}: {f.title}",
                f"**Severity:** {f.severity}",
                f"**File:** {f.location}",
                f"**Finding:** {f.detail}",
                f"**Required fix:** {f.suggested_fix or '(none given)'}",
                "",
            ]
        lines += _handoff("contrarian", "the review panel")
        run = self.spawn(
            mission,
            agent,
            "review",
            "\n".join(lines),
            rdir / "challenge.prompt.md",
            scope["workspace"],
            f"r{round_no}-challenge",
            {"findings_file": str(out), "persona": "contrarian", "round": str(round_no)},
        )
        (code,) = self.wait([run])
        try:
            data = (
                json.loads(out.read_text(encoding="utf-8")) if code == 0 and out.is_file() else None
            )
        except ValueError:
            data = None
        if not isinstance(data, dict) or not isinstance(data.get("verdicts"), list):
            raise _ReviewerFailed([f"challenger {agent}: no valid {out.name}"])
        by_id = {f.rc_id: f for f in merged.findings}
        for verdict in data["verdicts"]:
            if not isinstance(verdict, dict) or verdict.get("id") not in by_id:
                continue
            f = by_id[verdict["id"]]
            validity = str(verdict.get("validity", "")).upper()
            evidence = str(verdict.get("evidence") or "")
            from kitty.core.findings import _challenge_rule

            if validity == "INVALID":
                checked = _challenge_rule(
                    replace(f, validity="INVALID", validity_evidence=evidence)
                )
                f.validity, f.validity_evidence = checked.validity, checked.validity_evidence
            elif validity == "VALID":
                f.validity = "VALID"
                if verdict.get("fix"):
                    f.suggested_fix = str(verdict["fix"])
            f.reviewers = (
                [*f.reviewers, f"contrarian@{agent}"]
                if f"contrarian@{agent}" not in f.reviewers
                else f.reviewers
            )

    # -- the loop -----------------------------------------------------------------------
    def run(self, start_round: int = 1, warn_at: int | None = None) -> dict[str, Any]:
        mission = self.mission()
        st = mission.board.wps.get(self.wp_id)
        if st is None or st.lane is None:
            raise NotFound(f"{self.wp_id} has no state", f"kitty finalize --mission {self.slug}")
        # Pre-flight: an untrusted repo-defined command refuses the run before anything starts.
        self.require_trust(
            mission, [*self.opts.agents, self.opts.challenger, self.opts.implementer]
        )
        if start_round == 1:
            self.fresh_start(mission)
        warn_at = warn_at or self.opts.soft_warn_rounds
        prior: Merged | None = None
        round_no = start_round
        while True:
            try:
                merged, scope, entries, _ = self.review_round(round_no, prior)
                if self.opts.challenge:
                    self.challenge(round_no, merged, entries, scope)
            except _ReviewerFailed as exc:
                return self.halt(round_no, "reviewer_failed", None, context="; ".join(exc.failures))
            block_at = self.mission().config.block_at
            blockers = blocking(merged.findings, block_at)
            self.write_merged(round_no, merged, scope, blockers)
            if not blockers:
                return self.converge(round_no, merged, scope)
            hard_stop = self.opts.cap == "hard" and round_no >= self.opts.max_rounds
            soft_stop = self.opts.cap == "soft" and round_no >= warn_at
            result = self.reject(round_no, merged)
            if hard_stop or soft_stop:
                return self.halt(
                    round_no,
                    "max_rounds" if hard_stop else "soft_warn",
                    merged,
                    extra={"warn_at": warn_at},
                )
            outcome = self.fix(
                round_no, merged, answers=None, blocker_round=0, previous=result,
                errors=self.carry_errors,
            )  # fmt: skip
            if outcome is not None:
                return outcome
            prior = merged
            round_no += 1

    def fresh_start(self, mission: Mission) -> None:
        """A new run starts at round 1; files of earlier runs are kept for audit only."""
        st = mission.board.wps[self.wp_id]
        old = sorted(self.review_dir.glob("round-*")) if self.review_dir.is_dir() else []
        if old:
            archive = contain.check(self.review_dir / f"archive-{stamp()}")
            archive.mkdir(parents=True)
            for path in old:
                path.rename(archive / path.name)
        if st.scalars.get("review_halt"):
            self.annotate(
                mission, {"review_halt": "", "note": "review panel resumed: fresh round 1"}
            )
            mission = self.mission()
            if mission.board.lane(self.wp_id) in (lanes.PLANNED, lanes.IN_PROGRESS):
                self.force_move(mission, lanes.FOR_REVIEW, "review panel resumed after HALT")
        atomic_write(
            self.review_dir / "run.json", json.dumps(self.settings_json(), indent=2) + "\n"
        )

    def settings_json(self) -> dict[str, Any]:
        return asdict(self.opts)

    def write_merged(
        self, round_no: int, merged: Merged, scope: dict[str, Any], blockers: list[Finding]
    ) -> None:
        block_at = self.mission().config.block_at
        data = {
            "round": round_no,
            "scope": {k: v for k, v in scope.items() if k not in ("diff", "workspace")},
            "generated_at": int(time.time()),
            "reviewers": merged.reviewers,
            "verdict": report_verdict(merged, block_at),
            "block_at": block_at,
            "blocking": [f.rc_id for f in blockers],
            "findings": [f.to_json() for f in merged.findings],
            "pre_existing_findings": [f.to_json() for f in merged.pre_existing],
            "suppressed": [f.to_json() for f in merged.suppressed],
            "suppressed_by_anchor": merged.suppressed_by_anchor,
            "testing_gaps": merged.testing_gaps,
            "residual_risks": merged.residual_risks,
        }
        atomic_write(self.round_dir(round_no) / "merged.json", json.dumps(data, indent=2) + "\n")

    def converge(self, round_no: int, merged: Merged, scope: dict[str, Any]) -> dict[str, Any]:
        from kitty.services.reviews import record_verdict

        mission = self.mission()
        recorded = record_verdict(
            mission,
            self.wp_id,
            self.opts.runner,
            merged,
            round_no,
            f" (review panel: CONVERGED at round {round_no})",
            panel=True,
        )
        self.annotate(self.mission(), {"review_round": round_no, "review_halt": ""})
        self.emit({"event": "converged", "round": round_no})
        return self.result(round_no, CONVERGED, merged, scope, recorded=recorded)

    def reject(self, round_no: int, merged: Merged) -> dict[str, Any]:
        from kitty.services.reviews import record_verdict

        recorded = record_verdict(
            self.mission(),
            self.wp_id,
            self.opts.runner,
            merged,
            round_no,
            f" (review panel round {round_no})",
            panel=True,
        )
        self.emit(
            {
                "event": "changes_requested",
                "round": round_no,
                "blocking": recorded["blocking"],
                "review": recorded.get("review_ref"),
            }
        )
        return recorded

    # -- fixing ------------------------------------------------------------------------
    def fix(
        self,
        round_no: int,
        merged: Merged | None,
        answers: list[dict[str, Any]] | None,
        blocker_round: int,
        previous: dict[str, Any] | None = None,
        context: str = "",
        errors: list[str] | None = None,
    ) -> dict[str, Any] | None:
        """Dispatch the implementer (and the tests) until the WP is back for review, or HALT."""
        from kitty.services import actions

        test_failures = 0
        test_output = ""
        errors_remaining = list(errors or [])
        while True:
            mission = self.mission()
            implementer = self.implementer(mission)
            lane = mission.board.lane(self.wp_id)
            if lane in (lanes.FOR_REVIEW, lanes.IN_REVIEW):
                # Failing tests are not a review verdict: back to the implementer without
                # passing through a rejection (no cycle is counted).
                self.unreview()
                moves.move_task(
                    self.mission(),
                    self.wp_id,
                    lanes.IN_PROGRESS,
                    agent=implementer,
                    force=True,
                    note=f"review panel: tests failing after the fix "
                    f"(attempt {test_failures} of {MAX_TEST_ATTEMPTS})",
                )
            claimed = actions.implement(self.mission(), self.wp_id, implementer)
            rdir = contain.check(self.round_dir(round_no))
            rdir.mkdir(parents=True, exist_ok=True)
            attempt = len(list(rdir.glob("fix-*.prompt.md"))) + 1
            ret = rdir / f"fix-{attempt}.return.json"
            base_prompt = Path(claimed["prompt"]).read_text(encoding="utf-8")
            prompt = (
                base_prompt
                + "\n"
                + "\n".join(
                    self.fix_section(round_no, ret, answers, context, errors_remaining, test_output)
                )
            )
            workspace = claimed["workspace"]
            head_before = _git_state(workspace)
            run = self.spawn(
                mission,
                implementer,
                "implement",
                prompt,
                rdir / f"fix-{attempt}.prompt.md",
                workspace,
                f"r{round_no}-fix-{attempt}",
                {
                    "round": str(round_no),
                    "findings_file": str(rdir / "merged.json"),
                    "return_file": str(ret),
                },
            )
            (code,) = self.wait([run])
            payload = _read_json(ret)
            self.emit(
                {
                    "event": "fix",
                    "round": round_no,
                    "attempt": attempt,
                    "exit": code,
                    "status": payload.get("status"),
                }
            )
            if payload.get("status") == "blocker":
                edited = _git_state(workspace) != head_before
                problems = blocker_problems(payload)
                if edited:
                    problems.append("the fix made edits and returned a blocker")
                self.park(f"blocker from {implementer}")
                if problems:
                    return self.halt(
                        round_no,
                        "blocker_malformed",
                        merged,
                        context="; ".join(problems),
                        payload=payload,
                    )
                blocker_file = self.review_dir / f"blocker-r{round_no}-{stamp()}.json"
                _write_once(
                    blocker_file, {"round": round_no, "blocker_round": blocker_round, **payload}
                )
                return self.halt(
                    round_no,
                    "blocker",
                    merged,
                    payload=payload,
                    extra={"blocker_file": self.rel(blocker_file), "blocker_round": blocker_round},
                )
            errors_remaining = [str(e) for e in payload.get("errors_remaining") or []]
            # gate_status "errors": what is left feeds the next fix dispatch (seed 000)
            self.carry_errors = errors_remaining if payload.get("gate_status") == "errors" else []
            lane = self.mission().board.lane(self.wp_id)
            if lane != lanes.FOR_REVIEW:
                self.park(f"the fix by {implementer} left {self.wp_id} in {lane}")
                return self.halt(
                    round_no,
                    "fix_failed",
                    merged,
                    context=f"{implementer} exited {code} and left {self.wp_id} "
                    f"in {lane}; log: {self.log_dir}",
                )
            if not self.opts.test_command:
                return None
            self.require_trust(self.mission(), [])
            done = subprocess.run(
                self.opts.test_command, cwd=workspace, capture_output=True, text=True, check=False
            )
            self.emit({"event": "tests", "round": round_no, "exit": done.returncode})
            if done.returncode == 0:
                return None
            test_failures += 1
            test_output = (
                f"$ {shlex.join(self.opts.test_command)}\nexit {done.returncode}\n"
                + (done.stdout + done.stderr)[-4000:]
            )
            if test_failures > MAX_TEST_ATTEMPTS:
                self.park("tests failing")
                return self.halt(
                    round_no,
                    "tests_failing",
                    merged,
                    context=f"`{shlex.join(self.opts.test_command)}` failed "
                    f"{test_failures} times:\n{test_output}",
                )

    def fix_section(
        self,
        round_no: int,
        ret: Path,
        answers: list[dict[str, Any]] | None,
        context: str,
        errors: list[str],
        test_output: str,
    ) -> list[str]:
        merged_path = self.round_dir(round_no) / "merged.json"
        lines = [
            f"## Review panel fix (round {round_no})",
            "",
            f"Round: {round_no}",
            "Fix every blocking finding listed in the merged findings file:",
            f"Findings: {merged_path}",
            "Input: "
            + json.dumps(
                {
                    "mode": "fix",
                    "findings_path": self.rel(merged_path),
                    "wp": self.wp_id,
                    "round": round_no,
                }
            ),
            f"Fix return file: {ret}",
            "When you finish, write to the fix return file:",
            '{"status": "done", "gate_status": "ok|errors", "errors_remaining": [], '
            '"questions": [], "context": "what you did"}',
            "If you cannot fix it without a decision from a human, make NO edits and write",
            '{"status": "blocker", "questions": [{"id": "q1", "header": "short", "question": '
            '"...", "options": [{"label": "A", "description": "..."}, {"label": "B", '
            '"description": "..."}]}], "context": "what you found"} (2 to 4 options each).',
        ]
        if errors:
            lines += ["", "## Errors remaining from the previous fix", *[f"- {e}" for e in errors]]
        if test_output:
            lines += ["", "## Tests still failing (review.test_command)", "```", test_output, "```"]
        if answers:
            lines += ["", "## User answers (from blocker bridge)", json.dumps(answers, indent=2)]
        if context:
            lines += ["", "## Context from prior dispatch", context]
        return [*lines, "", *_handoff("implementer", "the review panel")]

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

    # -- HALT -----------------------------------------------------------------------------
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
        questions = (payload or {}).get("questions") or []
        artifact = {
            "wp_id": self.wp_id,
            "mission": self.slug,
            "round": round_no,
            "reason": reason,
            "findings": [f.to_json() for f in findings],
            "counts": counts(blocking(findings, mission.config.block_at)),
            "questions": questions if isinstance(questions, list) else [],
            "context": context or (payload or {}).get("context") or "",
            "options": ["continue", "halt", "abort"] if reason == "soft_warn" else HALT_OPTIONS,
            "settings": self.settings_json(),
            **(extra or {}),
        }
        path = self.task_dir / f"review-halt-{round_no}-{stamp()}.json"
        _write_once(path, artifact)
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
        result["questions"] = artifact["questions"]
        result["context"] = artifact["context"]
        result["question_chunks"] = chunks(artifact["questions"]) if artifact["questions"] else []
        result["hint"] = halt_hint(self.wp_id, self.slug, reason, mission, artifact["questions"])
        return result

    def result(
        self,
        round_no: int,
        loop_verdict: str,
        merged: Merged | None,
        scope: dict[str, Any] | None,
        **extra: Any,
    ) -> dict[str, Any]:
        merged = merged or Merged([])
        block_at = self.mission().config.block_at
        findings = [f.to_json() for f in merged.findings]
        path = self.round_dir(round_no) / "merged.json"
        scope = scope or {}
        return {
            "status": "complete" if loop_verdict != HALT or merged.findings else "failed",
            "verdict": report_verdict(merged, block_at),
            "mutation_policy": "report-only",
            "commit_authorization": "missing",
            "scope": {
                k: scope.get(k) for k in ("base", "branch", "head_sha", "pr_url", "files_changed")
            },
            "intent": f"{self.wp_id} of mission {self.slug}",
            "intent_confidence": "explicit",
            "reviewers": merged.reviewers,
            "findings": findings,
            "actionable_findings": [f.to_json() for f in merged.findings if f.actionable],
            "triage_groups": _triage(merged.findings),
            "pre_existing_findings": [f.to_json() for f in merged.pre_existing],
            "requirements_completeness": None,
            "learnings": [],
            "agent_native_gaps": [],
            "deployment_notes": [],
            "residual_risks": merged.residual_risks,
            "testing_gaps": merged.testing_gaps,
            "coverage": {
                "suppressed_by_anchor": merged.suppressed_by_anchor,
                "verification_evidence": {
                    "status": "not-produced",
                    "closeout_verdict": "not-run",
                    "reason_code": "no-targeted-command-executed",
                    "checks": [],
                    "limitations": [],
                },
            },
            "artifact_path": self.rel(path) if path.exists() else None,
            "artifact_write_status": "written" if path.exists() else "unavailable",
            "run_id": self.log_dir.name,
            "wp_id": self.wp_id,
            "mission": self.slug,
            "round": round_no,
            "loop_verdict": loop_verdict,
            **extra,
        }

    def annotate(self, mission: Mission, delta: dict[str, Any]) -> None:
        mission.record(lambda board: [mission.annotation(self.wp_id, self.opts.runner, delta)])

    def reviewer_prompt(
        self,
        mission: Mission,
        entry: Entry,
        scope: dict[str, Any],
        round_no: int,
        out: Path,
        prior: Merged | None,
    ) -> str:
        persona = self.catalogue[entry.persona]
        lines = [
            f"# Panel review {self.wp_id} as {entry.persona}",
            "",
            f"Mission: --mission {self.slug}",
            f"Persona: {entry.persona}",
            f"Round: {round_no}",
            f"Scope: {scope['base']}..{scope['head_sha']} (the full diff, every round)",
            f"Workspace: {scope['workspace']}",
            f"Write your findings to: {out}",
            "",
            f"## Your focus: {persona.focus}",
            "",
            persona.prompt,
            "",
            "## How to report",
            f"Run `git diff {scope['base']}..{scope['head_sha']}` and read the changed files:",
            *[f"- {p}" for p in scope["files"]],
            "",
            "Write one JSON object to the findings file (schema: `kitty review schema`):",
            f'{{"reviewer": "{entry.name}", "findings": [{{"severity": "P0-P3", "kind": '
            f'"{entry.persona}", "location": "path:line", "signature": "stable-key", "title": '
            '"...", "detail": "...", "suggested_fix": "...", "confidence": 75, '
            '"first_evidence": "the quoted line"}], "residual_risks": [], "testing_gaps": []}',
            "An empty findings list means you found nothing. Do not edit any file, do not move "
            "the work package: the panel records the verdict.",
        ]
        if entry.persona == "previous-comments" and prior is not None:
            lines += [
                "",
                "## Previous round's findings",
                *[f"- {f.rc_id} [{f.severity}] {f.location}: {f.title}" for f in prior.findings],
            ]
        return "\n".join([*lines, "", *_handoff(entry.name, "the review panel")]) + "\n"


class _ReviewerFailed(Exception):
    def __init__(self, failures: list[str]) -> None:
        super().__init__("; ".join(failures))
        self.failures = failures


def _handoff(sender: str, receiver: str) -> list[str]:
    return [
        "## Handoff",
        "End your output with this block:",
        "--- AGENT HANDOFF ---",
        f"From:     {sender}",
        f"To:       {receiver}",
        "Status:   complete | blocked",
        "Branch:   <branch>",
        "Done:",
        "  - <key action>",
        "Decisions:",
        "  - <decision + rationale, or none>",
        "Findings:",
        "  - <id> - <severity> - <one line> - VALID | INVALID",
        "Open:",
        "  - <item + owner, or none>",
        "Pass forward:",
        "  <2-3 sentences for the next agent>",
        "--- END HANDOFF ---",
    ]


def _triage(findings: list[Finding]) -> list[dict[str, Any]]:
    groups: dict[str, list[int]] = {}
    for f in findings:
        groups.setdefault(f.path, []).append(f.number)
    if len(groups) < 2:
        return []
    return [
        {
            "title": path,
            "findings": nums,
            "context": f"findings in {path}",
            "preferred_resolution": "fix together",
            "why": "same file",
        }
        for path, nums in groups.items()
    ]


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_once(path: Path, data: dict[str, Any]) -> None:
    contain.check(path)  # "x" never follows a final symlink; this covers the folders
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("x", encoding="utf-8") as fh:
        fh.write(json.dumps(data, indent=2) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def _git_state(workspace: str) -> str:
    from kitty.adapters.git import Git

    git = Git(Path(workspace))
    return (
        git.status("rev-parse", "HEAD")[1].strip() + "\n" + git.status("status", "--porcelain")[1]
    )


def answer_example(wp_id: str, slug: str, questions: list[Any]) -> str:
    """A runnable `kitty review answer` for the first question's first option."""
    for q in questions:
        options = q.get("options") if isinstance(q, dict) else None
        for o in options if isinstance(options, list) else []:
            if isinstance(o, dict) and isinstance(o.get("label"), str):
                pair = shlex.quote(f"{q.get('id')}={o['label']}")
                return f"kitty review answer {wp_id} --mission {slug} --answer {pair}"
    return f"kitty review answer {wp_id} --mission {slug}"


def halt_hint(
    wp_id: str, slug: str, reason: str, mission: Mission, questions: list[Any] | None = None
) -> str:
    if reason == "blocker":
        return (
            "answer each question (--answer ID=LABEL, repeatable), for example: "
            + answer_example(wp_id, slug, questions or [])
        )
    if reason == "soft_warn":
        return f"continue one more round: kitty review answer {wp_id} --mission {slug} --continue"
    return (
        f"proceed-with-gaps: kitty agent tasks move-task {wp_id} --mission {slug} --to approved "
        f'--force --note "Arbiter decision: <why>"; replay or hand-edit, then: '
        f"kitty review run {wp_id} --mission {slug}"
    )


def load_merged(path: Path) -> Merged:
    """A round's merged.json back as findings (for HALT artifacts after a resume)."""
    data = _read_json(path)
    if not data.get("findings"):
        return Merged([], reviewers=list(data.get("reviewers") or []))
    report = read_report(str(path), json.dumps({"reviewer": "panel", "findings": data["findings"]}))
    findings = report.findings
    for f, raw in zip(findings, data["findings"], strict=True):
        f.number, f.rc_id = int(raw.get("#") or 0), raw.get("rc_id")
        f.reviewers = list(raw.get("reviewers") or f.reviewers)
    return Merged(findings, reviewers=list(data.get("reviewers") or []))


def current_halt(mission: Mission, wp_id: str) -> tuple[Path, dict[str, Any]]:
    st = mission.board.wps.get(wp_id)
    ref = str((st.scalars.get("review_halt") if st else "") or "")
    if not ref or (st and st.lane not in (lanes.PLANNED, lanes.IN_PROGRESS)):
        raise GuardRefused(
            f"{wp_id} has no open review panel HALT", f"see `kitty review show {wp_id}`"
        )
    path = mission.project.root / ref
    data = _read_json(path)
    if not data:
        raise NotFound(f"the HALT file {ref} is missing or unreadable", "run the panel again")
    return path, data


def answer(
    repo: Path,
    slug: str | None,
    wp_text: str,
    given: dict[str, str],
    notes: dict[str, str],
    keep_going: bool,
    emit: Emit,
    abort: bool = False,
    actor: str | None = None,
) -> dict[str, Any]:
    """Record answers to a blocker (or continue after a soft warning) and resume the loop;
    `actor` (--agent) answers and runs the rest of the panel, else whoever ran it."""
    mission = Mission.open(repo, slug)
    wp_id = mission.resolve_wp(wp_text)
    path, halt = current_halt(mission, wp_id)
    settings = Settings(
        **{k: v for k, v in halt["settings"].items() if k in Settings.__dataclass_fields__}
    )
    if actor:
        settings.runner = actor
    loop = Loop(repo, mission.slug, wp_id, settings, emit)
    round_no = int(halt["round"])
    reason = halt["reason"]
    merged = load_merged(loop.round_dir(round_no) / "merged.json")
    if reason == "soft_warn" and abort:
        loop.annotate(loop.mission(), {"review_halt": ""})
        return loop.halt(round_no, "aborted_by_user", merged, context="stopped at the soft warning")
    if reason == "soft_warn":
        if not keep_going:
            raise UsageError(
                "this HALT is a soft warning",
                f"kitty review answer {wp_id} --continue (one more round) or --abort",
            )
        loop.annotate(
            loop.mission(),
            {"review_halt": "", "note": f"review panel: continue after round {round_no}"},
        )
        outcome = loop.fix(round_no, merged, None, 0)
        return outcome or loop.run(round_no + 1, warn_at=round_no + 1)
    if reason != "blocker":
        raise GuardRefused(
            f"{wp_id} halted with {reason}: there is nothing to answer",
            halt_hint(wp_id, mission.slug, reason, mission),
        )
    questions = [q for q in halt["questions"] if isinstance(q, dict)]
    answers_path = path.with_name(path.stem + ".answers.json")
    recorded: dict[str, dict[str, Any]] = _read_json(answers_path)
    for qid, label in given.items():
        q = next((q for q in questions if q["id"] == qid), None)
        if q is None:
            raise UsageError(
                f"no question {qid!r} in {path.name}",
                "ids: " + ", ".join(x["id"] for x in questions),
            )
        option = next((o for o in q["options"] if o["label"] == label), None)
        if option is None:
            raise UsageError(
                f"{label!r} is not an option of {qid}",
                "options: " + ", ".join(o["label"] for o in q["options"]),
            )
        recorded[qid] = {
            "answered_by": settings.runner,
            "id": qid,
            "question": q["question"],
            "selected_label": label,
            "selected_description": option.get("description", ""),
            "user_notes_if_any": notes.get(qid, ""),
        }
    atomic_write(answers_path, json.dumps(recorded, indent=2) + "\n")
    pending = [q for q in questions if q["id"] not in recorded]
    if pending:
        return {
            "wp_id": wp_id,
            "loop_verdict": HALT,
            "reason": "blocker",
            "answered": sorted(recorded),
            "pending": [q["id"] for q in pending],
            "ask": pending[:QUESTIONS_PER_ASK],
            "halt_file": loop.rel(path),
        }
    blocker_round = int(halt.get("blocker_round", 0)) + 1
    loop.annotate(
        loop.mission(),
        {"review_halt": "", "note": f"review panel: blocker answered ({len(recorded)} answer(s))"},
    )
    if blocker_round > MAX_BLOCKER_REDISPATCH:
        return loop.halt(
            round_no,
            "blocker_cap",
            merged,
            context=f"{blocker_round} re-dispatches in round {round_no}",
        )
    ordered = [recorded[q["id"]] for q in questions]
    outcome = loop.fix(
        round_no, merged, ordered, blocker_round, context=str(halt.get("context") or "")
    )
    return outcome or loop.run(round_no + 1)
