"""Text from a repository reaches a terminal inert: control characters shown, not obeyed.

A WP title or an agent name is data someone else wrote. Raw, `\\x1b]0;…\\x07` retitles
the terminal, `\\x1b[2J` clears it, `\\r` overwrites the line before it, `\\x1b]52;…`
writes the clipboard, and a right-to-left override reorders what follows. Every
human-facing line kitty prints goes through `printable`: C0 controls (except tab and
newline), DEL, C1 controls and the Unicode bidirectional overrides/isolates become
visible escapes (`\\x1b`, `\\u202e`). JSON output is never changed (json.dumps escapes
C0 and DEL itself; the data stays exact).

A lone surrogate (U+D800-U+DFFF: `"\\ud800"` in a teammate's JSON line, or an undecodable
byte Python carries as one) is text UTF-8 cannot hold: kitty refuses it on input
(kitty.core.limits.check_encodable) and, read from old files, shows it as the escape
`\\ud800` (`printable`, `utf8`); in JSON output that escape is the same value.

No imports: `kitty.output` uses it on every command.
"""

from __future__ import annotations

_CODES = [
    *(c for c in range(0x20) if c not in (0x09, 0x0A)),
    0x7F,
    *range(0x80, 0xA0),
    *range(0x202A, 0x202F),  # LRE RLE PDF LRO RLO
    *range(0x2066, 0x206A),  # LRI RLI FSI PDI
]
#: str.translate table: each control character -> its visible escape.
TABLE = {c: (f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}") for c in _CODES}
_FIRST = frozenset(chr(c) for c in _CODES)


_SURROGATES: dict[int, str] = {}


def surrogates() -> dict[int, str]:
    """str.translate table: each lone surrogate -> its escape (`\\ud800`), the same six
    ASCII characters in a JSON string (the same value) and in text (a visible escape);
    built on first use (it is needed only for such old data)."""
    if not _SURROGATES:
        _SURROGATES.update({c: f"\\u{c:04x}" for c in range(0xD800, 0xE000)})
    return _SURROGATES


def encodable(text: str) -> bool:
    """Whether UTF-8 can hold `text` (no lone surrogate in it)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def utf8(text: str) -> bytes:
    """`text` as UTF-8, each lone surrogate written as its escape `\\udXXX` (what every
    file and stream kitty writes goes through: old data never makes a write fail)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return text.translate(surrogates()).encode("utf-8")


def needs_escaping(text: str) -> bool:
    return not _FIRST.isdisjoint(text)


def printable(text: str) -> str:
    """`text` with every control character replaced by a visible escape (tab and newline
    kept)."""
    text = text.translate(TABLE) if needs_escaping(text) else text
    return text if encodable(text) else text.translate(surrogates())


def printable_styled(text: str) -> str:
    """Like `printable`, but kitty's own colour codes (SGR: `ESC [ digits ; … m`) are kept.
    Only for text kitty painted after cleaning its data (render.board_text does)."""
    if "\x1b" not in text:
        return printable(text)
    out = []
    rest = text
    while rest:
        at = rest.find("\x1b[")
        if at < 0:
            out.append(printable(rest))
            break
        out.append(printable(rest[:at]))
        end = at + 2
        while end < len(rest) and (rest[end].isdigit() or rest[end] == ";"):
            end += 1
        if end < len(rest) and rest[end] == "m" and end - at <= 12:
            out.append(rest[at : end + 1])
            rest = rest[end + 1 :]
        else:
            out.append(printable(rest[at : at + 1]))
            rest = rest[at + 1 :]
    return "".join(out)
