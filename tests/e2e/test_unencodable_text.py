"""Text that UTF-8 cannot hold (a lone surrogate; an undecodable byte, which Python's argv
carries as one) never enters the tracked files, and old lines holding one are data.

* Every CLI text argument and every MCP tool argument is refused before anything is
  written (exit 2 / kitty's usage error), through one rule (`kitty.core.limits`).
* A committed log line with ``"\\ud800"`` (valid JSON, plain ASCII, e.g. a teammate's)
  reads like any other: every command still works and shows it escaped, `status.json`
  and the HTML board are written, and `kitty mcp` answers every request.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from kitty.mcp.catalog import TOOLS
from tests.helpers import git, kitty, kitty_argv, make_mission, ok
from tests.mcp.test_mcp import INITIALIZE, INITIALIZED, _raw_session, _request, payload, session

BAD_BYTES = b"x\xed\xa0\x80y\xff"  # CESU-8 of U+D800 and a stray byte: not UTF-8
WPS = [{"wp_id": "WP01", "title": "Cart API", "subtasks": ["T001"]}, {"wp_id": "WP02"}]


@pytest.fixture
def planned(repo: Path) -> Path:
    make_mission(repo, wps=WPS)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plan")
    return repo


def _log(repo: Path) -> Path:
    return next((repo / "kitty-specs").glob("*/status.events.jsonl"))


def _state(repo: Path) -> tuple[bytes, str]:
    """The log's bytes and git's view of the work tree (every file written shows)."""
    return _log(repo).read_bytes(), git(repo, "status", "--porcelain", "--untracked-files=all")


def _run(repo: Path, *args: str | bytes) -> subprocess.CompletedProcess[bytes]:
    argv: list[Any] = kitty_argv(repo)
    return subprocess.run([*argv, *args], capture_output=True, timeout=120)


COMMANDS: list[tuple[Any, ...]] = [
    ("move", "WP01", "claimed", "--agent", "bob", "--note", BAD_BYTES),  # the fast path
    ("move", "WP01", "--to", "claimed", "--agent", "bob", b"--note=" + BAD_BYTES, "--json"),
    (
        "agent",
        "tasks",
        "move-task",
        "WP01",
        "--to",
        "claimed",
        "--agent",
        "bob",
        "--note",
        BAD_BYTES,
    ),
    ("wp", "add", "--title", "Fine", "--objective", BAD_BYTES),
    ("wp", "add", "--title", BAD_BYTES),
    ("wp", "add", "--title", "Fine", "--subtask", BAD_BYTES),
    ("wp", "edit", "WP01", "--objective", BAD_BYTES),
    ("mission", "create", BAD_BYTES),
    ("next", "--agent", BAD_BYTES, "--claim"),
    ("agent", "tasks", "mark-status", "T001", "--status", "done", "--wp", BAD_BYTES),
]


@pytest.mark.timeout(300)
def test_every_cli_text_argument_is_refused_before_anything_is_written(planned: Path) -> None:
    before = _state(planned)
    for command in COMMANDS:
        done = _run(planned, *command)
        err = done.stderr.decode()
        assert done.returncode == 2, (command, done.returncode, err, done.stdout)
        assert "Traceback" not in err and "internal error" not in err
        if "--json" in command:
            error = json.loads(done.stdout)["error"]
            assert error["code"] == "usage" and "UTF-8" in error["message"], error
        else:
            assert "not valid UTF-8" in err and "hint:" in err, (command, err)
        assert _state(planned) == before, command
    # in-process (click's runner hands the string over as it is)
    run = kitty(planned, "move", "WP01", "claimed", "--agent", "bob", "--note", "x\ud800y")
    assert run.code == 2 and "--note" in run.err and "not valid UTF-8" in run.err
    assert _state(planned) == before


def _arguments(tool: Any, bad: str, value: Any) -> dict[str, Any]:
    """Arguments for `tool`: its required ones filled in sensibly, `bad` set to `value`."""
    fill = {"wp_id": "WP01", "to": "claimed", "agent": "bob", "title": "Fine", "query": "x"}
    arguments: dict[str, Any] = {}
    for name in tool.required:
        schema = tool.params[name]
        arguments[name] = schema.get("enum", [fill.get(name, "x")])[0]
        if schema["type"] == "array":
            arguments[name] = ["x"]
    arguments[bad] = value
    return arguments


@pytest.mark.timeout(300)
def test_every_mcp_tool_argument_is_refused_and_the_session_goes_on(planned: Path) -> None:
    before = _state(planned)
    calls = []
    for tool in TOOLS:
        for name, schema in tool.params.items():
            if schema["type"] == "string":
                calls.append((tool.name, name, _arguments(tool, name, "x\ud800y")))
            elif schema["type"] == "array":
                calls.append((tool.name, name, _arguments(tool, name, ["ok", "x\udcffy"])))
    assert {tool for tool, _, _ in calls} == {t.name for t in TOOLS if t.params}
    lines = [_request(1, "initialize", INITIALIZE), INITIALIZED]
    for number, (tool_name, _, arguments) in enumerate(calls, start=2):
        params = {"name": tool_name, "arguments": arguments}
        lines.append(_request(number, "tools/call", params))  # json.dumps: "\ud800", ASCII
    extra = len(calls) + 2
    lines += [
        _request(extra, "tools/call", {"name": "no\ud800such", "arguments": {}}),
        _request(extra + 1, "tools/call", {"name": "status", "arguments": {"x\ud800": 1}}),
        _request(extra + 2, "ping", {}),
    ]
    replies = _raw_session(planned, lines, len(calls) + 4)
    by_id = {reply["id"]: reply for reply in replies}
    for number, (tool_name, name, _) in enumerate(calls, start=2):
        result = by_id[number]["result"]
        assert result["isError"] is True, (tool_name, name)
        error = json.loads(result["content"][0]["text"])["error"]
        assert error["code"] == "usage", (tool_name, name, error)
        assert name in error["message"] and "not valid UTF-8" in error["message"], error
    assert "error" in by_id[extra] and by_id[extra + 1]["result"]["isError"] is True
    assert by_id[extra + 2]["result"] == {}
    assert _state(planned) == before


def _commit_a_teammates_line(repo: Path) -> None:
    """A claim whose reason and an annotation whose note are "\\ud800" in the log, and a
    mission name holding one, as a teammate's push would bring them (the escape is plain
    ASCII JSON)."""
    ok(repo, "move", "WP01", "claimed", "--agent", "bob", "--note", "MARK")
    log = _log(repo)
    log.write_text(log.read_text().replace("MARK", "x\\ud800y\\udcff"))
    meta = log.parent / "meta.json"
    meta.write_text(meta.read_text().replace('"Demo"', '"Demo \\ud800"'))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "teammate")


@pytest.mark.timeout(300)
def test_a_committed_lone_surrogate_is_data(planned: Path) -> None:
    _commit_a_teammates_line(planned)
    for command in [
        ("status",),
        ("status", "--json"),
        ("board",),
        ("board", "--html", "board.html"),
        ("rebuild",),
        ("doctor",),
        ("doctor", "--fix"),
        ("wp", "show", "WP01", "--json"),
        ("next", "--agent", "bob", "--json"),
        ("move", "WP01", "in_progress", "--agent", "bob", "--note", "fine"),
        ("next", "--agent", "carol", "--claim", "--json"),
    ]:
        done = _run(planned, *command)
        err = done.stderr.decode()
        assert done.returncode == 0, (command, done.returncode, err)
        assert "Traceback" not in err and "internal error" not in err, (command, err)
        done.stdout.decode("utf-8")  # what kitty prints is always UTF-8
    status = json.loads((_log(planned).parent / "status.json").read_bytes())
    assert status["work_packages"]["WP01"]["lane"] == "in_progress"
    assert "\\ud800" in (planned / "board.html").read_text()
    shown = _run(planned, "status", "--json").stdout
    assert json.loads(shown)["mission"]["title"] == "Demo \ud800"  # the same value, escaped
    assert b"Demo \\ud800" in shown
    assert "Demo \\ud800" in _run(planned, "status").stdout.decode()  # a visible escape


@pytest.mark.timeout(300)
def test_mcp_answers_every_request_about_a_committed_lone_surrogate(planned: Path) -> None:
    _commit_a_teammates_line(planned)
    _, status, show, search, nxt = session(
        planned,
        [
            ("status", {}),
            ("wp_show", {"wp_id": "WP01"}),
            ("wp_search", {"query": "Cart"}),
            ("next", {"agent": "carol"}),
        ],
    )
    for result in (status, show, search, nxt):
        assert not result.is_error, payload(result)
    shown = json.dumps([payload(r) for r in (status, show, search, nxt)])
    assert "\\ud800" in shown  # escaped: the SDK's JSON parser refuses a lone surrogate
