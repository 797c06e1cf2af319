"""What each agent CLI's own output says about a run (kitty.agents.reports), on output
shaped as the pinned releases print it (tests/agents runs the real binaries), and the
pure rules the sprint applies to it (failure classes, back-off, spend, budget)."""

from __future__ import annotations

import json

import pytest

from kitty.agents.reports import cli_of, one_line, plain_error, read_report
from kitty.sprint.rules import failure, spend

CLAUDE = json.dumps(
    {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "result": "Done.",
        "num_turns": 3,
        "duration_api_ms": 586,
        "total_cost_usd": 0.00042,
        "usage": {"input_tokens": 30, "output_tokens": 15, "cache_read_input_tokens": 7,
                  "cache_creation_input_tokens": 2},
        "modelUsage": {"claude-opus-5-5": {"costUSD": 0.00042}},
        "permission_denials": [
            {"tool_name": "Bash", "tool_input": {"command": "touch x\necho two"}},
            {"tool_name": "Write", "tool_input": {"file_path": "/elsewhere/f.txt"}},
        ],
    }
)  # fmt: skip
GEMINI = "\n".join(
    json.dumps(o)
    for o in [
        {"type": "init", "model": "gemini-9"},
        {"type": "tool_use", "tool_name": "run_shell_command", "tool_id": "t1",
         "parameters": {"command": "pytest -q"}},
        {"type": "tool_result", "tool_id": "t1", "status": "error",
         "error": {"type": "policy_violation", "message": "Tool execution denied by policy."}},
        {"type": "tool_use", "tool_name": "read_file", "tool_id": "t2",
         "parameters": {"file_path": "/nope"}},
        {"type": "tool_result", "tool_id": "t2", "status": "error",
         "error": {"type": "file_not_found", "message": "no such file"}},
        {"type": "result", "status": "success",
         "stats": {"input_tokens": 40, "output_tokens": 20, "cached": 0, "duration_ms": 171}},
    ]
)  # fmt: skip
OPENCODE = "\n".join(
    json.dumps(o)
    for o in [
        {"type": "tool_use", "part": {"tool": "bash", "state": {
            "status": "error", "input": {"command": "rm -rf /"},
            "error": "The user has specified a rule which prevents you from using this "
            "specific tool call. Here are some of the relevant rules [...]"}}},
        {"type": "tool_use", "part": {"tool": "bash", "state": {
            "status": "error", "input": {"command": "false"}, "error": "exit 1"}}},
        {"type": "step_finish", "part": {"tokens": {"input": 10, "output": 5, "reasoning": 1,
                                                    "cache": {"read": 3, "write": 0}},
                                         "cost": 0.01}},
        {"type": "step_finish", "part": {"tokens": {"input": 10, "output": 5}, "cost": 0.02}},
    ]
)  # fmt: skip
CODEX = "\n".join(
    json.dumps(o)
    for o in [
        {"type": "thread.started"},
        {"type": "item.completed", "item": {"type": "error", "message": "metadata warning"}},
        {"type": "turn.completed", "usage": {"input_tokens": 30, "cached_input_tokens": 4,
                                             "output_tokens": 15}},
    ]
)  # fmt: skip


def test_the_cli_is_the_executable_a_command_runs_not_the_backends_kind() -> None:
    assert cli_of(["claude", "-p"]) == "claude"
    assert cli_of(["/opt/bin/claude", "-p"]) == "claude"  # an agents.commands override
    assert cli_of(["env", "ANTHROPIC_MODEL=x", "claude", "-p"]) == "claude"
    assert cli_of(["timeout", "600", "qwen", "-y"]) == "qwen"
    assert cli_of(["/usr/bin/python3", "/tools/gemini.py", "--x"]) == "gemini"
    assert cli_of(["mytool", "--prompt-file", "p.md"]) is None
    assert cli_of([]) is None


