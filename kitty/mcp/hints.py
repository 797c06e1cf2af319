"""Over MCP, the commands kitty prints are tool calls: one mapping from a `kitty …` command
line to the tool and arguments that do the same, used for error hints and `next`'s answer.

`call(command)` parses one command line (the shell words kitty prints, quoted as printed)
into `{"tool": name, "arguments": {...}}`, or None when no tool does it (a shell-only
command: `kitty review run`, `kitty sprint`, `git …`). `rewrite(text)` replaces each
command in a sentence (a hint, a reason) with the tool call written out:
`move(wp_id="WP01", to="approved", force=true, note="…")`.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from kitty import grammar

#: One row per command: its words, the tool, its positional arguments' names (`*name`: every
#: remaining word) and its options: flag -> (parameter, "value", "flag" or "list" (repeated)).
Row = tuple[tuple[str, ...], str, tuple[str, ...], dict[str, tuple[str, str]]]
_COMMON = {"--mission": ("mission", "value"), "--agent": ("agent", "value")}


def _declared(command: grammar.Command) -> Row:
    """The row of a hot command, from its declaration (kitty/grammar.py)."""
    params = command.on(grammar.TOOL)
    names = {p.name: p.tool_name for p in params}
    kinds, star = {grammar.FLAG: "flag", grammar.LIST: "list"}, {grammar.LIST: "*"}
    arguments = [p for p in command.params if not p.flags and (p.fills or p.name) in names]
    positional = tuple(star.get(p.kind, "") + names[p.fills or p.name] for p in arguments)
    options = {f: (p.tool_name, kinds.get(p.kind, "value")) for p in params for f in p.flags}
    return command.words, str(command.tool), positional, options


_WP_ADD = {
    "--mission": ("mission", "value"),
    "--title": ("title", "value"),
    "--objective": ("objective", "value"),
    "--owns": ("owns", "list"),
    "--subtask": ("subtasks", "list"),
    "--depends-on": ("depends_on", "list"),
}
_WP_EDIT = {**_WP_ADD, "--remove-subtask": ("remove_subtasks", "list")}
COMMANDS: tuple[Row, ...] = (
    *(_declared(c) for c in grammar.COMMANDS.values() if c.tool),
    (("agent", "action", "implement"), "implement", ("wp_id",), _COMMON),
    (
        ("agent", "action", "review"),
        "review",
        ("wp_id",),
        {**_COMMON, "--takeover": ("takeover", "flag"), "--note": ("note", "value")},
    ),
    (
        ("review", "submit"),
        "review_submit",
        ("wp_id",),
        {**_COMMON, "--findings": ("findings_files", "list"), "--format": ("format", "value")},
    ),
    (
        ("review", "answer"),
        "review_answer",
        ("wp_id",),
        {
            **_COMMON,
            "--answer": ("answers", "list"),
            "--note": ("notes", "list"),
            "--continue": ("continue", "flag"),
            "--abort": ("abort", "flag"),
        },
    ),
    (("safe-commit",), "safe_commit", ("*paths",), {"-m": ("message", "value")}),
    (("resolve",), "resolve", ("wp_id",), {**_COMMON, "--note": ("note", "value")}),
    (("wp", "add"), "wp_add", (), _WP_ADD),
    (("wp", "edit"), "wp_edit", ("wp_id",), _WP_EDIT),
    (("wp", "show"), "wp_show", ("wp_id",), {"--mission": ("mission", "value")}),
    (
        ("finalize",),
        "finalize",
        (),
        {"--mission": ("mission", "value"), "--allow-placeholders": ("allow_placeholders", "flag")},
    ),
    (("accept",), "accept", (), _COMMON),
    (
        ("merge",),
        "merge",
        (),
        {
            "--mission": ("mission", "value"),
            "--dry-run": ("dry_run", "flag"),
            "--resume": ("resume", "flag"),
            "--abort": ("abort", "flag"),
            "--strategy": ("strategy", "value"),
            "--keep-worktrees": ("keep_worktrees", "flag"),
        },
    ),
    (
        ("mission", "create"),
        "mission_create",
        ("name",),
        {
            "--title": ("title", "value"),
            "--target-branch": ("target_branch", "value"),
            "--initial-commit": ("initial_commit", "flag"),
        },
    ),
    (
        ("init",),
        "init",
        (),
        {"--agents": ("agents", "csv"), "--initial-commit": ("initial_commit", "flag")},
    ),
)

#: Where a command ends inside a sentence: a word kitty writes after it.
_STOPS = ("|", "or", "and", "then", "(then", "meanwhile:")


def call(command: str) -> dict[str, Any] | None:
    """The tool call that does what `command` (one `kitty …` command line) does, or None."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if not words or words[0] != "kitty":
        return None
    return _parse(words[1:])[0]


def _row(words: list[str]) -> Any:
    for row in sorted(COMMANDS, key=lambda r: -len(r[0])):
        if tuple(words[: len(row[0])]) == row[0]:
            return row
    return None


