"""The Model Context Protocol server of `kitty mcp` (stdio), without click or the MCP SDK.

The server speaks MCP's stdio transport itself (newline-delimited JSON-RPC 2.0: the
`initialize` handshake, `ping`, `tools/list`, `tools/call`) instead of importing the MCP
SDK, whose import alone took 1.4-2.8 s of the 2.5-4.3 s a client waited for `initialize`.
The tools are a table (kitty.mcp.catalog): each a JSON schema (every parameter
described) and a thin call into kitty.mcp.tools, which the `--json` commands'
services back. Tests drive it with
the SDK's own client (tests/mcp/test_mcp.py).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from kitty.core.printable import encodable
from kitty.mcp.catalog import TOOLS, Tool

INSTRUCTIONS = (
    "kitty tracks this repository's work packages (WPs). Start: `init` (with the agents), "
    "`mission_create`. Loop: call `next` with your agent "
    "name and claim=true; do what `action` says (implement/review return your prompt and "
    "workspace); ask `next` again until the action is done or blocked. To plan: `wp_add`, "
    "`wp_edit`, `wp_depend`, `wp_split`, then `finalize`; `wp_show` and `wp_search` read. "
    "Commit work with `safe_commit`; at the end `accept`, then `merge`. `next` answers "
    "`tool_calls` (the tool and arguments of each step), and a hint names tools. "
    "Every result is the JSON of the matching `kitty … --json` command; an error's text is "
    'kitty\'s error object {"schema": 1, "error": {"code", "message", "hint"}}: follow its hint.'
)
#: The handshake revisions this server speaks, oldest first: it answers the client's own
#: when listed, else the newest.
PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


def tools() -> list[Tool]:
    from kitty.mcp.lifecycle import LIFECYCLE

    return [*TOOLS, *LIFECYCLE]


def crash_log(exc: BaseException) -> str:
    """A bug's traceback in a new log file (kitty.exits.crash_log, as the CLI keeps it)."""
    from kitty.exits import crash_log as keep

    return keep(exc, "mcp")


class Server:
    """One MCP session over a pair of byte streams: a request per line, an answer per line."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.table = {tool.name: tool for tool in tools()}

    def serve(self, reader: IO[bytes], writer: IO[bytes]) -> None:
        for raw in iter(reader.readline, b""):
            try:
                answer = self.handle(raw)
                line = None if answer is None else wire(answer)
            except Exception as exc:  # a bug outside a tool call: logged, and the session goes on
                message = f"Internal error (details in {crash_log(exc)})"
                line = wire(_error(_request_id(raw), -32603, message))
            if line is not None:
                writer.write(line)
                writer.flush()

    def handle(self, raw: bytes) -> dict[str, Any] | None:
        """The answer to one line, or None for a notification or a blank line."""
        if not raw.strip():
            return None
        try:
            message = json.loads(raw)
        except ValueError:
            return _error(None, -32700, "Parse error: each line must be one JSON-RPC message")
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            if (
                isinstance(message, dict)
                and "method" not in message
                and ("result" in message or "error" in message)
            ):
                return None  # a response to a request this server never sends
            return _error(message.get("id") if isinstance(message, dict) else None, -32600,
                          "Invalid Request")  # fmt: skip
        if "id" not in message:
            return None  # a notification (initialized, cancelled, …): nothing to answer
        ident, method = message["id"], message["method"]
        params = message.get("params") or {}
        if not isinstance(params, dict):
            return _error(ident, -32602, "Invalid params: expected an object")
        if method == "initialize":
            return _result(ident, self.initialize(params))
        if method == "ping":
            return _result(ident, {})
        if method == "tools/list":
            return _result(ident, {"tools": [tool.listing() for tool in self.table.values()]})
        if method == "tools/call":
            tool = self.table.get(str(params.get("name")))
            if tool is None:
                return _error(ident, -32602, f"Unknown tool: {params.get('name')}")
            return _result(ident, self.call(tool, params.get("arguments")))
        return _error(ident, -32601, f"Method not found: {method}")

    def initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        from kitty import __version__

        asked = params.get("protocolVersion")
        return {
            "protocolVersion": asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[-1],
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "kitty", "version": __version__},
            "instructions": INSTRUCTIONS,
        }

    def call(self, tool: Tool, arguments: Any) -> dict[str, Any]:
        from kitty import SCHEMA
        from kitty.errors import KittyError

        try:
            from kitty.mcp import tools as mcp_tools

            func: Callable[..., dict[str, Any]] = getattr(mcp_tools, tool.call)
            doc = func(self.root, **tool.arguments(arguments))
            failed = False
        except KittyError as exc:
            from kitty.mcp.hints import for_mcp

            problem = exc.to_json()
            if problem.get("hint"):  # over MCP, a hint names tools, not shell commands
                problem["hint"] = for_mcp(str(problem["hint"]))
            doc, failed = {"schema": SCHEMA, "error": problem}, True
        except Exception as exc:  # a bug: logged like the CLI's, reported as `internal`
            problem = {
                "code": "internal",
                "message": f"unexpected internal error (details in {crash_log(exc)})",
                "hint": "please report it with that log file",
            }
            doc, failed = {"schema": SCHEMA, "error": problem}, True
        text = json.dumps(doc, sort_keys=True, ensure_ascii=False)
        if not encodable(text):  # old data holding a lone surrogate: shown as its escape
            doc = json.loads(text.translate(_SHOWN))
            text = json.dumps(doc, sort_keys=True, ensure_ascii=False)
        return {
            "content": [{"type": "text", "text": text}],
            "structuredContent": doc,
            "isError": failed,
        }


#: A lone surrogate inside a JSON string -> the escaped backslash and `udXXX`: the value
#: holds the visible text `\\ud800`, which every JSON parser reads (the MCP SDK's refuses
#: a lone surrogate's own escape).
_SHOWN = {c: f"\\\\u{c:04x}" for c in range(0xD800, 0xE000)}


def wire(answer: dict[str, Any]) -> bytes:
    """One answer as its line of UTF-8 JSON, whatever text it holds (a lone surrogate in
    a name the client sent back in an error becomes its visible escape)."""
    text = json.dumps(answer, ensure_ascii=False)
    if not encodable(text):
        text = text.translate(_SHOWN)
    return text.encode("utf-8") + b"\n"


def _request_id(raw: bytes) -> Any:
    """The id of the request on `raw`, when it can be read (else None)."""
    try:
        ident = json.loads(raw).get("id")
    except Exception:
        return None
    return ident if isinstance(ident, (str, int)) and not isinstance(ident, bool) else None


def _result(ident: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "result": result}


def _error(ident: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}


def serve(root: Path) -> int:
    """`kitty mcp` in `root`: refuse outside a kitty project, then answer until stdin ends."""
    from kitty.adapters.layout import find_project

    find_project(root)  # fail now, in plain words, rather than on the first tool call
    from contextlib import suppress

    with suppress(BrokenPipeError):  # the client went away: nothing left to answer
        Server(root).serve(sys.stdin.buffer, sys.stdout.buffer)
    return 0
