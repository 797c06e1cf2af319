"""`kitty sprint` tells the truth about each run (issue 38), with the REAL claude and
codex (and gemini, qwen, opencode) against the model double on 127.0.0.1: the model
service's errors (401, 404 model, 429 with retry-after, 529 overloaded, a dropped
connection) in the agent's own words and what the sprint does about each; a write
outside the worktree refused and reported as a denial, also when claude is run
through `agents.commands.claude`; the model chosen per role reaching each CLI."""

from __future__ import annotations

import json
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kitty.agents.clis import Dispatch, backend_for
from tests.agents.clis import environment, require
from tests.agents.double import Action, Failing, Script, anthropic, responses
from tests.agents.double_chat import chat
from tests.agents.double_gemini import gemini
from tests.agents.loopback import Loopback, serve
from tests.helpers import git, init_repo, kitty_argv, make_mission

pytestmark = pytest.mark.usefixtures("spec_kitty_reads_what_is_left")

PATHS = {"claude": "/v1/messages", "codex": "/v1/responses"}


def events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def run_sprint(
    repo: Path, home: Path, script: Script, failing: Failing | None, *args: str
) -> tuple[list[dict[str, Any]], Loopback]:
    """One sprint of the mission in `repo` by the real CLIs against the double."""
    with serve() as double:
        double.responders += ([failing] if failing else []) + [anthropic(script), responses(script)]
        env: dict[str, str] = {}
        for name in ("claude", "codex"):
            env.update(environment(name, home, double.url))
        if (repo / ".kittify" / "config.yaml").read_text().count("commands:"):  # the override
            subprocess.run(kitty_argv(repo, "trust"), env=env, check=True, capture_output=True)
        done = subprocess.run(
            kitty_argv(repo, "sprint", "--no-caffeinate", "--json", "--parallel", "1",
                       "--timeout", "90", *args),
            capture_output=True, text=True, timeout=200, env=env,
        )  # fmt: skip
    stream = events(done.stdout)
    assert stream and stream[-1].get("event") == "end", done.stdout[-3000:] + done.stderr[-3000:]
    return stream, double


def one_wp(root: Path) -> Path:
    repo = init_repo(root)
    make_mission(repo, wps=[{"wp_id": "WP01", "owned": ["src/wp01.txt"]}])
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plan")
    return repo


#: (error, times): what the implementer's model service answers, then what the sprint does.
CASES = [("401", 99), ("404", 99), ("429", 1), ("529", 1), ("drop", 1)]
LOGIN = {
    "claude": "run `claude auth login` or set ANTHROPIC_API_KEY",
    "codex": "run `codex login` or set OPENAI_API_KEY",
}
KIND = {"401": "auth", "404": "model", "429": "rate_limit", "529": "overloaded",
        "drop": "unreachable"}  # fmt: skip


@pytest.mark.timeout(600)
@pytest.mark.parametrize("implementer", ["claude", "codex"])
def test_the_model_services_errors_in_the_agents_words_and_what_the_sprint_does(
    tmp_path: Path, implementer: str
) -> None:
    require("claude")
    require("codex")
    reviewer = "codex" if implementer == "claude" else "claude"

    def case(error: str, times: int) -> tuple[str, list[dict[str, Any]], Loopback]:
        repo = one_wp(tmp_path / error / "repo")
        script = Script(feedback_dir=tmp_path / error)
        failing = Failing(PATHS[implementer], error, times)
        stream, double = run_sprint(
            repo, tmp_path / error / "home", script, failing, "--implementer", implementer,
            "--reviewer", reviewer, "--retries", "1", "--rate-limit-wait", "0.5",
            "--implementer-model", "no-such-model" if error == "404" else "double-model",
        )  # fmt: skip
        return error, stream, double

    with ThreadPoolExecutor(max_workers=3) as pool:
        outcomes = list(pool.map(lambda c: case(*c), CASES))
    for error, stream, double in outcomes:
        shown = "\n".join(json.dumps(e)[:600] for e in stream)
        finished = [e for e in stream if e["event"] == "finished" and e["role"] == "implement"]
        first, end = finished[0], stream[-1]
        assert first["error_kind"] == KIND[error], shown
        assert first["error"] and first["error"] in first["how"], shown  # its own words
        if error in ("401", "404"):  # not transient: no re-run, what to fix
            assert len(finished) == 1, shown
            (blocked,) = [e for e in stream if e["event"] == "blocked"]
            assert blocked["reason"].startswith("sprint stopped at once"), shown
            assert first["error"] in blocked["reason"], shown
            fix = LOGIN[implementer] if error == "401" else "--implementer-model MODEL"
            assert fix in blocked["reason"], shown
            assert not end["ok"] and end["errors"][0]["kind"] == KIND[error], shown
            if error == "404":  # the model chosen for the role reached the real CLI
                models = {r.json().get("model") for r in double.requests if r.method == "POST"}
                assert "no-such-model" in models, models
            continue
        assert end["ok"], shown  # re-run once the service answers again
        assert len(finished) == 2 and finished[1]["ok"], shown
        if error in ("429", "529"):  # backs off without using up a retry
            (backoff,) = [e for e in stream if e["event"] == "backoff"]
            assert backoff["seconds"] == 0.5, shown
            assert not [e for e in stream if e["event"] == "retry"], shown
        else:  # unreachable: an ordinary re-run
            assert [e["attempt"] for e in stream if e["event"] == "retry"] == [2], shown


