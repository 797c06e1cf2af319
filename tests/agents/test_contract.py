"""Contract: each built-in agent CLI, installed from the npm registry at the version
tests/agents/package.json pins, accepts the exact command line kitty builds for it
(from kitty.agents.clis, not a copy).

No credentials and no network: every base URL points at a service on 127.0.0.1 that
answers 401. A CLI passes when it got past its argument parsing and sent the prompt
(from stdin or its file) to that service: it fails on credentials, never on an
unknown option, a usage dump or a wrong type. Each CLI runs when its test asks for it
(beside another worker's under pytest-xdist). On a developer's machine without npm these
tests skip; in CI with npm they fail when the CLIs are not installed (`make test` installs them).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from kitty.agents.clis import NOT_VERIFIED, TESTED, Dispatch, backend_for
from tests.agents.clis import PINNED, environment, pinned_version, require
from tests.agents.loopback import Loopback, Request, serve
from tests.helpers import init_repo

#: Where each CLI sends the model request that carries the prompt.
MODEL_PATH = {
    "claude": "/v1/messages",
    "codex": "/v1/responses",
    "gemini": "generateContent",
    "qwen": "/v1/chat/completions",
    "opencode": "/v1/chat/completions",
    "auggie": "/chat-stream",
}
#: What argument parsers print when they refuse a command line.
USAGE_ERROR = re.compile(
    r"unknown option|unknown argument|unexpected argument|usage:|not enough arguments|"
    r"invalid values?:|missing required argument|is not a valid|invalid argument",
    re.IGNORECASE,
)
#: What the CLIs print when a policy or permission setting is refused (gemini: a bad
#: policy file; opencode: OPENCODE_PERMISSION not JSON; qwen: an unknown rule).
CONFIG_ERROR = re.compile(
    r"policy file|failed to (load|parse)|contains invalid JSON|invalid (rule|permission)|"
    r"error.*\.toml",
    re.IGNORECASE,
)
MARKER = "kitty-contract-marker-7f3a"
#: The tools kitty's narrowed permissions must still offer the model (read, edit, shell):
#: a CLI that drops one headless (qwen did, with Claude-style names in --allowed-tools)
#: leaves its agent unable to commit or run kitty. opencode is checked end to end
#: (test_sprint_double): its request with the prompt here is the title request.
NEEDED_TOOLS = {
    "claude": {"Read", "Write", "Edit", "Bash"},
    "gemini": {"read_file", "write_file", "replace", "run_shell_command"},
    "qwen": {"read_file", "write_file", "edit", "run_shell_command"},
}


def prompt_for(mark: str) -> str:
    return f"# Implement WP01 – contract\n\n{mark}: reply with one word.\n"


PROMPT = prompt_for(MARKER)
#: Longest a CLI may take to send its request (opencode boots in ~25 s on 2 cores).
LIMIT = 90.0


@dataclass
class Outcome:
    name: str
    role: str
    argv: list[str]
    exit_code: int | None  # None: still waiting on the network when it was stopped
    output: str
    requests: list[Request]  # those that carried its prompt's marker
    all_requests: list[Request]

    def prompt_sent(self) -> bool:
        return any(MODEL_PATH[self.name] in r.path for r in self.requests)

    def tools_offered(self) -> set[str]:
        """The tool names its model requests offered (Anthropic, Chat Completions, Gemini)."""
        names: set[str] = set()
        for request in self.all_requests:
            try:
                body = request.json()
            except ValueError:
                continue
            for tool in (body.get("tools") or []) if isinstance(body, dict) else []:
                if not isinstance(tool, dict):
                    continue
                function = tool.get("function") or {}
                declared = tool.get("functionDeclarations") or []
                names.update(str(d.get("name")) for d in declared if isinstance(d, dict))
                names.add(str(function.get("name") or tool.get("name") or ""))
        return names - {""}

    def reached_model(self) -> bool:
        return any(MODEL_PATH[self.name] in r.path for r in self.all_requests)


#: auggie asks its service for its models before the chat; without a default model it
#: sends the chat with no text node (the instruction file's text is left out).
AUGGIE_MODELS = {
    "default_model": "double",
    "models": [
        {"name": "double", "internal_name": "double", "suggested_prefix_char_count": 1000,
         "suggested_suffix_char_count": 1000}
    ],
    "feature_flags": {},
}  # fmt: skip


def empty_ok(request: Request, handler: BaseHTTPRequestHandler) -> bool:
    """auggie asks its service for settings (models, MCP servers, remote tools) before
    the chat and gives up on a 401 there: those get an answer (its models, else an
    empty object), the chat gets the 401."""
    if MODEL_PATH["auggie"] in request.path:
        return False
    body = AUGGIE_MODELS if request.path.startswith("/get-models") else {}
    if "list-remote-tools" in request.path:
        body = {"tools": []}
    raw = json.dumps(body).encode()
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(raw)))
    handler.end_headers()
    handler.wfile.write(raw)
    return True


def run_cli(name: str, role: str, tmp: Path) -> Outcome:
    with serve() as loopback:
        if name == "auggie":
            loopback.responders.append(empty_ok)
        return run_in(name, role, tmp, loopback)


def run_in(name: str, role: str, tmp: Path, loopback: Loopback) -> Outcome:
    """Run `name` with kitty's argv for `role` in a fresh git worktree; stop it once the
    prompt reached the model service (some CLIs retry a 401 for a long time)."""
    root = tmp / f"{name}-{role}"
    workspace = init_repo(root / "ws")
    mark = f"{MARKER}-{name}-{role}".encode()
    prompt = prompt_for(mark.decode())
    prompt_file = root / "prompt.md"
    prompt_file.write_text(prompt)
    extra = {"result_file": str(root / "result.md")} if role == "review" else {}
    dispatch = Dispatch(
        name, role, prompt, str(prompt_file), str(workspace), "WP01", "contract",
        str(workspace), 600, extra,
    )  # fmt: skip
    invocation = backend_for(name, {}).invocation(dispatch)
    log = root / "output.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            invocation.argv,
            cwd=invocation.cwd,
            env={**environment(name, root / "home", loopback.url), **invocation.env},
            stdin=subprocess.PIPE if invocation.stdin is not None else subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        if proc.stdin is not None:
            proc.stdin.write((invocation.stdin or "").encode())
            proc.stdin.close()
        deadline = time.monotonic() + LIMIT
        sent_at: float | None = None
        while proc.poll() is None and time.monotonic() < deadline:
            if sent_at is None and any(mark in r.body for r in list(loopback.requests)):
                sent_at = time.monotonic()
            if sent_at is not None and time.monotonic() - sent_at > 3:
                break  # it reached the model; what it does with a 401 is its own business
            time.sleep(0.1)
        code = proc.poll()
        if code is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    requests = [r for r in loopback.requests if mark in r.body]
    output = log.read_text(errors="replace")
    return Outcome(name, role, invocation.argv, code, output, requests, list(loopback.requests))


CASES = [(name, "implement") for name in PINNED] + [("codex", "review")]


class Outcomes(dict[tuple[str, str], Outcome]):
    """Each case's outcome, run the first time a test asks for it: a pytest-xdist worker
    runs only the CLIs of its own tests, and never more than one CLI at a time (seven
    node start-ups at once on each of two workers starve opencode past LIMIT)."""

    def __init__(self, tmp: Path) -> None:
        super().__init__()
        self.tmp = tmp

    def __missing__(self, case: tuple[str, str]) -> Outcome:
        self[case] = run_cli(*case, self.tmp)
        return self[case]


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> Outcomes:
    return Outcomes(tmp_path_factory.mktemp("contract"))


@pytest.mark.timeout(300)
@pytest.mark.parametrize(("name", "role"), CASES, ids=[f"{n}-{r}" for n, r in CASES])
def test_the_real_cli_accepts_kittys_command_line(
    name: str, role: str, outcomes: dict[tuple[str, str], Outcome]
) -> None:
    require(name)
    outcome = outcomes[(name, role)]
    shown = f"{' '.join(outcome.argv)[:300]}\n--- output (exit {outcome.exit_code}) ---\n"
    shown += outcome.output[-3000:]
    assert not USAGE_ERROR.search(outcome.output), shown
    # auggie: the instruction file's text arrives once its models request is answered
    assert outcome.prompt_sent(), f"the prompt never reached the model service\n{shown}"
    assert outcome.exit_code != 0, f"it cannot have succeeded without credentials\n{shown}"
    if name == "gemini":  # --skip-trust: the approval mode is not overridden
        assert "overridden" not in outcome.output, shown
    assert not CONFIG_ERROR.search(outcome.output), shown  # its permission config loaded
    missing = NEEDED_TOOLS.get(name, set()) - outcome.tools_offered()
    assert not missing, f"the model was not offered {sorted(missing)}\n{shown}"


def test_the_check_catches_a_command_line_the_cli_refuses(tmp_path: Path) -> None:
    """The control: kitty's old claude line (`-C WS`) is caught as a usage error."""
    exe = require("claude")
    with serve() as loopback:
        done = subprocess.run(
            [str(exe), "-p", PROMPT, "--output-format", "json", "-C", str(tmp_path)],
            env=environment("claude", tmp_path / "home", loopback.url),
            cwd=tmp_path, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert USAGE_ERROR.search(done.stdout + done.stderr), done.stdout + done.stderr
        assert done.returncode != 0 and not loopback.requests


@pytest.mark.parametrize("name", sorted(PINNED))
def test_the_installed_version_is_the_pinned_one_and_the_tested_range_starts_there(
    name: str,
) -> None:
    exe = require(name)
    done = subprocess.run(
        [str(exe), "--version"], capture_output=True, text=True, timeout=60,
        env=environment(name, Path(os.environ["HOME"]) / name, "http://127.0.0.1:9"),
    )  # fmt: skip
    assert pinned_version(name) in done.stdout, done.stdout + done.stderr
    assert TESTED[name][0] == pinned_version(name)


def test_every_builtin_is_tested_or_listed_as_not_verified() -> None:
    from kitty.agents.clis import BUILTIN

    assert set(TESTED) == set(PINNED)
    assert set(BUILTIN) == set(TESTED) | set(NOT_VERIFIED)
    assert not set(TESTED) & set(NOT_VERIFIED)
