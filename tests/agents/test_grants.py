"""Contract: with a project's `verify.*` commands configured, each built-in CLI (the real
binary behind the model double) runs exactly those commands, and still refuses the rest:
`touch`, another target of the same tool, and an allowed command chained to a refused one.
"""

from __future__ import annotations

import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from kitty.agents import grants
from kitty.agents.clis import Dispatch, backend_for
from kitty.errors import AgentError
from tests.agents.clis import environment, require
from tests.agents.double import Action, Script, anthropic, responses
from tests.agents.double_chat import chat
from tests.agents.double_gemini import gemini
from tests.agents.loopback import serve
from tests.agents.test_sprint_double import DENIED
from tests.helpers import git, init_repo

MAKEFILE = "test:\n\ttouch verified.txt\nlint:\n\ttouch linted.txt\n"
#: (the command the double asks to run, the file it makes, whether kitty's rules allow it)
CALLS = [
    ("touch forbidden.txt", "forbidden.txt", False),
    ("make test", "verified.txt", True),
    ("make lint", "linted.txt", False),  # `make` is not allowed, only `make test`
    ("make test && touch chained.txt", "chained.txt", False),
]


@dataclass
class Calls(Script):
    def plan(self, prompt: str, results: list[str]) -> list[Action]:
        return [*(Action("shell", call) for call, _, _ in CALLS), Action("say", "Done.")]


def run(name: str, tmp_path: Path) -> tuple[str, list[str], list[bool]]:
    workspace = init_repo(tmp_path / name / "ws")
    (workspace / "Makefile").write_text(MAKEFILE)
    git(workspace, "add", "Makefile")
    git(workspace, "commit", "-qm", "make")
    script = Calls(feedback_dir=tmp_path)
    prompt = "# Implement WP01 – Thing\n\nDo the work.\n"
    dispatch = Dispatch(
        name, "implement", prompt, str(tmp_path / name / "prompts" / "p.md"), str(workspace),
        "WP01", "m", str(workspace), 120, {}, ("make test",),
    )  # fmt: skip
    invocation = backend_for(name, {}).invocation(dispatch)
    start = time.monotonic()
    with serve() as double:
        double.responders += [anthropic(script), responses(script), chat(script), gemini(script)]
        env = {**environment(name, tmp_path / name / "home", double.url), **invocation.env}
        subprocess.run(
            invocation.argv, cwd=invocation.cwd, input=invocation.stdin, env=env,
            capture_output=True, text=True, timeout=150,
        )  # fmt: skip
    print(f"{name}: {time.monotonic() - start:.1f} s, {script.results}")
    return name, script.results, [(workspace / made).is_file() for _, made, _ in CALLS]


@pytest.mark.timeout(240)
def test_each_cli_runs_the_configured_command_and_refuses_everything_else(
    tmp_path: Path,
) -> None:
    names = ["claude", "gemini", "qwen", "opencode", "codex"]
    for name in names:
        require(name)
    with ThreadPoolExecutor(max_workers=len(names)) as pool:
        outcomes = list(pool.map(lambda n: run(n, tmp_path), names))
    for name, results, made in outcomes:
        assert len(results) == len(CALLS), (name, results)
        for (call, _, allowed), result, file_made in zip(CALLS, results, made, strict=True):
            if name == "codex":  # its own sandbox: it may run anything (danger-full-access)
                assert file_made, (name, call, result)
                continue
            assert file_made == allowed, (name, call, result)
            assert bool(DENIED.search(result)) != allowed, (name, call, result)


def test_without_verify_commands_the_command_lines_are_as_before(tmp_path: Path) -> None:
    def line(name: str, commands: tuple[str, ...]) -> list[str]:
        d = Dispatch(
            name, "implement", "p", str(tmp_path / "p.md"), str(tmp_path), "WP01", "m",
            str(tmp_path), 60, {}, commands,
        )  # fmt: skip
        inv = backend_for(name, {}).invocation(d)
        return [*inv.argv, *inv.env.values()]

    for name in ("claude", "qwen", "opencode"):
        assert "make test" not in " ".join(line(name, ()))
        assert "make test *" in " ".join(line(name, ("make test",))) or name == "qwen"
        assert "make test" in " ".join(line(name, ("make test",)))
    assert line("gemini", ()).count("--policy") == 1
    granted = line("gemini", ("make test",))
    assert granted.count("--policy") == 2
    policy = Path(granted[granted.index("--policy") + 3])
    assert policy.parent == tmp_path and 'commandPrefix = ["make test"]' in policy.read_text()


@pytest.mark.parametrize("line", ["pytest -k 'a or b', -x", "ls *.py", "python -c 'f()'", "a\\b"])
def test_a_command_no_cli_syntax_can_hold_is_refused_with_how_to_configure_it(line: str) -> None:
    with pytest.raises(AgentError) as caught:
        grants.check([line])
    assert repr(line) in caught.value.message and "make test" in caught.value.hint


def test_the_rules_of_each_cli() -> None:
    lines = ["python -m pytest -q", "ruff  check ."]
    assert grants.claude_rules(lines) == [
        "Bash(python -m pytest -q)", "Bash(python -m pytest -q *)",
        "Bash(ruff check .)", "Bash(ruff check . *)",
    ]  # fmt: skip
    assert grants.qwen_rules(lines) == [
        "run_shell_command(python -m pytest -q)", "run_shell_command(ruff check .)"
    ]  # fmt: skip
    assert grants.opencode_rules(lines) == {
        "python -m pytest -q *": "allow", "ruff check . *": "allow"
    }  # fmt: skip
    assert 'commandPrefix = ["python -m pytest -q", "ruff check ."]' in grants.gemini_policy(lines)