@dataclass
class Outside(Script):
    """An agent (implementer, or reviewer after its diff) that first tries to write
    outside its worktree and to run a command over two lines, then does its work."""

    outside: Path = Path("/nonexistent")
    role: str = "Implement"

    def plan(self, prompt: str, results: list[str]) -> list[Action]:
        actions = super().plan(prompt, results)
        if not re.search(rf"^# {self.role} WP", prompt, re.M):
            return actions
        tries = [
            Action("write", "outside\n", str(self.outside)),
            Action("shell", "touch forbidden.txt\necho two"),
        ]
        at = 1 if self.role == "Review" else 0  # a reviewer's first result is its diff
        return [*actions[:at], *tries, *actions[at:]]


OVERRIDE = (
    "agents:\n  available: [claude, codex]\n  commands:\n    claude: [claude, -p, "
    '--output-format, json, --allowedTools, "Read,Edit(/{workspace}/**),'
    'Write(/{workspace}/**),Bash(git *),Bash(kitty *)", --, "{prompt}"]\n'
)


@pytest.mark.timeout(400)
@pytest.mark.parametrize("role", ["Implement", "Review"])
def test_a_write_outside_the_worktree_is_refused_and_reported_also_through_an_override(
    tmp_path: Path, role: str
) -> None:
    """claude's Edit and Write are scoped to the worktree, for the implementer and the
    reviewer (whose feedback file is inside it: its rejection still works), built in or
    through agents.commands.claude."""
    require("claude")
    require("codex")
    cases = [(role, False), (role, True)]

    def case(role: str, override: bool) -> tuple[list[dict[str, Any]], Path, Outside]:
        root = tmp_path / f"{role}-{'override' if override else 'builtin'}"
        repo = one_wp(root / "repo")
        outside = root / "outside.txt"
        if override:
            (repo / ".kittify" / "config.yaml").write_text(OVERRIDE)
            git(repo, "commit", "-qam", "claude run differently")
        # the reviewer rejects once: its feedback file is written inside the worktree
        reject = frozenset({"WP01"}) if role == "Review" else frozenset()
        script = Outside(feedback_dir=root, reject=reject, outside=outside, role=role)
        who = ("claude", "codex") if role == "Implement" else ("codex", "claude")
        stream, _ = run_sprint(
            repo, root / "home", script, None, "--implementer", who[0], "--reviewer", who[1]
        )
        return stream, outside, script

    with ThreadPoolExecutor(max_workers=2) as pool:
        outcomes = list(pool.map(lambda c: case(*c), cases))
    for (role, override), (stream, outside, script) in zip(cases, outcomes, strict=True):
        shown = "\n".join(json.dumps(e)[:800] for e in stream)
        assert not outside.exists(), (role, override, shown)
        wanted = "implement" if role == "Implement" else "review"
        run = next(e for e in stream if e["event"] == "finished" and e["role"] == wanted)
        assert run["denials"] == [
            f"Write({outside})",
            "Bash(touch forbidden.txt\\necho two)",
        ], (role, override, shown)
        assert "claude was denied 2 tool call(s)" in run["how"], shown
        end = stream[-1]
        assert end["ok"], shown
        assert end["summary"][0]["denials"][:2] == run["denials"], shown
        assert {"wp_id": "WP01", "call": f"Write({outside})"} in end["denials"], shown
        if role == "Review":  # the rejection's feedback file, in the worktree, was written
            assert end["summary"][0]["review_cycles"] >= 1, shown
            assert script.feedback_files and all(
                "/.kittify/feedback/" in f for f in script.feedback_files
            ), script.feedback_files
        # the real CLIs report tokens (claude its cost too), summed per role and agent
        assert end["usage"]["by_agent"]["claude"]["cost_usd"] > 0, shown
        assert end["usage"]["by_agent"]["codex"]["tokens"] > 0, shown


