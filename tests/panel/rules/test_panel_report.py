"""What the review panel writes and answers, exactly: plan.json, merged.json, the HALT file,
the `--json` result and the hints that tell the arbiter what to run next.

These texts and shapes are the product: an agent reads the keys of the HALT file and the
result, and runs the commands of the hints as printed. Pure data, no process, no git.
"""

from __future__ import annotations

import json
from typing import Any

from kitty.panel.rules.data import Entry
from kitty.panel.rules.personas import Roster
from kitty.panel.rules.report import (
    answer_example,
    halt_artifact,
    halt_details,
    halt_hint,
    merged_json,
    pending_json,
    plan_json,
    result_json,
    triage,
)
from kitty.workflow.rules.findings import Finding, Merged, merge
from kitty.workflow.rules.formats import read_report
from tests.workflow.rules.findings_data import OFF_BY_ONE

MISSION = "demo-01ABCDEF"
NO_VERIFICATION = {
    "status": "not-produced",
    "closeout_verdict": "not-run",
    "reason_code": "no-targeted-command-executed",
    "checks": [],
    "limitations": [],
}


def item(**kw: Any) -> dict[str, Any]:
    base = {
        "severity": "P1",
        **OFF_BY_ONE,
        "confidence": 75,
        "first_evidence": "for i in range(n - 1):",
    }
    base.update(kw)
    return base


def merged(*items: dict[str, Any], round_no: int = 1) -> Merged:
    text = json.dumps({"reviewer": "correctness@codex", "findings": list(items)})
    return merge([read_report("f.json", text)], round_no)


def as_json(findings: list[Finding]) -> list[dict[str, Any]]:
    return [f.to_json() for f in findings]


QUESTION = {
    "id": "q1",
    "header": "API",
    "question": "Keep the old API?",
    "options": [{"label": "keep old", "description": "callers"}, {"label": "drop"}],
}


# -- plan.json, merged.json --------------------------------------------------------------------
def test_plan_json_names_every_entry_the_rounds_and_why_this_roster() -> None:
    """plan.json lists the fan-out as seed 002 names it and says why the panel is this one:
    the lite roster by name, else each persona with its reason."""
    entry = Entry("correctness", "codex", "correctness", "diff", ["a.py"])
    lite = Roster(["correctness"], True, {"correctness": "lite roster (small, low-risk diff)"})
    assert plan_json([entry], 3, lite) == {
        "fan_out": [
            {
                "reviewer_id": "correctness",
                "agent": "codex",
                "persona": "correctness",
                "scope_kind": "diff",
                "paths": ["a.py"],
            }
        ],
        "max_rounds": 3,
        "rationale": "lite roster (small, low-risk diff)",
    }
    full = Roster(
        ["correctness", "security"], False, {"correctness": "always on", "security": "path auth.py"}
    )
    assert plan_json([], 5, full) == {
        "fan_out": [],
        "max_rounds": 5,
        "rationale": "correctness: always on; security: path auth.py",
    }


def test_merged_json_keeps_every_list_and_leaves_the_diff_out() -> None:
    """merged.json holds the round's verdict, what blocks (by RC id), every finding list and
    the gaps; the scope is kept without the diff text and the workspace path."""
    m = merged(
        item(),
        item(severity="P3", signature="minor", location="src/b.py:2"),
        item(signature="old", pre_existing=True),
        item(signature="weak", confidence=50),
        round_no=2,
    )
    m.testing_gaps.append("no test for n=0")
    m.residual_risks.append("slow on big lists")
    scope = {"base": "main", "head_sha": "abc", "diff": "+x", "workspace": "/tmp/ws"}
    assert merged_json(2, m, scope, "P2", 1700000000) == {
        "round": 2,
        "scope": {"base": "main", "head_sha": "abc"},
        "generated_at": 1700000000,
        "reviewers": ["correctness@codex"],
        "verdict": "Not ready",
        "block_at": "P2",
        "blocking": ["RC2-1"],
        "findings": as_json(m.findings),
        "pre_existing_findings": as_json(m.pre_existing),
        "suppressed": as_json(m.suppressed),
        "suppressed_by_anchor": {"50": 1},
        "testing_gaps": ["no test for n=0"],
        "residual_risks": ["slow on big lists"],
    }
    assert [f["signature"] for f in merged_json(2, m, scope, "P2", 0)["findings"]] == [
        "off-by-one",
        "minor",
    ]


