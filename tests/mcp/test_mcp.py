"""`kitty mcp` over stdio, driven by the MCP SDK's own client: every tool returns the JSON of
its `--json` command, errors carry kitty's code and hint."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import git, kitty, lane_commit, make_mission, ok
from tests.mcpclient import drive, payload

mcp = pytest.importorskip("mcp")

EXECUTION = ["next", "status", "move", "mark_status", "review_submit", "implement", "review"]
PLANNING = ["wp_add", "wp_edit", "wp_depend", "wp_split", "wp_show", "wp_search", "finalize"]
LIFECYCLE = ["init", "mission_create", "safe_commit", "review_answer", "resolve", "accept", "merge"]
READ_ONLY = {"status", "wp_show", "wp_search"}
WPS = [
    {"wp_id": "WP01", "title": "Cart API", "subtasks": ["T001"], "owned": ["src/cart/**"]},
    {"wp_id": "WP02", "title": "Cart UI", "deps": ["WP01"], "owned": ["web/**"]},
]


def session(
    repo: Path,
    calls: list[tuple[str | Callable[[], Any], dict[str, Any]]],
    command: list[str] | None = None,
    listing: list[Any] | None = None,
) -> list[Any]:
    """Start `kitty -C repo mcp`, list the tools, make `calls`, return the results (the
    listed tools' names first; the SDK's Tool objects go into `listing` when given)."""

    async def script(client: Any) -> list[Any]:
        results: list[Any] = []
        tools = await client.list_tools()
        results.append(sorted(t.name for t in tools.tools))
        if listing is not None:
            listing.extend(tools.tools)
        for name, arguments in calls:
            if callable(name):  # a step outside MCP (a commit in the lane)
                results.append(name())
                continue
            results.append(await client.call_tool(name, arguments))
        return results

    return drive(repo, script, command, timeout=300)


@pytest.fixture
def planned(repo: Path) -> Path:
    make_mission(repo, wps=WPS)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plan")
    return repo


def test_tools_over_stdio(planned: Path, tmp_path: Path) -> None:
    expected_status = ok(planned, "status", "--json").json()
    findings = tmp_path / "findings.json"
    findings.write_text(json.dumps({"schema_version": 1, "reviewer": "codex", "findings": []}))
    to_review = {"wp_id": "WP01", "to": "for_review", "agent": "claude", "note": "ok"}
    results = session(
        planned,
        [
            ("status", {}),
            ("next", {"agent": "claude", "claim": True}),
            ("implement", {"wp_id": "WP01", "agent": "claude"}),
            ("move", {"wp_id": "WP01", "to": "in_reveiw", "agent": "claude"}),
            ("mark_status", {"task_ids": ["T001"], "status": "done", "agent": "claude"}),
            ("move", to_review),  # nothing committed yet: refused (issue 41)
            (lambda: lane_commit(planned, "WP01"), {}),
            ("move", to_review),
            ("review", {"wp_id": "WP01", "agent": "codex"}),
            (
                "review_submit",
                {"wp_id": "WP01", "findings_files": [str(findings)], "agent": "codex"},
            ),
        ],
    )
    listed, status, nxt, implement, bad, marked, unready, _, moved, review, verdict = results
    assert unready.is_error and "WP01 is not ready for review" in str(payload(unready))
    assert listed == sorted([*EXECUTION, *PLANNING, *LIFECYCLE])
    got = payload(status)
    assert got["schema"] == 1 and not status.is_error
    assert got["work_packages"] == expected_status["work_packages"]
    decision = payload(nxt)
    assert decision["action"] == "implement" and decision["wp_id"] == "WP01"
    assert decision["claimed"] is True
    work = payload(implement)
    assert Path(work["workspace"]).is_dir()
    assert work["prompt_text"].startswith("# Implement WP01")
    assert bad.is_error
    error = payload(bad)
    assert set(error) == {"schema", "error"}
    assert error["error"]["code"] == "invalid_transition"
    assert "did you mean 'in_review'" in error["error"]["message"] and error["error"]["hint"]
    assert payload(marked)["marked"] == {"WP01": {"T001": "done"}}
    assert payload(moved)["to_lane"] == "for_review"
    assert "# Review WP01" in payload(review)["prompt_text"]
    assert payload(verdict)["verdict"] == "approved"
    lanes = {w["id"]: w["lane"] for w in ok(planned, "status", "--json").json()["work_packages"]}
    assert lanes["WP01"] == "approved"


def test_outside_a_repository_fails_in_plain_words(tmp_path: Path) -> None:
    run = kitty(tmp_path, "mcp")
    assert run.code == 1 and "not inside a git repository" in run.err


def _raw_session(repo: Path, lines: list[bytes], replies: int) -> list[dict[str, Any]]:
    """Write `lines` to `kitty mcp`'s stdin as they are; read `replies` reply lines (a
    request in flight when stdin closes is never answered), then close stdin."""
    import subprocess

    proc = subprocess.Popen(
        [sys.executable, "-m", "kitty", "-C", str(repo), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(b"".join(lines))
        proc.stdin.flush()
        got = [json.loads(proc.stdout.readline()) for _ in range(replies)]
        proc.stdin.close()
        proc.wait(timeout=60)
        err = proc.stderr.read() if proc.stderr else b""
    finally:
        proc.kill()
        proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    assert proc.returncode == 0, err.decode()[-2000:]
    assert b"Traceback" not in err
    return got


def _request(number: int, method: str, params: dict[str, Any]) -> bytes:
    message = {"jsonrpc": "2.0", "id": number, "method": method, "params": params}
    return json.dumps(message).encode() + b"\n"


INITIALIZE = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "raw", "version": "1"},
}
INITIALIZED = b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n'


def test_malformed_lines_get_json_rpc_errors_and_the_server_stays_up(planned: Path) -> None:
    """JSON-RPC 2.0 §5.1: a line that is not JSON is answered -32700 (id null), a JSON
    value that is not a request object -32600; the server keeps serving, and the next
    request is answered. (The SDK's stdio transport, used before kitty served MCP
    itself, dropped such lines without a reply.)"""
    replies = _raw_session(
        planned,
        [
            b"not json\n",
            b"{\n",
            b"[1, 2]\n",
            b'{"jsonrpc": "2.0", "id": 7}\n',
            b'{"jsonrpc": "2.0", "id": 9, "result": {}}\n',  # a response: nothing to say
            _request(1, "initialize", INITIALIZE),
            INITIALIZED,
            b"\x00\xff garbage\n",
            _request(2, "tools/call", {"name": "status", "arguments": {}}),
            _request(3, "ping", {}),
        ],
        8,
    )
    codes = [(r.get("id"), r["error"]["code"]) for r in replies if "error" in r]
    assert codes == [(None, -32700), (None, -32700), (None, -32600), (7, -32600), (None, -32700)]
    by_id = {r["id"]: r for r in replies if "result" in r}
    assert sorted(by_id) == [1, 2, 3]
    status = json.loads(by_id[2]["result"]["content"][0]["text"])
    assert status["schema"] == 1 and len(status["work_packages"]) == 2


def test_limits_apply_over_the_wire(planned: Path) -> None:
    """An agent id of 100 KiB through `kitty mcp` is kitty's usage error; nothing written."""
    log = next((planned / "kitty-specs").glob("*/status.events.jsonl"))
    before = log.read_bytes()
    replies = _raw_session(
        planned,
        [
            _request(1, "initialize", INITIALIZE),
            INITIALIZED,
            _request(
                2,
                "tools/call",
                {
                    "name": "move",
                    "arguments": {"wp_id": "WP01", "to": "claimed", "agent": "x" * 100_000},
                },
            ),
        ],
        2,
    )
    result = replies[-1]["result"]
    assert result["isError"] is True
    error = json.loads(result["content"][0]["text"])["error"]
    assert error["code"] == "usage" and "agent id" in error["message"]
    assert len(error["message"]) < 300
    assert log.read_bytes() == before


