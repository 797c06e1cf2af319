"""The review panel's data (REVIEW-LOOP.md §3), pure: settings, the plan's entries, waves,
and what a process's return means (a reviewer's report, a blocker's shape, the contrarian's
verdicts, the answers to a blocker). panel/rules/rounds.py decides the next actions from it.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from kitty.core.log.state import as_dict
from kitty.errors import KittyError, UsageError
from kitty.workflow.rules.findings import Finding, Report, _challenge_rule
from kitty.workflow.rules.formats import read_report

RUNNER = "review-panel"
CONVERGED, CHANGES, HALT = "CONVERGED", "changes requested", "HALT"
HALT_OPTIONS = ["proceed-with-gaps", "replay", "hand-edit"]
SOFT_WARN_OPTIONS = ["continue", "halt", "abort"]
MAX_TEST_ATTEMPTS = 3  # re-dispatches after a failing review.test_command, per round
MAX_BLOCKER_REDISPATCH = 2  # per round (seed 000's blocker_round cap)
QUESTIONS_PER_ASK = 4

T = TypeVar("T")


@dataclass(frozen=True)
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
        _check_choices(review)
        return cls(
            panel=[str(p) for p in panel] if isinstance(panel, list) and panel else None,
            agents=[str(a) for a in agents],
            max_rounds=rounds,
            challenge=bool(review.get("challenge", False)),
            test_command=(shlex.split(test) if isinstance(test, str) else [str(t) for t in test])
            if test
            else None,
            cap=str(review.get("cap", "hard")),
            soft_warn_rounds=review.get("soft_warn_rounds", 5),
            depth=str(review.get("depth", "auto")),
        )


def _check_choices(review: dict[str, Any]) -> None:
    """review.panel, cap, depth and soft_warn_rounds as the panel can use them, or a usage
    error naming the key and an example: a typo never silently means the default."""
    panel = review.get("panel")
    if panel and not isinstance(panel, list):
        raise UsageError(
            f"review.panel must be a list of persona names, not {panel!r}",
            "for example review: {panel: [correctness, testing]} (`kitty review personas` "
            "lists them)",
        )
    for key, allowed in (("cap", ("hard", "soft")), ("depth", ("auto", "full"))):
        value = review.get(key, allowed[0])
        if value not in allowed:
            raise UsageError(
                f"review.{key} must be {' or '.join(allowed)}, not {value!r}",
                f"for example review: {{{key}: {allowed[-1]}}}",
            )
    warn = review.get("soft_warn_rounds", 5)
    if not isinstance(warn, int) or isinstance(warn, bool) or warn < 1:
        raise UsageError(
            "review.soft_warn_rounds must be a whole number >= 1",
            "for example review: {soft_warn_rounds: 5}",
        )


def overridden(settings: Settings, max_cycles: int, **given: Any) -> Settings:
    """Command-line overrides (None: not given); --max-rounds may only lower the counter;
    a --test-command string is split as a shell would."""
    rounds = given.get("max_rounds")
    if rounds is not None and rounds > max_cycles:
        raise UsageError(
            f"--max-rounds {rounds} is above review.max_cycles ({max_cycles}): "
            "rounds and review cycles are one counter, and a run may only lower it",
            f"raise it for the project: review: {{max_rounds: {rounds}}} in .kittify/config.yaml",
        )
    if isinstance(given.get("test_command"), str):
        given["test_command"] = shlex.split(given["test_command"])
    return replace(settings, **{k: v for k, v in given.items() if v is not None})


def panel_configured(raw: dict[str, Any]) -> bool:
    """The mission reviews with a panel: `review.panel` is set in the config."""
    return bool(as_dict(raw.get("review")).get("panel"))


@dataclass(frozen=True)
class Entry:
    """One fan-out entry of the plan: a persona on an agent."""

    reviewer_id: str
    agent: str
    persona: str
    scope_kind: str
    paths: list[str]

    @property
    def name(self) -> str:
        return f"{self.persona}@{self.agent}"


# -- waves, questions, the plan ----------------------------------------------------------------
def parse_concurrency(raw: str) -> int:
    """KITTY_REVIEW_CONCURRENCY: a whole number >= 1 (default 6), else a usage error."""
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


def waves(entries: Sequence[T], size: int) -> list[list[T]]:
    """Every entry, in order, at most `size` at a time; never truncated."""
    return [list(entries[i : i + size]) for i in range(0, len(entries), size)]


def chunks(questions: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Blocker questions, at most four per ask."""
    return waves(questions, QUESTIONS_PER_ASK)


def reviewer_agents(agents: Sequence[str], implementer: str) -> list[str]:
    """The panel's agents: never the implementer, at least one."""
    pool = [a for a in agents if a != implementer]
    if not pool:
        raise UsageError(
            f"the panel needs a reviewer agent other than the implementer ({implementer})",
            "pass --agents codex,gemini (or set review.panel_agents)",
        )
    return pool