def test_claude_denials_usage_and_model_each_denial_on_one_line() -> None:
    report = read_report("claude", "warning: noise\n" + CLAUDE)
    assert report.denials == ["Bash(touch x\\necho two)", "Write(/elsewhere/f.txt)"]
    assert all("\n" not in d for d in report.denials)
    assert report.usage == {
        "input_tokens": 30, "output_tokens": 15, "cache_read_tokens": 7,
        "cache_write_tokens": 2, "cost_usd": 0.00042, "turns": 3, "api_ms": 586,
    }  # fmt: skip
    assert report.model == "claude-opus-5-5" and report.error is None


def test_claudes_is_error_result_is_its_error_with_the_status() -> None:
    out = json.dumps(
        {"type": "result", "subtype": "success", "is_error": True, "api_error_status": 401,
         "result": "Invalid API key · Fix external API key\nmore"}
    )  # fmt: skip
    report = read_report("claude", out)
    assert (report.error, report.status) == ("Invalid API key · Fix external API key", 401)


def test_qwens_message_array_ends_with_claudes_result_shape() -> None:
    out = json.dumps(
        [{"type": "system"}, {"type": "result", "usage": {"input_tokens": 30, "output_tokens": 15},
          "num_turns": 3, "permission_denials": [
              {"tool_name": "run_shell_command", "tool_input": {"command": "rm -rf build"}}]}]
    )  # fmt: skip
    report = read_report("qwen", out)
    assert report.denials == ["run_shell_command(rm -rf build)"]
    assert report.usage == {"input_tokens": 30, "output_tokens": 15, "turns": 3}


def test_gemini_stream_json_a_policy_refusal_is_a_denial_another_error_is_not() -> None:
    report = read_report("gemini", GEMINI)
    assert report.denials == ["run_shell_command(pytest -q)"]
    assert report.usage == {
        "input_tokens": 40, "output_tokens": 20, "cache_read_tokens": 0, "api_ms": 171
    }  # fmt: skip
    assert report.model == "gemini-9"


def test_opencode_rule_refusals_and_step_tokens_and_cost() -> None:
    report = read_report("opencode", OPENCODE)
    assert report.denials == ["bash(rm -rf /)"]
    assert report.usage == {
        "input_tokens": 20, "output_tokens": 11, "cache_read_tokens": 3,
        "cache_write_tokens": 0, "cost_usd": pytest.approx(0.03), "turns": 2,
    }  # fmt: skip


def test_codex_usage_and_its_turn_failure_with_the_status() -> None:
    report = read_report("codex", CODEX)
    assert report.usage == {
        "input_tokens": 30, "output_tokens": 15, "cache_read_tokens": 4, "turns": 1
    }  # fmt: skip
    assert report.error is None and report.denials == []
    failed = (
        CODEX
        + "\n"
        + json.dumps(
            {"type": "turn.failed", "error": {"message": "unexpected status 404 Not Found: model"}}
        )
    )
    assert read_report("codex", failed).status == 404


def test_a_run_without_structured_output_gets_its_first_error_line() -> None:
    assert read_report(None, CLAUDE).denials == []  # an unknown CLI: nothing is guessed
    log = "# kitty sprint ...\n# command: x\nstarting\nError: no credentials\nbye\n"
    assert plain_error(log) == "Error: no credentials"
    assert plain_error("# header only\n") is None
    assert one_line("a\nb\tc") == "a\\nb\\tc"


@pytest.mark.parametrize(
    ("words", "status", "kind"),
    [
        ("Invalid API key · Fix external API key", 401, failure.AUTH),
        ("unexpected status 401 Unauthorized: invalid x-api-key", None, failure.AUTH),
        ("There's an issue with the selected model (m). It may not exist", 404, failure.MODEL),
        ("API Error: Request rejected (429) · rate limit", 429, failure.RATE_LIMIT),
        ("exceeded retry limit, last status: 429 Too Many Requests", None, failure.RATE_LIMIT),
        ("API Error: 529 Overloaded.", 529, failure.OVERLOADED),
        ("API Error: Connection dropped (ECONNRESET).", None, failure.UNREACHABLE),
        ("stream disconnected before completion: error sending request", None, failure.UNREACHABLE),
        ("Segmentation fault", None, failure.CRASH),
    ],
)
def test_failures_are_classified_from_the_agents_words(
    words: str, status: int | None, kind: str
) -> None:
    assert failure.classify(words, status, "claude", "claude", "implement").kind == kind