def test_every_tool_and_parameter_is_described(planned: Path) -> None:
    listing: list[Any] = []
    session(planned, [], listing=listing)
    by_name = {t.name: t for t in listing}
    assert set(by_name) == {*EXECUTION, *PLANNING, *LIFECYCLE}
    for tool in listing:
        assert tool.description and not tool.description.startswith(" ")
        assert "\n " not in tool.description, f"{tool.name}: source indentation"
        properties = tool.input_schema["properties"]
        for name, schema in properties.items():
            assert schema.get("description"), f"{tool.name}.{name} has no description"
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is (tool.name in READ_ONLY), tool.name
    lanes = by_name["move"].input_schema["properties"]["to"]["enum"]
    assert {"planned", "claimed", "in_progress", "for_review", "in_review", "approved"} <= set(
        lanes
    )
    assert by_name["move"].input_schema["required"] == ["wp_id", "to"]


def test_planning_over_mcp_matches_the_cli(repo: Path) -> None:
    ok(repo, "init")
    ok(repo, "mission", "create", "shop")
    calls: list[tuple[str, dict[str, Any]]] = [
        ("wp_add", {"title": "Catalog", "objective": "Books", "subtasks": ["model", "csv"]}),
        ("wp_add", {"title": "Cart", "depends_on": ["WP01"], "objective": "A cart"}),
        ("wp_edit", {"wp_id": "WP02", "title": "Cart model", "owns": ["src/cart.py"]}),
        ("wp_depend", {"wp_id": "WP01", "add": ["WP02"]}),
        ("wp_depend", {"wp_id": "WP02", "remove": ["WP01"]}),
        ("wp_split", {"wp_id": "WP01", "title": "CSV import", "move": ["T002"]}),
        ("wp_show", {"wp_id": "WP01"}),
        ("wp_search", {"query": "csv"}),
        ("finalize", {}),
        ("finalize", {"allow_placeholders": True}),
        ("wp_edit", {"wp_id": "WP01", "colour": "red"}),
    ]
    _, added, cart, edited, cycle, depended, split, shown, found, refused, done, bad = session(
        repo, calls
    )
    assert payload(added)["wp_id"] == "WP01" and payload(added)["subtasks"] == ["T001", "T002"]
    assert payload(cart)["dependencies"] == ["WP01"]
    assert payload(edited)["changed"] == ["title", "owned_files"]
    assert cycle.is_error and payload(cycle)["error"]["code"] == "dependency_cycle"
    assert payload(depended)["dependencies"] == [] and payload(depended)["removed"] == ["WP01"]
    assert payload(split)["new"]["wp_id"] == "WP03"
    cli_view = ok(repo, "wp", "show", "WP01", "--json").json()  # (finalized since)
    assert (payload(shown)["lane"], cli_view["lane"]) == (None, "planned")
    assert {**payload(shown), "lane": "planned"} == cli_view
    assert [r["id"] for r in payload(found)["results"]] == ["WP03"]
    assert refused.is_error and payload(refused)["error"]["code"] == "spec_error"
    assert "placeholder text" in payload(refused)["error"]["message"]  # WP03's objective
    assert not done.is_error and payload(done)["warnings"]
    assert bad.is_error and payload(bad)["error"]["code"] == "usage"
    assert "colour" in payload(bad)["error"]["message"]


