"""The project's verification commands (`verify.*` in .kittify/config.yaml), as data.

```yaml
verify:
  test: "python -m pytest -q"          # one command line
  lint: ["ruff check .", "mypy"]       # or several, run in order
```

Each value is a command line (split as a shell splits words, never run through a shell)
or a list of them. The names are the project's own; the order of the mapping is the order
they run in. Pure: the caller reads the file (adapters.config) and checks trust
(adapters.trust covers every `verify.<name>` key, like `agents.commands`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from kitty.core.record import Record
from kitty.errors import SpecError


class VerifyCommand(Record, frozen=True):
    #: The config key's name (`test` for verify.test).
    name: str
    #: The command line as written in the config.
    line: str
    #: The command line split as a shell would (what runs, without a shell).
    argv: tuple[str, ...]

    def __init__(self, name: str, line: str, argv: tuple[str, ...]) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "line", line)
        object.__setattr__(self, "argv", argv)


def _split(key: str, line: object, display: str) -> tuple[str, ...]:
    if not isinstance(line, str) or not line.strip():
        raise SpecError(
            display,
            None,
            f"{key} must be a command line (a string) or a list of them, not {line!r}",
            'for example: verify: {test: "python -m pytest -q"}',
        )
    try:
        argv = tuple(shlex.split(line))
    except ValueError as exc:
        raise SpecError(
            display, None, f"{key}: cannot split {line!r} ({exc})", "close the quote"
        ) from None
    if not argv:
        raise SpecError(display, None, f"{key} is empty", 'for example: "python -m pytest -q"')
    return argv


def verify_commands(
    raw: Mapping[str, Any], display: str = ".kittify/config.yaml"
) -> tuple[VerifyCommand, ...]:
    """Every configured verification command, in the config's order (empty: none)."""
    section = raw.get("verify")
    if section is None:
        return ()
    if not isinstance(section, Mapping):
        raise SpecError(
            display,
            None,
            "verify must be a mapping of names to command lines",
            'for example: verify: {test: "python -m pytest -q", lint: "ruff check ."}',
        )
    found: list[VerifyCommand] = []
    for name, value in section.items():
        key = f"verify.{name}"
        lines = value if isinstance(value, list) else [value]
        if not lines:
            raise SpecError(display, None, f"{key} is an empty list", "name at least one command")
        for line in lines:
            found.append(VerifyCommand(str(name), line, _split(key, line, display)))
    return tuple(found)


def runs_one_of(command: str, lines: Sequence[str]) -> bool:
    """Whether a shell command line runs one of the verification command `lines` (the
    line, or it with more words after it), in any part of `a && b`, `a; b` or `a | b`."""
    wanted = [" ".join(line.split()) for line in lines]
    for part in re.split(r"&&|\|\||[;|\n]", command):
        words = " ".join(part.split())
        if any(words == line or words.startswith(line + " ") for line in wanted if line):
            return True
    return False