@pytest.mark.timeout(300)
def test_the_budget_stops_new_runs_with_the_real_claudes_reported_cost(tmp_path: Path) -> None:
    """--budget: once the cost claude reports reaches it, no new run starts; the sprint
    ends naming the budget, its spend per agent in the summary."""
    require("claude")
    require("codex")
    repo = init_repo(tmp_path / "repo")
    make_mission(repo, wps=[{"wp_id": "WP01", "owned": ["src/wp01.txt"]},
                            {"wp_id": "WP02", "owned": ["src/wp02.txt"]}])  # fmt: skip
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plan")
    stream, _ = run_sprint(
        repo, tmp_path / "home", Script(feedback_dir=tmp_path), None,
        "--implementer", "claude", "--reviewer", "codex", "--budget", "0.000001",
    )  # fmt: skip
    shown = "\n".join(json.dumps(e)[:800] for e in stream)
    (budget,) = [e for e in stream if e["event"] == "budget"]
    assert budget["message"].startswith("budget reached: $"), shown
    assert [e["event"] for e in stream].count("dispatch") == 1, shown  # no new run started
    end = stream[-1]
    assert not end["ok"] and end["reason"].startswith("budget reached"), shown
    assert end["budget_stop"] == budget["message"], shown
    assert end["usage"]["by_agent"]["claude"]["cost_usd"] > 0, shown


class Verifies(Script):
    """An implementer that runs the project's verification command first."""

    def plan(self, prompt: str, results: list[str]) -> list[Action]:
        actions = super().plan(prompt, results)
        if prompt.startswith("# Implement"):
            return [Action("shell", "make test"), *actions]
        return actions


@pytest.mark.timeout(300)
def test_an_implementer_refused_its_verification_command_flags_the_wp(tmp_path: Path) -> None:
    """claude run through an override that leaves out the verify.* grants is refused
    `make test`: the WP is flagged in its run's line, the end table and --json."""
    require("claude")
    require("codex")
    repo = one_wp(tmp_path / "repo")
    (repo / "Makefile").write_text("test:\n\ttrue\n")
    (repo / ".kittify" / "config.yaml").write_text(OVERRIDE + 'verify:\n  test: "make test"\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "claude without the verify grants")
    stream, _ = run_sprint(
        repo, tmp_path / "home", Verifies(feedback_dir=tmp_path), None,
        "--implementer", "claude", "--reviewer", "codex",
    )  # fmt: skip
    shown = "\n".join(json.dumps(e)[:800] for e in stream)
    implement = next(e for e in stream if e["event"] == "finished" and e["role"] == "implement")
    assert implement["verify_refused"] == ["Bash(make test)"], shown
    from kitty.commands.sprint_view import describe

    assert "VERIFICATION REFUSED: Bash(make test)" in (describe(implement) or ""), shown
    end = stream[-1]
    assert end["verify_refused"] == ["WP01"], shown
    assert end["summary"][0]["verify_refused"] == ["Bash(make test)"], shown
    (row,) = [x for x in (describe(end) or "").splitlines() if x.startswith("WP01 ")]
    assert row.endswith("VERIFICATION REFUSED"), row


class Say(Script):
    def plan(self, prompt: str, results: list[str]) -> list[Action]:
        return [Action("say", "Done.")]


@pytest.mark.timeout(200)
def test_the_model_for_a_role_reaches_each_real_cli_in_its_own_flag(tmp_path: Path) -> None:
    names = ["claude", "codex", "gemini", "qwen", "opencode"]
    for name in names:
        require(name)
    wanted = {
        "claude": "claude-kitty-test",
        "codex": "gpt-kitty-test",
        "gemini": "gemini-kitty-test",
        "qwen": "qwen-kitty-test",
        "opencode": "double/other-model",
    }

    def run(name: str) -> tuple[str, set[str]]:
        workspace = init_repo(tmp_path / name / "ws")
        script = Say(feedback_dir=tmp_path)
        dispatch = Dispatch(
            name, "review", "# Review WP01 – x\n\nreply\n", str(tmp_path / "p.md"),
            str(workspace), "WP01", "m", str(workspace), 60, model=wanted[name],
        )  # fmt: skip
        invocation = backend_for(name, {}).invocation(dispatch)
        with serve() as double:
            double.responders += [anthropic(script), responses(script), chat(script),
                                  gemini(script)]  # fmt: skip
            env = {**environment(name, tmp_path / name / "home", double.url), **invocation.env}
            subprocess.run(
                invocation.argv, cwd=invocation.cwd, input=invocation.stdin, env=env,
                capture_output=True, text=True, timeout=150,
            )  # fmt: skip
        seen = set()
        for request in double.requests:
            if request.method != "POST":
                continue
            seen.add(request.path)
            body = request.json()
            if isinstance(body, dict) and body.get("model"):
                seen.add(str(body["model"]))
        return name, seen

    with ThreadPoolExecutor(max_workers=len(names)) as pool:
        outcomes = dict(pool.map(run, names))
    for name, seen in outcomes.items():
        model = wanted[name].split("/")[-1]
        assert any(model in s for s in seen), (name, seen)
