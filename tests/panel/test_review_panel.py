"""`kitty review run`: the panel's round loop with fake reviewer CLIs (real processes, real git).

Acceptance checks 7-12 of REVIEW-LOOP.md §6 are marked `# check N`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kitty.errors import UsageError
from kitty.panel.runner import blocker_problems, chunks, concurrency, waves
from tests.helpers import agent_calls, fake_agents, git, kitty_argv, make_mission, ok

NAMES = ("claude", "codex", "gemini")
MISSION = "demo-01ABCDEF"
THREE = "correctness,testing,security"


@pytest.fixture
def fakes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("KITTY_REVIEW_CONCURRENCY", raising=False)
    return fake_agents(tmp_path, NAMES, monkeypatch)


calls = agent_calls


def prompts(log: Path) -> list[str]:
    out = []
    for call in calls(log):
        argv = call["argv"]
        out.append(call["stdin"] or (argv[argv.index("-p") + 1] if "-p" in argv else ""))
    return out


def p1(signature: str = "auth-bypass", severity: str = "P1") -> dict[str, Any]:
    return {
        "severity": severity,
        "kind": "security",
        "location": "impl_wp01.txt:1",
        "signature": signature,
        "title": "Token check can be skipped",
        "detail": "an empty token passes",
        "suggested_fix": "reject empty tokens",
        "confidence": 100,
        "first_evidence": "if token == expected",
    }


def ready_for_review(repo: Path, config: str = "") -> Path:
    """WP01 implemented by claude (a real commit in its lane worktree), waiting for review."""
    mission = make_mission(
        repo,
        wps=[{"wp_id": "WP01", "title": "Alpha", "subtasks": ["T001"]}],
        config="agents:\n  available: [claude, codex, gemini]\n" + config,
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plan")
    claimed = ok(repo, "agent", "action", "implement", "WP01", "--agent", "claude", "--json").json()
    ws = Path(claimed["workspace"])
    (ws / "impl_wp01.txt").write_text("WP01 first cut\n")
    ok(ws, "safe-commit", "impl_wp01.txt", "-m", "feat(WP01): first cut")
    ok(repo, "agent", "tasks", "mark-status", "T001", "--status", "done")
    ok(repo, "move", "WP01", "for_review", "--agent", "claude")
    return mission


def run(
    repo: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        kitty_argv(repo, *args),
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, **(env or {})},
    )


def panel(
    repo: Path, tmp: Path, scripted: dict[str, Any], *args: str, env: dict[str, str] | None = None
) -> tuple[int, dict[str, Any]]:
    path = tmp / "panel-script.json"
    path.write_text(json.dumps(scripted))
    done = run(
        repo,
        "review",
        "run",
        "WP01",
        "--json",
        *args,
        env={"FAKE_PANEL_SCRIPT": str(path), **(env or {})},
    )
    assert done.stdout.startswith("{"), done.stderr
    return done.returncode, json.loads(done.stdout)


def answer(repo: Path, tmp: Path, *args: str) -> tuple[int, dict[str, Any]]:
    done = run(
        repo,
        "review",
        "answer",
        "WP01",
        "--json",
        *args,
        env={"FAKE_PANEL_SCRIPT": str(tmp / "panel-script.json")},
    )
    assert done.stdout.startswith("{"), done.stderr
    return done.returncode, json.loads(done.stdout)


def counting_test(counter: Path, passes_after: int | None) -> str:
    """A review.test_command that appends an x to `counter` and fails (until it passes)."""
    script = counter.with_suffix(".py")
    limit = -1 if passes_after is None else passes_after
    script.write_text(
        "import pathlib, sys\n"
        f"p = pathlib.Path({str(counter)!r})\n"
        "n = len(p.read_text()) if p.exists() else 0\n"
        "p.write_text('x' * (n + 1))\n"
        f"sys.exit(0 if {limit} >= 0 and n >= {limit} else 1)\n"
    )
    return f"{sys.executable} {script}"


def status(repo: Path) -> dict[str, Any]:
    return ok(repo, "status", "--json").json()["work_packages"][0]  # type: ignore[no-any-return]


# -- pure parts ------------------------------------------------------------------------
def test_check_7_waves_and_concurrency() -> None:  # check 7
    assert [len(w) for w in waves(list(range(13)), 6)] == [6, 6, 1]
    assert concurrency({}) == 6 and concurrency({"KITTY_REVIEW_CONCURRENCY": "2"}) == 2
    for bad in ("0", "-1", "six", ""):
        with pytest.raises(UsageError):
            concurrency({"KITTY_REVIEW_CONCURRENCY": bad})


def test_check_9_question_chunks_and_blocker_shape() -> None:  # check 9 (shape)
    q = [
        {"id": f"q{i}", "question": "?", "header": "h", "options": [{"label": "A"}, {"label": "B"}]}
        for i in range(5)
    ]
    assert [len(c) for c in chunks(q)] == [4, 1]
    assert blocker_problems({"questions": q}) == []
    assert blocker_problems({"questions": []})
    one = [{**q[0], "options": [{"label": "A"}]}]
    five = [{**q[0], "options": [{"label": x} for x in "ABCDE"]}]
    assert blocker_problems({"questions": one}) and blocker_problems({"questions": five})
    assert blocker_problems({"questions": [{"id": "q1", "options": q[0]["options"]}]})


# -- the loop ------------------------------------------------------------------------
def test_p1_in_round_1_is_fixed_and_round_2_converges(
    repo: Path, tmp_path: Path, fakes: Path
) -> None:
    mission = ready_for_review(repo)
    code, result = panel(
        repo,
        tmp_path,
        {"review": {"1": {"security": [p1()]}}},
        "--panel",
        THREE,
        "--agents",
        "codex,gemini",
    )
    assert code == 0, json.dumps(
        {k: result.get(k) for k in ("reason", "context", "halt_file", "round")}
    )
    assert (result["loop_verdict"], result["round"], result["verdict"]) == (
        "CONVERGED",
        2,
        "Ready to merge",
    )
    assert set(result) >= {
        "status",
        "mutation_policy",
        "scope",
        "reviewers",
        "actionable_findings",
        "triage_groups",
        "coverage",
        "run_id",
        "artifact_path",
    }
    review = mission / "tasks" / "WP01-alpha" / "review"
    assert sorted(p.name for p in (review / "round-1").glob("*.json")) == [
        "correctness.json", "fix-1.return.json", "merged.json", "plan.json", "security.json",
        "testing.json",
    ]  # fmt: skip
    merged1 = json.loads((review / "round-1" / "merged.json").read_text())
    assert merged1["blocking"] == ["RC1-1"] and merged1["findings"][0]["reviewers"] == [
        "security@codex"
    ]
    cycle = (mission / "tasks" / "WP01-alpha" / "review-cycle-1.md").read_text()
    assert "### RC1-1 [P1] security: Token check can be skipped" in cycle
    plan2 = json.loads((review / "round-2" / "plan.json").read_text())
    assert [e["persona"] for e in plan2["fan_out"]] == [
        "correctness",
        "testing",
        "security",
        "previous-comments",
    ]
    wp = status(repo)
    assert (wp["lane"], wp["review_cycles"]) == ("approved", 1)
    # check 10: round 2 ran every entry again, each as a new process
    pairs = zip(calls(fakes), prompts(fakes), strict=True)
    reviews = [c for c, p in pairs if p.startswith("# Panel review")]
    assert len(reviews) == 3 + 4 and len({c["pid"] for c in reviews}) == 7
    fixes = [p for p in prompts(fakes) if "Fix return file:" in p]
    assert (
        len(fixes) == 1
        and "review/round-1/merged.json" in fixes[0]
        and "--- AGENT HANDOFF ---" in fixes[0]
    )
    # only previous-comments sees the prior round's findings
    round2 = [p for p in prompts(fakes) if p.startswith("# Panel review") and "Round: 2" in p]
    sees = {p.split("Persona: ")[1].split("\n")[0]: "RC1-1" in p for p in round2}
    assert sees == {
        "correctness": False,
        "testing": False,
        "security": False,
        "previous-comments": True,
    }
    assert (
        ok(repo, "review", "show", "WP01", "--json").json()["reviews"][-1]["verdict"] == "approved"
    )


def test_check_8_last_round_halts_without_a_fix(
    repo: Path, tmp_path: Path, fakes: Path
) -> None:  # check 8
    mission = ready_for_review(repo)
    always = {"review": {str(r): {"security": [p1()]} for r in (1, 2, 3)}}
    code, result = panel(
        repo, tmp_path, always, "--panel", "security", "--agents", "codex", "--max-rounds", "2"
    )
    assert code == 1
    assert (result["loop_verdict"], result["reason"], result["round"]) == ("HALT", "max_rounds", 2)
    halt = json.loads((repo / result["halt_file"]).read_text())
    assert halt["counts"] == {"P0": 0, "P1": 1, "P2": 0, "P3": 0}
    assert halt["options"] == ["proceed-with-gaps", "replay", "hand-edit"]
    assert [f["rc_id"] for f in halt["findings"]] == ["RC2-1"]
    assert len([p for p in prompts(fakes) if "Fix return file:" in p]) == 1  # no fix after round 2
    wp = status(repo)
    assert (wp["lane"], wp["review_cycles"]) == ("planned", 2)
    nxt = ok(repo, "next", "--agent", "gemini", "--json").json()  # not claude: the implementer
    assert nxt["action"] == "arbiter" and result["halt_file"] in nxt["reason"]
    # the artifact is write-once; a resumed run starts again at round 1 (check 10: replay)
    code, again = panel(repo, tmp_path, {}, "--panel", "security", "--agents", "codex")
    assert (code, again["loop_verdict"], again["round"]) == (0, "CONVERGED", 1)
    assert list((mission / "tasks" / "WP01-alpha" / "review").glob("archive-*/round-2/merged.json"))
    assert json.loads((repo / result["halt_file"]).read_text()) == halt
    last = [p for p in prompts(fakes) if p.startswith("# Panel review")][-1]
    assert "RC2-1" not in last and "Round: 1" in last


def test_check_9_blocker_questions_are_answered_then_it_converges(
    repo: Path, tmp_path: Path, fakes: Path
) -> None:  # check 9
    ready_for_review(repo)
    questions = [
        {
            "id": f"q{i}",
            "header": f"H{i}",
            "question": f"Which way {i}?",
            "options": [
                {"label": "keep", "description": "keep the API"},
                {"label": "break", "description": "change it"},
            ],
        }
        for i in range(1, 6)
    ]
    scripted = {
        "review": {"1": {"security": [p1()]}},
        "fix": {
            "1": [{"status": "blocker", "questions": questions, "context": "the API is public"}]
        },
    }
    code, result = panel(repo, tmp_path, scripted, "--panel", "security", "--agents", "codex")
    assert code == 1 and (result["reason"], result["round"]) == ("blocker", 1)
    assert [len(c) for c in result["question_chunks"]] == [4, 1]
    assert status(repo)["lane"] == "planned"
    assert list(
        (repo / "kitty-specs" / MISSION / "tasks" / "WP01-alpha" / "review").glob(
            "blocker-r1-*.json"
        )
    )
    code, pending = answer(repo, tmp_path, *[f"--answer=q{i}=keep" for i in range(1, 5)])
    assert code == 0 and pending["pending"] == ["q5"]
    code, done = answer(repo, tmp_path, "--answer", "q5=break", "--note", "q5=fine by me")
    assert code == 0 and (done["loop_verdict"], done["round"]) == ("CONVERGED", 2)
    redispatch = [p for p in prompts(fakes) if "Fix return file:" in p][-1]
    assert (
        "## User answers (from blocker bridge)" in redispatch
        and '"selected_label": "break"' in redispatch
    )
    assert "## Context from prior dispatch" in redispatch and "the API is public" in redispatch
    assert status(repo)["lane"] == "approved"


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (
            {
                "status": "blocker",
                "questions": [
                    {"id": "q", "header": "h", "question": "?", "options": [{"label": "only"}]}
                ],
            },
            "blocker_malformed",
        ),
        ({"status": "blocker", "questions": []}, "blocker_malformed"),
        (
            {
                "status": "blocker",
                "edit": True,
                "questions": [
                    {
                        "id": "q",
                        "header": "h",
                        "question": "?",
                        "options": [{"label": "a"}, {"label": "b"}],
                    }
                ],
            },
            "blocker_malformed",
        ),
    ],
)
def test_check_9_malformed_blockers_halt_without_retry(
    repo: Path, tmp_path: Path, fakes: Path, payload: dict[str, Any], reason: str
) -> None:
    ready_for_review(repo)
    scripted = {"review": {"1": {"security": [p1()]}}, "fix": {"1": [payload]}}
    code, result = panel(repo, tmp_path, scripted, "--panel", "security", "--agents", "codex")
    assert (code, result["reason"]) == (1, reason)
    assert len([p for p in prompts(fakes) if "Fix return file:" in p]) == 1


def test_check_9_third_redispatch_is_blocker_cap(repo: Path, tmp_path: Path, fakes: Path) -> None:
    ready_for_review(repo)
    q = [{"id": "q1", "header": "h", "question": "?", "options": [{"label": "a"}, {"label": "b"}]}]
    blocker = {"status": "blocker", "questions": q}
    scripted = {"review": {"1": {"security": [p1()]}}, "fix": {"1": [blocker, blocker, blocker]}}
    code, result = panel(repo, tmp_path, scripted, "--panel", "security", "--agents", "codex")
    assert result["reason"] == "blocker"
    assert answer(repo, tmp_path, "--answer", "q1=a")[1]["reason"] == "blocker"
    assert answer(repo, tmp_path, "--answer", "q1=a")[1]["reason"] == "blocker"
    code, result = answer(repo, tmp_path, "--answer", "q1=b")
    assert (code, result["reason"]) == (1, "blocker_cap")
    assert len([p for p in prompts(fakes) if "Fix return file:" in p]) == 3


def test_check_11_soft_warn_stops_at_5_and_continues_to_6(
    repo: Path, tmp_path: Path, fakes: Path
) -> None:  # check 11
    ready_for_review(repo, "review:\n  cap: soft\n  soft_warn_rounds: 5\n")
    always = {"review": {str(r): {"security": [p1()]} for r in range(1, 8)}}
    code, result = panel(repo, tmp_path, always, "--panel", "security", "--agents", "codex")
    assert (code, result["reason"], result["round"]) == (1, "soft_warn", 5)
    assert len([p for p in prompts(fakes) if "Fix return file:" in p]) == 4
    code, result = answer(repo, tmp_path, "--continue")
    assert (code, result["reason"], result["round"]) == (1, "soft_warn", 6)
    assert len([p for p in prompts(fakes) if "Fix return file:" in p]) == 5
    code, result = answer(repo, tmp_path, "--abort")
    assert (code, result["reason"], result["round"]) == (1, "aborted_by_user", 6)
    assert len([p for p in prompts(fakes) if "Fix return file:" in p]) == 5
    assert status(repo)["review_halt"]["reason"] == "aborted_by_user"


def test_check_12_failing_tests_halt_after_three_redispatches(
    repo: Path, tmp_path: Path, fakes: Path
) -> None:  # check 12
    ready_for_review(repo)
    counter = tmp_path / "test-runs"
    test = counting_test(counter, passes_after=None)
    code, result = panel(
        repo,
        tmp_path,
        {"review": {"1": {"security": [p1()]}}},
        "--panel",
        "security",
        "--agents",
        "codex",
        "--test-command",
        test,
    )
    assert (code, result["reason"]) == (1, "tests_failing")
    assert counter.read_text() == "xxxx"
    assert status(repo)["review_cycles"] == 1  # failing tests are not review rejections
    assert len([p for p in prompts(fakes) if "Fix return file:" in p]) == 4
    assert "## Tests still failing" in [p for p in prompts(fakes) if "Fix return file:" in p][-1]


def test_tests_passing_after_a_retry_continue_the_loop(
    repo: Path, tmp_path: Path, fakes: Path
) -> None:
    ready_for_review(repo)
    counter = tmp_path / "test-runs"
    test = counting_test(counter, passes_after=1)
    code, result = panel(
        repo,
        tmp_path,
        {"review": {"1": {"security": [p1()]}}},
        "--panel",
        "security",
        "--agents",
        "codex",
        "--test-command",
        test,
    )
    assert (code, result["loop_verdict"], result["round"]) == (0, "CONVERGED", 2)
    assert counter.read_text() == "xx"


def test_challenge_invalid_findings_never_block(repo: Path, tmp_path: Path, fakes: Path) -> None:
    mission = ready_for_review(repo)
    scripted = {
        "review": {"1": {"security": [p1()], "correctness": [p1("second", "P2")]}},
        "challenge": {
            "1": [
                {"id": "RC1-1", "validity": "INVALID", "evidence": "guarded at impl_wp01.txt:1"},
                {"id": "RC1-2", "validity": "INVALID", "evidence": "trust me"},
            ]
        },
    }
    code, result = panel(
        repo,
        tmp_path,
        scripted,
        "--panel",
        "correctness,security",
        "--agents",
        "codex",
        "--challenge",
        "--challenger",
        "gemini",
    )
    assert code == 0 and (result["loop_verdict"], result["round"]) == ("CONVERGED", 2)
    merged = json.loads(
        (mission / "tasks" / "WP01-alpha" / "review" / "round-1" / "merged.json").read_text()
    )
    assert {f["rc_id"]: f["validity"] for f in merged["findings"]} == {
        "RC1-1": "INVALID",
        "RC1-2": "VALID",
    }
    assert merged["blocking"] == ["RC1-2"]
    cycle = (mission / "tasks" / "WP01-alpha" / "review-cycle-1.md").read_text()
    assert "## INVALID" in cycle and "RC1-1" in cycle


def test_a_failed_reviewer_halts(repo: Path, tmp_path: Path, fakes: Path) -> None:
    ready_for_review(repo)
    code, result = panel(
        repo,
        tmp_path,
        {"review": {"1": {"testing": "garbage"}}},
        "--panel",
        "correctness,testing",
        "--agents",
        "codex",
    )
    assert (code, result["reason"]) == (1, "reviewer_failed")
    halt = json.loads((repo / result["halt_file"]).read_text())
    assert "testing (codex)" in halt["context"]
    wp = status(repo)
    assert (wp["lane"], wp["review_cycles"], wp["review_halt"]["reason"]) == (
        "planned",
        0,
        "reviewer_failed",
    )


def test_concurrency_env_is_checked_before_anything_runs(
    repo: Path, tmp_path: Path, fakes: Path
) -> None:
    ready_for_review(repo)
    done = run(
        repo,
        "review",
        "run",
        "WP01",
        "--panel",
        "security",
        "--agents",
        "codex",
        env={"KITTY_REVIEW_CONCURRENCY": "0"},
    )
    assert done.returncode == 2 and "KITTY_REVIEW_CONCURRENCY" in done.stderr
    assert calls(fakes) == [] and status(repo)["lane"] == "for_review"


def test_waves_respect_the_cap(repo: Path, tmp_path: Path, fakes: Path) -> None:  # check 7 (live)
    ready_for_review(repo)
    personas = "correctness,testing,maintainability,project-standards,security"
    done = run(
        repo,
        "review",
        "run",
        "WP01",
        "--panel",
        personas,
        "--agents",
        "codex",
        env={"KITTY_REVIEW_CONCURRENCY": "2"},
    )
    assert done.returncode == 0, done.stderr
    waves_seen = [line for line in done.stderr.splitlines() if "wave" in line]
    assert len(waves_seen) == 3 and "reviewers=['security']" in waves_seen[-1]


# -- one lane model: next, the board and the sprint ---------------------------------------
def test_next_tells_a_reviewer_to_run_the_configured_panel(repo: Path, fakes: Path) -> None:
    ready_for_review(repo, "review:\n  panel: [correctness, security]\n")
    decision = ok(repo, "next", "--agent", "codex", "--json").json()
    assert decision["action"] == "review"
    assert decision["commands"] == [f"kitty review run WP01 --mission {MISSION} --agent codex"]


def test_the_board_shows_the_round_and_a_halt(repo: Path, tmp_path: Path, fakes: Path) -> None:
    ready_for_review(repo)
    always = {"review": {"1": {"security": [p1()]}, "2": {"security": [p1()]}}}
    panel(repo, tmp_path, always, "--panel", "security", "--agents", "codex", "--max-rounds", "2")
    wp = status(repo)
    assert wp["review_round"] == 2 and wp["review_halt"]["reason"] == "max_rounds"
    board = ok(repo, "status").out
    assert " HALT r2\n  max_rounds\n" in board  # wrapped, not clipped, in a 15-column card


def sprint(
    repo: Path, tmp: Path, scripted: dict[str, Any], *args: str
) -> subprocess.CompletedProcess[str]:
    path = tmp / "panel-script.json"
    path.write_text(json.dumps(scripted))
    return run(
        repo, "sprint", "--no-caffeinate", "--json", "--implementer", "claude",
        "--reviewer", "codex,gemini", "--review-panel", THREE, *args,
        env={"FAKE_PANEL_SCRIPT": str(path)},
    )  # fmt: skip


def sprint_events(done: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def planned_mission(repo: Path) -> Path:
    mission = make_mission(
        repo,
        wps=[{"wp_id": "WP01", "title": "Alpha", "subtasks": ["T001"]}],
        config="agents:\n  available: [claude, codex, gemini]\n",
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plan")
    return mission


def test_sprint_panel_finds_a_p1_the_fix_lands_round_2_converges_and_it_merges(
    repo: Path, tmp_path: Path, fakes: Path
) -> None:
    mission = planned_mission(repo)
    done = sprint(repo, tmp_path, {"review": {"1": {"security": [p1()]}}}, "--merge")
    end = sprint_events(done)[-1]
    assert done.returncode == 0, done.stdout + done.stderr
    assert (end["event"], end["ok"], end["merged"]) == ("end", True, True)
    review = mission / "tasks" / "WP01-alpha" / "review"
    assert json.loads((review / "round-1" / "merged.json").read_text())["blocking"] == ["RC1-1"]
    assert json.loads((review / "round-2" / "merged.json").read_text())["blocking"] == []
    assert "### RC1-1 [P1]" in (mission / "tasks" / "WP01-alpha" / "review-cycle-1.md").read_text()
    wp = status(repo)
    assert (wp["lane"], wp["review_cycles"]) == ("done", 1)
    assert "fixed by claude: round 1" in (repo / "impl_wp01.txt").read_text()
    personas = {
        p.split("Persona: ")[1].split("\n")[0]
        for p in prompts(fakes)
        if p.startswith("# Panel review")
    }
    assert personas == {"correctness", "testing", "security", "previous-comments"}


def test_sprint_panel_halts_on_a_blocker_which_is_answered_then_converges(
    repo: Path, tmp_path: Path, fakes: Path
) -> None:
    planned_mission(repo)
    question = {
        "id": "q1",
        "header": "Empty token",
        "question": "Should an empty token be an error or an anonymous login?",
        "options": [
            {"label": "error", "description": "refuse it"},
            {"label": "anonymous", "description": "log in as guest"},
        ],
    }
    scripted = {
        "review": {"1": {"security": [p1()]}},
        "fix": {"1": [{"status": "blocker", "questions": [question], "context": "spec is silent"}]},
    }
    done = sprint(repo, tmp_path, scripted, "--merge")
    events = sprint_events(done)
    assert done.returncode == 1
    halt = next(e for e in events if e["event"] == "halt")
    assert "review panel HALT (blocker)" in halt["message"]
    assert f"kitty review answer WP01 --mission {MISSION}    # shows" in halt["message"]
    assert status(repo)["review_halt"]["reason"] == "blocker"
    code, result = answer(repo, tmp_path, "--answer", "q1=error")
    assert (code, result["loop_verdict"], result["round"]) == (0, "CONVERGED", 2)
    done = sprint(repo, tmp_path, scripted, "--merge")
    assert done.returncode == 0, done.stdout + done.stderr
    assert status(repo)["lane"] == "done"


def test_errors_remaining_feed_the_next_fix(repo: Path, tmp_path: Path, fakes: Path) -> None:
    ready_for_review(repo)
    scripted = {
        "review": {"1": {"security": [p1()]}, "2": {"security": [p1()]}},
        "fix": {
            "1": [{"status": "done", "gate_status": "errors", "errors_remaining": ["mypy: x"]}]
        },
    }
    code, result = panel(repo, tmp_path, scripted, "--panel", "security", "--agents", "codex")
    assert (code, result["loop_verdict"], result["round"]) == (0, "CONVERGED", 3)
    fixes = [p for p in prompts(fakes) if "Fix return file:" in p]
    assert len(fixes) == 2
    assert "## Errors remaining from the previous fix" not in fixes[0]
    assert "## Errors remaining from the previous fix\n- mypy: x" in fixes[1]


def test_a_review_held_by_another_reviewer_is_not_taken_over(
    repo: Path, tmp_path: Path, fakes: Path
) -> None:
    ready_for_review(repo)
    ok(repo, "move", "WP01", "in_review", "--agent", "gemini")
    code, result = panel(repo, tmp_path, {}, "--panel", "security", "--agents", "codex")
    assert code == 1 and "in review by gemini" in result["error"]["message"]
    assert calls(fakes) == [] and status(repo)["lane"] == "in_review"


def test_a_blocker_with_plain_string_options_halts_with_a_summary(
    repo: Path, tmp_path: Path, fakes: Path
) -> None:
    """Issue 22.9: `"options": ["error", "guest"]` crashed the text summary (exit 3)."""
    ready_for_review(repo)
    q = [{"id": "q1", "header": "h", "question": "Error or guest?", "options": ["error", "guest"]}]
    scripted = {
        "review": {"1": {"security": [p1()]}},
        "fix": {"1": [{"status": "blocker", "questions": q}]},
    }
    path = tmp_path / "panel-script.json"
    path.write_text(json.dumps(scripted))
    done = run(
        repo, "review", "run", "WP01", "--panel", "security", "--agents", "codex",
        env={"FAKE_PANEL_SCRIPT": str(path)},
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "HALT: blocker_malformed at round 1." in done.stdout
    assert (
        'Why: questions[0].options[0]: "error" is not an object with a label '
        '(each option is {"label": "...", "description": "..."})'
    ) in done.stdout
    assert "unexpected internal error" not in done.stderr


def test_blocker_problems_name_the_malformed_shape() -> None:
    problems = blocker_problems(
        {"questions": [{"id": "q1", "header": "h", "question": "?", "options": ["a", "b"]}]}
    )
    assert problems == [
        'questions[0].options[0]: "a" is not an object with a label '
        '(each option is {"label": "...", "description": "..."})',
        'questions[0].options[1]: "b" is not an object with a label '
        '(each option is {"label": "...", "description": "..."})',
    ]


def test_a_reviewer_that_commits_into_the_lane_fails_the_round(
    repo: Path, tmp_path: Path, fakes: Path
) -> None:
    """Issue 22.6: a reviewer committed into the lane and found nothing: no CONVERGED,
    no approval of code nobody reviewed, the HALT names the change."""
    ready_for_review(repo)
    scripted = {"review": {"1": {"security": "edit"}}}
    code, result = panel(repo, tmp_path, scripted, "--panel", "security", "--agents", "codex")
    assert (code, result["loop_verdict"], result["reason"]) == (1, "HALT", "reviewer_failed")
    assert "the lane changed during review round 1 (security)" in result["context"]
    assert "reviewer edit" in result["context"] and "reviewer_edit.txt" in result["context"]
    assert status(repo)["lane"] != "approved"


def test_a_single_reviewer_that_edits_cannot_approve(repo: Path) -> None:
    """Issue 22.6, single reviewer: the approval refuses, naming the change."""
    ready_for_review(repo)
    review = ok(repo, "agent", "action", "review", "WP01", "--agent", "codex", "--json").json()
    ws = Path(review["workspace"])
    (ws / "impl_wp01.txt").write_text("changed by the reviewer\n")
    done = run(repo, "move", "WP01", "approved", "--agent", "codex", "--note", "Review passed")
    assert done.returncode == 1
    assert "reviewer_failed: WP01's lane changed during codex's review" in done.stderr
    assert "uncommitted: impl_wp01.txt" in done.stderr
    assert status(repo)["lane"] == "in_review"
    git(ws, "checkout", "--", "impl_wp01.txt")
    ok(repo, "move", "WP01", "approved", "--agent", "codex", "--note", "Review passed")


def test_the_review_cycle_file_names_the_panel_agents_and_who_ran_it(
    repo: Path, tmp_path: Path, fakes: Path
) -> None:
    """Issue 22.11: `reviewer_agent` was the runner's git user.name."""
    mission = ready_for_review(repo)
    code, result = panel(
        repo, tmp_path, {}, "--panel", "correctness,security", "--agents", "codex,gemini",
        "--agent", "lead",
    )  # fmt: skip
    assert (code, result["loop_verdict"]) == (0, "CONVERGED")
    import yaml

    path = next((mission / "tasks").glob("WP01-*/review-cycle-1.md"))
    front = yaml.safe_load(path.read_text().split("---")[1])
    assert (front["reviewer_agent"], front["recorded_by"]) == ("codex, gemini", "lead")


