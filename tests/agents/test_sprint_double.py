"""End to end: `kitty sprint` drives the REAL claude, codex, qwen, gemini and opencode
processes (installed by `make test` from the npm registry) against the scripted model
double on 127.0.0.1, with kitty's narrowed permissions (a refused tool call fails).

A 3-WP mission goes implement → review → rejection (WP02, once) → fix → approve →
merge. The double answers from the prompts kitty wrote, so the assertions check what
an agent is told: its workspace, and the exact kitty commands it must run (the double
runs those lines, as printed, through each CLI's own shell tool). Skips without the
CLIs on a developer's machine; fails in CI with npm (make test installs them).
"""

from __future__ import annotations

import json
import re
import resource
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kitty.agents.clis import Dispatch, backend_for
from kitty.agents.reports import cli_of, read_report
from tests.agents.clis import environment, require
from tests.agents.double import Action, Script, anthropic, responses
from tests.agents.double_chat import chat
from tests.agents.double_gemini import gemini
from tests.agents.loopback import serve
from tests.helpers import git, init_repo, kitty_argv, make_mission, ok

#: Spec Kitty 3.2.7 reads every mission these sprints leave behind (issue 21).
pytestmark = pytest.mark.usefixtures("spec_kitty_reads_what_is_left")

SLUG = "demo-01ABCDEF"
#: How the CLIs word a refused tool call in the result the model gets back.
DENIED = re.compile(
    r"permission|not allowed|denied|prevents you from using|(needs|requires) approval|"
    r"not (found|registered)|unknown tool",
    re.IGNORECASE,
)
WPS = [{"wp_id": f"WP0{i}", "owned": [f"src/wp0{i}.txt"]} for i in (1, 2, 3)]


def events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def cycles(repo: Path) -> str:
    """Every review cycle's feedback (a rejection by the double says what the diff gave)."""
    found = sorted((repo / "kitty-specs" / SLUG / "tasks").rglob("review-cycle-*.md"))
    return "".join(f"\n--- {p.parent.name}/{p.name}\n{p.read_text()[-1500:]}" for p in found)