def test_the_server_starts_without_the_sdk_or_click(planned: Path) -> None:
    """`kitty mcp` answers `initialize` and `tools/list` without importing the MCP SDK,
    pydantic, click or the services (the SDK's import alone took 1.4-2.8 s of the 2.5-4.3 s
    a client waited for `initialize`)."""
    import subprocess

    from kitty.mcp import server as mcp_server
    from kitty.mcp import tools as mcp_tools

    probe = (
        "import sys\n"
        "from kitty.entry import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    heavy = ('mcp', 'pydantic', 'anyio', 'click', 'kitty.mission.workspace')\n"
        "    print('HEAVY=' + ','.join(m for m in heavy if m in sys.modules), file=sys.stderr)\n"
        "    raise\n"
    )
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "bogus"},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "nope"}},
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": ["status"]},
    ]
    done = subprocess.run(
        [sys.executable, "-c", probe, "-C", str(planned), "mcp"],
        input="".join(json.dumps(m) + "\n" for m in messages) + "not json\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[-1] == "HEAVY="
    first, listed, unknown, no_tool, listed_params, garbled = map(
        json.loads, done.stdout.splitlines()
    )
    assert listed_params["error"]["code"] == -32602
    assert first["result"]["protocolVersion"] == "2025-06-18"
    assert first["result"]["serverInfo"]["name"] == "kitty"
    assert first["result"]["capabilities"] == {"tools": {"listChanged": False}}
    names = [t["name"] for t in listed["result"]["tools"]]
    assert names == [t.name for t in mcp_server.tools()] and len(names) == 21
    assert all(hasattr(mcp_tools, t.call) for t in mcp_server.tools())
    assert unknown["error"]["code"] == -32601 and no_tool["error"]["code"] == -32602
    assert garbled == {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": (
        "Parse error: each line must be one JSON-RPC message")}}  # fmt: skip


