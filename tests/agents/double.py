"""A scripted model double: plays the model's side of an implement-review loop for
the real agent CLIs, on 127.0.0.1.

It speaks the wire formats the end-to-end sprint needs, streamed as the CLIs
ask for them: the Anthropic Messages API (claude: `POST /v1/messages`, server-sent
events with `tool_use` blocks), the OpenAI Responses API (codex: `POST
/v1/responses`, events with `function_call` items) and, in tests/agents/double_chat.py,
the OpenAI Chat Completions API (qwen, opencode). Each request is answered from
the conversation it carries, so the double keeps no session state: the kitty prompt
(the first user message) says the role and the WP, the number of tool results so far
says the step. The script:

* implementer (`# Implement WPnn` / `# Fix WPnn`): write its owned file (read it
  first when fixing: claude refuses to overwrite a file it has not read), then run
  the prompt's own `kitty safe-commit …` and `kitty agent tasks move-task … --to
  for_review` lines with the placeholders filled in, then say it is done;
* reviewer (`# Review WPnn`): run the prompt's `git -C … diff` line, then reject
  (a feedback file, then the prompt's `--to planned` line) when the diff lacks the
  WP's work or on the first review of a WP in `reject`; otherwise approve with the
  prompt's `--to approved` line; then say it is done.

Written by hand on the standard library: the mock-LLM servers on PyPI (mockllm,
ai-mock) answer canned text, not scripted tool calls, and speak neither Anthropic
tool_use streaming nor the Responses API.
"""

from __future__ import annotations

import itertools
import json
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from tests.agents.loopback import Request

_ids = itertools.count(1)


@dataclass(frozen=True)
class Action:
    tool: str  # "shell" (a command), "write", "read", or "say" (final text)
    text: str  # the command, the file's content, or the final words
    path: str = ""  # for write/read


@dataclass
class Script:
    """What the double does; `prompts` keeps every kitty prompt it was sent."""

    feedback_dir: Path
    reject: frozenset[str] = frozenset()
    prompts: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)  # every command it asked to run
    results: list[str] = field(default_factory=list)  # every tool result it was sent
    feedback_files: list[str] = field(default_factory=list)  # where it wrote its feedback

    def plan(self, prompt: str, results: list[str]) -> list[Action]:
        header = re.search(r"^# (Implement|Fix|Review) (WP\d+)(.*)$", prompt, re.M)
        if header is None:
            return [Action("say", "Nothing to do.")]
        role, wp, rest = header.groups()
        workspace = _workspace(prompt)
        if role == "Review":
            diff = _one(r"^    (git -C \S+ diff (?:--no-ext-diff )?\S+)$", prompt)
            shown = results[0] if results else None  # the diff's output, once it ran
            verdict = _review_verdict(prompt, wp, self, rest, shown, workspace)
            return [Action("shell", diff), *verdict, Action("say", "Reviewed.")]
        owned = _one(r"^- Only files in the write scope changed: (\S+)\.$", prompt)
        target = f"{workspace}/{owned}"
        content = f"{wp} implemented by the double\n"
        actions = []
        if role == "Fix":
            actions.append(Action("read", "", target))
            content += "fixed after review\n"
        commit = _one(r"^1\. `(kitty safe-commit .+)`$", prompt)
        commit = commit.replace("<each file you changed>", owned).replace("<summary>", wp)
        move = _one(r"^\d\. `(kitty agent tasks move-task .+ --to for_review .+)`$", prompt)
        move = move.replace("<summary>", f"{wp} done")
        actions += [
            Action("write", content, target),
            Action("shell", commit),
            Action("shell", move),
            Action("say", f"{wp} is ready for review."),
        ]
        return actions

    def step(self, prompt: str, results: list[str]) -> Action:
        """The next action, after the tool `results` the conversation carries so far."""
        done = len(results)
        if done == 0:
            self.prompts.append(prompt)
        else:
            self.results.append(results[-1])
        actions = self.plan(prompt, results)
        action = actions[min(done, len(actions) - 1)]
        if action.tool == "shell":
            self.commands.append(action.text)
        return action


def _workspace(prompt: str) -> str:
    """The workspace the prompt names: its `cd` line, or (for an agent the sprint starts
    there) the path in `Work only in` / `The lane worktree of this work package:`."""
    found = re.search(r"^    cd (\S+)$", prompt, re.M) or re.search(
        r"^(?:Work only in|The lane worktree of this work package:) `([^`]+)`", prompt, re.M
    )
    assert found, f"the double found no workspace in the prompt:\n{prompt[:2000]}"
    return found.group(1)