# -- the HALT file and what the HALT result adds -----------------------------------------------
def test_halt_file_has_every_field_of_the_loop_spec() -> None:
    """The HALT file (REVIEW-LOOP §3): wp_id, mission, round, reason, the findings, counts of
    the blocking ones per severity, the blocker's questions and context, the arbiter's options,
    the settings the run used, and the rule's extras."""
    m = merged(item(), item(severity="P3", signature="minor"), round_no=2)
    payload = {"questions": [QUESTION], "context": "from the fix"}
    settings = {"max_rounds": 3}
    art = halt_artifact(
        "WP01", MISSION, 2, "blocker", m.findings, "P2", payload, "", settings, {"blocker_round": 1}
    )
    assert art == {
        "wp_id": "WP01",
        "mission": MISSION,
        "round": 2,
        "reason": "blocker",
        "findings": as_json(m.findings),
        "counts": {"P0": 0, "P1": 1, "P2": 0, "P3": 0},
        "questions": [QUESTION],
        "context": "from the fix",
        "options": ["proceed-with-gaps", "replay", "hand-edit"],
        "settings": {"max_rounds": 3},
        "blocker_round": 1,
    }


def test_halt_file_context_and_questions_fall_back_cleanly() -> None:
    """The rule's own context wins over the fix's; without either the context is empty;
    questions that are not a list are never copied into the file; a soft warning offers
    continue, halt or abort."""
    payload = {"questions": "q1?", "context": "from the fix"}
    art = halt_artifact(
        "WP01", MISSION, 1, "blocker_malformed", [], "P2", payload, "bad shape", {}, {}
    )
    assert (art["questions"], art["context"]) == ([], "bad shape")
    bare = halt_artifact(
        "WP01", MISSION, 1, "max_rounds", [], "P2", {"questions": None}, "", {}, {}
    )
    assert (bare["questions"], bare["context"], bare["counts"]) == (
        [],
        "",
        {"P0": 0, "P1": 0, "P2": 0, "P3": 0},
    )
    none = halt_artifact("WP01", MISSION, 5, "soft_warn", [], "P2", None, "", {}, {"warn_at": 5})
    assert (none["questions"], none["context"], none["warn_at"]) == ([], "", 5)
    assert none["options"] == ["continue", "halt", "abort"]


def test_halt_result_asks_the_questions_four_at_a_time_with_the_hint() -> None:
    """The HALT result repeats the questions and context, chunks them four per ask, and
    carries the hint; with no questions there is nothing to ask."""
    qs = [{**QUESTION, "id": f"q{i}"} for i in range(5)]
    art = {"questions": qs, "context": "ctx"}
    assert halt_details(art, "do this") == {
        "questions": qs,
        "context": "ctx",
        "question_chunks": [qs[:4], qs[4:]],
        "hint": "do this",
    }
    empty = {"questions": [], "context": ""}
    assert halt_details(empty, "h") == {
        "questions": [],
        "context": "",
        "question_chunks": [],
        "hint": "h",
    }


# -- the --json result -------------------------------------------------------------------------
def test_result_json_is_seed_002s_object_plus_round_and_loop_verdict() -> None:
    """`kitty review run --json` is one object with every field of seed 002 (REVIEW-LOOP §5),
    the scope's five keys only, the actionable findings, the artifact's path and status, and
    kitty's ids, round and loop verdict."""
    m = merged(item(), item(location="src/b.py:3", signature="other", autofix_class="advisory"))
    m.pre_existing.append(m.findings[0])
    m.testing_gaps.append("gap")
    m.residual_risks.append("risk")
    scope = {"base": "main", "branch": "b", "head_sha": "abc", "diff": "+x", "files_changed": 2}
    out = result_json(
        ("WP01", MISSION, 2), "changes requested", m, scope, "P2", ("r/merged.json", "run-7")
    )
    assert out == {
        "status": "complete",
        "verdict": "Not ready",
        "mutation_policy": "report-only",
        "commit_authorization": "missing",
        "scope": {
            "base": "main",
            "branch": "b",
            "head_sha": "abc",
            "pr_url": None,
            "files_changed": 2,
        },
        "intent": f"WP01 of mission {MISSION}",
        "intent_confidence": "explicit",
        "reviewers": ["correctness@codex"],
        "findings": as_json(m.findings),
        "actionable_findings": as_json(m.findings[:1]),
        "triage_groups": triage(m.findings),
        "pre_existing_findings": as_json(m.findings[:1]),
        "requirements_completeness": None,
        "learnings": [],
        "agent_native_gaps": [],
        "deployment_notes": [],
        "residual_risks": ["risk"],
        "testing_gaps": ["gap"],
        "coverage": {"suppressed_by_anchor": {}, "verification_evidence": NO_VERIFICATION},
        "artifact_path": "r/merged.json",
        "artifact_write_status": "written",
        "run_id": "run-7",
        "wp_id": "WP01",
        "mission": MISSION,
        "round": 2,
        "loop_verdict": "changes requested",
    }


