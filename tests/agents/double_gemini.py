"""The model double's Gemini API side (gemini: `POST /v1beta/models/M:streamGenerateContent
?alt=sse` with `functionCall` parts; its side requests use `:generateContent`),
answering from the same Script as tests/agents/double.py."""

from __future__ import annotations

import json
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.agents.double import Action, Script, _kitty_prompt
from tests.agents.loopback import Request

#: gemini's own tool names and parameters for the script's actions.
CALLS = {"shell": "run_shell_command", "write": "write_file", "read": "read_file"}


def _parts(contents: Any, role: str) -> Iterable[dict[str, Any]]:
    for content in contents if isinstance(contents, list) else []:
        if isinstance(content, dict) and content.get("role", "user") == role:
            yield from (p for p in content.get("parts") or [] if isinstance(p, dict))


def _call(action: Action) -> dict[str, Any]:
    if action.tool == "shell":
        args: dict[str, Any] = {"command": action.text, "description": "kitty's double"}
    elif action.tool == "write":
        args = {"file_path": action.path, "content": action.text}
    else:
        args = {"file_path": action.path}
    return {"functionCall": {"name": CALLS[action.tool], "args": args}}


def gemini(script: Script) -> Any:
    def respond(request: Request, handler: BaseHTTPRequestHandler) -> bool:
        if "/models/" not in request.path or request.method != "POST":
            return False
        body = request.json()
        contents = body.get("contents") or []
        users = [str(p["text"]) for p in _parts(contents, "user") if "text" in p]
        prompt = _kitty_prompt(users)
        offered = {
            str(d.get("name"))
            for tool in body.get("tools") or []
            for d in (tool.get("functionDeclarations") or [])
        }
        if "streamGenerateContent" not in request.path or not prompt or not offered:
            part: dict[str, Any] = {"text": "{}"}  # a side question (routing, a title)
        else:
            results = [
                json.dumps(p["functionResponse"].get("response"))
                for p in _parts(contents, "user")
                if "functionResponse" in p
            ]
            action = script.step(prompt, results)
            part = {"text": action.text} if action.tool == "say" else _call(action)
        answer = {
            "candidates": [
                {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5,
                              "totalTokenCount": 15},
            "modelVersion": "double",
        }  # fmt: skip
        raw = json.dumps(answer).encode()
        if "alt=sse" in request.path:
            raw = b"data: " + raw + b"\r\n\r\n"
        handler.send_response(200)
        handler.send_header(
            "Content-Type", "text/event-stream" if b"data: " in raw[:6] else "application/json"
        )
        handler.send_header("Content-Length", str(len(raw)))
        handler.end_headers()
        handler.wfile.write(raw)
        return True

    return respond
