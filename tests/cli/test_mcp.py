"""`kitty mcp` over stdio, driven by the MCP SDK's own client: every tool returns the JSON of
its `--json` command, errors carry kitty's code and hint."""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import git, kitty, make_mission, ok

mcp = pytest.importorskip("mcp")

WPS = [
    {"wp_id": "WP01", "title": "Cart API", "subtasks": ["T001"], "owned": ["src/cart/**"]},
    {"wp_id": "WP02", "title": "Cart UI", "deps": ["WP01"], "owned": ["web/**"]},
]


def session(
    repo: Path, calls: list[tuple[str, dict[str, Any]]], command: list[str] | None = None
) -> list[Any]:
    """Start `kitty -C repo mcp`, list the tools, make `calls`, return the results."""
    import anyio
    from mcp import Client, StdioServerParameters

    argv = command or [sys.executable, "-m", "kitty"]
    params = StdioServerParameters(
        command=argv[0], args=[*argv[1:], "-C", str(repo), "mcp"], env=dict(os.environ)
    )

    async def main() -> list[Any]:
        results: list[Any] = []
        # a StdioServerParameters makes the SDK's Client launch and speak over stdio_client
        async with Client(params, read_timeout_seconds=60) as client:
            tools = await client.list_tools()
            results.append(sorted(t.name for t in tools.tools))
            for name, arguments in calls:
                results.append(await client.call_tool(name, arguments))
        return results

    # A thread of its own: another test (e.g. a sync browser driver) may have left an event
    # loop running in this one, and anyio.run refuses to nest.
    out: list[list[Any]] = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            out.append(anyio.run(main))
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join(timeout=300)
    if errors:
        raise errors[0]
    return out[0]


def payload(result: Any) -> dict[str, Any]:
    text = "".join(c.text for c in result.content if getattr(c, "type", "") == "text")
    return json.loads(text)  # type: ignore[no-any-return]


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
    listed, status, nxt, implement, bad, marked, moved, review, verdict = session(
        planned,
        [
            ("status", {}),
            ("next", {"agent": "claude", "claim": True}),
            ("implement", {"wp_id": "WP01", "agent": "claude"}),
            ("move", {"wp_id": "WP01", "to": "in_reveiw", "agent": "claude"}),
            ("mark_status", {"task_ids": ["T001"], "status": "done", "agent": "claude"}),
            ("move", {"wp_id": "WP01", "to": "for_review", "agent": "claude", "note": "ok"}),
            ("review", {"wp_id": "WP01", "agent": "codex"}),
            (
                "review_submit",
                {"wp_id": "WP01", "findings_files": [str(findings)], "agent": "codex"},
            ),
        ],
    )
    assert listed == sorted(
        ["next", "status", "move", "mark_status", "review_submit", "implement", "review"]
    )
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


def test_malformed_lines_get_no_reply_and_the_server_stays_up(planned: Path) -> None:
    """Pinned behaviour of the MCP SDK's stdio transport (mcp 2.x, mcp/server/stdio.py):
    a line that is not a JSON-RPC message is dropped (logged at debug level) with no
    -32700/-32600 error reply; the server keeps serving, and the next request is
    answered. The README's MCP section says so."""
    replies = _raw_session(
        planned,
        [
            b"not json\n",
            b"{\n",
            b"[1, 2]\n",
            b'{"jsonrpc": "2.0", "id": 7}\n',
            b'{"id": 8, "method": "ping"}\n',
            _request(1, "initialize", INITIALIZE),
            INITIALIZED,
            b"\x00\xff garbage\n",
            _request(2, "tools/call", {"name": "status", "arguments": {}}),
            _request(3, "ping", {}),
        ],
        3,
    )
    by_id = {r.get("id"): r for r in replies}
    assert sorted(by_id) == [1, 2, 3]  # nothing for the malformed lines
    assert all("error" not in r for r in replies)
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