def _parse(words: list[str]) -> tuple[dict[str, Any] | None, int]:
    """(the tool call, how many words it used); (None, 0) when no tool does it."""
    row = _row(words)
    if row is None:
        return None, 0
    path, tool, positional, options = row
    args: dict[str, Any] = {}
    at, slots = len(path), list(positional)
    while at < len(words):
        word = words[at]
        flag, eq, inline = word.partition("=")
        if flag in options and (eq or flag == word):
            name, kind = options[flag]
            if kind == "flag":
                args[name] = True
                at += 1
                continue
            if eq:
                value, at = inline, at + 1
            elif at + 1 < len(words):
                value, at = words[at + 1], at + 2
            else:
                return None, 0
            if kind == "list":
                args.setdefault(name, []).append(value)
            elif kind == "csv":
                args[name] = [v.strip() for v in value.split(",") if v.strip()]
            else:
                args[name] = value
            continue
        if word.startswith("-") or word in _STOPS or not slots:
            break
        if slots[0].startswith("*"):
            args.setdefault(slots[0][1:], []).append(word)
        else:
            args[slots.pop(0)] = word
        at += 1
    if tool == "move" and "to" not in args:
        return None, 0
    return {"tool": tool, "arguments": args}, at


def written(tool_call: dict[str, Any]) -> str:
    """`move(wp_id="WP01", to="approved", force=true)`: a tool call as one line of text."""
    args = ", ".join(
        f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in tool_call["arguments"].items()
    )
    return f"{tool_call['tool']}({args})"


def rewrite(text: str) -> str:
    """`text` with every `kitty …` command that a tool does written as that tool call."""
    return "".join(piece for piece, _ in _pieces(text))


def _pieces(text: str) -> list[tuple[str, bool]]:
    """`text` cut into prose (True) and commands (False): tool calls, or a shell-only
    command kept word for word."""
    out: list[tuple[str, bool]] = []
    rest = text
    while (start := _command_start(rest)) >= 0:
        out.append((rest[:start], True))
        tail = rest[start:]
        spans = _words(tail)
        words = [w for w, _ in spans]
        made, used = _parse(words[1:]) if len(words) > 1 else (None, 0)
        if made is None:  # no tool: the command up to the prose after it stays as written
            used = next((i for i, w in enumerate(words) if i and w in _STOPS), len(words)) - 1
            end = spans[used][1] if used >= 0 else len("kitty")
            out.append((tail[:end], False))
        else:
            end = spans[used][1]  # kitty and the `used` words after it
            out.append((written(made), False))
        rest = tail[end:]
    return [*out, (rest, True)]


def _command_start(text: str) -> int:
    at = 0
    while (found := text.find("kitty ", at)) >= 0:
        if found == 0 or not (text[found - 1].isalnum() or text[found - 1] in "-_/"):
            return found
        at = found + 1
    return -1


def _words(text: str) -> list[tuple[str, int]]:
    """Shell words from the start of `text`, each with where it ends, up to a character
    that ends a command in prose (a backtick, `;`, a closing parenthesis, a line end)."""
    spans: list[tuple[str, int]] = []
    at = 0
    while at < len(text):
        while at < len(text) and text[at] == " ":
            at += 1
        if at >= len(text) or text[at] in "`;)\n":
            break
        word: list[str] = []
        while at < len(text) and text[at] not in " `;)\n":
            char = text[at]
            if char in "'\"":
                close = text.find(char, at + 1)
                if close < 0:
                    return spans
                word.append(text[at + 1 : close])
                at = close + 1
                continue
            word.append(char)
            at += 1
        token = "".join(word)
        if token.endswith(",") and len(token) > 1:
            spans.append((token[:-1], at - 1))
            break
        spans.append((token, at))
    return spans


#: Every option of the table, by flag: how prose that names a bare flag says it over MCP.
_PARAMS = {flag: spec for row in COMMANDS for flag, spec in row[3].items() if flag != "-m"}


def rewrite_flags(text: str) -> str:
    """Bare flags in prose (`pass --review-feedback-file FILE or --note "why"`) written as
    the tool parameters they are (`review_feedback_file=FILE`, `note="why"`)."""
    import re

    def one(match: re.Match[str]) -> str:
        name, kind = _PARAMS[match.group(1)]
        value = match.group(3)
        if kind == "flag":
            return f"{name}=true" + (f" {value}" if value else "")
        return f"{name}={value}" if value else f"{name}=…"

    flags = "|".join(re.escape(f) for f in sorted(_PARAMS, key=len, reverse=True))
    pattern = rf"(?<![\w-])({flags})(?![\w-])( (\"[^\"]*\"|'[^']*'|[A-Z][A-Z_=]*|<[^>]*>))?"
    return re.sub(pattern, one, text)


def for_mcp(text: str) -> str:
    """A hint or reason as an MCP client reads it: tool calls, not shell commands (and
    the bare flags of its prose as parameters)."""
    return "".join(rewrite_flags(piece) if prose else piece for piece, prose in _pieces(text))


def calls(commands: list[str]) -> list[dict[str, Any]]:
    """Each command as its tool call; one no tool does stays a shell `command`."""
    return [call(c) or {"tool": None, "command": c} for c in commands]


def next_answer(doc: dict[str, Any]) -> dict[str, Any]:
    """`next`'s answer over MCP: beside each list of commands, the same steps as tool calls
    (`tool_calls`), and its reason and blockers naming tools, not shell commands."""
    doc = dict(doc)
    doc["tool_calls"] = calls(doc.get("commands") or [])
    doc["choices"] = [
        {**c, "tool_calls": calls(c.get("commands") or [])} for c in doc.get("choices") or []
    ]
    doc["conflicts"] = [
        {**c, "tool_calls": calls(c.get("commands") or [])} for c in doc.get("conflicts") or []
    ]
    doc["reason"] = for_mcp(str(doc.get("reason") or ""))
    doc["blocked_by"] = [for_mcp(b) for b in doc.get("blocked_by") or []]
    return doc
