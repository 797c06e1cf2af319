"""`kitty sprint` with fake agent CLIs on PATH: real processes, real git."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from kitty.agents.clis import GEMINI_POLICY, OPENCODE_PERMISSION, Dispatch, backend_for
from kitty.teams.liveness import pid_alive
from tests.helpers import (
    FAKE_AGENT,
    agent_calls,
    fake_agents,
    git,
    kitty,
    kitty_argv,
    lane_commit,
    make_mission,
    ok,
    trust,
)

#: Spec Kitty 3.2.7 reads every mission these sprints leave behind (issue 21).
pytestmark = pytest.mark.usefixtures("spec_kitty_reads_what_is_left")

FAKE = FAKE_AGENT  # tests/fakes/agent.py, for the other sprint tests
NAMES = ("claude", "codex", "gemini", "llxprt", "opencode", "qwen", "kilocode", "auggie", "cursor")


@pytest.fixture
def fakes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Fake agent CLIs first on PATH; returns the JSON-lines log they write."""
    return fake_agents(tmp_path, NAMES, monkeypatch)


calls = agent_calls


def planned(repo: Path, wps: list[dict[str, Any]]) -> Path:
    mission = make_mission(repo, wps=wps)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plan")
    return mission


def sprint(repo: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        kitty_argv(repo, "sprint", "--no-caffeinate", "--json", *args),
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(os.environ),
    )


