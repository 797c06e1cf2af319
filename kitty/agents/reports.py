"""What an agent CLI's own output says about a run: the tool calls it refused, its
error in its own words, and the tokens, cost, turns and API time it reports.

Read from the run's log (the CLI's stdout and stderr) by the CLI a command runs,
not by the backend's kind: `agents.commands.claude` overriding the built-in keeps
claude's reading. Each CLI's structured output, as its pinned release prints it
(tests/agents runs them against the model double):

* claude (`--output-format json`): one result object: `permission_denials`,
  `is_error`/`result`/`api_error_status`, `usage`, `total_cost_usd`, `num_turns`,
  `duration_api_ms`;
* qwen (`--output-format json`): an array of messages ending with the same result;
* gemini (`--output-format stream-json`): `tool_use`/`tool_result` events (a
  refusal is a result whose error type is `policy_violation`), `error` events and a
  `result` with `stats` (tokens; no cost);
* opencode (`--format json`): `tool_use` events whose state is an error a rule
  refused, `error` events, `step_finish` parts with `tokens` and `cost`;
* codex (`exec --json`): `turn.completed` usage, `turn.failed`/`error` events; it
  refuses nothing (kitty runs it with full access) and reports no cost.

Pure: text in, data out.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kitty.core.printable import encodable, surrogates

#: The CLIs whose output kitty reads.
READS = frozenset({"claude", "qwen", "gemini", "opencode", "codex"})
#: Wrappers a command may run a CLI through: the CLI is the next word.
WRAPPERS = frozenset({"timeout", "env", "nice", "nohup", "stdbuf", "npx", "caffeinate"})
#: Where a CLI reports no cost (only tokens), said in the summary.
NO_COST = {
    "codex": "codex reports tokens, no cost",
    "gemini": "gemini reports tokens, no cost",
    "qwen": "qwen reports tokens, no cost",
}
USAGE_KEYS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")


@dataclass
class RunReport:
    """What one run's output says. `usage` holds the keys of USAGE_KEYS plus `cost_usd`,
    `turns` and `api_ms` where the CLI reports them (absent where it does not)."""

    cli: str | None = None
    denials: list[str] = field(default_factory=list)
    error: str | None = None  # the first line of the CLI's error, in its words
    status: int | None = None  # the model service's HTTP status, when the CLI says it
    usage: dict[str, Any] = field(default_factory=dict)
    model: str | None = None


def cli_of(argv: Sequence[str]) -> str | None:
    """The agent CLI a command line runs: its executable's name, past wrappers such as
    `timeout 600` and `env A=B`, and past an interpreter running a script named like one."""
    words = list(argv)
    while words:
        name = os.path.basename(words[0])
        if name in WRAPPERS:
            words = [w for w in words[1:] if not (w[:1].isdigit() or "=" in w or w[:1] == "-")]
            continue
        if name.startswith("python") or name in ("node", "bun", "deno"):
            script = next((w for w in words[1:] if not w.startswith("-")), "")
            base = os.path.basename(script).split(".")[0]
            return base if base in READS else None
        return name if name in READS else None
    return None


def one_line(text: str, limit: int = 200) -> str:
    """`text` on one line: newlines and tabs written as \\n and \\t, a lone surrogate
    (JSON's `\\ud800`, which UTF-8 cannot hold) as its escape, capped."""
    flat = text.replace("\\", "\\\\").replace("\r", "\\r").replace("\n", "\\n").replace("\t", "\\t")
    if not encodable(flat):
        flat = flat.translate(surrogates())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def call_text(tool: str, args: Any) -> str:
    """A refused call as `Tool(command or path)`, on one line."""
    detail = ""
    if isinstance(args, dict):
        for key in ("command", "file_path", "filePath", "path", "pattern", "url"):
            if args.get(key):
                detail = str(args[key])
                break
    tool = one_line(tool, 80)
    return f"{tool}({one_line(detail, 120)})" if detail else tool


def call_detail(denial: str) -> str:
    """`python -m pytest -q` of a refused call `Bash(python -m pytest -q)`."""
    head, _, rest = denial.partition("(")
    return rest[:-1] if rest.endswith(")") else head


def _objects(output: str) -> Iterable[dict[str, Any]]:
    """Every JSON object the output holds: one per line, or a line holding an array of
    them (qwen), or an object printed over several lines (gemini's `json` format)."""
    lines = output.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index].strip()
        index += 1
        if not line.startswith(("{", "[")):
            continue
        text = line
        if line in ("{", "["):  # pretty-printed: up to the closing line
            end = next((j for j in range(index, len(lines)) if lines[j] in ("}", "]")), None)
            if end is None:
                continue
            text = "\n".join(lines[index - 1 : end + 1])
            index = end + 1
        try:
            data = json.loads(text)
        except ValueError:
            continue
        for item in data if isinstance(data, list) else [data]:
            if isinstance(item, dict):
                yield item


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def _add(usage: dict[str, Any], key: str, value: Any) -> None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        usage[key] = usage.get(key, 0) + value


