"""A fake agent CLI. Installed under the names claude, codex, gemini, ... on PATH.

It logs its argv (and stdin) as a JSON line to $FAKE_AGENT_LOG, then acts on
the prompt like a well-behaved agent, or misbehaves when asked to:
FAKE_<NAME>_MODE = ok | fail | noop | denied | hang | slow | nocommit (writes its file, commits
nothing, asks for review) | forcecommitless (the same, forcing the move with a note),
FAKE_<NAME>_REJECT = WP02,...
FAKE_<NAME>_RESULT = a JSON line it prints after the work (claude's result: usage, cost).

Review panels (`kitty review run`): $FAKE_PANEL_SCRIPT names a JSON file scripting
each round: {"review": {"<round>": {"<persona>": [findings] | "fail" | "garbage" | "edit"}},
"challenge": {"<round>": [verdicts]}, "fix": {"<round>": [return payload per attempt]}}.
A reviewer with nothing scripted finds nothing; a fix with nothing scripted is done.
A fix payload with "status": "blocker" makes no edits (unless it says "edit": true).
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
    if ARGV == ["--version"]:  # the sprint's and doctor's version check: not a dispatch
        print(os.environ.get(f"FAKE_{NAME.upper()}_VERSION", f"{NAME} 0.0.1"))
        return 0
    stdin = sys.stdin.read() if not sys.stdin.isatty() else ""
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
    if mode in ("auth", "limited"):  # claude's is_error result: every run, or the first
        state = Path(os.environ.get("FAKE_STATE_DIR", tempfile.gettempdir()), f"{NAME}.limited")
        if mode == "auth" or not state.exists():
            state.touch()
            status, words = (
                (401, "Invalid API key · Fix external API key")
                if mode == "auth"
                else (429, "API Error: Request rejected (429) · rate limit; retry after 1s")
            )
            if NAME == "codex":  # codex exec --json's own failure
                print(json.dumps({"type": "turn.failed", "error": {"message": words}}))
                return 1
            print(json.dumps({"type": "result", "subtype": "success", "is_error": True,
                              "api_error_status": status, "result": words}))  # fmt: skip
            return 1
    if mode == "denied":  # what claude -p prints when it refused a tool call: exit 0
        print(
            json.dumps(
                {
                    "type": "result",
                    "subtype": "success",
                    "is_error": False,
                    "result": "I could not run the command.",
                    "permission_denials": [
                        {
                            "tool_name": "Bash",
                            "tool_use_id": "toolu_1",
                            "tool_input": {"command": "git commit -am wip"},
                        }
                    ],
                }
            )
        )
        return 0
    if mode == "hang":
        time.sleep(600)
        return 0
    if mode == "slow":
        time.sleep(float(os.environ.get("FAKE_SLOW_SECONDS", "3")))
    if panel(prompt):
        return 0
    mission = re.search(r"--mission (\S+)", prompt).group(1)  # type: ignore[union-attr]
    header = re.search(r"^# (Implement|Fix|Review) (WP\d+)", prompt, re.M)
    assert header, prompt[:300]
    role, wp = header.group(1), header.group(2)
    agent = os.environ.get("KITTY_AGENT", NAME)
    if role in ("Implement", "Fix"):
        name = f"impl_{wp.lower()}.txt"
        Path(name).write_text(f"{wp} by {NAME} ({role}, {time.time_ns()})\n", encoding="utf-8")
        if mode not in ("nocommit", "forcecommitless"):
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
            *(["--force"] if mode == "forcecommitless" else []),
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


def script() -> dict:  # type: ignore[type-arg]
    path = os.environ.get("FAKE_PANEL_SCRIPT")
    return json.loads(Path(path).read_text()) if path else {}


def field(prompt: str, name: str) -> str | None:
    match = re.search(rf"^{name}: (.+)$", prompt, re.M)
    return match.group(1).strip() if match else None


def panel(prompt: str) -> bool:
    """Play a panel reviewer, the contrarian, or the implementer's fix. False: not a panel run."""
    round_no = field(prompt, "Round")
    if prompt.startswith("# Panel review"):
        persona, out = field(prompt, "Persona"), field(prompt, "Write your findings to")
        plan = script().get("review", {}).get(round_no, {}).get(persona, [])
        if plan == "fail":
            sys.exit(4)
        if plan == "edit":  # a reviewer that commits into the lane and finds nothing
            workspace = str(field(prompt, "Workspace"))
            Path(workspace, "reviewer_edit.txt").write_text("edited by a reviewer\n")
            subprocess.run(["git", "add", "reviewer_edit.txt"], cwd=workspace, check=True)
            subprocess.run(["git", "commit", "-qm", "reviewer edit"], cwd=workspace, check=True)
            plan = []
        text = (
            "{not json"
            if plan == "garbage"
            else json.dumps({"reviewer": f"{persona}@{NAME}", "findings": plan})
        )
        Path(str(out)).write_text(text)
        return True
    if prompt.startswith("# Challenge review findings"):
        out = field(prompt, "Write your verdicts to")
        verdicts = script().get("challenge", {}).get(round_no, [])
        Path(str(out)).write_text(json.dumps({"verdicts": verdicts}))
        return True
    ret = field(prompt, "Fix return file")
    if ret is None:
        return False
    attempt = int(re.search(r"fix-(\d+)\.return\.json$", ret).group(1))  # type: ignore[union-attr]
    plans = script().get("fix", {}).get(round_no, [])
    payload = plans[attempt - 1] if attempt <= len(plans) else {"status": "done"}
    mission = re.search(r"--mission (\S+)", prompt).group(1)  # type: ignore[union-attr]
    wp = re.search(r"^# (?:Implement|Fix) (WP\d+)", prompt, re.M).group(1)  # type: ignore[union-attr]
    if payload.get("status") != "blocker" or payload.get("edit"):
        name = f"impl_{wp.lower()}.txt"
        Path(name).write_text(f"{wp} fixed by {NAME}: round {round_no} attempt {attempt}\n")
        kitty("safe-commit", name, "-m", f"fix({wp}): round {round_no}")
    tasks = re.search(r"mark-status ((?:T\d+ ?)+) --mission", prompt)
    if tasks and payload.get("status") != "blocker":
        kitty("agent", "tasks", "mark-status", *tasks.group(1).split(), "--status", "done",
              "--mission", mission)  # fmt: skip
    if payload.get("status") != "blocker":
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
            os.environ.get("KITTY_AGENT", NAME),
            "--note",
            "fixed",
        )
    Path(ret).write_text(json.dumps({k: v for k, v in payload.items() if k != "edit"}))
    return True


def with_result() -> int:
    """main(), then the JSON result in $FAKE_<NAME>_RESULT, as claude prints its own
    (its usage, cost, denials) after the work."""
    code = main()
    result = os.environ.get(f"FAKE_{NAME.upper()}_RESULT")
    if result and ARGV != ["--version"]:
        print(result)
    return code


if __name__ == "__main__":
    sys.exit(with_result())
