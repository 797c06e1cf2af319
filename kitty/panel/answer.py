"""`kitty review answer`: the blocker bridge and the soft warning's continue/abort, then the
loop goes on. The rules (answers checked, the re-dispatch cap) are panel/rules/data.py and
panel/rules/rounds.py."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from kitty.errors import GuardRefused, UsageError
from kitty.mission.workspace import Mission
from kitty.panel.base import Emit
from kitty.panel.procs import read_json, write_json
from kitty.panel.rules.data import Settings, record_answers
from kitty.panel.rules.report import halt_hint, pending_json
from kitty.panel.rules.rounds import Fix, Halt, Results, RoundState, next_actions
from kitty.panel.runner import Loop, current_halt, load_merged
from kitty.workflow.rules.findings import Merged


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
        settings = replace(settings, runner=actor)
    loop = Loop(repo, mission.slug, wp_id, settings, emit)
    round_no = int(halt["round"])
    reason = halt["reason"]
    merged = load_merged(loop.round_dir(round_no) / "merged.json")
    if reason == "soft_warn":
        return _after_warning(loop, round_no, merged, abort, keep_going)
    if reason != "blocker":
        raise GuardRefused(
            f"{wp_id} halted with {reason}: there is nothing to answer",
            halt_hint(wp_id, mission.slug, reason),
        )
    return _after_blocker(loop, path, halt, (given, notes), merged)


def answer_given(
    repo: Path,
    mission: Mission,
    wp_text: str,
    given: dict[str, Any],
    emit: Emit,
    names: tuple[str, str, str],
) -> dict[str, Any]:
    """`answer` for the CLI and MCP: `given` holds the `answers` and `notes` as `ID=VALUE`
    strings (`continue`, `abort`, `agent` too); `names` says how the caller spells the
    answers, the notes and an example of one (`{name}` in it: `for example {name} q1=A`),
    for the refusal of a string that is not ID=VALUE."""
    answers, notes, example = names

    def pairs(values: Any, name: str) -> dict[str, str]:
        out = {}
        for value in values or ():
            key, sep, rest = value.partition("=")
            if not sep or not key.strip():
                raise UsageError(f"{name} {value!r} is not ID=VALUE", example.format(name=name))
            out[key.strip()] = rest.strip()
        return out

    agent = given.get("agent")
    return answer(
        repo, mission.slug, wp_text, pairs(given.get("answers"), answers),
        pairs(given.get("notes"), notes), bool(given.get("continue")), emit,
        bool(given.get("abort")), mission.actor(agent) if agent else None,
    )  # fmt: skip


def _after_warning(
    loop: Loop, round_no: int, merged: Merged, abort: bool, keep_going: bool
) -> dict[str, Any]:
    if abort:
        loop.annotate(loop.mission(), {"review_halt": ""})
    elif not keep_going:
        raise UsageError(
            "this HALT is a soft warning",
            f"kitty review answer {loop.wp_id} --continue (one more round) or --abort",
        )
    else:
        note = f"review panel: continue after round {round_no}"
        loop.annotate(loop.mission(), {"review_halt": "", "note": note})
    state = RoundState(round_no, "warned", warn_at=round_no + 1)
    results = Results(choice="abort" if abort else "continue")
    (step,) = next_actions(state, results, loop.rules())
    if isinstance(step, Halt):
        return loop.stop(step, merged)
    assert isinstance(step, Fix)
    outcome = loop.fix(step, merged, state.warn_at)
    return outcome if isinstance(outcome, dict) else loop.run(outcome.round_no, outcome.warn_at)


def _after_blocker(
    loop: Loop,
    path: Path,
    halt: dict[str, Any],
    given: tuple[dict[str, str], dict[str, str]],
    merged: Merged,
) -> dict[str, Any]:
    """given = (ID=LABEL answers, ID=TEXT notes)."""
    questions = [q for q in halt["questions"] if isinstance(q, dict)]
    answers_path = path.with_name(path.stem + ".answers.json")
    recorded = record_answers(
        questions, given[0], given[1], loop.opts.runner, read_json(answers_path), path.name
    )
    write_json(answers_path, recorded)
    pending = [q for q in questions if q["id"] not in recorded]
    if pending:
        return pending_json(loop.wp_id, recorded, pending, loop.rel(path))
    round_no = int(halt["round"])
    blocker_round = int(halt.get("blocker_round", 0)) + 1
    note = f"review panel: blocker answered ({len(recorded)} answer(s))"
    loop.annotate(loop.mission(), {"review_halt": "", "note": note})
    state = RoundState(round_no, "answered", loop.opts.soft_warn_rounds, 0, blocker_round)
    (step,) = next_actions(state, Results(), loop.rules())
    if isinstance(step, Halt):
        return loop.stop(step, merged)
    assert isinstance(step, Fix)
    ordered = [recorded[q["id"]] for q in questions]
    context = str(halt.get("context") or "")
    outcome = loop.fix(step, merged, state.warn_at, ordered, context)
    return outcome if isinstance(outcome, dict) else loop.run(outcome.round_no)