def _one(pattern: str, text: str) -> str:
    match = re.search(pattern, text, re.M)
    assert match, f"the double found no {pattern!r} in the prompt:\n{text[:2000]}"
    return match.group(1)


def _review_verdict(
    prompt: str, wp: str, script: Script, rest: str, diff: str | None, workspace: str
) -> list[Action]:
    """Reject once when asked to (`script.reject`), and whenever the diff lacks the
    WP's work (an implementer that did not write its file); otherwise approve."""
    missing = diff is not None and f"+{wp} implemented by the double" not in diff
    if missing or (wp in script.reject and "(cycle" not in rest):
        line = _one(r"^    (kitty agent tasks move-task .+ --to planned .+)$", prompt)
        named = re.search(r"^Reject: first write what must change to (\S+?)[ ,]", prompt, re.M)
        if named and named.group(1) != "<feedback.md>":  # the file kitty asks for
            feedback = Path(shlex.split(named.group(1))[0])
        else:
            # no file named: where a real reviewer writes it, in its own worktree
            feedback = Path(workspace) / f"{wp}-feedback.md"
            line = line.replace("<feedback.md>", shlex.quote(str(feedback)))
        script.feedback_files.append(str(feedback))
        text = (
            f"The diff does not contain the work. It ran and gave:\n{diff}\n"
            if missing
            else "Say in the file that it was fixed after review.\n"
        )
        return [Action("write", text, str(feedback)), Action("shell", line)]
    line = _one(r"^    (kitty agent tasks move-task .+ --to approved .+)$", prompt)
    return [Action("shell", line.replace("<summary>", f"{wp} looks right"))]


# -- Anthropic Messages (claude) -----------------------------------------------------
def _texts(content: Any) -> Iterable[str]:
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                yield str(block.get("text", ""))


def _kitty_prompt(texts: Iterable[str]) -> str:
    for text in texts:
        found = re.search(r"^(IMPORTANT: After reviewing|# (Implement|Fix|Review) WP)", text, re.M)
        if found:
            return text[found.start() :]
    return ""


def anthropic(script: Script) -> Any:
    def respond(request: Request, handler: BaseHTTPRequestHandler) -> bool:
        if not request.path.startswith("/v1/messages") or request.method != "POST":
            return False
        body = request.json()
        messages = body.get("messages") or []
        users = [t for m in messages if m.get("role") == "user" for t in _texts(m.get("content"))]
        prompt = _kitty_prompt(users)
        if not body.get("tools") or not prompt:  # the title request, or a side question
            blocks: list[dict[str, Any]] = [{"type": "text", "text": "Kitty work package"}]
            stop = "end_turn"
        else:
            results = [
                "".join(_texts(b.get("content")))
                for m in messages
                if isinstance(m.get("content"), list)
                for b in m["content"]
                if isinstance(b, dict) and b.get("type") == "tool_result"
            ]
            action = script.step(prompt, results)
            blocks, stop = _anthropic_blocks(action), "tool_use"
            if action.tool == "say":
                stop = "end_turn"
        _anthropic_send(handler, body, blocks, stop)
        return True

    return respond


def _anthropic_blocks(action: Action) -> list[dict[str, Any]]:
    tool_id = f"toolu_{next(_ids):06d}"
    if action.tool == "say":
        return [{"type": "text", "text": action.text}]
    if action.tool == "shell":
        call = {"command": action.text, "description": "kitty's double"}
        return [{"type": "tool_use", "id": tool_id, "name": "Bash", "input": call}]
    if action.tool == "read":
        return [
            {"type": "tool_use", "id": tool_id, "name": "Read",
             "input": {"file_path": action.path}}
        ]  # fmt: skip
    call = {"file_path": action.path, "content": action.text}
    return [{"type": "tool_use", "id": tool_id, "name": "Write", "input": call}]