def test_the_fast_route_refuses_like_click(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from kitty import fastpath

    assert fastpath.run(["-C", str(tmp_path), "mcp", "--help"]) is None  # click's to explain
    code = fastpath.run(["-C", str(tmp_path), "mcp"])
    fast = capsys.readouterr()
    full = kitty(tmp_path, "mcp")
    assert (code, fast.out, fast.err) == (full.code, full.out, full.err) and code == 1


def test_a_bug_in_a_tool_or_the_session_names_its_crash_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug inside a tool is reported as kitty's `internal` error, outside one as JSON-RPC's
    -32603; both name a crash log that holds the traceback, headed like the CLI's."""
    from kitty import __version__
    from kitty.mcp import server as mcp_server

    def broken(root: Path, mission: str | None = None) -> dict[str, Any]:
        raise RuntimeError("a bug in the status tool")

    monkeypatch.setattr("kitty.mcp.tools.status", broken)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    server = mcp_server.Server(tmp_path)
    answer = server.call(server.table["status"], {})
    error = answer["structuredContent"]["error"]
    assert answer["isError"] and error["code"] == "internal"
    assert error["hint"] == "please report it with that log file"
    logged = Path(error["message"].split("details in ")[1].rstrip(")"))
    assert logged.parent == tmp_path
    text = logged.read_text()
    assert text.startswith(f"kitty {__version__} mcp\n") and "a bug in the status tool" in text

    def broken_handle(raw: bytes) -> dict[str, Any] | None:
        raise RuntimeError("a bug outside any tool")

    monkeypatch.setattr(server, "handle", broken_handle)
    import io

    out = io.BytesIO()
    server.serve(io.BytesIO(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n'), out)
    reply = json.loads(out.getvalue())
    assert reply["error"]["code"] == -32603
    logged = Path(reply["error"]["message"].split("details in ")[1].rstrip(")"))
    assert "a bug outside any tool" in logged.read_text()


def test_a_search_s_lane_is_checked_as_the_cli_checks_it(planned: Path) -> None:
    """The lanes advertised are the ones a WP can be in (no `doing`), and a wrong one is
    kitty's usage error naming them, as `kitty wp search --lane` says."""
    _, bogus, found = session(
        planned,
        [("wp_search", {"query": "WP", "lane": "bogus"}), ("wp_search", {"query": "WP"})],
    )
    error = payload(bogus)["error"]
    cli = kitty(planned, "wp", "search", "WP", "--lane", "bogus", "--json").json()["error"]
    assert bogus.is_error and (error["message"], error["hint"]) == (cli["message"], cli["hint"])
    assert not found.is_error
    listing: list[Any] = []
    session(planned, [], listing=listing)
    search = next(t for t in listing if t.name == "wp_search")
    assert "doing" not in search.input_schema["properties"]["lane"]["enum"]
