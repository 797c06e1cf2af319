"""stdout is data, stderr is diagnostics. JSON is sorted and versioned; colour decided once."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from kitty import SCHEMA
from kitty.errors import KittyError


def echo(text: str, err: bool = False, nl: bool = True) -> None:
    """Print one message and flush, like click.echo for text (without importing click:
    `kitty status` and `kitty next --json` run without it)."""
    stream = sys.stderr if err else sys.stdout
    stream.write(text + "\n" if nl else text)
    stream.flush()


def use_colour() -> bool:
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ


def terminal_width() -> int:
    """Columns to render for: $COLUMNS when set (also in pipes), else the terminal's width,
    else 80. Never below 40; no upper cap, so a wide terminal shows whole titles."""
    import shutil

    return max(40, shutil.get_terminal_size((80, 24)).columns)


def emit_json(data: Any) -> None:
    """Sorted keys always; indented for a person at a terminal, compact (and faster) in pipes."""
    indent = 2 if sys.stdout.isatty() else None
    echo(json.dumps(data, indent=indent, sort_keys=True, ensure_ascii=False))


def emit(data: dict[str, Any], text: str, as_json: bool) -> None:
    if as_json:
        payload = dict(data)
        payload.setdefault("schema", SCHEMA)
        emit_json(payload)
    else:
        echo(text, nl=not text.endswith("\n"))


def warn(lines: list[str]) -> None:
    for line in lines:
        echo(f"warning: {line}", err=True)


def error(exc: KittyError, as_json: bool) -> int:
    if as_json:
        emit_json({"schema": SCHEMA, "error": exc.to_json()})
    else:
        echo(f"error: {exc.message}", err=True)
        if exc.hint:
            echo(f"hint: {exc.hint}", err=True)
    return exc.exit_code
