"""The model double's OpenAI Chat Completions side (qwen, opencode: `POST
/v1/chat/completions`, streamed `tool_calls`), answering from the same Script as
tests/agents/double.py."""

from __future__ import annotations

import json
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.agents.double import Action, Script, _ids, _kitty_prompt
from tests.agents.loopback import Request


def _chat_texts(content: Any) -> Iterable[str]:
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text":
                yield str(part.get("text", ""))


def _chat_call(action: Action, tools: dict[str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """The tool call for `action` in the CLI's own tool names and parameters (qwen:
    run_shell_command / write_file / read_file; opencode: bash / write / read)."""
    kinds = {
        "shell": ("run_shell_command", "bash"),
        "write": ("write_file", "write"),
        "read": ("read_file", "read"),
    }[action.tool]
    name = next((n for n in kinds if n in tools), "")
    assert name, f"the CLI offered none of {kinds} (it offered {sorted(tools)})"
    props = (tools[name].get("parameters") or {}).get("properties") or {}
    path_key = next((k for k in ("file_path", "filePath", "path") if k in props), "file_path")
    args: dict[str, Any] = (
        {"command": action.text, "description": "kitty's double"}
        if action.tool == "shell"
        else {path_key: action.path, **({"content": action.text} if action.tool == "write" else {})}
    )
    if "is_background" in props:
        args["is_background"] = False
    return name, args


def chat(script: Script) -> Any:
    def respond(request: Request, handler: BaseHTTPRequestHandler) -> bool:
        if not request.path.startswith("/v1/chat/completions") or request.method != "POST":
            return False
        body = request.json()
        messages = body.get("messages") or []
        users = [
            t for m in messages if m.get("role") == "user" for t in _chat_texts(m.get("content"))
        ]
        tools = {
            str(t["function"]["name"]): t["function"]
            for t in body.get("tools") or []
            if isinstance(t, dict) and isinstance(t.get("function"), dict)
        }
        prompt = _kitty_prompt(users)
        delta: dict[str, Any] = {"role": "assistant"}
        finish = "stop"
        if not tools or not prompt:  # a title request, or a side question
            delta["content"] = "Kitty work package"
        else:
            results = [
                "".join(_chat_texts(m.get("content"))) for m in messages if m.get("role") == "tool"
            ]
            action = script.step(prompt, results)
            if action.tool == "say":
                delta["content"] = action.text
            else:
                name, args = _chat_call(action, tools)
                call_id = f"call_{next(_ids):06d}"
                delta["tool_calls"] = [
                    {"index": 0, "id": call_id, "type": "function",
                     "function": {"name": name, "arguments": json.dumps(args)}}
                ]  # fmt: skip
                finish = "tool_calls"
        _chat_send(handler, body, delta, finish)
        return True

    return respond


def _chat_send(
    handler: BaseHTTPRequestHandler, body: dict[str, Any], delta: dict[str, Any], finish: str
) -> None:
    base = {"id": f"chatcmpl-{next(_ids):06d}", "created": 1, "model": body.get("model", "x")}
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    if not body.get("stream"):
        message = {"content": None, **delta}
        payload = json.dumps(
            {**base, "object": "chat.completion", "usage": usage,
             "choices": [{"index": 0, "message": message, "finish_reason": finish}]}
        ).encode()  # fmt: skip
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)
        return
    chunks = [
        {**base, "object": "chat.completion.chunk",
         "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**base, "object": "chat.completion.chunk",
         "choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "usage": usage},
    ]  # fmt: skip
    raw = ("".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n").encode()
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Cache-Control", "no-cache")
    handler.send_header("Content-Length", str(len(raw)))
    handler.end_headers()
    handler.wfile.write(raw)