def test_fatal_failures_say_what_to_fix_transient_ones_back_off() -> None:
    auth = failure.classify("Invalid API key", 401, "claude", "claude", "implement")
    assert auth.fatal and not auth.backs_off
    assert auth.fix == (
        "claude: not logged in — run `claude auth login` or set ANTHROPIC_API_KEY, "
        "then run the sprint again"
    )
    model = failure.classify("model not found", 404, "codex", "codex", "review")
    assert model.fatal and "--reviewer-model MODEL" in model.fix
    assert "agents.models.codex.review" in model.fix
    limited = failure.classify("rate limited; retry after 17s", 429, "codex", "codex", "review")
    assert limited.backs_off and not limited.fatal and limited.retry_after == 17
    assert failure.wait_for(limited, 0, 30) == 17  # the agent's retry-after wins
    bare = failure.classify("429 Too Many Requests", None, "codex", "codex", "review")
    assert [failure.wait_for(bare, n, 30) for n in range(6)] == [30, 60, 120, 240, 480, None]
    assert failure.wait_for(bare, 4, 100) == failure.MAX_WAIT  # bounded
    timeout = failure.classify(None, None, "claude", "claude", "implement", timed_out=True)
    assert timeout.kind == failure.TIMEOUT and not timeout.fatal


def test_spend_sums_budget_and_estimate() -> None:
    runs = [
        {"wp_id": "WP01", "role": "implement", "agent": "claude",
         "usage": {"input_tokens": 100, "output_tokens": 50, "cost_usd": 0.5, "seconds": 3}},
        {"wp_id": "WP01", "role": "review", "agent": "codex",
         "usage": {"input_tokens": 10, "output_tokens": 5, "seconds": 1}},
    ]  # fmt: skip
    total = spend.total(r["usage"] for r in runs)
    assert total == {"input_tokens": 110, "output_tokens": 55, "cost_usd": 0.5, "seconds": 4,
                     "runs": 2, "tokens": 165}  # fmt: skip
    assert spend.grouped(runs, "agent")["codex"]["tokens"] == 15
    assert spend.over_budget(total, 1.0, None) is None
    assert spend.over_budget(total, 0.5, None) == ("budget reached: $0.5000 spent of --budget $0.5")
    assert spend.over_budget(total, None, 100) == (
        "token budget reached: 165 tokens spent of --max-tokens 100"
    )
    assert spend.estimate([total], 2, 4) == {
        "past_runs": 2, "planned_runs": 4, "cost_usd": 1.0, "tokens": 330
    }  # fmt: skip
    assert spend.estimate([], 0, 4) is None
    assert spend.usage_text(total) == "165 tok, $0.5000"


def test_a_lone_surrogate_in_the_agents_output_never_reaches_the_log_raw() -> None:
    """JSON's `\\ud800` escape decodes to text UTF-8 cannot hold: the record of the run
    (written to the mission's log, shown in the terminal) gets its visible escape."""
    from kitty.core.printable import encodable

    line = json.dumps(
        {
            "type": "result",
            "is_error": True,
            "result": "bad \ud800 key",
            "permission_denials": [
                {"tool_name": "Bash\udc80", "tool_input": {"command": "x\ud800"}}
            ],
            "modelUsage": {"m\ud800": {}},
        }
    )
    report = read_report("claude", line)
    texts = [report.error or "", report.model or "", *report.denials]
    assert all(encodable(t) for t in texts), texts
    assert report.error == "bad \\ud800 key"
    assert report.denials == ["Bash\\udc80(x\\ud800)"]
    assert plain_error("error: \ud800\n") == "error: \\ud800"
