"""What kitty learns from the agent CLIs beyond their exit code: their versions (the
sprint's pre-flight and `kitty doctor`, against the ranges tests/agents was run with)
and the tool calls they refused (claude exits 0 with `"subtype": "success"` after a
denial)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kitty.agents.clis import TESTED
from tests.helpers import kitty, make_mission
from tests.sprint.test_sprint import events, fakes, lanes_of, planned, sprint  # noqa: F401

pytestmark = pytest.mark.usefixtures("fakes")  # fake agent CLIs first on PATH


def test_doctor_prints_each_configured_clis_version_and_warns_outside_the_tested_range(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    low = TESTED["claude"][0]
    monkeypatch.setenv("FAKE_CLAUDE_VERSION", f"{low} (Claude Code)")
    monkeypatch.setenv("FAKE_CODEX_VERSION", "codex-cli 0.99.0")
    monkeypatch.setenv("FAKE_GEMINI_VERSION", "Segmentation fault")
    make_mission(
        repo,
        wps=[{"wp_id": "WP01"}],
        config="agents:\n  available: [claude, codex, gemini, manual, absent]\n"
        "  commands:\n    absent: [no-such-tool-here, '{prompt_file}']\n",
    )
    run = kitty(repo, "doctor")
    assert run.code == 0, run.out + run.err  # warnings, not problems
    assert f"agent claude: claude {low} (Claude Code) (tested {low} up to 2.2)" in run.out
    low_codex, high_codex = TESTED["codex"]
    assert f"agent codex: codex codex-cli 0.99.0 (tested {low_codex} up to {high_codex})" in (
        run.out
    )
    assert "codex codex-cli 0.99.0 is outside the versions kitty was tested with" in run.err
    assert "gemini --version did not print a version (exit 0): Segmentation fault" in run.err
    assert "claude" not in run.err  # in range: no warning
    # a configured command is never run just for its version
    assert "agent absent: no-such-tool-here version unknown" in run.out
    rows = {r["agent"]: r for r in kitty(repo, "doctor", "--json").json()["agents"]}
    assert rows["claude"]["version"] == f"{low} (Claude Code)" and not rows["claude"]["warning"]
    assert rows["gemini"]["version"] is None and rows["gemini"]["found"]


def test_doctor_says_plainly_when_a_cli_is_not_installed(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    make_mission(repo, wps=[{"wp_id": "WP01"}])
    run = kitty(repo, "doctor")
    assert "agent claude: claude not found on PATH" in run.out


def test_sprint_preflight_prints_versions_and_warns_without_refusing(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_CODEX_VERSION", "codex-cli 9.0.0")
    planned(repo, [{"wp_id": "WP01"}])
    done = sprint(repo, "--implementer", "claude", "--reviewer", "codex")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr
    (versions,) = [e for e in events(done) if e["event"] == "versions"]
    rows = {r["agent"]: r for r in versions["agents"]}
    assert rows["codex"]["version"] == "codex-cli 9.0.0"
    assert "outside the versions kitty was tested with" in rows["codex"]["warning"]
    assert rows["claude"]["version"] == "claude 0.0.1"
    assert lanes_of(repo) == {"WP01": "approved"}


def test_sprint_text_shows_the_version_lines(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import subprocess

    from tests.helpers import kitty_argv

    monkeypatch.setenv("FAKE_CODEX_VERSION", "garbage")
    planned(repo, [{"wp_id": "WP01"}])
    done = subprocess.run(
        kitty_argv(repo, "sprint", "--no-caffeinate", "--implementer", "claude", "--reviewer",
                   "codex"),
        capture_output=True, text=True, timeout=120, env=dict(os.environ),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr
    assert "agent claude: claude claude 0.0.1 (tested" in done.stdout
    assert "warning: codex --version did not print a version (exit 0): garbage" in done.stdout


def test_a_denied_tool_call_is_reported_not_taken_for_success(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_CLAUDE_MODE", "denied")
    planned(repo, [{"wp_id": "WP01"}])
    done = sprint(repo, "--implementer", "claude", "--reviewer", "codex", "--retries", "0")
    assert done.returncode == 1
    finished = [e for e in events(done) if e["event"] == "finished"]
    assert [e["ok"] for e in finished] == [False]
    assert finished[0]["how"] == (
        "exit 0; claude was denied 1 tool call(s): Bash(git commit -am wip)"
    )
    (blocked,) = [e for e in events(done) if e["event"] == "blocked"]
    assert "was denied 1 tool call(s): Bash(git commit -am wip)" in blocked["reason"]
    assert lanes_of(repo) == {"WP01": "blocked"}


def test_sprint_help_names_the_verified_and_the_not_verified_builtins(repo: Path) -> None:
    from kitty.agents.clis import NOT_VERIFIED

    text = " ".join(kitty(repo, "sprint", "--help").out.split())
    verified = text.split("npm registry")[1].split("Not verified")[0]
    not_verified = text.split("Not verified")[1].split("Any other CLI")[0]
    assert all(name in verified for name in TESTED), verified
    assert all(name in not_verified for name in NOT_VERIFIED), not_verified
    assert not any(f" {name}," in verified for name in NOT_VERIFIED)


def test_denials_are_read_from_claudes_object_and_qwens_message_array() -> None:
    from kitty.agents.reports import read_report

    def denials(cli: str, output: str) -> list[str]:
        return read_report(cli, output).denials

    claude = '{"type":"result","subtype":"success","permission_denials":[]}'
    assert denials("claude", "noise\n" + claude) == []
    qwen = (
        '[{"type":"system"},{"type":"result","permission_denials":'
        '[{"tool_name":"run_shell_command","tool_input":{"command":"rm -rf build"}}]}]'
    )
    assert denials("qwen", qwen) == ["run_shell_command(rm -rf build)"]
    assert denials("codex", qwen) == []  # codex has no such report
    assert denials("claude", "not json at all") == []
