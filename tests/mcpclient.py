"""The MCP SDK's own client on `kitty -C REPO mcp` over stdio, for the tests of kitty's
MCP server: `drive` runs an async script against one session, `payload` reads a tool's
JSON answer."""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def drive(
    repo: Path,
    script: Callable[[Any], Awaitable[T]],
    command: list[str] | None = None,
    timeout: float = 600,
) -> T:
    """Start `kitty -C repo mcp` (or `command -C repo mcp`), run `await script(client)`
    with the SDK's Client on it and return what the script returns."""
    import anyio
    from mcp import Client, StdioServerParameters

    argv = command or [sys.executable, "-m", "kitty"]
    params = StdioServerParameters(
        command=argv[0], args=[*argv[1:], "-C", str(repo), "mcp"], env=dict(os.environ)
    )

    async def main() -> T:
        # a StdioServerParameters makes the SDK's Client launch and speak over stdio_client
        async with Client(params, read_timeout_seconds=120) as client:
            return await script(client)

    # A thread of its own: another test (e.g. a sync browser driver) may have left an event
    # loop running in this one, and anyio.run refuses to nest.
    out: list[T] = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            out.append(anyio.run(main))
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join(timeout=timeout)
    if errors:
        raise errors[0]
    return out[0]


def payload(result: Any) -> dict[str, Any]:
    """The JSON a tool answered (its text content)."""
    text = "".join(c.text for c in result.content if getattr(c, "type", "") == "text")
    return json.loads(text)  # type: ignore[no-any-return]
