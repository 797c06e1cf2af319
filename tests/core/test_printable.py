"""What kitty writes for a human is inert on a terminal: every control character in
someone else's data (a title, an agent name) is shown as a visible escape, while kitty's
own colour codes, and only those, still colour the line."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kitty.output import echo_text

#: Every character a terminal may obey: C0 but tab and newline, DEL, C1, and the Unicode
#: bidirectional embeddings/overrides (LRE..RLO) and isolates (LRI..PDI).
CONTROLS = [
    *(chr(c) for c in range(0x20) if c not in (0x09, 0x0A)),
    "\x7f",
    *(chr(c) for c in range(0x80, 0xA0)),
    *(chr(c) for c in range(0x202A, 0x202F)),
    *(chr(c) for c in range(0x2066, 0x206A)),
]


def shown(text: str) -> str:
    """What a plain (uncoloured) line of kitty's output carries for `text`."""
    return echo_text(text, nl=False)


def painted(text: str) -> str:
    """What a coloured line of kitty's output (a board, a status view) carries for `text`."""
    return echo_text(text, nl=False, styled=True)


@pytest.mark.parametrize("style", [shown, painted], ids=["plain", "coloured"])
def test_every_control_character_in_a_title_is_shown_as_its_escape(
    style: Callable[[str], str],
) -> None:
    for char in CONTROLS:
        code = ord(char)
        escape = f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
        assert style(f"WP01 {char}title") == f"WP01 {escape}title", repr(char)


def test_ordinary_text_tabs_and_newlines_are_printed_unchanged() -> None:
    for text in ("", "WP01 Build the parser", "a\tb\nc", "Ünïcödé ✓ 日本", "\u00a0\u200f"):
        assert shown(text) == text
        assert painted(text) == text
    assert echo_text("done") == "done\n"


def test_hostile_title_cannot_retitle_clear_or_reorder_the_terminal() -> None:
    title = "Evil\x1b]0;pwned\x07\x1b[2J\rX\x9b31m\u202eB"
    want = "Evil\\x1b]0;pwned\\x07\\x1b[2J\\x0dX\\x9b31m\\u202eB"
    assert shown(title) == want
    assert painted(title) == want


@pytest.mark.parametrize(
    "sgr",
    ["\x1b[m", "\x1b[0m", "\x1b[1m", "\x1b[31m", "\x1b[1;32m", "\x1b[;1m", "\x1b[38;5;2;1;1m"],
)
def test_kittys_own_colour_codes_colour_the_line_wherever_they_are(sgr: str) -> None:
    assert painted(sgr) == sgr
    assert painted(f"{sgr}WP01") == f"{sgr}WP01"
    line = f"a long line of board text {sgr}WP01{sgr} and more\x1b[0m"
    assert painted(line) == line
    assert painted(f"x{sgr}\x1b[0mT\x1b[2J") == f"x{sgr}\x1b[0mT\\x1b[2J"


def test_a_colour_code_longer_than_kitty_ever_sends_is_shown_escaped() -> None:
    # ESC [ + 10 parameter characters + m is the longest kept; one more is escaped
    assert painted("\x1b[38;5;2;1;1mX") == "\x1b[38;5;2;1;1mX"
    assert painted("\x1b[38;5;2;1;12mX") == "\\x1b[38;5;2;1;12mX"


def test_escape_sequences_that_are_not_colour_are_shown_in_coloured_lines() -> None:
    cases = {
        "\x1b[1mT\x1b[2J": "\x1b[1mT\\x1b[2J",  # clear screen
        "\x1b[1mT\x1b[0m\x1b]0;x\x07": "\x1b[1mT\x1b[0m\\x1b]0;x\\x07",  # retitle
        "\x1b]52;c;cm0=\x07": "\\x1b]52;c;cm0=\\x07",  # clipboard write
        "ab\x1b[1": "ab\\x1b[1",  # cut short at the end of the text
        "ab\x1b[": "ab\\x1b[",
        "\x1b[12": "\\x1b[12",
        "\x1b[1;2M\x1b[1m!": "\\x1b[1;2M\x1b[1m!",  # a capital M deletes lines
        "T\x1b\x1b[1mX": "T\\x1b\x1b[1mX",
        "\x1b[1m\r\x1b[0m": "\x1b[1m\\x0d\x1b[0m",
    }
    for text, want in cases.items():
        assert painted(text) == want, repr(text)
