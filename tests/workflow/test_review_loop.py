"""The review loop: submit findings, cycles up to the cap, arbiter, guards, history."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from tests.helpers import kitty, lane_commit, make_mission, ok

WPS = [
    {"wp_id": "WP01", "title": "Alpha", "subtasks": ["T001"]},
    {"wp_id": "WP02", "title": "Beta", "deps": ["WP01"]},
]
MISSION = "demo-01ABCDEF"


def to_review(repo: Path, implementer: str = "claude", reviewer: str = "codex") -> None:
    for lane in ("claimed", "in_progress"):
        ok(repo, "move", "WP01", lane, "--agent", implementer)
    ok(repo, "agent", "tasks", "mark-status", "T001", "--status", "done")
    lane_commit(repo, "WP01")
    ok(repo, "move", "WP01", "for_review", "--agent", implementer)
    ok(repo, "move", "WP01", "in_review", "--agent", reviewer)


def findings_file(tmp: Path, name: str, reviewer: str, *items: dict[str, Any]) -> Path:
    path = tmp / f"{name}.json"
    path.write_text(json.dumps({"reviewer": reviewer, "findings": list(items)}))
    return path


def f(severity: str, signature: str = "bug", location: str = "src/a.py:3") -> dict[str, Any]:
    return {
        "severity": severity,
        "kind": "correctness",
        "location": location,
        "signature": signature,
        "title": f"{signature} title",
        "detail": "why",
        "suggested_fix": "fix it",
    }


def test_schema_is_printed_and_valid_json() -> None:
    repo = Path(".")
    schema = json.loads(ok(repo, "review", "schema").out)
    assert schema["properties"]["findings"]["items"] == {"$ref": "#/$defs/finding"}
    severity = schema["$defs"]["finding"]["properties"]["severity"]
    assert severity["enum"] == ["P0", "P1", "P2", "P3"]
    assert "data loss" in severity["description"]


def test_reject_writes_the_cycle_file_and_moves_back(repo: Path, tmp_path: Path) -> None:
    mission = make_mission(repo, wps=WPS)
    to_review(repo)
    a = findings_file(tmp_path, "a", "codex", f("P2"), f("P3", "style"))
    b = findings_file(tmp_path, "b", "gemini", f("P1"), f("P1", "leak", "src/b.py:9"))
    result = ok(
        repo,
        "review",
        "submit",
        "WP1",
        "--findings",
        str(a),
        "--findings",
        str(b),
        "--agent",
        "codex",
        "--json",
    ).json()
    assert result["verdict"] == "changes_requested" and result["to_lane"] == "planned"
    assert (result["findings"], result["blocking"], result["advisory"]) == (3, 2, 1)
    path = mission / "tasks" / "WP01-alpha" / "review-cycle-1.md"
    front = yaml.safe_load(path.read_text().split("---")[1])
    assert set(front) == {
        "cycle_number",
        "wp_id",
        "mission_slug",
        "reviewer_agent",
        "reviewed_at",
        "verdict",
        "affected_files",
    }
    assert (front["cycle_number"], front["wp_id"], front["mission_slug"]) == (1, "WP01", MISSION)
    assert (front["reviewer_agent"], front["verdict"]) == ("codex", "rejected")
    assert front["affected_files"] == ["src/a.py", "src/b.py"]
    body = path.read_text()
    assert "RC1-1 [P1]" in body and "Reported by: codex, gemini" in body
    sidecar = json.loads((path.with_name("review-cycle-1.findings.json")).read_text())
    assert len(sidecar["findings"]) == 3
    status = ok(repo, "status", "--json").json()["work_packages"][0]
    assert (status["lane"], status["review_cycles"]) == ("planned", 1)


def test_approve_keeps_p3_as_advisory(repo: Path, tmp_path: Path) -> None:
    mission = make_mission(repo, wps=WPS)
    to_review(repo)
    only_p3 = findings_file(tmp_path, "a", "codex", f("P3", "style"))
    result = ok(
        repo, "review", "submit", "WP01", "--findings", str(only_p3), "--agent", "codex", "--json"
    ).json()
    assert (result["verdict"], result["to_lane"], result["advisory"]) == ("approved", "approved", 1)
    text = (mission / "tasks" / "WP01-alpha" / "review-cycle-1.md").read_text()
    assert "verdict: approved" in text and "Advisory notes" in text
    assert ok(repo, "status", "--json").json()["work_packages"][0]["review_cycles"] == 0


def test_block_at_is_configurable(repo: Path, tmp_path: Path) -> None:
    make_mission(repo, wps=WPS, config="review:\n  block_at: P1\n")
    to_review(repo)
    p2 = findings_file(tmp_path, "a", "codex", f("P2"))
    assert (
        ok(
            repo, "review", "submit", "WP01", "--findings", str(p2), "--agent", "codex", "--json"
        ).json()["verdict"]
        == "approved"
    )


def test_invalid_findings_record_nothing(repo: Path, tmp_path: Path) -> None:
    mission = make_mission(repo, wps=WPS)
    to_review(repo)
    log_before = (mission / "status.events.jsonl").read_text()
    good = findings_file(tmp_path, "good", "codex", f("P1"))
    bad = findings_file(tmp_path, "bad", "gemini", f("P7"))
    run = kitty(
        repo,
        "review",
        "submit",
        "WP01",
        "--findings",
        str(good),
        "--findings",
        str(bad),
        "--agent",
        "codex",
    )
    assert run.code == 1
    assert f"{bad}: findings[0].severity: 'P7' is not one of P0, P1, P2, P3" in run.err
    broken = tmp_path / "broken.json"
    broken.write_text("{nope")
    run = kitty(repo, "review", "submit", "WP01", "--findings", str(broken), "--agent", "codex")
    assert run.code == 1 and "not valid JSON" in run.err
    assert (mission / "status.events.jsonl").read_text() == log_before
    assert not (mission / "tasks" / "WP01-alpha").exists()


def test_every_problem_of_every_file_is_reported(repo: Path, tmp_path: Path) -> None:
    mission = make_mission(repo, wps=WPS)
    to_review(repo)
    log_before = (mission / "status.events.jsonl").read_text()
    one = findings_file(tmp_path, "one", "codex", f("P7"), {**f("P1"), "location": "x"})
    two = tmp_path / "two.json"
    two.write_text(json.dumps({"findings": [{"kind": "k"}]}))
    run = kitty(
        repo, "review", "submit", "WP01", "--findings", str(one), "--findings", str(two),
        "--agent", "codex",
    )  # fmt: skip
    assert run.code == 1
    for expected in (
        "2 findings files",
        f"{one}: 2 problem(s)",
        "findings[0].severity: 'P7' is not one of P0, P1, P2, P3",
        "findings[1].location: 'x' is not path:line",
        f"{two}: 6 problem(s)",
        "reviewer: missing",
        "findings[0].signature: missing",
    ):
        assert expected in run.err, run.err
    assert (mission / "status.events.jsonl").read_text() == log_before


def test_seed_formats_are_submitted_and_merged(repo: Path, tmp_path: Path) -> None:
    mission = make_mission(repo, wps=WPS)
    to_review(repo)
    persona = tmp_path / "security.json"
    persona.write_text(
        json.dumps(
            {
                "reviewer": "security",
                "findings": [
                    {
                        "title": "Token compared with ==",
                        "severity": "P1",
                        "file": "src/auth.py",
                        "line": 42,
                        "confidence": 100,
                        "first_evidence": "if token == expected:",
                        "autofix_class": "manual",
                        "owner": "downstream-resolver",
                        "requires_verification": False,
                        "pre_existing": False,
                    }
                ],
                "residual_risks": [],
                "testing_gaps": [],
            }
        )
    )
    addon = tmp_path / "review-addon-1.md"
    addon.write_text(
        "# Review Add-On: Cycle 1\n\n## Valid Findings\n\n### RC1-1: Token compared with ==\n"
        "**Severity:** minor\n**File:** src/auth.py:42\n**Finding:** timing leak\n"
        "**Required fix:** use hmac.compare_digest\n"
    )
    result = ok(
        repo, "review", "submit", "WP01", "--findings", str(persona), "--findings", str(addon),
        "--agent", "codex", "--json",
    ).json()  # fmt: skip
    assert (result["verdict"], result["findings"], result["blocking"]) == (
        "changes_requested",
        1,
        1,
    )
    sidecar = mission / "tasks" / "WP01-alpha" / "review-cycle-1.findings.json"
    (merged,) = json.loads(sidecar.read_text())["findings"]
    assert merged["severity"] == "P1" and merged["reviewers"] == ["codex", "security"]
    assert merged["suggested_fix"] == "use hmac.compare_digest"
    assert merged["rc_id"] == "RC1-1" and merged["native"]["format"] == "persona"


def test_submit_needs_a_wp_in_review(repo: Path, tmp_path: Path) -> None:
    make_mission(repo, wps=WPS)
    clean = findings_file(tmp_path, "a", "codex")
    run = kitty(repo, "review", "submit", "WP01", "--findings", str(clean), "--agent", "codex")
    assert run.code == 1 and "not in_review" in run.err


def test_three_rejections_reach_the_arbiter(repo: Path, tmp_path: Path) -> None:
    make_mission(repo, wps=WPS)
    blocker = findings_file(tmp_path, "a", "codex", f("P1"))
    for cycle in (1, 2, 3):
        to_review(repo)
        if cycle == 2:
            # re-running implement without a new rejection never increases the count
            status = ok(repo, "status", "--json").json()["work_packages"][0]
            assert status["review_cycles"] == 1
        result = ok(
            repo,
            "review",
            "submit",
            "WP01",
            "--findings",
            str(blocker),
            "--agent",
            "codex",
            "--json",
        ).json()
        assert result["review_cycles"] == cycle
        if cycle < 3:
            decision = ok(repo, "next", "--agent", "claude", "--json").json()
            assert (decision["action"], decision["cycle"]) == ("fix", f"{cycle}/3")
    assert "cycle 3/3" in ok(repo, "status").out
    decision = ok(repo, "next", "--agent", "gemini", "--json").json()
    assert decision["action"] == "arbiter"
    assert any("--to approved --force" in c["commands"][0] for c in decision["choices"])
    refused = kitty(repo, "move", "WP01", "claimed", "--agent", "claude")
    assert refused.code == 1 and "arbiter decision" in refused.err
    assert "claude implemented WP01 and cannot decide on its own work" in refused.err
    refused = kitty(repo, "agent", "action", "implement", "WP01", "--agent", "claude")
    assert refused.code == 1
    ok(
        repo,
        "agent",
        "tasks",
        "move-task",
        "WP01",
        "--to",
        "approved",
        "--force",
        "--agent",
        "lead",
        "--note",
        "Arbiter decision: the reviewer is too strict",
    )
    status = ok(repo, "status", "--json").json()["work_packages"][0]
    assert status["lane"] == "approved"
    assert status["arbiter"]["note"] == "Arbiter decision: the reviewer is too strict"
    assert "Arbiter override WP01 → approved" in ok(repo, "status").out
    history = ok(repo, "review", "show", "WP01", "--json").json()
    assert [r["rejection"] for r in history["reviews"]] == [1, 2, 3, None]
    assert (history["reviews"][-1]["verdict"], history["reviews"][-1]["reviewer"]) == (
        "approved",
        "lead",
    )
    assert history["reviews"][0]["findings"][0]["severity"] == "P1"
    assert history["arbiter"]["decision"] == "approve"
    text = ok(repo, "review", "show", "WP01").out
    assert "arbiter decision: approve by lead" in text


def test_escalate_to_blocked_at_the_cap(repo: Path, tmp_path: Path) -> None:
    make_mission(repo, wps=WPS, config="review:\n  max_cycles: 1\n")
    to_review(repo)
    ok(
        repo,
        "review",
        "submit",
        "WP01",
        "--findings",
        str(findings_file(tmp_path, "a", "codex", f("P0"))),
        "--agent",
        "codex",
    )
    assert ok(repo, "next", "--agent", "x", "--json").json()["action"] == "arbiter"
    ok(
        repo,
        "move",
        "WP01",
        "blocked",
        "--force",
        "--agent",
        "lead",
        "--note",
        "Escalated to human: contradictory feedback",
    )
    decision = ok(repo, "next", "--agent", "x", "--json").json()
    assert decision["action"] == "blocked"
    assert "WP01 is blocked: Escalated to human: contradictory feedback" in decision["blocked_by"]


def test_self_review_fallback_is_recorded_and_flagged(repo: Path) -> None:
    make_mission(repo, wps=WPS)
    to_review(repo, implementer="claude", reviewer="claude")
    refused = kitty(repo, "move", "WP01", "approved", "--agent", "claude", "--note", "lgtm")
    assert refused.code == 1 and "self-review" in refused.err
    partial = kitty(
        repo,
        "move",
        "WP01",
        "approved",
        "--agent",
        "claude",
        "--force",
        "--note",
        "x",
        "--self-review-fallback",
    )
    assert partial.code == 1
    ok(
        repo,
        "move",
        "WP01",
        "approved",
        "--agent",
        "claude",
        "--force",
        "--note",
        "Self-review fallback after reviewer failure",
        "--self-review-fallback",
        "--intended-reviewer",
        "codex",
        "--reviewer-failure-reason",
        "exit 137",
    )
    status = ok(repo, "status", "--json").json()["work_packages"][0]
    assert status["self_review"]["intended_reviewer"] == "codex"
    assert status["self_review"]["reviewer_failure_reason"] == "exit 137"
    assert "self-rev!" in ok(repo, "status").out
    assert "Self-review fallback WP01" in ok(repo, "status").out


def test_issue_matrix_guard(repo: Path) -> None:
    mission = make_mission(repo, wps=WPS)
    (mission / "issue-matrix.json").write_text(
        json.dumps(
            {
                "schema_version": 1,
                "rows": {
                    "#10": {"verdict": "", "wp": "WP01"},
                    "#11": {"verdict": "in-mission", "wp": "WP01"},
                    "#12": {"verdict": "unknown", "wp": "WP02"},
                },
            }
        )
    )
    to_review(repo)
    run = kitty(repo, "move", "WP01", "approved", "--agent", "codex", "--json")
    assert run.code == 1
    assert run.json()["error"]["message"] == (
        "issue-matrix.json blocks moving WP01 to approved: #10 (empty)"
    )
    matrix = json.loads((mission / "issue-matrix.json").read_text())
    matrix["rows"]["#10"]["verdict"] = "fixed"
    (mission / "issue-matrix.json").write_text(json.dumps(matrix))
    ok(repo, "move", "WP01", "approved", "--agent", "codex")  # in-mission passes at approved
    done = kitty(repo, "move", "WP01", "done", "--agent", "merge", "--force", "--note", "x")
    assert done.code == 1 and "#11 (in-mission)" in done.err
