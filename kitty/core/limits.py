"""What may enter the tracked, append-only log (and the WP and mission files): one rule.

The log is in every clone forever, so what goes into a new line is bounded:

* an **agent id** (every event's actor, `--agent`, `$KITTY_AGENT`, `identity:`, git's
  user.name, the sprint's `--implementer`/`--reviewer`) is 1-64 characters: letters and
  digits (any script: git user names such as "José Müller"), `. _ @ : + - / ( )`, and
  single spaces between words. That is every character real Spec Kitty histories use
  ("claude:sonnet-4-6:reviewer:reviewer", "Stijn Dejongh", "reviewer-renata
  (claude/opus)", "spec-kitty agent tasks map-requirements"); no control characters,
  terminal escapes, quotes or shell metacharacters.
* a **note** or **title** is at most `limits.max_text_bytes` of UTF-8 (16 KiB unless
  `.kittify/config.yaml` says otherwise).

* any **text** at all (every CLI argument, every MCP tool argument, so every note, title,
  objective and name) is text UTF-8 can hold: no lone surrogate, which is what Python
  makes of bytes that are not UTF-8 on a command line (`check_encodable`).

A refusal is a UsageError (exit 2) raised before anything is written. Reading never
applies these limits: old history with long notes or odd actors still reads.
"""

from __future__ import annotations

from typing import Any

from kitty.core.printable import encodable
from kitty.errors import UsageError

MAX_AGENT_CHARS = 64
#: notes, reasons and titles (`limits.max_text_bytes` in .kittify/config.yaml)
DEFAULT_MAX_TEXT_BYTES = 16 * 1024
TEXT_KEY = "limits.max_text_bytes"
_PUNCTUATION = frozenset("._@:+-/()")
_SHOWN = 40  # characters of a refused value quoted back


def _shown(value: str) -> str:
    return repr(value[:_SHOWN] + ("…" if len(value) > _SHOWN else ""))


def agent_problem(name: str) -> str | None:
    """Why `name` is not an acceptable agent id, or None."""
    if not name:
        return "is empty"
    if len(name) > MAX_AGENT_CHARS:
        return f"is {len(name)} characters long (at most {MAX_AGENT_CHARS})"
    if name != name.strip(" ") or "  " in name:
        return "has a leading, trailing or doubled space"
    for char in name:
        if not (char.isalnum() or char in _PUNCTUATION or char == " "):
            return f"contains {char!r}"
    return None


def check_agent(name: str, source: str = "the agent") -> str:
    """`name` when it is an acceptable agent id; else a UsageError naming `source`."""
    problem = agent_problem(name)
    if problem is None:
        return name
    raise UsageError(
        f"{source} {_shown(name)} {problem}: not a valid agent id",
        f"use at most {MAX_AGENT_CHARS} letters, digits, spaces or . _ @ : + - / ( ), "
        "e.g. claude or claude:opus:reviewer",
    )


def check_encodable(text: str, what: str) -> str:
    """`text` when UTF-8 can hold it; else a UsageError naming `what` (an option, a tool
    argument) and where the bad character is."""
    if encodable(text):
        return text
    at = next(i for i, char in enumerate(text) if 0xD800 <= ord(char) < 0xE000)
    raise UsageError(
        f"{what} is not valid UTF-8 text: character {at + 1} of {_shown(text)} is "
        f"{text[at]!r} (a lone surrogate or an undecodable byte)",
        "pass it as UTF-8 text (check the terminal's or the script's encoding); "
        "nothing was written",
    )


def check_arguments(args: list[str]) -> None:
    """Refuse a command line holding text UTF-8 cannot hold, naming its option."""
    for index, arg in enumerate(args):
        if encodable(arg):
            continue
        if arg.startswith("--") and "=" in arg:
            what = arg.split("=", 1)[0]
        elif index and args[index - 1].startswith("-"):
            what = args[index - 1]
        else:
            what = f"argument {index + 1}"
        check_encodable(arg, what)


def check_text(text: str | None, what: str, max_bytes: int = DEFAULT_MAX_TEXT_BYTES) -> None:
    """Refuse a note or title longer than `max_bytes` of UTF-8."""
    if text is None or len(text) * 4 <= max_bytes:
        return  # a str of n characters is at most 4n bytes of UTF-8: no need to encode
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise UsageError(
            f"{what} is {size} bytes; at most {max_bytes} go into the tracked files",
            f"shorten it (or raise {TEXT_KEY} in .kittify/config.yaml); "
            "long feedback belongs in a file: --review-feedback-file",
        )


def check_record(record: dict[str, Any], max_bytes: int = DEFAULT_MAX_TEXT_BYTES) -> None:
    """The last check before a new event is appended: its actor, note and reason."""
    actor = record.get("actor")
    if isinstance(actor, str):
        check_agent(actor)
    check_text(_str(record.get("reason")), "the note", max_bytes)
    delta = record.get("delta")
    if isinstance(delta, dict):
        check_text(_str(delta.get("note")), "the note", max_bytes)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
