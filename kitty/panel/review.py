"""The review panel runner's reviewing half: a round's reviewers in waves, and the
contrarian. Which reviewers, how many at a time and what their returns mean is decided
by panel/rules/rounds.py and panel/rules/data.py."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from kitty.adapters import contain
from kitty.mission.workspace import Mission
from kitty.panel.lanes import PanelLanes
from kitty.panel.procs import diff_scope, read_text, write_json
from kitty.panel.prompts import challenge_prompt, reviewer_prompt
from kitty.panel.rules.data import (
    Entry,
    challenged,
    choose_challenger,
    lane_changed,
    plan_entries,
    reviewer_agents,
    reviewer_report,
)
from kitty.panel.rules.personas import DiffFacts, Roster, select
from kitty.panel.rules.report import plan_json
from kitty.panel.rules.rounds import (
    Action,
    Challenge,
    DispatchReviewers,
    Halt,
    Results,
    RoundState,
    next_actions,
)
from kitty.workflow.rules.findings import Merged, Report, merge

Reviewed = tuple[Merged, dict[str, Any]]


class PanelReview(PanelLanes):
    def plan(
        self, mission: Mission, scope: dict[str, Any], round_no: int
    ) -> tuple[list[Entry], Roster]:
        pool = reviewer_agents(self.opts.agents, self.implementer(mission))
        facts = DiffFacts.from_diff(
            scope["diff"], has_solutions=(Path(scope["workspace"]) / "docs" / "solutions").is_dir()
        )
        roster = select(self.catalogue, facts, round_no, self.opts.depth, self.opts.panel)
        return plan_entries(roster.personas, pool, scope["files"]), roster

    def review_round(self, state: RoundState, prior: Merged | None) -> Reviewed | Halt:
        """Every entry of the plan as a fresh process on the full diff; their reports merged."""
        from kitty.workflow.lanecheck import changes, fingerprint

        round_no = state.round_no
        mission = self.mission()
        self.claim_review(mission)
        mission = self.mission()
        scope = diff_scope(mission, self.wp_id)
        entries, roster = self.plan(mission, scope, round_no)
        rdir = contain.check(self.round_dir(round_no))
        rdir.mkdir(parents=True, exist_ok=True)
        write_json(rdir / "plan.json", plan_json(entries, self.opts.max_rounds, roster))
        note = f"review panel round {round_no}: {len(entries)} reviewer(s)"
        workspace = Path(scope["workspace"])
        before = fingerprint(workspace)  # reviewers are read-only (seed 002's mutation check)
        delta: dict[str, Any] = {"review_round": round_no, "note": note}
        if before:  # the commit this round reviews: its approval approves it (issue 41)
            delta["review_commit"] = before.split("+", 1)[0]
        self.annotate(mission, delta)
        reports: list[Report] = []
        failures: list[str] = []
        rules = self.rules()
        for wave in next_actions(state, Results(entries=tuple(entries)), rules):
            assert isinstance(wave, DispatchReviewers)
            self.run_wave(mission, wave, scope, prior, (reports, failures))
        changed = changes(workspace, before) if before else None
        if changed:
            failures.append(lane_changed(round_no, entries, changed))
        reviewed = replace(state, phase="reviewed")
        (step,) = next_actions(reviewed, Results(failures=tuple(failures)), rules)
        if isinstance(step, Halt):
            return step
        return merge(reports, round_no), scope

    def run_wave(
        self,
        mission: Mission,
        wave: DispatchReviewers,
        scope: dict[str, Any],
        prior: Merged | None,
        into: tuple[list[Report], list[str]],
    ) -> None:
        """One wave in parallel; each return read as a report or a failure (`into`)."""
        round_no = wave.round_no
        reviewers = [e.reviewer_id for e in wave.entries]
        self.emit({"event": "wave", "round": round_no, "wave": wave.wave, "reviewers": reviewers})
        rdir = self.round_dir(round_no)
        runs = []
        for entry in wave.entries:
            out = rdir / f"{entry.reviewer_id}.json"
            persona = self.catalogue[entry.persona]
            prompt = reviewer_prompt(
                (self.wp_id, self.slug), persona, entry, scope, round_no, out, prior
            )
            extra = {"findings_file": str(out), "persona": entry.persona, "round": str(round_no)}
            prompt_file = rdir / f"{entry.reviewer_id}.prompt.md"
            log_name = f"r{round_no}-{entry.reviewer_id}"
            who = (entry.agent, "review")
            run = self.spawn(mission, who, prompt, prompt_file, scope["workspace"], log_name, extra)
            runs.append(run)
        codes = self.wait(runs)
        reports, failures = into
        for entry, code in zip(wave.entries, codes, strict=True):
            out = rdir / f"{entry.reviewer_id}.json"
            text = read_text(out) if code == 0 else None
            got = reviewer_report(entry, code, self.rel(out), text)
            if isinstance(got, str):
                failures.append(got)
            else:
                reports.append(got)

    def challenge(
        self, state: RoundState, merged: Merged, scope: dict[str, Any], action: Challenge
    ) -> tuple[Merged, list[Action]]:
        """The contrarian judges the findings; its verdicts applied, then the round's verdict."""
        round_no = state.round_no
        targets = [f for f in merged.findings if f.rc_id in action.rc_ids]
        mission = self.mission()
        agent = choose_challenger(self.opts, self.implementer(mission))
        rdir = self.round_dir(round_no)
        out = rdir / "challenge.json"
        prompt = challenge_prompt((self.wp_id, self.slug), round_no, out, targets)
        extra = {"findings_file": str(out), "persona": "contrarian", "round": str(round_no)}
        run = self.spawn(
            mission, (agent, "review"), prompt, rdir / "challenge.prompt.md",
            scope["workspace"], f"r{round_no}-challenge", extra,
        )  # fmt: skip
        (code,) = self.wait([run])
        data = _verdicts(read_text(out) if code == 0 else None)
        failures: tuple[str, ...] = ()
        if data is None:
            failures = (f"challenger {agent}: no valid {out.name}",)
        else:
            merged = replace(merged, findings=challenged(merged.findings, data, agent))
        results = Results(failures=failures, findings=tuple(merged.findings))
        return merged, next_actions(replace(state, phase="challenged"), results, self.rules())


def _verdicts(text: str | None) -> list[Any] | None:
    """The contrarian's file: {"verdicts": [...]}; None when missing or malformed."""
    try:
        data = json.loads(text) if text is not None else None
    except ValueError:
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("verdicts"), list):
        return None
    verdicts: list[Any] = data["verdicts"]
    return verdicts
