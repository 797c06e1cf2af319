"""`kitty verify WP`: the project's verification commands run in the WP's lane worktree
(real git, a real pytest suite), and the result is an annotation in the log that Spec
Kitty 3.2.7 reads, shown by `kitty status --json`."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from tests import oracle
from tests.helpers import git, kitty, ok
from tests.workflow.gating.project import SLUG, implement, project


def gate_lines(repo: Path) -> list[dict[str, object]]:
    log = repo / "kitty-specs" / SLUG / "status.events.jsonl"
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    return [e for e in lines if e.get("kind") == "annotation" and "gate" in e.get("delta", {})]


def test_a_passing_gate_is_recorded_with_the_commit_tested(repo: Path, tmp_path: Path) -> None:
    project(repo)
    workspace = implement(repo, "WP01", "fine\n")
    run = ok(repo, "verify", "WP01", "--json").json()
    assert run["commit"] == git(workspace, "rev-parse", "HEAD").strip() and run["clean"]
    assert run["passed"] and run["result"] == "passed" and not run["flaky"]
    assert run["workspace"] == str(workspace)
    (command,) = run["commands"]
    assert command["name"] == "test" and command["exit"] == 0 and command["exits"] == [0]
    assert Path(command["output"]).is_file()
    assert "2 passed" in Path(command["output"]).read_text()
    assert Path(command["output"]).is_relative_to(repo / ".kittify" / "runs")
    (line,) = gate_lines(repo)
    assert line["delta"]["gate"] == "passed"
    assert line["delta"]["gate_commit"] == run["commit"]
    assert line["delta"]["gate_run"]["commands"][0]["exit"] == 0
    gate = ok(repo, "status", "--json").json()["work_packages"][0]["gate"]
    assert gate["result"] == "passed" and gate["commit"] == run["commit"]
    assert gate["failures"] == 0 and "exit 0" in gate["summary"]
    (read,) = oracle.run([{"dir": str(repo / "kitty-specs" / SLUG)}], tmp_path)
    assert "error" not in read and read["lanes"]["WP01"] == "in_progress"


def test_a_failing_gate_exits_1_with_the_failing_output(repo: Path, tmp_path: Path) -> None:
    project(repo)
    implement(repo, "WP01", "bad\n")
    run = kitty(repo, "verify", "WP01")
    assert run.code == 1
    assert "WP01: tests FAILED at" in run.out and "test_no_file_is_bad" in run.out
    data = kitty(repo, "verify", "WP01", "--json")
    assert data.code == 1
    result = data.json()
    (command,) = result["commands"]
    assert command["exits"] == [1, 1] and not command["passed"] and not command["flaky"]
    assert "1 failed" in command["tail"]
    assert [e["delta"]["gate_failures"] for e in gate_lines(repo)] == [1, 2]
    (read,) = oracle.run([{"dir": str(repo / "kitty-specs" / SLUG)}], tmp_path)
    assert "error" not in read


def test_a_command_that_fails_then_passes_is_flaky_not_hidden(repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran-once"
    script = tmp_path / "flaky.py"
    script.write_text(
        "import pathlib, sys\n"
        f"m = pathlib.Path({str(marker)!r})\n"
        "if not m.exists():\n    m.write_text('x'); print('first run fails'); sys.exit(3)\n"
        "print('second run passes')\n"
    )
    project(repo, extra=f"  flaky: {sys.executable} {script}\n")
    implement(repo, "WP01", "fine\n")
    run = ok(repo, "verify", "WP01", "--json").json()
    assert run["passed"] and run["flaky"] and run["result"] == "flaky"
    test, flaky = run["commands"]
    assert test["exits"] == [0] and flaky["exits"] == [3, 0] and flaky["flaky"]
    text = ok(repo, "status", "--json").json()["work_packages"][0]["gate"]
    assert text["result"] == "flaky" and "flaky" in text["summary"]


def test_the_gate_stops_at_the_first_failure_and_times_out(repo: Path, tmp_path: Path) -> None:
    sleeper = tmp_path / "sleep.py"
    sleeper.write_text("import time\ntime.sleep(30)\n")
    never = tmp_path / "never-ran"
    project(
        repo,
        extra=f"  slow: {sys.executable} {sleeper}\n  after: touch {never}\ngate:\n  timeout: 5\n",
    )
    implement(repo, "WP01", "fine\n")
    run = kitty(repo, "verify", "WP01", "--json")
    assert run.code == 1
    test, slow = run.json()["commands"]
    assert test["passed"] and slow["exit"] is None and slow["exits"] == [None]
    assert 5 <= slow["seconds"] < 15
    assert not never.exists()


def test_an_untrusted_or_changed_command_never_runs(repo: Path, tmp_path: Path) -> None:
    project(repo)
    implement(repo, "WP01", "fine\n")
    config = repo / ".kittify" / "config.yaml"
    marker = tmp_path / "ran"
    config.write_text(config.read_text() + f"  evil: touch {marker}\n")
    run = kitty(repo, "verify", "WP01")
    assert run.code != 0 and "kitty trust" in run.err and not marker.exists()
    assert gate_lines(repo) == []


@pytest.mark.parametrize(
    ("gate", "words"),
    [("gate: 3\n", "gate must be a mapping"), ("gate:\n  timeout: 0\n", "gate.timeout")],
)
def test_bad_gate_settings_are_named(repo: Path, gate: str, words: str) -> None:
    project(repo, extra=gate)
    implement(repo, "WP01", "fine\n")
    run = kitty(repo, "verify", "WP01")
    assert run.code != 0 and words in run.err and "Traceback" not in run.err


def test_verify_without_commands_or_worktree_says_what_to_do(repo: Path) -> None:
    project(repo)
    run = kitty(repo, "verify", "WP01")
    assert run.code != 0 and "kitty agent action implement WP01" in run.err
    hint = run.err.split("start it first: ", 1)[1].split("\n")[0].strip()
    assert ok(repo, *shlex.split(hint)[1:], "--agent", "claude").code == 0  # runs as printed
    assert kitty(repo, "verify", "WP01").code == 0
    config = repo / ".kittify" / "config.yaml"
    config.write_text("agents:\n  available: [claude, codex]\n")
    run = kitty(repo, "verify", "WP01")
    assert run.code == 2 and "verify: {test:" in run.err


def test_the_board_next_and_the_review_prompt_show_the_gate(repo: Path) -> None:
    project(repo)
    workspace = implement(repo, "WP01", "fine\n")
    commit = git(workspace, "rev-parse", "HEAD").strip()
    ok(repo, "verify", "WP01")
    assert "tests ok" in ok(repo, "status").out
    assert "tests ok" in ok(repo, "status", "--list").out
    ok(repo, "agent", "tasks", "move-task", "WP01", "--to", "for_review", "--agent", "claude",
       "--note", "ready")  # fmt: skip
    decision = ok(repo, "next", "--agent", "codex", "--json").json()
    assert decision["wp_id"] == "WP01" and decision["gate"]["result"] == "passed"
    assert decision["gate"]["commit"] == commit
    assert f"tests: passed at {commit[:10]}" in ok(repo, "next", "--agent", "codex").out
    prompt = ok(repo, "agent", "action", "review", "WP01", "--agent", "codex", "--json").json()
    text = Path(prompt["prompt"]).read_text()
    assert f"the tests passed at {commit}" in text


def test_a_failed_gate_makes_the_next_implement_prompt_a_fix(repo: Path) -> None:
    project(repo)
    implement(repo, "WP01", "bad\n")
    kitty(repo, "verify", "WP01")
    assert "TESTS FAILED" in ok(repo, "status").out
    claimed = ok(repo, "agent", "action", "implement", "WP01", "--agent", "claude", "--json")
    text = Path(claimed.json()["prompt"]).read_text()
    assert text.startswith("# Fix WP01") and claimed.json()["fix_mode"]
    top = text.split("## Workspace")[0]
    assert "## The test gate failed" in top and "test_no_file_is_bad" in top


def test_files_the_commands_leave_behind_are_named(repo: Path, tmp_path: Path) -> None:
    project(repo, extra="  junk: touch coverage.dat\n")
    implement(repo, "WP01", "fine\n")
    assert "left files in the worktree (ignore or remove them): coverage.dat" in (
        ok(repo, "verify", "WP01").out
    )
    again = ok(repo, "verify", "WP01", "--json").json()  # now the tree is not clean
    assert again["left_behind"] == [] and again["clean"] is False
    ok(repo, "agent", "tasks", "move-task", "WP01", "--to", "for_review", "--agent", "claude",
       "--note", "ready", "--force")  # fmt: skip
    prompt = ok(repo, "agent", "action", "review", "WP01", "--agent", "codex", "--json").json()
    assert "the commit alone was not tested" in Path(prompt["prompt"]).read_text()


def test_an_untrusted_gate_stops_a_sprint_before_it_claims(repo: Path) -> None:
    project(repo)
    config = repo / ".kittify" / "config.yaml"
    config.write_text(config.read_text().replace("-q ", "-q -x "))
    run = kitty(repo, "sprint", "--implementer", "claude", "--reviewer", "codex", "--json")
    said = run.out + run.err
    assert run.code != 0 and "verify.test" in said and "kitty trust" in said, said
    lanes = {w["id"]: w["lane"] for w in ok(repo, "status", "--json").json()["work_packages"]}
    assert lanes == {"WP01": "planned", "WP02": "planned"}
