"""stdout is data, stderr is diagnostics. JSON is sorted and versioned; colour decided once."""

from __future__ import annotations

import os
import sys

from kitty import SCHEMA
from kitty.core.printable import (
    TABLE,
    encodable,
    needs_escaping,
    printable,
    printable_styled,
    surrogates,
)
from kitty.errors import KittyError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_JSON_TABLE = {c: f"\\u{c:04x}" for c in TABLE}


def echo(text: str, err: bool = False, nl: bool = True, styled: bool = False) -> None:
    """Print one message and flush, like click.echo for text (without importing click:
    `kitty status` and `kitty next --json` run without it).

    Control characters are shown as escapes, never sent raw (a title is someone else's
    data: kitty.core.printable); `styled` keeps kitty's own colour codes. JSON goes
    through `emit_json`, whose text json.dumps has already escaped."""
    stream = sys.stderr if err else sys.stdout
    stream.write(echo_text(text, nl, styled))
    stream.flush()


def echo_text(text: str, nl: bool = True, styled: bool = False) -> str:
    """What `echo` writes."""
    text = printable_styled(text) if styled else printable(text)
    return text + "\n" if nl else text


def use_colour() -> bool:
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ


def terminal_width() -> int:
    """Columns to render for: $COLUMNS when set (also in pipes), else the terminal's width,
    else 80. Never below 40; no upper cap, so a wide terminal shows whole titles."""
    from kitty.adapters.viewcache import columns  # shutil's rule, without importing shutil

    return max(40, columns())


def emit_json(data: Any) -> None:
    """Sorted keys always; indented for a person at a terminal, compact (and faster) in pipes."""
    sys.stdout.write(json_text(data))
    sys.stdout.flush()


def json_text(data: Any) -> str:
    """What `emit_json` writes."""
    import json

    indent = 2 if sys.stdout.isatty() else None
    text = json.dumps(data, indent=indent, sort_keys=True, ensure_ascii=False)
    # json.dumps escapes C0 and DEL; C1 and bidi controls stay raw in ensure_ascii=False
    # output, so they are written as \uXXXX escapes: the same JSON value, inert bytes.
    if needs_escaping(text):
        text = text.translate(_JSON_TABLE)
    if not encodable(text):  # a lone surrogate from old data: its JSON escape, same value
        text = text.translate(surrogates())
    return text + "\n"


def emit(data: dict[str, Any], text: str, as_json: bool, styled: bool = False) -> None:
    sys.stdout.write(emit_text(data, text, as_json, styled))
    sys.stdout.flush()


def emit_text(data: dict[str, Any], text: str, as_json: bool, styled: bool = False) -> str:
    """What `emit` writes: the JSON document, or the text for a person."""
    if as_json:
        payload = dict(data)
        payload.setdefault("schema", SCHEMA)
        return json_text(payload)
    return echo_text(text, nl=not text.endswith("\n"), styled=styled)


def warn(lines: list[str]) -> None:
    for line in lines:
        echo(f"warning: {line}", err=True)


def warn_text(lines: list[str]) -> str:
    """What `warn` writes (one line at a time)."""
    return "".join(echo_text(f"warning: {line}") for line in lines)


def error(exc: KittyError, as_json: bool) -> int:
    if as_json:
        emit_json({"schema": SCHEMA, "error": exc.to_json()})
    else:
        echo(f"error: {exc.message}", err=True)
        if exc.hint:
            echo(f"hint: {exc.hint}", err=True)
    return exc.exit_code
