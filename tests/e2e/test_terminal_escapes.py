"""Titles and agent names are data: their control characters reach a terminal as visible
escapes, never raw (issue 27.3). Checked byte by byte on a real pseudo-terminal, with
NO_COLOR and with colour, through the fast path and the click path."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
from pathlib import Path

import pytest

from kitty.core.printable import printable, printable_styled
from tests.helpers import git, kitty_argv, make_mission, ok

#: A title that retitles the terminal, clears it, rings, overwrites the line, writes the
#: clipboard (OSC 52), starts a C1 CSI and reverses the text after it.
TITLE = "Evil\x1b]0;pwned\x07\x1b[2J\a\rX\x1b]52;c;cm0gLXJm\x07\x9b31m\u202eB"
YAML_TITLE = '"Evil\\e]0;pwned\\a\\e[2J\\a\\rX\\e]52;c;cm0gLXJm\\a\\x9b31m\\u202eB"'
AGENT = "ag\x1b[2Jent"
#: Raw control bytes that must never be printed: C0 (but tab/newline), DEL, C1 (UTF-8),
#: and the bidi overrides/isolates (UTF-8).
RAW = re.compile(
    rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xaa-\xae]|\xe2\x81[\xa6-\xa9]"
)
#: The only escape sequences kitty itself sends with colour on: SGR (`ESC [ … m`).
SGR = re.compile(rb"\x1b\[[0-9;]*m")


@pytest.fixture
def hostile(repo: Path) -> Path:
    mission = make_mission(
        repo,
        wps=[
            {"wp_id": "WP01", "title": "Plain", "subtasks": ["T001"]},
            {"wp_id": "WP02", "title": "placeholder", "subtasks": ["T002"]},
        ],
    )
    path = mission / "tasks" / "WP02-placeholder.md"
    path.write_text(path.read_text().replace("title: placeholder", f"title: {YAML_TITLE}"))
    ok(repo, "move", "WP01", "claimed", "--agent", "agentx")
    log = mission / "status.events.jsonl"
    log.write_text(log.read_text().replace('"agentx"', json.dumps(AGENT)))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "hostile")
    return repo


def on_pty(repo: Path, *args: str, colour: bool = False) -> tuple[int, bytes, bytes]:
    """Run kitty with stdout on a real pseudo-terminal; (exit code, stdout bytes, stderr)."""
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env["COLUMNS"] = "200"
    if not colour:
        env["NO_COLOR"] = "1"
    master, slave = pty.openpty()
    proc = subprocess.Popen(kitty_argv(repo, *args), stdout=slave, stderr=subprocess.PIPE, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    err = proc.stderr.read() if proc.stderr else b""
    if proc.stderr:
        proc.stderr.close()
    code = proc.wait(timeout=60)
    out = b"".join(chunks).replace(b"\r\n", b"\n")  # the terminal's own line ends (onlcr)
    return code, out, err


def assert_inert(data: bytes, colour: bool = False) -> None:
    if colour:
        data = SGR.sub(b"", data)
    found = RAW.search(data)
    assert found is None, (found, data)


COMMANDS = [
    ("status",),
    ("status", "--list"),
    ("status", "--all"),
    ("next", "--agent", "codex"),
    ("doctor",),
    ("board",),
    ("sprint", "--implementer", "claude", "--reviewer", "codex", "--dry-run"),
    ("move", "WP0\x1b[2J2", "claimed", "--agent", "agentx"),
]


@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(a[:2]) for a in COMMANDS])
@pytest.mark.parametrize("colour", [False, True], ids=["NO_COLOR", "colour"])
def test_every_human_output_is_inert_on_a_terminal(
    hostile: Path, args: tuple[str, ...], colour: bool
) -> None:
    code, out, err = on_pty(hostile, *args, colour=colour)
    if args[0] == "sprint":  # the live view redraws: kitty's own home + clear, first
        assert out.startswith(b"\x1b[H\x1b[2J")
        out = out.replace(b"\x1b[H\x1b[2J", b"")
    assert_inert(out, colour)
    assert_inert(err)
    if args[0] == "status" and "--list" in args:  # the full title, escaped, visibly
        assert printable(" ".join(TITLE.split())).encode() in out, out
    if args[0] == "status" and "--list" not in args:
        assert rb"\x1b]0;pwned" in out or rb"\x1b]0;" in out, out
        assert rb"ag\x1b[2Jent" in out, out
    if args[0] == "move":
        assert code != 0 and rb"\x1b[2J" in err, err


def test_json_output_stays_exact_data(hostile: Path) -> None:
    for args in (("status", "--json"), ("next", "--agent", "codex", "--json")):
        code, out, _ = on_pty(hostile, *args)
        assert code == 0
        assert_inert(out)  # JSON escapes the controls: \u001b, \u009b, \u202e
        doc = json.loads(out)
        if args[0] == "status":
            titles = {w["id"]: w["title"] for w in doc["work_packages"]}
            assert titles["WP02"] == TITLE
            agents = {w["id"]: w.get("agent") for w in doc["work_packages"]}
            assert agents["WP01"] == AGENT


def test_printable_keeps_only_sgr_in_styled_text() -> None:
    assert printable("a\tb\nc") == "a\tb\nc"
    assert printable("\x1b[2J\r\x07\x9b\u202e") == "\\x1b[2J\\x0d\\x07\\x9b\\u202e"
    assert printable_styled("\x1b[1mT\x1b[0m") == "\x1b[1mT\x1b[0m"
    assert printable_styled("\x1b[1mT\x1b[2J") == "\x1b[1mT\\x1b[2J"
    assert printable_styled("\x1b]0;x\x07") == "\\x1b]0;x\\x07"
