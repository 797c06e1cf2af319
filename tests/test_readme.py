"""The README is a test: its shell blocks form one sequence that runs top to bottom.

Convention (also stated in the README's Development section):

* A fenced block tagged ```sh is EXECUTED. All ```sh blocks of README.md run, in
  order, as ONE bash script (`set -euo pipefail`) in a fresh temporary git repository,
  as a reader pasting them into one terminal would: `cd`, shell variables and files
  made by one block are there for the next. Every command must exit 0.
* A block tagged ```shell is the NEWCOMER PATH ("In your own repository"): all ```shell
  blocks run, in order, as one script of their own, in another fresh repository, so a
  `pip install` user's first lines are checked as written without the mission they
  create changing the main sequence.
* Anything that cannot run there (long-running servers, placeholders, commands that
  need a conflict or a real agent account) goes in a ```text or ```console block,
  which is NOT executed. ```yaml, ```json and untagged blocks are not executed either.
* `kitty` is this installation; the agent CLIs (claude, codex, gemini, opencode, ...)
  are the fake agents of tests/fakes/agent.py on PATH, so sprints run for real.
  The repository starts with one commit on `main`, and nothing else.

When a block fails, the message names the block's README line and shows the output.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import init_repo

ROOT = Path(__file__).resolve().parent.parent
FAKE = ROOT / "tests" / "fakes" / "agent.py"
AGENTS = ("claude", "codex", "gemini", "opencode", "qwen", "llxprt", "kilocode", "auggie")
FENCE = re.compile(r"^```(\S*)\s*$")


def shell_blocks(text: str, tag: str = "sh") -> list[tuple[int, str]]:
    """(first line number, body) of every block tagged `tag`, in order."""
    blocks: list[tuple[int, str]] = []
    lang: str | None = None
    start, body = 0, []
    for number, line in enumerate(text.splitlines(), start=1):
        match = FENCE.match(line)
        if lang is None and match:
            lang, start, body = match.group(1), number, []
        elif lang is not None and line.strip() == "```":
            if lang == tag:
                blocks.append((start, "\n".join(body)))
            lang = None
        elif lang is not None:
            body.append(line)
    assert lang is None, f"README.md: the block opened at line {start} is never closed"
    return blocks


def script(blocks: list[tuple[int, str]]) -> str:
    parts = ["set -euo pipefail"]
    for line, body in blocks:
        parts.append(f"echo '=== README.md:{line}' >&2")
        parts.append(body)
    parts.append("echo '=== README.md: end' >&2")
    return "\n".join(parts) + "\n"


def test_shell_blocks_are_found() -> None:
    text = "a\n```sh\nkitty status\n```\n```text\nkitty nope\n```\n```\nmake demo\n```\n"
    assert shell_blocks(text) == [(2, "kitty status")]


@pytest.mark.timeout(300)  # every example of the README: ~1 min idle, 2 at load 12
def test_readme_runs_top_to_bottom(tmp_path: Path) -> None:
    blocks = shell_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(blocks) >= 10, "the README lost its examples"
    run_blocks(blocks, tmp_path)


@pytest.mark.timeout(300)  # `kitty demo` is a whole sprint: 8 s idle, 30 s at load 15
def test_readme_newcomer_path_runs(tmp_path: Path) -> None:
    """`kitty init`, `kitty demo`, the first mission and WP, and the Claude Code / Codex
    recipe (with the fake agents), in a repository of their own."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = shell_blocks(text, "shell")
    assert len(blocks) >= 2, "the README lost its newcomer path"
    assert text.index("```shell") < text.index("## Install"), "the newcomer path comes first"
    joined = "\n".join(body for _, body in blocks)
    for line in (
        "kitty init",
        "kitty demo",
        "kitty wp add",
        "--implementer claude --reviewer codex",
    ):
        assert line in joined
    (tmp_path / "tmp").mkdir()
    run_blocks(blocks, tmp_path, TMPDIR=str(tmp_path / "tmp"))  # `kitty demo`'s repository


def run_blocks(blocks: list[tuple[int, str]], tmp_path: Path, **extra: str) -> None:
    repo = init_repo(tmp_path / "shop")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in AGENTS:
        agent = bin_dir / name
        agent.write_text(f"#!{sys.executable}\n" + FAKE.read_text(encoding="utf-8"))
        agent.chmod(0o755)
    env = dict(
        os.environ,
        PATH=os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), os.environ["PATH"]]),
        FAKE_AGENT_LOG=str(tmp_path / "agents.jsonl"),
        PYTHONDONTWRITEBYTECODE="1",
        **extra,
    )
    env.pop("KITTY_AGENT", None)
    done = subprocess.run(
        ["bash", "-c", script(blocks)],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    markers = [x for x in done.stderr.splitlines() if x.startswith("=== README.md:")]
    where = markers[-1].removeprefix("=== ") if markers else "README.md:?"
    assert done.returncode == 0, (
        f"the ```sh block at {where} failed (exit {done.returncode})\n"
        f"--- stdout (tail)\n{done.stdout[-4000:]}\n--- stderr (tail)\n{done.stderr[-4000:]}"
    )
    assert markers[-1] == "=== README.md: end"