def events(done: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def lanes_of(repo: Path) -> dict[str, str]:
    return {w["id"]: w["lane"] for w in ok(repo, "status", "--json").json()["work_packages"]}


SIX = [
    {"wp_id": "WP01", "subtasks": ["T001"]},
    {"wp_id": "WP02", "subtasks": ["T002"]},
    {"wp_id": "WP03", "subtasks": ["T003"]},
    {"wp_id": "WP04", "deps": ["WP01"]},
    {"wp_id": "WP05", "deps": ["WP02", "WP03"]},
    {"wp_id": "WP06", "deps": ["WP04", "WP05"]},
]


def test_backends_build_command_lines_the_current_clis_accept() -> None:
    """No `-C` where the CLI has none (claude, gemini, qwen: the worktree is the cwd;
    opencode: --dir); the prompt on stdin; headless permissions that let an implementer
    edit files and run git and kitty, as narrow as the CLI allows (tests/agents runs
    these against the real binaries)."""
    d = Dispatch("x", "implement", "PROMPT", "/p.md", "/ws", "WP01", "m", "/repo", 600)
    tools = "Read,Edit(//ws/**),Write(//ws/**),Glob,Grep,Bash(git *),Bash(kitty *)"
    on_stdin = {
        "claude": ["claude", "-p", "--output-format", "json", "--allowedTools", tools],
        "codex": [
            "codex",
            "exec",
            "--sandbox",
            "danger-full-access",
            "-c",
            "allow_login_shell=false",
            "-C",
            "/ws",
            "--json",
            "-",
        ],
        "gemini": [
            "gemini", "--skip-trust", "--approval-mode", "default", "--policy",
            str(GEMINI_POLICY), "--output-format", "stream-json",
        ],
        "opencode": ["opencode", "run", "--dir", "/ws", "--format", "json"],
        "qwen": [
            "qwen", "--approval-mode", "default", "--allowed-tools", "read_file,list_directory,"
            "glob,grep_search,edit,write_file,run_shell_command(git *),run_shell_command(kitty *)",
            "--output-format", "json",
        ],
    }  # fmt: skip
    as_argument = {
        "llxprt": ["llxprt", "-p", "PROMPT", "--approval-mode=yolo"],
        "kilocode": ["kilocode", "-a", "--yolo", "-j", "PROMPT", "-C", "/ws"],
        "auggie": [
            "auggie", "--print", "--output-format", "json", "--workspace-root", "/ws",
            "--instruction-file", "/p.md",
        ],
        "cursor": [
            "timeout", "600", "cursor", "agent", "-p", "--force", "--output-format", "json",
            "PROMPT", "-C", "/ws",
        ],
    }  # fmt: skip
    for name, argv in {**on_stdin, **as_argument}.items():
        invocation = backend_for(name, {}).invocation(d)
        assert invocation.argv == argv, name
        assert invocation.cwd == "/ws"
        assert invocation.stdin == ("PROMPT" if name in on_stdin else None), name
        assert dict(invocation.env) == (
            {"OPENCODE_PERMISSION": json.dumps(OPENCODE_PERMISSION)} if name == "opencode" else {}
        ), name


def test_a_configured_command_template_fills_in_its_placeholders() -> None:
    d = Dispatch("x", "implement", "PROMPT", "/p.md", "/ws", "WP01", "m", "/repo", 600)
    config = {
        "agents": {
            "commands": {
                "mine": ["tool", "--file", "{prompt_file}", "--in", "{workspace}", "{wp}/{role}"]
            }
        }
    }
    assert backend_for("mine", config).invocation(d).argv == [
        "tool",
        "--file",
        "/p.md",
        "--in",
        "/ws",
        "WP01/implement",
    ]


def test_headless_permissions_allow_edits_reads_git_and_kitty_and_nothing_else(
    tmp_path: Path,
) -> None:
    """gemini's policy file (shipped with kitty) and opencode's permission config allow
    only edits, the read tools, and commands starting with `git` or `kitty`; the env an
    invocation carries reaches the agent process."""
    import tomllib

    from kitty.agents.clis import Invocation
    from kitty.agents.run import AgentRun

    rules = tomllib.loads(GEMINI_POLICY.read_text())["rule"]
    assert {r["decision"] for r in rules} == {"allow"}
    assert sorted(str(r["toolName"]) for r in rules) == [
        "['write_file', 'replace']",
        "run_shell_command",
    ]
    (shell,) = [r for r in rules if r["toolName"] == "run_shell_command"]
    assert shell["commandPrefix"] == ["git", "kitty"] and "allowRedirection" not in shell
    first, *rest = OPENCODE_PERMISSION.items()
    assert first == ("*", "deny")  # the last matching rule wins: deny first
    assert dict(rest) == {
        "read": "allow", "list": "allow", "glob": "allow", "grep": "allow", "edit": "allow",
        "bash": {"*": "deny", "git *": "allow", "kitty *": "allow"},
    }  # fmt: skip
    assert next(iter(OPENCODE_PERMISSION["bash"].items())) == ("*", "deny")
    out = tmp_path / "env.txt"
    d = Dispatch("x", "implement", "P", "/p.md", str(tmp_path), "WP01", "m", "/repo", 600)
    opencode = backend_for("opencode", {}).invocation(d)
    probe = [
        sys.executable,
        "-c",
        f"import os; open({str(out)!r}, 'w').write(os.environ['OPENCODE_PERMISSION'])",
    ]
    with (tmp_path / "agent.log").open("w") as log:
        run = AgentRun(Invocation(probe, str(tmp_path), env=opencode.env), "opencode", log)
        while run.poll() is None:
            time.sleep(0.02)
    assert json.loads(out.read_text()) == OPENCODE_PERMISSION
    # the run log's command line carries the env too, and runs as printed
    from types import SimpleNamespace

    from kitty.sprint.supervise import header

    job = SimpleNamespace(role="implement", wp_id="WP01", agent="opencode", cycle=1)
    shown = Invocation(probe, str(tmp_path), env=opencode.env)
    line = header("run", job, shown, "now").splitlines()[1]  # type: ignore[arg-type]
    assert line.startswith("# command: OPENCODE_PERMISSION=")
    out.unlink()
    subprocess.run(["bash", "-c", line.removeprefix("# command: ")], check=True, timeout=60)
    assert json.loads(out.read_text()) == OPENCODE_PERMISSION


def test_unknown_agent_is_a_clear_error(repo: Path) -> None:
    planned(repo, SIX[:1])
    run = kitty(repo, "sprint", "--implementer", "nobody", "--reviewer", "codex")
    assert run.code == 1 and "unknown agent 'nobody'" in run.err


def test_fake_clis_receive_the_exact_argv(repo: Path, fakes: Path) -> None:
    planned(repo, SIX[:1])
    done = sprint(repo, "--implementer", "claude", "--reviewer", "codex")
    assert done.returncode == 0, done.stdout + done.stderr
    made = calls(fakes)
    claude = next(c for c in made if c["name"] == "claude")
    codex = next(c for c in made if c["name"] == "codex")
    workspace = str(repo / ".worktrees" / "demo-01ABCDEF-lane-a")
    assert claude["argv"][:3] == ["-p", "--output-format", "json"]
    assert claude["stdin"].startswith("# Implement WP01")
    assert claude["cwd"] == workspace
    # The skill's reviewer line: --add-dir <repo>, -o <result file kept beside the run log>.
    result_file = codex["argv"][codex["argv"].index("-o") + 1]
    assert codex["argv"] == [
        "exec",
        "--sandbox",
        "danger-full-access",
        "-c",
        "allow_login_shell=false",
        "-C",
        workspace,
        "--json",
        "--add-dir",
        str(repo),
        "-o",
        result_file,
        "-",
    ]
    assert Path(result_file).name == "WP01-review-1.result.md"
    assert (Path(result_file).parent / "WP01-review-1.log").is_file()
    assert codex["stdin"].startswith("IMPORTANT: After reviewing")
    assert lanes_of(repo) == {"WP01": "approved"}
    log_dir = repo / ".kittify" / "runs"
    logs = sorted(p.name for p in log_dir.rglob("*.log"))
    assert logs == ["WP01-implement-1.log", "WP01-review-1.log"]
    text = next(log_dir.rglob("WP01-implement-1.log")).read_text()
    assert "# command: claude -p" in text and "(exit 0" in text


def test_six_wps_parallel_three_complete_and_merge(
    repo: Path, fakes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_CODEX_REJECT", "WP02")
    planned(repo, SIX)
    done = sprint(
        repo, "--implementer", "claude,gemini", "--reviewer", "codex", "--parallel", "3", "--merge"
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    stream = events(done)
    running, peak = 0, 0
    for event in stream:
        running += {"dispatch": 1, "finished": -1}.get(event["event"], 0)
        peak = max(peak, running)
    assert peak == 3
    end = stream[-1]
    assert end["event"] == "end" and end["ok"] and end["merged"]
    assert set(lanes_of(repo).values()) == {"done"}
    for i in range(1, 7):
        assert (repo / f"impl_wp0{i}.txt").is_file()
    wp02 = next(r for r in end["summary"] if r["wp_id"] == "WP02")
    reviews = [
        (e["verdict"], e["cycle"], e["lane"])
        for e in stream
        if e["event"] == "finished" and e["wp_id"] == "WP02" and e["role"] == "review"
    ]
    assert reviews == [("changes_requested", 1, "planned"), ("approved", 1, "approved")]
    assert wp02["review_cycles"] == 1 and wp02["implementers"] in (["claude"], ["gemini"])
    # completion-driven: WP01's review started before the last first-wave implementation ended
    order = [(e["event"], e["wp_id"], e.get("role")) for e in stream if "wp_id" in e]
    first_review = order.index(("dispatch", "WP01", "review"))
    assert ("dispatch", "WP04", "implement") in order[first_review:]
    names = {c["name"] for c in calls(fakes)}
    assert names == {"claude", "gemini", "codex"}
    # the sprint reports its own cost: one dispatch per agent run it started
    timing = end["timing"]
    dispatches = sum(1 for e in stream if e["event"] == "dispatch")
    assert timing["dispatches"] == dispatches and timing["parallel"] == 3
    assert 0 < timing["mean_busy_slots"] <= 3 and timing["busy_seconds"] > 0
    assert timing["cpu_per_dispatch_ms"] > 0
    # both are rounded from the same unrounded CPU time (to 0.1 ms and to 1 ms in seconds)
    per_dispatch = 1000 * timing["orchestrator_cpu_seconds"] / dispatches
    assert abs(timing["cpu_per_dispatch_ms"] - per_dispatch) <= 0.1
    assert timing["handoff_ms"] is None or timing["handoff_ms"] >= 0
    assert timing["idle_cpu_percent"] is None or timing["idle_cpu_percent"] >= 0


def test_failing_reviewer_halts_that_wp(
    repo: Path, fakes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_CODEX_MODE", "fail")
    planned(repo, SIX[:2])
    done = sprint(repo, "--implementer", "claude", "--reviewer", "codex")
    assert done.returncode == 1
    halts = [e for e in events(done) if e["event"] == "halt"]
    assert {h["wp_id"] for h in halts} == {"WP01", "WP02"}
    message = halts[0]["message"]
    # the reviewer's own words, classified
    assert message.startswith(
        "ERROR: Configured reviewer 'codex' failed (exit 3: fake agent: simulated crash [crash])."
    )
    assert "a) Retry" in message and "b) Switch reviewer" in message
    assert "--self-review-fallback --intended-reviewer codex" in message
    # Back in for_review (recorded, forced, with the reason) for another reviewer.
    assert lanes_of(repo) == {"WP01": "for_review", "WP02": "for_review"}
    assert [c["name"] for c in calls(fakes)].count("claude") == 2  # never asked to review
    log = (repo / "kitty-specs" / "demo-01ABCDEF" / "status.events.jsonl").read_text()
    assert '"to_lane": "approved"' not in log


def test_implementer_that_does_nothing_is_retried_then_blocked(
    repo: Path, fakes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_CLAUDE_MODE", "noop")
    planned(repo, SIX[:1])
    done = sprint(repo, "--implementer", "claude", "--reviewer", "codex", "--retries", "1")
    assert done.returncode == 1
    kinds = [e["event"] for e in events(done)]
    assert kinds.count("dispatch") == 2 and "retry" in kinds and "blocked" in kinds
    status = ok(repo, "status", "--json").json()["work_packages"][0]
    assert status["lane"] == "blocked"
    assert "sprint gave up after 2 failed runs" in status["reason"]


def test_hanging_agent_times_out(repo: Path, fakes: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_CLAUDE_MODE", "hang")
    planned(repo, SIX[:1])
    start = time.monotonic()
    done = sprint(
        repo, "--implementer", "claude", "--reviewer", "codex", "--retries", "0", "--timeout", "2"
    )
    assert time.monotonic() - start < 30
    finished = [e for e in events(done) if e["event"] == "finished"]
    assert finished[0]["how"] == "timed out after 2s"
    assert lanes_of(repo) == {"WP01": "blocked"}
    hung = [c["pid"] for c in calls(fakes)]
    time.sleep(0.2)
    for pid in hung:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_killed_sprint_resumes_without_duplicates(
    repo: Path, fakes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_CLAUDE_MODE", "hang")
    mission = planned(repo, SIX[:3])
    proc = subprocess.Popen(
        kitty_argv(
            repo,
            "sprint",
            "--no-caffeinate",
            "--json",
            "--implementer",
            "claude",
            "--reviewer",
            "codex",
            "--parallel",
            "2",
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    log_path = mission / "status.events.jsonl"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (
        len(calls(fakes)) < 2 or log_path.read_text().count('"agent_pid"') < 2
    ):
        time.sleep(0.1)
    assert len(calls(fakes)) == 2  # both agents run and their pids are recorded
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    agents = [c["pid"] for c in calls(fakes)]
    os.killpg(os.getpgid(agents[0]), signal.SIGKILL)  # this agent died with the machine
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and pid_alive(agents[0]):
        time.sleep(0.05)
    monkeypatch.setenv("FAKE_CLAUDE_MODE", "ok")
    in_flight = ok(repo, "status", "--json").json()["work_packages"]
    assert sorted(w["lane"] for w in in_flight) == ["in_progress", "in_progress", "planned"]
    assert any(w["stalled"] for w in in_flight)
    os.killpg(os.getpgid(agents[1]), signal.SIGKILL)
    done = sprint(repo, "--implementer", "claude", "--reviewer", "codex", "--parallel", "2")
    assert done.returncode == 0, done.stdout[-2000:]
    adopted = [e for e in events(done) if e["event"] == "adopt"]
    assert len(adopted) == 2
    assert set(lanes_of(repo).values()) == {"approved"}
    log = [json.loads(x) for x in (mission / "status.events.jsonl").read_text().splitlines()]
    claims = [e["wp_id"] for e in log if e.get("to_lane") == "claimed"]
    assert sorted(claims) == ["WP01", "WP02", "WP03"]  # nothing claimed twice


def test_one_sprint_per_mission(repo: Path, fakes: Path) -> None:
    from filelock import FileLock

    planned(repo, SIX[:1])
    lock = FileLock(str(repo / ".git" / "kitty" / "sprint-demo-01ABCDEF.lock"))
    (repo / ".git" / "kitty").mkdir(exist_ok=True)
    with lock:
        run = kitty(repo, "sprint", "--implementer", "claude", "--reviewer", "codex")
    assert run.code == 75 and "another kitty sprint is running" in run.err


def test_dry_run_runs_and_claims_nothing(repo: Path, fakes: Path) -> None:
    mission = planned(repo, SIX)
    log_before = (mission / "status.events.jsonl").read_text()
    run = ok(
        repo,
        "sprint",
        "--implementer",
        "claude",
        "--reviewer",
        "codex",
        "--parallel",
        "2",
        "--dry-run",
    )
    assert "first wave:" in run.out and "WP01 implement by claude" in run.out
    assert "kitty agent action implement WP01 --mission demo-01ABCDEF --agent claude" in run.out
    assert "claude -p --output-format json --allowedTools" in run.out
    assert (mission / "status.events.jsonl").read_text() == log_before
    assert calls(fakes) == []
    assert not (repo / ".worktrees").exists()


def test_dry_run_shows_the_agents_environment_as_the_run_uses_it(repo: Path, fakes: Path) -> None:
    """opencode's permissions travel in its environment: the plan shows them before the
    command (text) and as `env` (--json), or someone running the plan's line by hand
    would run opencode with its default permissions."""
    planned(repo, SIX[:1])
    args = ("sprint", "--implementer", "opencode", "--reviewer", "codex", "--dry-run")
    run = ok(repo, *args)
    line = next(x.strip() for x in run.out.splitlines() if "opencode run" in x)
    assert line.startswith("OPENCODE_PERMISSION=")
    assert json.loads(shlex.split(line)[0].split("=", 1)[1]) == OPENCODE_PERMISSION
    (entry,) = [e for e in ok(repo, *args, "--json").json()["first_wave"]]
    assert entry["env"] == {"OPENCODE_PERMISSION": json.dumps(OPENCODE_PERMISSION)}
    codex = ok(repo, "sprint", "--implementer", "codex", "--reviewer", "claude", "--dry-run")
    assert next(x.strip() for x in codex.out.splitlines() if "codex exec" in x).startswith("codex")


def test_manual_agent_waits_for_a_human(repo: Path, fakes: Path) -> None:
    planned(repo, SIX[:1])
    proc = subprocess.Popen(
        kitty_argv(
            repo, "sprint", "--no-caffeinate", "--implementer", "manual", "--reviewer", "codex"
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    workspace = repo / ".worktrees" / "demo-01ABCDEF-lane-a"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and lanes_of(repo)["WP01"] != "in_progress":
        time.sleep(0.1)
    (workspace / "human.txt").write_text("done by hand\n")
    ok(workspace, "safe-commit", "human.txt", "-m", "by hand")
    ok(repo, "agent", "tasks", "mark-status", "T001", "--status", "done")
    ok(repo, "move", "WP01", "for_review", "--agent", "manual")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, out + err
    assert "Manual dispatch required for agent: manual" in out
    assert f"Workspace: cd {workspace}" in out
    assert lanes_of(repo) == {"WP01": "approved"}


@pytest.mark.hand_written_log
def test_status_marks_stalled_agents(repo: Path) -> None:
    mission = make_mission(repo, wps=SIX[:1])
    ok(repo, "move", "WP01", "claimed", "--agent", "claude")
    dead = subprocess.Popen(["true"])
    dead.wait()
    line = {
        "actor": "sprint",
        "at": "2030-01-01T00:00:00+00:00",
        "event_id": "ZZZ",
        "kind": "annotation",
        "wp_id": "WP01",
        "delta": {"agent_pid": dead.pid},
    }
    with (mission / "status.events.jsonl").open("a") as handle:
        handle.write(json.dumps(line) + "\n")
    status = ok(repo, "status", "--json").json()["work_packages"][0]
    assert status["stalled"] == f"agent process {dead.pid} is gone"
    assert "STALLED" in ok(repo, "status").out


def test_agent_config_list(repo: Path, fakes: Path) -> None:
    make_mission(
        repo,
        wps=SIX[:1],
        config=(
            "agents:\n  available: [claude, ghostcli]\n  commands:\n    mine: [no-such-binary-x]\n"
        ),
    )
    rows = {r["agent"]: r for r in ok(repo, "agent", "config", "list", "--json").json()["agents"]}
    assert rows["claude"]["on_path"] and rows["claude"]["backend"] == "claude"
    assert rows["mine"]["backend"] == "command" and not rows["mine"]["on_path"]
    assert rows["ghostcli"]["error"].startswith("unknown agent")


def test_agents_get_their_identity_and_this_kitty_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    from kitty.agents.run import agent_env

    monkeypatch.setenv("PATH", "/usr/bin")
    env = agent_env("gemini")
    assert env["KITTY_AGENT"] == "gemini"
    assert env["PATH"].split(os.pathsep)[0] == os.path.dirname(sys.executable)


# -- issue 9: pre-flight, start failures, one log per attempt, recoverable reviewers ----


def printed_commands(message: str) -> list[str]:
    """The command lines of a halt message, in order (a, b, c)."""
    return [line.strip() for line in message.splitlines() if line.strip().startswith("kitty ")]


def run_printed(repo: Path, command: str, **replace: str) -> None:
    import shlex

    for old, new in replace.items():
        command = command.replace(old, new)
    argv = shlex.split(command)
    assert argv[0] == "kitty"
    ok(repo, *argv[1:])


def test_missing_agent_cli_is_refused_before_anything_starts(repo: Path) -> None:
    planned(repo, SIX[:1])
    (repo / ".kittify" / "config.yaml").write_text(
        "agents:\n  commands:\n    ghost: [no-such-agent-binary, '{prompt_file}']\n"
    )
    trust(repo)
    done = sprint(repo, "--implementer", "ghost", "--reviewer", "codex", "--retries", "0")
    assert done.returncode == 2
    error = json.loads(done.stdout)["error"]
    assert "no-such-agent-binary: not found on PATH (agent ghost)" in error["message"]
    assert "codex: not found on PATH" in error["message"]
    assert "kitty agent config list" in error["hint"]
    assert lanes_of(repo) == {"WP01": "planned"}  # nothing claimed
    assert not (repo / ".kittify" / "runs").exists()  # nothing started
    plain = subprocess.run(
        kitty_argv(
            repo, "sprint", "--no-caffeinate", "--implementer", "ghost", "--reviewer", "codex"
        ),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert plain.returncode == 2 and "no-such-agent-binary: not found on PATH" in plain.stderr
    dry = sprint(repo, "--implementer", "ghost", "--reviewer", "codex", "--dry-run")
    assert dry.returncode == 0  # the dry run still shows the plan, marking what is missing
    assert events(dry)[0]["first_wave"][0]["available"] is False


def test_start_failure_is_shown_and_each_attempt_has_its_own_log(
    repo: Path, fakes: Path, tmp_path: Path
) -> None:
    planned(repo, SIX[:1])
    broken = tmp_path / "bin" / "broken-agent"
    broken.write_text("this file is not a program\n")
    broken.chmod(0o755)
    (repo / ".kittify" / "config.yaml").write_text(
        "agents:\n  commands:\n    broken: [broken-agent, '{prompt_file}']\n"
    )
    trust(repo)
    done = sprint(repo, "--implementer", "broken", "--reviewer", "codex", "--retries", "1")
    assert done.returncode == 1
    errors = [e for e in events(done) if e["event"] == "error"]
    assert len(errors) == 2 and "could not start broken-agent" in errors[0]["message"]
    dispatches = [e for e in events(done) if e["event"] == "dispatch"]
    assert [d["pid"] for d in dispatches] == [None, None]
    logs = sorted(Path(d["log"]).name for d in dispatches)
    assert logs == ["WP01-implement-1-attempt2.log", "WP01-implement-1.log"]
    for d in dispatches:
        assert Path(d["log"]).read_text().count("# kitty sprint") == 1
    finished = [e for e in events(done) if e["event"] == "finished"]
    assert finished[0]["how"].startswith("could not start broken-agent")
    text = subprocess.run(
        kitty_argv(
            repo,
            "sprint",
            "--no-caffeinate",
            "--implementer",
            "broken",
            "--reviewer",
            "codex",
            "--retries",
            "0",
        ),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "pid None" not in text.stdout


def test_failed_reviewer_returns_the_wp_and_option_b_switches_reviewer(
    repo: Path, fakes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_CODEX_MODE", "fail")
    planned(repo, SIX[:1])
    done = sprint(repo, "--implementer", "claude", "--reviewer", "codex,gemini")
    assert done.returncode == 1
    (halt,) = [e for e in events(done) if e["event"] == "halt"]
    assert lanes_of(repo) == {"WP01": "for_review"}  # recorded, with the reason
    log = (repo / "kitty-specs" / "demo-01ABCDEF" / "status.events.jsonl").read_text()
    assert (
        "reviewer codex failed (exit 3: fake agent: simulated crash [crash]): back to for_review"
        in log
    )
    _retry, switch, _fallback = printed_commands(halt["message"])
    assert "--agent gemini" in switch
    run_printed(repo, switch)
    assert lanes_of(repo) == {"WP01": "in_review"}


def test_failed_reviewer_option_a_retries_with_the_same_reviewer(
    repo: Path, fakes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_CODEX_MODE", "fail")
    planned(repo, SIX[:1])
    done = sprint(repo, "--implementer", "claude", "--reviewer", "codex")
    (halt,) = [e for e in events(done) if e["event"] == "halt"]
    retry, _switch, _fallback = printed_commands(halt["message"])
    monkeypatch.setenv("FAKE_CODEX_MODE", "ok")  # "after fixing the error"
    import shlex

    again = subprocess.run(
        [sys.executable, "-m", "kitty", "-C", str(repo), *shlex.split(retry)[1:]],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert lanes_of(repo) == {"WP01": "approved"}


def test_failed_reviewer_option_c_self_review_fallback_runs_as_printed(
    repo: Path, fakes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_CODEX_MODE", "fail")
    planned(repo, SIX[:1])
    done = sprint(repo, "--implementer", "claude", "--reviewer", "codex")
    (halt,) = [e for e in events(done) if e["event"] == "halt"]
    _retry, switch, fallback = printed_commands(halt["message"])
    assert "<" not in switch  # no placeholder where an agent name belongs
    run_printed(repo, fallback)
    assert lanes_of(repo) == {"WP01": "approved"}
    log = (repo / "kitty-specs" / "demo-01ABCDEF" / "status.events.jsonl").read_text()
    assert '"intended_reviewer": "codex"' in log


def test_review_of_a_dead_reviewers_wp_is_taken_over(repo: Path, fakes: Path) -> None:
    planned(repo, SIX[:1])
    for lane in ("claimed", "in_progress"):
        ok(repo, "move", "WP01", lane, "--agent", "claude")
    ok(repo, "agent", "tasks", "mark-status", "T001", "--status", "done")
    lane_commit(repo, "WP01")
    ok(repo, "move", "WP01", "for_review", "--agent", "claude", "--note", "ready")
    # codex claims the review from a shell that then exits: its process is gone.
    claim = " ".join(kitty_argv(repo, "agent", "action", "review", "WP01", "--agent", "codex"))
    subprocess.run(["bash", "-c", f"{claim} >/dev/null; true"], check=True, timeout=60)
    assert lanes_of(repo) == {"WP01": "in_review"}
    taken = ok(repo, "agent", "action", "review", "WP01", "--agent", "gemini", "--json").json()
    assert taken["agent"] == "gemini"
    log = (repo / "kitty-specs" / "demo-01ABCDEF" / "status.events.jsonl").read_text()
    assert "review taken over from codex by gemini" in log


def test_review_held_by_a_live_reviewer_needs_takeover_with_a_note(repo: Path) -> None:
    planned(repo, SIX[:1])
    for lane in ("claimed", "in_progress"):
        ok(repo, "move", "WP01", lane, "--agent", "claude")
    ok(repo, "agent", "tasks", "mark-status", "T001", "--status", "done")
    lane_commit(repo, "WP01")
    ok(repo, "move", "WP01", "for_review", "--agent", "claude", "--note", "ready")
    ok(repo, "agent", "action", "review", "WP01", "--agent", "codex")  # this process: alive
    refused = kitty(repo, "agent", "action", "review", "WP01", "--agent", "gemini")
    assert refused.code == 1 and "in_review by codex" in refused.err
    hint = next(line for line in refused.err.splitlines() if "--takeover" in line)
    command = hint[hint.index("kitty ") :]
    run_printed(repo, command, **{"why you take it over": "codex is stuck"})
    assert kitty(repo, "agent", "action", "review", "WP01", "--agent", "x", "--takeover").code == 2


def test_meter_integrates_busy_slots_hand_offs_and_idle_cpu(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from kitty.sprint import supervise

    now, cpu, children = [0.0], [10.0], [4.0]
    monkeypatch.setattr(supervise.time, "monotonic", lambda: now[0])
    monkeypatch.setattr(supervise, "cpu_seconds", lambda: (cpu[0], children[0]))
    meter = supervise.Meter(2)
    meter.loop_starts()
    meter.dispatched(1)  # t=0: the first agent starts
    now[0] = 1.0
    meter.dispatched(2)  # t=1: the second
    now[0] = 3.0
    meter.exited(1, agent_cpu=0.5)  # t=3: one exits; its slot is refilled 0.25 s later
    now[0] = 3.25
    meter.dispatched(2)
    mark = meter.start_turn()
    now[0], cpu[0] = 5.25, 10.02  # a turn that only waited: 20 ms of CPU in 2 s
    meter.end_turn(mark, eventful=False)
    meter.exited(1, agent_cpu=0.25)
    meter.nothing_to_start()  # no work for that slot: not a hand-off
    now[0] = 6.25
    meter.exited(0, agent_cpu=0.25)
    cpu[0], children[0] = 10.03, 5.01  # the agents' 1.0 s and 10 ms of git
    report = meter.report()
    # 1 + 2*2 + 0.25 + 2*2 + 1 = 10.25 slot-seconds over 6.25 s
    assert report["mean_busy_slots"] == round(10.25 / 6.25, 3)
    assert report["busy_seconds"] == 6.25
    assert report["handoff_ms"] == 250.0
    # 12.5 slot-seconds, 10.25 busy: 1 s filling the second slot, 0.25 s hand-off, the
    # last second one slot had no work
    assert report["idle_slot_seconds"] == {"ramp_up": 1.0, "handoff": 0.25, "no_work": 1.0}
    assert report["idle_cpu_percent"] == 1.0
    # 30 ms in the sprint and 1.01 s in its children, of which 1.0 s were the agents'
    assert report["orchestrator_cpu_seconds"] == 0.04
    assert report["subprocess_cpu_seconds"] == 0.01
    assert report["cpu_per_dispatch_ms"] == round(40 / 3, 1)
    assert report["dispatches"] == 3 and report["parallel"] == 2


def test_the_sprint_reads_the_mission_again_only_when_its_files_change(
    repo: Path, fakes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kitty.sprint import runner as sprint_service
    from kitty.sprint.runner import Options, Sprint

    planned(repo, [{"wp_id": "WP01"}, {"wp_id": "WP02", "deps": ["WP01"]}])
    runner = Sprint(repo, None, Options(["claude"], ["codex"], parallel=2), lambda event: None)
    first = runner.mission()
    opened: list[int] = []
    real_open = sprint_service.Mission.open
    monkeypatch.setattr(
        sprint_service.Mission,
        "open",
        lambda *args: opened.append(1) or real_open(*args),  # type: ignore[func-returns-value]
    )
    assert runner.mission() is first and opened == []  # nothing changed: no read at all
    ok(repo, "move", "WP01", "claimed", "--agent", "claude")  # another command appends
    before = len(opened)
    second = runner.mission()
    assert second is not first and second.board.lane("WP01") == "claimed"
    assert len(opened) == before + 1 and runner.mission() is second
    assert len(opened) == before + 1
    # WP02 waits for WP01 (held by someone else): one look finds no work, and the
    # next turns skip the decision until something changes
    queues: list[int] = []
    real_queues = sprint_service.work_queues
    monkeypatch.setattr(
        sprint_service,
        "work_queues",
        lambda *args, **kw: queues.append(1) or real_queues(*args, **kw),  # type: ignore[func-returns-value]
    )
    assert not runner.dispatch() and not runner.dispatch() and not runner.dispatch()
    assert len(queues) == 1
    ok(repo, "move", "WP01", "in_progress", "--agent", "claude")
    assert not runner.dispatch() and len(queues) == 2


def test_resume_adopts_only_this_machines_sprint_agents(repo: Path) -> None:
    """sprint_resume on its own: a held WP with a sprint's agent_pid is adopted (watched
    while alive, re-dispatched when gone); a claim without one, or one the sprint does
    not own (another machine's, for --remote), is somebody else's work."""
    from kitty.mission.workspace import Mission
    from kitty.sprint.resume import adoptions

    planned(repo, [{"wp_id": f"WP0{i}"} for i in range(1, 6)])
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    claims = {
        "WP01": {"agent_pid": os.getpid()},
        "WP02": {"agent_pid": dead.pid},
        "WP04": {"agent_pid": os.getpid(), "sprint_run": "elsewhere"},
        "WP05": {"agent_pid": os.getpid()},
    }
    for wp_id in ("WP01", "WP02", "WP03", "WP04"):
        ok(repo, "move", wp_id, "claimed", "--agent", "claude")  # WP03: a human's claim
    mission = Mission.open(repo, None)
    for wp_id, delta in claims.items():  # WP05 stays planned: not held, nothing to adopt
        record = mission.annotation(wp_id, "claude", delta)
        mission.record(lambda board, record=record: [record])  # type: ignore[misc]
    mine = lambda claim: claim.get("sprint_run") != "elsewhere"  # noqa: E731
    found = adoptions(Mission.open(repo, None), mine)
    assert [(a.wp_id, a.role, a.agent, a.alive, a.lane) for a in found] == [
        ("WP01", "implement", "claude", True, "claimed"),
        ("WP02", "implement", "claude", False, "claimed"),
    ]
    assert found[0].event()["how"] == "watching the running agent"
    assert found[1].event()["how"] == "its agent is gone: dispatching it again"


def test_spec_kitty_reads_the_log_a_sprint_leaves(
    repo: Path, fakes: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Spec Kitty 3.2.7's own reader and reducer over the log of a real sprint (a
    rejection, a re-implementation, approvals, a merge): it refuses no line and gives
    every WP kitty's lane. The dispatch records are envelopes its reader skips."""
    from tests import oracle

    monkeypatch.setenv("FAKE_CODEX_REJECT", "WP02")
    mission = planned(repo, SIX[:3])
    done = sprint(
        repo, "--implementer", "claude", "--reviewer", "codex", "--parallel", "2", "--merge"
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    log = (mission / "status.events.jsonl").read_text()
    records = [json.loads(line) for line in log.splitlines()]
    assert not [r for r in records if "type" in r]  # no record Spec Kitty cannot skip
    assert [r for r in records if r.get("event_type") == "KittyDispatch"]
    (result,) = oracle.run([{"dir": str(mission)}], tmp_path)
    assert "error" not in result, result
    assert result["lanes"] == lanes_of(repo) == dict.fromkeys(("WP01", "WP02", "WP03"), "done")
    assert kitty(repo, "doctor").code == 0


def test_one_agent_cli_is_told_up_front_it_needs_a_second_reviewer(repo: Path, fakes: Path) -> None:
    """Issue 22.10: `--implementer claude --reviewer claude` implemented, then stopped with
    "Configured reviewer 'none' failed"; now the dry run and the pre-flight say so."""
    planned(repo, SIX[:1])
    dry = sprint(repo, "--implementer", "claude", "--reviewer", "claude", "--dry-run")
    assert dry.returncode == 0
    (problem,) = events(dry)[0]["problems"]
    assert problem.startswith(
        "no reviewer can review a WP claude implements: a reviewer never reviews its own WP"
    )
    assert problem.endswith(
        "another agent (--reviewer codex), or the same CLI under a second name "
        "(--reviewer claude:reviewer)"
    )
    done = sprint(repo, "--implementer", "claude", "--reviewer", "claude")
    assert done.returncode == 2
    error = json.loads(done.stdout)["error"]
    assert error["message"].startswith("no reviewer can review a WP claude implements")
    assert "second reviewer identity" in error["hint"]
    assert lanes_of(repo) == {"WP01": "planned"}  # nothing claimed, nothing run
    assert calls(fakes) == []
    # the suggestion, as printed: the same CLI reviews under its second name
    second = sprint(repo, "--implementer", "claude", "--reviewer", "claude:reviewer")
    assert second.returncode == 0, second.stdout + second.stderr
    assert lanes_of(repo) == {"WP01": "approved"}
    approvals = [
        json.loads(line)
        for line in (repo / "kitty-specs" / "demo-01ABCDEF" / "status.events.jsonl")
        .read_text()
        .splitlines()
        if '"to_lane": "approved"' in line
    ]
    assert [a["actor"] for a in approvals] == ["claude:reviewer"]


def test_the_sprint_names_a_claim_held_by_nobody_it_runs(repo: Path, fakes: Path) -> None:
    """Issue 22.12: `kitty move WP01 claimed` by mistake; the sprint stalled with no hint."""
    planned(repo, SIX[:1])
    ok(repo, "move", "WP01", "claimed", "--agent", "gemini")
    done = sprint(repo, "--implementer", "claude", "--reviewer", "codex")
    end = events(done)[-1]
    assert end["event"] == "end" and not end["ok"]
    hint = (
        "WP01 is claimed by gemini, which this sprint does not run (held by nobody it runs): "
        "gemini finishes it or releases it: kitty move WP01 planned --mission demo-01ABCDEF "
        '--agent gemini --note "claim released"'
    )
    assert hint in end["reason"]
    ok(repo, "move", "WP01", "planned", "--agent", "gemini", "--note", "claim released")
    assert lanes_of(repo) == {"WP01": "planned"}


def test_the_sprint_takes_over_a_stalled_review(repo: Path, fakes: Path) -> None:
    """Issue 22.5: a review started by hand and abandoned; the sprint takes it over."""
    planned(repo, SIX[:1])
    (repo / ".kittify" / "config.yaml").write_text("review:\n  stall_minutes: 0\n")
    claimed = ok(repo, "agent", "action", "implement", "WP01", "--agent", "claude", "--json")
    ws = Path(claimed.json()["workspace"])
    (ws / "impl.txt").write_text("done\n")
    ok(ws, "safe-commit", "impl.txt", "-m", "feat(WP01): done")
    ok(repo, "agent", "tasks", "mark-status", "T001", "--status", "done")
    ok(repo, "move", "WP01", "for_review", "--agent", "claude", "--note", "ready")
    ok(repo, "agent", "action", "review", "WP01", "--agent", "gemini")
    done = sprint(repo, "--implementer", "claude", "--reviewer", "codex")
    seen = events(done)
    takeover = next(e for e in seen if e["event"] == "takeover")
    assert (takeover["wp_id"], takeover["agent"]) == ("WP01", "codex")
    assert "gemini's review was STALLED" in takeover["message"]
    assert lanes_of(repo)["WP01"] in ("approved", "done"), done.stdout


@pytest.mark.parametrize("mode", ["nocommit", "forcecommitless"])
def test_an_implementer_that_commits_nothing_fails_and_nothing_is_approved(
    repo: Path, fakes: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """Issue 41: a run that leaves no commit is a failed run (named, in the outcome line,
    the summary and --json), retried with the reason on top of its prompt, never sent
    to a reviewer, never called merged; forcing it into review does not count."""
    monkeypatch.setenv("FAKE_CLAUDE_MODE", mode)
    planned(repo, SIX[:1])
    done = sprint(
        repo, "--implementer", "claude", "--reviewer", "codex", "--retries", "1", "--merge"
    )
    assert done.returncode == 1
    found = events(done)
    finished = [e for e in found if e["event"] == "finished"]
    assert len(finished) == 2 and all(not e["ok"] for e in finished)
    assert all(e["role"] == "implement" and e["lane"] != "for_review" for e in finished)
    assert all("ended without a commit" in e["reason"] for e in finished)
    assert "impl_wp01.txt (untracked)" in finished[0]["reason"]
    assert not [c for c in calls(fakes) if c["name"] == "codex"]  # never reviewed
    retry = [c for c in calls(fakes) if c["name"] == "claude"][1]
    prompt = retry["stdin"] or " ".join(retry["argv"])
    assert prompt.startswith("# Fix WP01")
    assert "your run ended without a commit; files left: impl_wp01.txt" in prompt.lower()
    end = found[-1]
    assert end["event"] == "end" and not end["ok"] and not end["merged"]
    row = end["summary"][0]
    assert row["lane"] == "blocked" and "ended without a commit" in row["failed_run"]
    assert "merged" not in end["reason"] and "WP01" in end["reason"]
    from kitty.commands.sprint_view import describe, summary_text

    line = describe(finished[0]) or ""
    assert line.startswith("✗ WP01 implement by claude: exit") and "ended without a commit" in line
    assert "→ for_review" not in line
    assert "WP01: its last implement run ended without a commit" in summary_text(end)
    assert "merged" not in summary_text(end).splitlines()[0]
    text = subprocess.run(
        kitty_argv(repo, "status", "--json"), capture_output=True, text=True, check=True
    )
    assert json.loads(text.stdout)["work_packages"][0]["lane"] == "blocked"
    assert "approved" not in {e.get("to_lane") for e in _log(repo)}


def _log(repo: Path) -> list[dict[str, Any]]:
    path = next((repo / "kitty-specs").glob("*/status.events.jsonl"))
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