def check_prompts_and_commands(
    script: Script, repo: Path, tmp_path: Path, implementer: str, reviewer: str
) -> None:
    """The prompts the double received (the workspace, the exact commands), and that
    the agents ran those commands as printed."""
    # the prompts the double received: the workspace and the exact commands
    implements = [p for p in script.prompts if p.startswith("# Implement")]
    assert len(implements) == 3 and len([p for p in script.prompts if p.startswith("# Fix")]) == 1
    for wp in ("WP01", "WP02", "WP03"):
        (prompt,) = [p for p in implements if p.startswith(f"# Implement {wp}")]
        lane = next(line.split("`")[1] for line in prompt.splitlines() if "Work only in" in line)
        assert lane.startswith(str(repo / ".worktrees" / SLUG)), lane
        # every built-in CLI starts in its workspace: no `cd` line (gemini refuses `cd`)
        assert "\nYou start there: it is your working directory.\n" in prompt
        assert "    cd " not in prompt
        move = (
            f"kitty agent tasks move-task {wp} --mission {SLUG} --to for_review "
            f"--agent {implementer} "
            f'--note "Ready for review: {wp} done"'
        )
        assert move in script.commands
        assert f'kitty safe-commit src/{wp.lower()}.txt -m "feat({wp}): {wp}"' in script.commands
    reviews = [p for p in script.prompts if p.startswith("IMPORTANT: After reviewing")]
    assert len(reviews) == 4
    assert [p.splitlines()[2] for p in reviews if "WP02" in p.splitlines()[2]] == [
        "# Review WP02 – Thing",
        "# Review WP02 – Thing (cycle 1/3)",
    ]
    assert any(f"--mission {SLUG} --to planned --agent {reviewer}" in c for c in script.commands)
    # the reviewer wrote its feedback where the prompt said (in the lane worktree, in the
    # folder git ignores); kitty took it into the review cycle and removed it
    (feedback,) = set(script.feedback_files)  # the double plans again at each step
    assert feedback.startswith(str(repo / ".worktrees")), feedback
    assert feedback.endswith("/.kittify/feedback/WP02-feedback.md"), feedback
    assert not Path(feedback).exists()
    (cycle,) = (repo / "kitty-specs" / SLUG / "tasks").glob("WP02*/review-cycle-1.md")
    assert "Say in the file that it was fixed after review." in cycle.read_text()


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    ("implementer", "reviewer"),
    [
        ("claude", "codex"),
        ("codex", "claude"),
        # every CLI reviews too: its rejection's feedback file never blocks `kitty accept`
        ("qwen", "opencode"),
        ("opencode", "gemini"),
        ("gemini", "qwen"),
    ],
)
def test_sprint_with_real_clis_rejects_fixes_approves_and_merges(
    repo: Path, tmp_path: Path, implementer: str, reviewer: str
) -> None:
    require(implementer)
    require(reviewer)
    make_mission(repo, wps=WPS)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plan")
    script = Script(feedback_dir=tmp_path, reject=frozenset({"WP02"}))
    with serve() as double:
        double.responders += [anthropic(script), responses(script), chat(script), gemini(script)]
        home = tmp_path / "agent-home"
        env: dict[str, str] = {}
        for name in {"claude", "codex", implementer, reviewer}:
            env.update(environment(name, home, double.url))
        if "opencode" in (implementer, reviewer):
            # as on a machine where opencode ran before: its database exists (two
            # first runs at once race on creating it, and one fails with
            # "Failed query: CREATE TABLE"; kitty retries it, the count here is exact)
            subprocess.run(
                ["opencode", "db", "select 1"], env=env, capture_output=True, timeout=120
            )
        qwen_settings = home / ".qwen" / "settings.json"
        settings = qwen_settings.read_text() if qwen_settings.exists() else None
        cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run(
            kitty_argv(repo, "sprint", "--no-caffeinate", "--json", "--implementer", implementer,
                       "--reviewer", reviewer, "--merge", "--parallel", "2", "--timeout", "120"),
            capture_output=True, text=True, timeout=280, env=env,
        )  # fmt: skip
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu1.ru_utime + cpu1.ru_stime) - (cpu0.ru_utime + cpu0.ru_stime)
    logs = "\n".join(
        f"--- {p.name}\n{p.read_text()[-1500:]}"
        for p in sorted(repo.rglob(".kittify/runs/*/*.log"))
    )
    stream = events(done.stdout)
    # qwen left its settings as written: concurrent first starts do not race on them
    assert (qwen_settings.read_text() if qwen_settings.exists() else None) == settings
    # kitty's narrowed permissions let every tool call through (edit, git, kitty)
    refused = [r for r in script.results if DENIED.search(r)]
    assert not refused, refused
    assert not re.search(r'"permission_denials":\s*\[\s*\{', logs), logs
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:] + logs
    end = stream[-1]
    assert end["event"] == "end" and end["ok"] and end["merged"], end
    # each CLI's own tokens (and claude's and opencode's cost), summed per agent (issue 38)
    for agent in {implementer, reviewer}:
        assert end["usage"]["by_agent"][agent]["tokens"] > 0, (agent, end["usage"])
    if "claude" in (implementer, reviewer):
        assert end["usage"]["by_agent"]["claude"]["cost_usd"] > 0, end["usage"]

    # who did what: the implementer did all three and fixed WP02; the other reviewed
    runs = [(e["wp_id"], e["role"], e["agent"]) for e in stream if e["event"] == "dispatch"]
    assert sorted(runs) == sorted(
        [(w, "implement", implementer) for w in ("WP01", "WP02", "WP02", "WP03")]
        + [(w, "review", reviewer) for w in ("WP01", "WP02", "WP02", "WP03")]
    ), (
        "\n".join(json.dumps(e)[:400] for e in stream if e["event"] != "dispatch")
        + logs
        + cycles(repo)
    )
    check_prompts_and_commands(script, repo, tmp_path, implementer, reviewer)

    # the merged result holds each WP's file, WP02 with its fix
    for wp in ("wp01", "wp02", "wp03"):
        assert git(repo, "show", f"main:src/{wp}.txt").startswith(f"{wp.upper()} implemented")
    assert "fixed after review" in git(repo, "show", "main:src/wp02.txt")
    status = ok(repo, "status", "--json").json()["work_packages"]
    assert {w["id"]: w["lane"] for w in status} == {w["wp_id"]: "done" for w in WPS}
    assert cpu < 60, f"{cpu:.1f} s of CPU"
    print(f"end-to-end sprint {implementer}/{reviewer}: {cpu:.1f} s CPU, {end['timing']}")


@dataclass
class Forbidden(Script):
    """Asks for a command kitty's permissions do not allow, then for a git command and an
    edit in the worktree, which they do allow."""

    workspace: str = ""

    def plan(self, prompt: str, results: list[str]) -> list[Action]:
        return [
            Action("shell", "touch forbidden.txt"),
            Action("shell", "git status --short"),
            Action("write", "allowed by kitty\n", f"{self.workspace}/allowed.txt"),
            Action("say", "Done."),
        ]