def plan_entries(personas: Sequence[str], pool: Sequence[str], paths: Sequence[str]) -> list[Entry]:
    """Personas assigned to the reviewer agents in turn; each reviews the full diff
    (`paths`: the changed files)."""
    return [Entry(p, pool[i % len(pool)], p, "diff", list(paths)) for i, p in enumerate(personas)]


def choose_challenger(settings: Settings, implementer: str) -> str:
    """The contrarian: --challenger, else the first panel agent that is not the implementer."""
    agent = settings.challenger or next((a for a in settings.agents if a != implementer), None)
    if agent is None or agent == implementer:
        raise UsageError(
            "the challenge needs an agent other than the implementer", "pass --challenger NAME"
        )
    return agent


# -- reading what came back --------------------------------------------------------------------
def reviewer_report(entry: Entry, code: int, source: str, text: str | None) -> Report | str:
    """A reviewer's run as its report, or why it failed (a bad return = reviewer_failed)."""
    try:
        if code != 0:
            raise KittyError(f"exit {code}")
        if text is None:
            raise KittyError("wrote no findings file")
        report = read_report(source, text, None, entry.name)
    except KittyError as exc:
        return f"{entry.reviewer_id} ({entry.agent}): {exc.message}"
    return replace(
        report,
        reviewer=entry.name,
        findings=[replace(f, reviewers=[entry.name]) for f in report.findings],
    )


def lane_changed(round_no: int, entries: Sequence[Entry], changed: str) -> str:
    """Reviewers are read-only: a lane that changed during the round fails it."""
    names = ", ".join(e.reviewer_id for e in entries)
    return (
        f"the lane changed during review round {round_no} ({names}): {changed}; nothing is approved"
    )


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
            continue
        for j, o in enumerate(options):
            if not (isinstance(o, dict) and isinstance(o.get("label"), str)):
                shape = json.dumps(o)[:60]
                problems.append(
                    f"questions[{i}].options[{j}]: {shape} is not an object with a label "
                    '(each option is {"label": "...", "description": "..."})'
                )
    return problems


def carried_errors(payload: dict[str, Any]) -> list[str]:
    """gate_status "errors": what is left feeds the next fix dispatch (seed 000)."""
    if payload.get("gate_status") != "errors":
        return []
    return [str(e) for e in payload.get("errors_remaining") or []]


def gate_report(argv: Sequence[str], code: int, output: str) -> str:
    """What the next fix is told about a failing test command (its last 4000 characters)."""
    return f"$ {shlex.join(argv)}\nexit {code}\n" + output[-4000:]


def challenged(findings: Sequence[Finding], verdicts: Any, agent: str) -> list[Finding]:
    """The contrarian's verdicts applied: INVALID needs a disproving path:line (else VALID),
    VALID may sharpen the required fix; the contrarian joins each judged finding's reviewers."""
    by_id = {f.rc_id: i for i, f in enumerate(findings)}
    out = list(findings)
    me = f"contrarian@{agent}"
    for verdict in verdicts:
        if not isinstance(verdict, dict) or verdict.get("id") not in by_id:
            continue
        i = by_id[verdict["id"]]
        f = out[i]
        validity = str(verdict.get("validity", "")).upper()
        if validity == "INVALID":
            evidence = str(verdict.get("evidence") or "")
            f = _challenge_rule(replace(f, validity="INVALID", validity_evidence=evidence))
        elif validity == "VALID":
            fix = str(verdict["fix"]) if verdict.get("fix") else f.suggested_fix
            f = replace(f, validity="VALID", suggested_fix=fix)
        out[i] = replace(f, reviewers=f.reviewers if me in f.reviewers else [*f.reviewers, me])
    return out


def record_answers(
    questions: list[dict[str, Any]],
    given: dict[str, str],
    notes: dict[str, str],
    runner: str,
    recorded: dict[str, Any],
    file_name: str,
) -> dict[str, Any]:
    """The blocker bridge: each ID=LABEL checked against the questions and recorded."""
    out = dict(recorded)
    for qid, label in given.items():
        q = next((q for q in questions if q["id"] == qid), None)
        if q is None:
            raise UsageError(
                f"no question {qid!r} in {file_name}",
                "ids: " + ", ".join(x["id"] for x in questions),
            )
        option = next((o for o in q["options"] if o["label"] == label), None)
        if option is None:
            raise UsageError(
                f"{label!r} is not an option of {qid}",
                "options: " + ", ".join(o["label"] for o in q["options"]),
            )
        out[qid] = {
            "answered_by": runner,
            "id": qid,
            "question": q["question"],
            "selected_label": label,
            "selected_description": option.get("description", ""),
            "user_notes_if_any": notes.get(qid, ""),
        }
    return out