def test_next_prints_each_blocker_answer_as_a_command_that_runs(
    repo: Path, tmp_path: Path, fakes: Path
) -> None:
    """Issue 22.7: `--answer <id>=<label>` was a shell syntax error; each option of each
    open question is now a concrete choice, which runs as printed and names its actor."""
    import shlex

    ready_for_review(repo)
    q = [{"id": "q1", "header": "h", "question": "Error or guest?",
          "options": [{"label": "error"}, {"label": "guest login"}]}]  # fmt: skip
    scripted = {"review": {"1": {"security": [p1()]}}, "fix": {"1": [{"status": "blocker",
                "questions": q}]}}  # fmt: skip
    code, result = panel(repo, tmp_path, scripted, "--panel", "security", "--agents", "codex")
    assert (code, result["reason"]) == (1, "blocker")
    assert "--answer q1=error" in result["hint"] and "<id>" not in result["hint"]
    nxt = ok(repo, "next", "--agent", "gemini", "--json").json()
    assert (nxt["action"], nxt["commands"]) == ("arbiter", [])
    answers = [c["commands"] for c in nxt["choices"] if c["label"].startswith("answer")]
    assert answers == [
        [f"kitty review answer WP01 --mission {MISSION} --answer q1=error --agent gemini"],
        [f"kitty review answer WP01 --mission {MISSION} --answer 'q1=guest login' --agent gemini"],
    ]
    done = run(repo, *shlex.split(answers[1][0])[1:],
               env={"FAKE_PANEL_SCRIPT": str(tmp_path / "panel-script.json")})  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "CONVERGED at round 2" in done.stdout
    recorded = next((repo / "kitty-specs").glob("*/tasks/WP01-*/review-halt-*.answers.json"))
    assert json.loads(recorded.read_text())["q1"]["answered_by"] == "gemini"