def _anthropic_send(
    handler: BaseHTTPRequestHandler, body: dict[str, Any], blocks: list[dict[str, Any]], stop: str
) -> None:
    message = {
        "id": f"msg_{next(_ids):06d}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "double"),
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
    if not body.get("stream"):
        payload = json.dumps({**message, "content": blocks, "stop_reason": stop}).encode()
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)
        return
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": message})
    ]
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [
            ("content_block_start",
             {"type": "content_block_start", "index": index, "content_block": start}),
            ("content_block_delta",
             {"type": "content_block_delta", "index": index, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": index}),
        ]  # fmt: skip
    events += [
        ("message_delta",
         {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
          "usage": {"output_tokens": 5}}),
        ("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip
    _sse(handler, events)


def _sse(handler: BaseHTTPRequestHandler, events: list[tuple[str, dict[str, Any]]]) -> None:
    payload = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)
    raw = payload.encode()
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Cache-Control", "no-cache")
    handler.send_header("Content-Length", str(len(raw)))
    handler.end_headers()
    handler.wfile.write(raw)


# -- OpenAI Responses (codex) -------------------------------------------------------------
def responses(script: Script) -> Any:
    def respond(request: Request, handler: BaseHTTPRequestHandler) -> bool:
        if not request.path.startswith("/v1/responses") or request.method != "POST":
            return False
        body = request.json()
        items = body.get("input") or []
        texts = [
            str(part.get("text", ""))
            for item in items
            if isinstance(item, dict) and item.get("role") == "user"
            for part in (item.get("content") or [])
            if isinstance(part, dict) and part.get("type") == "input_text"
        ]
        prompt = _kitty_prompt(texts)
        results = [
            str(i.get("output", ""))
            for i in items
            if isinstance(i, dict) and i.get("type") == "function_call_output"
        ]
        action = script.step(prompt, results) if prompt else Action("say", "Nothing to do.")
        response_id = f"resp_{next(_ids):06d}"
        item = _responses_item(action, response_id)
        usage = {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15,
        }
        _sse(
            handler,
            [
                ("response.created",
                 {"type": "response.created", "response": {"id": response_id}}),
                ("response.output_item.added",
                 {"type": "response.output_item.added", "output_index": 0, "item": item}),
                ("response.output_item.done",
                 {"type": "response.output_item.done", "output_index": 0, "item": item}),
                ("response.completed",
                 {"type": "response.completed",
                  "response": {"id": response_id, "usage": usage}}),
            ],
        )  # fmt: skip
        return True

    return respond


def _responses_item(action: Action, response_id: str) -> dict[str, Any]:
    """codex's output item for `action`: an exec_command call (codex edits and reads
    through its shell), or the final message."""
    if action.tool == "write":
        quoted, folder = shlex.quote(action.path), shlex.quote(str(Path(action.path).parent))
        write = f"mkdir -p {folder} && printf '%s' {shlex.quote(action.text)} > {quoted}"
        action = Action("shell", write)
    elif action.tool == "read":
        action = Action("shell", f"cat {shlex.quote(action.path)}")
    if action.tool == "shell":
        call_id = f"call_{next(_ids):06d}"
        return {
            "type": "function_call",
            "id": f"fc_{call_id}",
            "call_id": call_id,
            "name": "exec_command",
            "arguments": json.dumps({"cmd": action.text}),
            "status": "completed",
        }
    return {
        "type": "message",
        "id": f"msg_{response_id}",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": action.text, "annotations": []}],
    }


# -- errors the model service answers with ----------------------------------------------
#: (status, error type, message, headers) the double answers a model request with.
ERRORS: dict[str, tuple[int, str, str, tuple[tuple[str, str], ...]]] = {
    "401": (401, "authentication_error", "invalid x-api-key", ()),
    "404": (404, "not_found_error", "model: no-such-model", ()),
    "429": (429, "rate_limit_error", "Number of requests has exceeded your rate limit",
            (("retry-after", "1"),)),
    "529": (529, "overloaded_error", "Overloaded", ()),
}  # fmt: skip


@dataclass
class Failing:
    """Answer the first `times` model requests on `path` (claude's /v1/messages, codex's
    /v1/responses) with `error` (a key of ERRORS, or "drop": close the connection
    without an answer); later ones go to the next responder (the script)."""

    path: str
    error: str
    times: int = 1_000_000
    failed: int = 0

    def __call__(self, request: Request, handler: BaseHTTPRequestHandler) -> bool:
        if request.method != "POST" or not request.path.startswith(self.path):
            return False
        if self.failed >= self.times:
            return False
        self.failed += 1
        if self.error == "drop":
            import socket

            handler.close_connection = True
            handler.connection.shutdown(socket.SHUT_RDWR)
            return True
        status, kind, message, headers = ERRORS[self.error]
        raw = json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        for name, value in headers:
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(raw)))
        handler.end_headers()
        handler.wfile.write(raw)
        return True