def test_result_status_is_failed_only_for_a_halt_with_nothing_found() -> None:
    """A HALT before any finding (a reviewer failed) is a failed review; a HALT with findings,
    or any other verdict, completed. No merged.json: the artifact is unavailable."""
    empty, found = Merged([]), merged(item())
    ids, art = ("WP01", MISSION, 1), (None, "run")

    def status(verdict: str, m: Merged) -> tuple[str, str, str]:
        out = result_json(ids, verdict, m, {}, "P2", art)
        return out["status"], out["verdict"], out["artifact_write_status"]

    assert status("HALT", empty) == ("failed", "Ready to merge", "unavailable")
    assert status("HALT", found) == ("complete", "Not ready", "unavailable")
    assert status("CONVERGED", empty) == ("complete", "Ready to merge", "unavailable")


def test_triage_groups_findings_by_file_only_across_several_files() -> None:
    """Seed 002's triage groups: one per file, naming the findings by number, only when the
    findings are spread over more than one file."""
    m = merged(
        item(),
        item(location="src/b.py:3", signature="b"),
        item(location="src/a.py:20", signature="c"),
    )
    assert triage(m.findings) == [
        {
            "title": "src/a.py",
            "findings": [1, 2],
            "context": "findings in src/a.py",
            "preferred_resolution": "fix together",
            "why": "same file",
        },
        {
            "title": "src/b.py",
            "findings": [3],
            "context": "findings in src/b.py",
            "preferred_resolution": "fix together",
            "why": "same file",
        },
    ]
    assert triage(merged(item(), item(location="src/a.py:20", signature="c")).findings) == []


# -- answering a blocker -----------------------------------------------------------------------
def test_pending_answers_name_what_is_answered_and_ask_the_next_four() -> None:
    """`kitty review answer` with questions still open: still a HALT (blocker), the answered
    ids sorted, every open id, the next four to ask, and the HALT file."""
    pending = [{**QUESTION, "id": f"q{i}"} for i in range(2, 8)]
    recorded: dict[str, Any] = {"q9": {}, "q1": {}}
    assert pending_json("WP01", recorded, pending, "tasks/halt.json") == {
        "wp_id": "WP01",
        "loop_verdict": "HALT",
        "reason": "blocker",
        "answered": ["q1", "q9"],
        "pending": ["q2", "q3", "q4", "q5", "q6", "q7"],
        "ask": pending[:4],
        "halt_file": "tasks/halt.json",
    }


def test_answer_example_is_a_command_that_runs_as_printed() -> None:
    """The example answer picks the first question's first labelled option and quotes it for
    the shell; questions or options of the wrong shape are skipped; with nothing to pick it
    is the bare command."""
    base = f"kitty review answer WP01 --mission {MISSION}"
    assert answer_example("WP01", MISSION, [QUESTION]) == f"{base} --answer 'q1=keep old'"
    skipped = [
        "not a question",
        {"id": "q0", "options": "keep"},
        {"id": "q1", "options": ["keep", {"label": 3}, {"description": "no label"}]},
        {"id": "q2", "options": [{"label": "drop"}, {"label": "keep"}]},
    ]
    assert answer_example("WP01", MISSION, skipped) == f"{base} --answer q2=drop"
    assert answer_example("WP01", MISSION, []) == base


def test_halt_hints_name_the_exact_next_command_per_reason() -> None:
    """Each HALT tells the arbiter what to run: answers for a blocker, --continue at a soft
    warning, otherwise proceed-with-gaps (a forced approval with a note) or replay."""
    assert halt_hint("WP01", MISSION, "blocker", [QUESTION]) == (
        "answer each question (--answer ID=LABEL, repeatable), for example: "
        f"kitty review answer WP01 --mission {MISSION} --answer 'q1=keep old'"
    )
    assert halt_hint("WP01", MISSION, "blocker") == (
        "answer each question (--answer ID=LABEL, repeatable), for example: "
        f"kitty review answer WP01 --mission {MISSION}"
    )
    assert halt_hint("WP01", MISSION, "soft_warn") == (
        f"continue one more round: kitty review answer WP01 --mission {MISSION} --continue"
    )
    assert halt_hint("WP01", MISSION, "max_rounds") == (
        f"proceed-with-gaps: kitty agent tasks move-task WP01 --mission {MISSION} --to approved "
        '--force --note "Arbiter decision: <why>"; replay or hand-edit, then: '
        f"kitty review run WP01 --mission {MISSION}"
    )