def _claude_like(report: RunReport, objects: list[dict[str, Any]]) -> None:
    result = next((o for o in reversed(objects) if o.get("type") == "result"), None)
    if result is None:
        return
    for item in result.get("permission_denials") or []:
        if isinstance(item, dict):
            tool = str(item.get("tool_name") or item.get("name") or "tool")
            report.denials.append(call_text(tool, item.get("tool_input") or item.get("input")))
    if result.get("is_error") or str(result.get("subtype", "")).startswith("error"):
        words = result.get("result") or result.get("error") or result.get("subtype")
        if isinstance(words, dict):
            words = words.get("message")
        report.error = _first_line(str(words or "error"))
        status = result.get("api_error_status")
        report.status = status if isinstance(status, int) else None
    usage = _dict(result.get("usage"))
    _add(report.usage, "input_tokens", usage.get("input_tokens"))
    _add(report.usage, "output_tokens", usage.get("output_tokens"))
    _add(report.usage, "cache_read_tokens", usage.get("cache_read_input_tokens"))
    _add(report.usage, "cache_write_tokens", usage.get("cache_creation_input_tokens"))
    _add(report.usage, "cost_usd", result.get("total_cost_usd"))
    _add(report.usage, "turns", result.get("num_turns"))
    _add(report.usage, "api_ms", result.get("duration_api_ms"))
    models = result.get("modelUsage")
    if isinstance(models, dict) and models:
        report.model = one_line(",".join(sorted(str(m) for m in models)))


def _gemini(report: RunReport, objects: list[dict[str, Any]]) -> None:
    calls: dict[str, tuple[str, Any]] = {}
    for obj in objects:
        kind = obj.get("type")
        if kind == "init" and obj.get("model"):
            report.model = one_line(str(obj["model"]))
        elif kind == "tool_use":
            calls[str(obj.get("tool_id"))] = (str(obj.get("tool_name")), obj.get("parameters"))
        elif kind == "tool_result" and obj.get("status") == "error":
            error = _dict(obj.get("error"))
            if error.get("type") == "policy_violation":
                tool, args = calls.get(str(obj.get("tool_id")), ("tool", None))
                report.denials.append(call_text(tool, args))
        elif kind == "error":
            report.error = report.error or _first_line(str(obj.get("message") or "error"))
        elif kind == "result":
            stats = _dict(obj.get("stats"))
            _add(report.usage, "input_tokens", stats.get("input_tokens"))
            _add(report.usage, "output_tokens", stats.get("output_tokens"))
            _add(report.usage, "cache_read_tokens", stats.get("cached"))
            _add(report.usage, "api_ms", stats.get("duration_ms"))
            failed = _dict(obj.get("error"))
            if obj.get("status") == "error" and failed:
                report.error = _first_line(str(failed.get("message") or "error"))


def _opencode(report: RunReport, objects: list[dict[str, Any]]) -> None:
    for obj in objects:
        part = _dict(obj.get("part"))
        kind = obj.get("type")
        if kind == "tool_use":
            state = _dict(part.get("state"))
            error = str(state.get("error") or "")
            if state.get("status") == "error" and "rule which prevents you" in error:
                report.denials.append(call_text(str(part.get("tool")), state.get("input")))
        elif kind == "step_finish":
            tokens = _dict(part.get("tokens"))
            cache = _dict(tokens.get("cache"))
            _add(report.usage, "input_tokens", tokens.get("input"))
            _add(
                report.usage,
                "output_tokens",
                _int(tokens.get("output")) + _int(tokens.get("reasoning")),
            )
            _add(report.usage, "cache_read_tokens", cache.get("read"))
            _add(report.usage, "cache_write_tokens", cache.get("write"))
            _add(report.usage, "cost_usd", part.get("cost"))
            _add(report.usage, "turns", 1)
        elif kind == "error":
            words: Any = obj.get("error")
            if isinstance(words, dict):
                data = _dict(words.get("data"))
                words = data.get("message") or words.get("message") or words.get("name")
            report.error = report.error or _first_line(str(words or "error"))


def _codex(report: RunReport, objects: list[dict[str, Any]]) -> None:
    for obj in objects:
        kind = obj.get("type")
        if kind == "turn.completed" and isinstance(obj.get("usage"), dict):
            usage = obj["usage"]
            _add(report.usage, "input_tokens", usage.get("input_tokens"))
            _add(report.usage, "output_tokens", usage.get("output_tokens"))
            _add(report.usage, "cache_read_tokens", usage.get("cached_input_tokens"))
            _add(report.usage, "turns", 1)
        elif kind == "turn.failed" and isinstance(obj.get("error"), dict):
            report.error = _first_line(str(obj["error"].get("message") or "error"))
        elif kind == "error" and report.error is None:
            report.error = _first_line(str(obj.get("message") or "error"))
    status = re.search(r"\b(?:status:?|status code) ?([1-5]\d\d)\b", report.error or "")
    report.status = int(status.group(1)) if status else None


READERS = {
    "claude": _claude_like,
    "qwen": _claude_like,
    "gemini": _gemini,
    "opencode": _opencode,
    "codex": _codex,
}


def _first_line(text: str) -> str:
    line = next((x.strip() for x in text.splitlines() if x.strip()), text.strip())
    return one_line(line, 300)


#: Lines of an agent's output that carry its error, when it printed no structured one.
ERROR_LINE = re.compile(
    r"error|fatal|denied|refused|not found|unauthori[sz]ed|forbidden|invalid|failed|"
    r"cannot|can't|could not|exception|traceback",
    re.IGNORECASE,
)


def read_report(cli: str | None, output: str) -> RunReport:
    """What `output` (a run's log: the CLI's stdout and stderr, after kitty's `#` header
    lines) says, read the way `cli` prints it."""
    report = RunReport(cli)
    reader = READERS.get(cli or "")
    if reader is not None:
        reader(report, list(_objects(output)))
    return report


def plain_error(output: str) -> str | None:
    """The first line of an agent's own output that reads as an error (its stderr joins
    its stdout in the log), else its last line: for a failed run with no structured
    error."""
    lines = [
        line.strip()
        for line in output.splitlines()
        if line.strip() and not line.startswith("# ") and not line.lstrip().startswith(("{", "["))
    ]
    if not lines:
        return None
    found = next((line for line in lines if ERROR_LINE.search(line)), lines[-1])
    return one_line(found, 300)
