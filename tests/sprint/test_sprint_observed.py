"""`kitty sprint` tells the truth about each run (issue 38), with fake agent CLIs on
PATH printing what the real ones print (tests/agents drives the real ones): refused
calls by the CLI a command runs, the agent's own error and what it means, tokens and
cost with --budget, models per role, a reviewer with no verdict."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import install_fakes, kitty_argv, ok, trust
from tests.sprint.test_sprint import FAKE, NAMES, calls, events, lanes_of, planned, sprint

pytestmark = pytest.mark.usefixtures("spec_kitty_reads_what_is_left")

CONFIG = "agents:\n  available: [claude, codex]\n"


@pytest.fixture
def fakes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    import sys

    install_fakes(tmp_path / "bin", NAMES, f"#!{sys.executable}\n{FAKE.read_text()}", monkeypatch)
    log = tmp_path / "agents.jsonl"
    log.touch()
    monkeypatch.setenv("FAKE_AGENT_LOG", str(log))
    monkeypatch.setenv("FAKE_STATE_DIR", str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parents[2]))
    return log


def claude_result(**fields: Any) -> str:
    return json.dumps({"type": "result", "subtype": "success", "is_error": False, **fields})


def end_of(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    end = events(done)[-1]
    assert end["event"] == "end", done.stdout[-2000:] + done.stderr[-2000:]
    return end


def configure(repo: Path, text: str) -> None:
    (repo / ".kittify" / "config.yaml").write_text(CONFIG + text)


def test_an_overridden_claude_keeps_its_denials_on_one_line_in_every_summary(
    repo: Path, fakes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """agents.commands.claude runs claude differently: its refused calls are still read
    (by the executable), shown on one line whatever the command holds, counted per WP
    in the table, listed in --json; a refused verification command flags the WP."""
    planned(repo, [{"wp_id": "WP01"}])
    configure(
        repo,
        '  commands:\n    claude: [claude, -p, "{prompt}"]\n'
        'verify:\n  test: "python -m compileall -q ."\n',
    )
    trust(repo)
    denials = [
        {"tool_name": "Bash", "tool_input": {"command": "python -m compileall -q . src"}},
        {"tool_name": "Bash", "tool_input": {"command": "printf 'a\nb'"}},
    ]
    monkeypatch.setenv("FAKE_CLAUDE_RESULT", claude_result(permission_denials=denials))
    done = sprint(repo, "--implementer", "claude", "--reviewer", "codex")
    (finished, _) = [e for e in events(done) if e["event"] == "finished"]
    assert finished["how"] == (
        "exit 0; claude was denied 2 tool call(s): Bash(python -m compileall -q . src), "
        "Bash(printf 'a\\nb')"
    )
    assert finished["denials"] == ["Bash(python -m compileall -q . src)", "Bash(printf 'a\\nb')"]
    end = end_of(done)
    assert end["ok"], end
    (row,) = end["summary"]
    assert row["denials"] == finished["denials"]
    assert row["verify_refused"] == ["Bash(python -m compileall -q . src)"]
    assert end["verify_refused"] == ["WP01"]
    assert end["denials"] == [{"wp_id": "WP01", "call": d} for d in finished["denials"]]
    # the text: one line per run, the count per WP in the end table
    text = subprocess.run(
        kitty_argv(repo, "sprint", "--no-caffeinate", "--implementer", "claude", "--reviewer",
                   "codex", "--dry-run"),
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert text.returncode == 0, text.stderr
    from kitty.commands.sprint_view import describe

    table = describe(end) or ""
    (line,) = [x for x in table.splitlines() if x.startswith("WP01 ")]
    assert line.split()[6:8] == ["2", "-"], line  # 2 denied, no usage reported
    assert line.endswith("VERIFICATION REFUSED"), line
    assert (
        "WP01: its implementer was refused a verification command: "
        "Bash(python -m compileall -q . src)"
    ) in table.splitlines()
    assert "VERIFICATION REFUSED: Bash(python -m compileall -q . src)" in describe(finished)
    assert "denied: WP01 Bash(printf 'a\\nb')" in table.splitlines()
    assert "\n" not in (describe(finished) or "")


def test_an_auth_error_stops_at_once_in_the_agents_words_with_what_to_fix(
    repo: Path, fakes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_CLAUDE_MODE", "auth")
    planned(repo, [{"wp_id": "WP01"}])
    done = sprint(repo, "--implementer", "claude", "--reviewer", "codex", "--retries", "2")
    assert done.returncode == 1
    runs = [c for c in calls(fakes) if c["name"] == "claude"]
    assert len(runs) == 1  # not three: a re-run fails the same way
    (finished,) = [e for e in events(done) if e["event"] == "finished"]
    fix = "claude: not logged in — run `claude auth login` or set ANTHROPIC_API_KEY"
    assert finished["how"].startswith(
        f"exit 1: Invalid API key · Fix external API key [auth] {fix}"
    ), finished
    assert finished["error_kind"] == "auth"
    (blocked,) = [e for e in events(done) if e["event"] == "blocked"]
    assert blocked["reason"].startswith("sprint stopped at once")
    assert "Invalid API key" in blocked["reason"] and fix in blocked["reason"]
    assert end_of(done)["errors"] == [
        {"wp_id": "WP01", "agent": "claude", "role": "implement", "kind": "auth",
         "error": "Invalid API key · Fix external API key"}
    ]  # fmt: skip
    assert lanes_of(repo) == {"WP01": "blocked"}


def test_a_rate_limit_backs_off_instead_of_using_up_the_retries(
    repo: Path, fakes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_CLAUDE_MODE", "limited")  # the first run only
    planned(repo, [{"wp_id": "WP01"}])
    done = sprint(repo, "--implementer", "claude", "--reviewer", "codex", "--retries", "0")
    end = end_of(done)
    assert done.returncode == 0 and end["ok"], end
    (backoff,) = [e for e in events(done) if e["event"] == "backoff"]
    assert backoff["seconds"] == 1  # the retry-after the agent's words carry
    assert backoff["reason"].startswith("rate limit: API Error: Request rejected (429)")
    assert len([c for c in calls(fakes) if c["name"] == "claude"]) == 2


def test_a_rate_limited_reviewer_waits_and_reviews_again_never_halts(
    repo: Path, fakes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_CODEX_MODE", "limited")  # the first run only
    planned(repo, [{"wp_id": "WP01"}])
    done = sprint(repo, "--implementer", "claude", "--reviewer", "codex")
    end = end_of(done)
    assert end["ok"] and not [e for e in events(done) if e["event"] == "halt"], end
    (backoff,) = [e for e in events(done) if e["event"] == "backoff"]
    assert (backoff["role"], backoff["seconds"]) == ("review", 1)
    log = (repo / "kitty-specs" / "demo-01ABCDEF" / "status.events.jsonl").read_text()
    assert "reviewer codex hit rate limit: API Error: Request rejected (429)" in log
    assert [e["wp_id"] for e in events(done) if e["event"] == "dispatch"].count("WP01") == 3


def test_a_reviewer_that_leaves_no_verdict_is_reported_as_such(
    repo: Path, fakes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_CODEX_MODE", "noop")
    planned(repo, [{"wp_id": "WP01"}])
    done = sprint(repo, "--implementer", "claude", "--reviewer", "codex")
    review = [e for e in events(done) if e["event"] == "finished" and e["role"] == "review"]
    assert review[0]["how"] == "exited without a verdict (exit 0, WP01 left in in_review)"
    (halt,) = [e for e in events(done) if e["event"] == "halt"]
    assert "failed (exited without a verdict (exit 0, WP01 left in in_review))" in halt["message"]


def test_cost_and_tokens_are_summed_recorded_and_the_budget_stops_new_runs(
    repo: Path, fakes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    usage = {"input_tokens": 1000, "output_tokens": 200, "cache_read_input_tokens": 50}
    monkeypatch.setenv(
        "FAKE_CLAUDE_RESULT", claude_result(total_cost_usd=0.6, usage=usage, num_turns=4)
    )
    monkeypatch.setenv(
        "FAKE_CODEX_RESULT",
        json.dumps({"type": "turn.completed", "usage": {"input_tokens": 30, "output_tokens": 5}}),
    )
    planned(repo, [{"wp_id": f"WP0{i}"} for i in (1, 2, 3)])
    done = sprint(
        repo, "--implementer", "claude", "--reviewer", "codex", "--parallel", "1",
        "--budget", "1",
    )  # fmt: skip
    assert done.returncode == 1
    end = end_of(done)
    # implement WP01 ($0.6), review WP01, implement WP02 ($1.2): no new run after that
    runs = [(e["wp_id"], e["role"]) for e in events(done) if e["event"] == "dispatch"]
    assert runs == [("WP01", "implement"), ("WP01", "review"), ("WP02", "implement")]
    assert end["reason"].startswith("budget reached: $1.2000 spent of --budget $1")
    assert end["budget_stop"].startswith("budget reached")
    total = end["usage"]["total"]
    assert (total["cost_usd"], total["tokens"], total["runs"]) == (1.2, 2435, 3)
    assert end["usage"]["by_agent"]["codex"]["tokens"] == 35
    assert end["usage"]["by_role"]["implement"]["turns"] == 8
    assert "codex reports tokens, no cost" in end["usage"]["not_reported"]
    rows = {r["wp_id"]: r for r in end["summary"]}
    assert rows["WP01"]["usage"]["cost_usd"] == 0.6 and rows["WP01"]["usage"]["runs"] == 2
    assert rows["WP03"]["usage"] == {} and lanes_of(repo)["WP03"] == "planned"
    # the mission's log keeps each run's record: status --json sums it per WP
    status = {w["id"]: w for w in ok(repo, "status", "--json").json()["work_packages"]}
    assert status["WP01"]["usage"]["cost_usd"] == 0.6
    assert status["WP01"]["usage"]["runs"] == 2
    assert status["WP02"]["usage"]["input_tokens"] == 1000
    assert status["WP03"]["usage"] is None
    # and the run's own log
    (impl_log,) = Path(end["logs"]).glob("WP01-implement-*.log")
    record = json.loads(impl_log.read_text().splitlines()[-1].removeprefix("# run: "))
    assert record["usage"]["cost_usd"] == 0.6 and record["outcome"] == "exit 0"
    # the dry run estimates from these past runs
    dry = sprint(repo, "--implementer", "claude", "--reviewer", "codex", "--dry-run")
    estimate = events(dry)[-1]["estimate"]
    # WP02 and WP03 are not approved: 2 runs each, at the mean of the 3 past runs
    assert estimate == {"past_runs": 3, "planned_runs": 4, "cost_usd": 1.6, "tokens": 3247}
    assert (
        "estimate: $1.6000, 3247 tokens for 4 more runs"
        in ok(repo, "sprint", "--implementer", "claude", "--reviewer", "codex", "--dry-run").out
    )


def test_max_tokens_stops_new_runs_too(
    repo: Path, fakes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    usage = {"input_tokens": 1000, "output_tokens": 200}
    monkeypatch.setenv("FAKE_CLAUDE_RESULT", claude_result(usage=usage))
    planned(repo, [{"wp_id": "WP01"}, {"wp_id": "WP02"}])
    done = sprint(
        repo, "--implementer", "claude", "--reviewer", "codex", "--parallel", "1",
        "--max-tokens", "1000",
    )  # fmt: skip
    end = end_of(done)
    assert end["reason"].startswith("token budget reached: 1200 tokens spent of --max-tokens 1000")
    assert len([e for e in events(done) if e["event"] == "dispatch"]) == 1


def test_models_per_role_reach_each_cli_flag_and_show_in_plan_and_summary(
    repo: Path, fakes: Path
) -> None:
    planned(repo, [{"wp_id": "WP01"}])
    configure(repo, "  models:\n    claude:\n      implement: from-config\n")
    dry = sprint(repo, "--implementer", "claude", "--reviewer", "codex", "--dry-run")
    (entry,) = events(dry)[-1]["first_wave"]
    assert entry["model"] == "from-config" and entry["command"][-2:] == ["--model", "from-config"]
    done = sprint(
        repo, "--implementer", "claude", "--reviewer", "codex", "--implementer-model", "big",
        "--reviewer-model", "small",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:]
    claude, codex = (next(c for c in calls(fakes) if c["name"] == n) for n in ("claude", "codex"))
    assert claude["argv"][-2:] == ["--model", "big"]
    assert codex["argv"][codex["argv"].index("--model") + 1] == "small"
    dispatched = {e["role"]: e["model"] for e in events(done) if e["event"] == "dispatch"}
    assert dispatched == {"implement": "big", "review": "small"}
    end = end_of(done)
    assert end["summary"][0]["models"] == ["implement: big", "review: small"]
    assert end["models"] == {"implementer": "big", "reviewer": "small"}