@pytest.mark.timeout(200)
def test_a_command_outside_git_and_kitty_is_refused_by_the_narrowed_permissions(
    tmp_path: Path,
) -> None:
    """The control: with kitty's command line and permission settings, claude, gemini,
    qwen and opencode refuse a shell command that is not `git …` or `kitty …` (the file
    is not made, the model is told so in words DENIED recognises), and let a `git`
    command and an edit in the worktree through."""
    names = ["claude", "gemini", "qwen", "opencode"]
    for name in names:
        require(name)

    def run(name: str) -> tuple[str, list[str], list[bool], list[str]]:
        workspace = init_repo(tmp_path / name / "ws")
        script = Forbidden(feedback_dir=tmp_path, workspace=str(workspace))
        prompt = "# Implement WP01 – Thing\n\nDo the work.\n"
        dispatch = Dispatch(
            name, "implement", prompt, str(tmp_path / name / "p.md"), str(workspace), "WP01",
            "m", str(workspace), 120,
        )  # fmt: skip
        invocation = backend_for(name, {}).invocation(dispatch)
        start = time.monotonic()
        with serve() as double:
            double.responders += [anthropic(script), chat(script), gemini(script)]
            env = {**environment(name, tmp_path / name / "home", double.url), **invocation.env}
            done = subprocess.run(
                invocation.argv, cwd=invocation.cwd, input=invocation.stdin, env=env,
                capture_output=True, text=True, timeout=150,
            )  # fmt: skip
        print(f"{name}: {time.monotonic() - start:.1f} s, {script.results}")
        made = [(workspace / f).is_file() for f in ("forbidden.txt", "allowed.txt")]
        # what the sprint reads from the CLI's own output (issue 38)
        report = read_report(cli_of(invocation.argv), done.stdout + done.stderr)
        return name, script.results, made, report.denials

    with ThreadPoolExecutor(max_workers=len(names)) as pool:
        outcomes = list(pool.map(run, names))
    tool = {"claude": "Bash", "gemini": "run_shell_command", "qwen": "run_shell_command",
            "opencode": "bash"}  # fmt: skip
    for name, results, made, refused in outcomes:
        assert refused == [f"{tool[name]}(touch forbidden.txt)"], (name, refused)
        assert len(results) == 3, (name, results)
        assert DENIED.search(results[0]) and not made[0], (name, results)
        assert not DENIED.search(results[1]) and not DENIED.search(results[2]), (name, results)
        assert made[1], (name, results)


@dataclass
class Blind(Script):
    """An implementer that overwrites its owned file without reading it first: qwen's
    write tool refuses that, so nothing changes and nothing is committed; it then runs
    the prompt's commit and for_review lines anyway and says it is done (issue 41)."""

    def plan(self, prompt: str, results: list[str]) -> list[Action]:
        actions = super().plan(prompt.replace("# Fix ", "# Implement ", 1), results)
        return [a for a in actions if a.tool != "read"]


@pytest.mark.timeout(300)
def test_a_real_agent_whose_write_is_refused_commits_nothing_and_nothing_is_approved(
    repo: Path, tmp_path: Path
) -> None:
    """The real qwen CLI behind the double: its write is refused, so its run leaves no
    commit; kitty refuses the for_review move, the sprint counts the run as failed (the
    reason in --json), re-runs it with the reason on top of the prompt, blocks the WP,
    never dispatches the reviewer and ends non-zero without merging."""
    require("qwen")
    (repo / "src").mkdir()
    (repo / "src" / "wp01.txt").write_text("placeholder\n")  # exists, never read by qwen
    make_mission(repo, wps=WPS[:1])
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plan")
    script = Blind(feedback_dir=tmp_path)
    with serve() as double:
        double.responders += [chat(script)]
        env = environment("qwen", tmp_path / "agent-home", double.url)
        done = subprocess.run(
            kitty_argv(repo, "sprint", "--no-caffeinate", "--json", "--implementer", "qwen",
                       "--reviewer", "codex", "--merge", "--retries", "1", "--timeout", "120"),
            capture_output=True, text=True, timeout=280, env=env,
        )  # fmt: skip
    stream = events(done.stdout)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-2000:]
    # the write was refused, so the move to for_review was refused too
    assert any("has not been read" in r for r in script.results), script.results
    assert any("is not ready for review" in r for r in script.results), script.results
    finished = [e for e in stream if e["event"] == "finished"]
    assert [e["role"] for e in finished] == ["implement", "implement"]
    assert all(not e["ok"] and "ended without a commit" in e["reason"] for e in finished)
    fixes = [p for p in script.prompts if p.startswith("# Fix WP01")]
    assert len(fixes) == 1 and "Your run ended without a commit" in fixes[0]
    assert not [e for e in stream if e["event"] == "dispatch" and e["role"] == "review"]
    end = stream[-1]
    assert end["event"] == "end" and not end["ok"] and not end["merged"]
    assert "WP01" in end["reason"] and "merged" not in end["reason"]
    status = ok(repo, "status", "--json").json()["work_packages"]
    assert [w["lane"] for w in status] == ["blocked"]
