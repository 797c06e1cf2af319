"""A fake agent CLI. Installed under the names claude, codex, gemini, ... on PATH.

It logs its argv (and stdin) as a JSON line to $FAKE_AGENT_LOG, then acts on
the prompt like a well-behaved agent, or misbehaves when asked to:
FAKE_<NAME>_MODE = ok | fail | noop | hang | slow, FAKE_<NAME>_REJECT = WP02,...
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NAME = Path(sys.argv[0]).name
ARGV = sys.argv[1:]


def prompt_from_argv() -> str:
    for flag in ("-p", "-j", "--acp", "run"):
        if flag in ARGV and NAME != "cursor":
            value = ARGV[ARGV.index(flag) + 1]
            if flag != "-p" or not value.startswith("-"):
                return value
    if NAME == "cursor":
        return ARGV[ARGV.index("json") + 1]
    return ""


def kitty(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "kitty", *args], check=True, stdout=subprocess.DEVNULL)


def main() -> int:
    stdin = sys.stdin.read() if "-" in ARGV else ""
    prompt = stdin or prompt_from_argv()
    with open(os.environ["FAKE_AGENT_LOG"], "a") as log:
        log.write(
            json.dumps(
                {
                    "name": NAME,
                    "argv": ARGV,
                    "cwd": os.getcwd(),
                    "stdin": stdin,
                    "pid": os.getpid(),
                    "at": time.time(),
                }
            )
            + "\n"
        )
    mode = os.environ.get(f"FAKE_{NAME.upper()}_MODE", "ok")
    if mode == "fail":
        print("fake agent: simulated crash", file=sys.stderr)
        return 3
    if mode == "noop":
        return 0
    if mode == "hang":
        time.sleep(600)
        return 0
    if mode == "slow":
        time.sleep(float(os.environ.get("FAKE_SLOW_SECONDS", "3")))
    mission = re.search(r"--mission (\S+)", prompt).group(1)  # type: ignore[union-attr]
    header = re.search(r"^# (Implement|Fix|Review) (WP\d+)", prompt, re.M)
    assert header, prompt[:300]
    role, wp = header.group(1), header.group(2)
    agent = os.environ.get("KITTY_AGENT", NAME)
    if role in ("Implement", "Fix"):
        name = f"impl_{wp.lower()}.txt"
        Path(name).write_text(f"{wp} by {NAME} ({role})\n", encoding="utf-8")
        kitty("safe-commit", name, "-m", f"feat({wp}): fake work")
        tasks = re.search(r"mark-status ((?:T\d+ ?)+) --mission", prompt)
        if tasks:
            kitty(
                "agent",
                "tasks",
                "mark-status",
                *tasks.group(1).split(),
                "--status",
                "done",
                "--mission",
                mission,
            )
        kitty(
            "agent",
            "tasks",
            "move-task",
            wp,
            "--to",
            "for_review",
            "--mission",
            mission,
            "--agent",
            agent,
            "--note",
            "ready",
        )
        return 0
    reject = os.environ.get(f"FAKE_{NAME.upper()}_REJECT", "").split(",")
    cycle = re.search(r"\(cycle (\d+)/", prompt)
    if wp in reject and cycle is None:
        with tempfile.NamedTemporaryFile("w", suffix=".md", delete=False) as feedback:
            feedback.write("Please handle the empty input case.\n")
        kitty(
            "agent",
            "tasks",
            "move-task",
            wp,
            "--to",
            "planned",
            "--mission",
            mission,
            "--agent",
            agent,
            "--review-feedback-file",
            feedback.name,
        )
        return 0
    kitty(
        "agent",
        "tasks",
        "move-task",
        wp,
        "--to",
        "approved",
        "--mission",
        mission,
        "--agent",
        agent,
        "--note",
        "Review passed",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
