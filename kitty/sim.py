"""A simulated agent for `kitty demo` and for trying a sprint without any agent CLI.

It is a real subprocess that behaves like a headless agent following kitty's
prompts: the implementer writes and commits files in the lane worktree, marks
the subtasks and moves the WP to review; the reviewer submits findings. Set
KITTY_SIM_REJECT=WP03,WP05 to have the reviewer reject those WPs once.

    python -m kitty.sim --role implement --agent sim-coder --wp WP01 \\
        --mission M --workspace W --repo R
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kitty.core.log.state import WPState
from kitty.core.model import WorkPackage
from kitty.core.overlap import is_glob, normalise
from kitty.mission.workspace import Mission


def kitty(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "kitty", *args], check=True, stdout=subprocess.DEVNULL)


def target_files(wp_id: str, owned: tuple[str, ...]) -> list[str]:
    """A concrete file for each owned entry (`docs/**` -> `docs/wp08.md`)."""
    files = []
    for entry in owned or (f"src/{wp_id.lower()}.py",):
        parts = normalise(entry).split("/")
        literal = []
        for part in parts:
            if is_glob(part):
                literal.append(f"{wp_id.lower()}.md")
                break
            literal.append(part)
        files.append("/".join(literal))
    return list(dict.fromkeys(files))


def load(args: argparse.Namespace) -> tuple[WorkPackage, WPState]:
    mission = Mission.open(Path(args.repo), args.mission)
    wp = mission.wp(args.wp)
    state = mission.board.wps.get(args.wp)
    if wp is None or state is None:
        raise SystemExit(f"sim: unknown work package {args.wp}")
    return wp, state


def implement(args: argparse.Namespace) -> None:
    wp, state = load(args)
    workspace = Path(args.workspace)
    files = target_files(wp.wp_id, wp.owned_files)
    for name in files:
        path = workspace / name
        path.parent.mkdir(parents=True, exist_ok=True)
        line = (
            f"# {wp.wp_id}: addressed review cycle {state.review_cycles}\n"
            if state.review_cycles
            else f"# {wp.wp_id}: {wp.title}\n"
        )
        with path.open("a", encoding="utf-8") as handle:
            handle.write(line)
    time.sleep(args.delay)
    kitty("-C", str(workspace), "safe-commit", *files, "-m", f"feat({wp.wp_id}): {wp.title}")
    common = ["--mission", args.mission, "--agent", args.agent]
    if wp.subtasks:
        kitty(
            "-C",
            args.repo,
            "agent",
            "tasks",
            "mark-status",
            *wp.subtasks,
            "--status",
            "done",
            *common,
        )
    kitty(
        "-C",
        args.repo,
        "agent",
        "tasks",
        "move-task",
        wp.wp_id,
        "--to",
        "for_review",
        "--note",
        f"Ready for review: {', '.join(files)}",
        *common,
    )


def review(args: argparse.Namespace) -> None:
    wp, state = load(args)
    reject = {w.strip() for w in os.environ.get("KITTY_SIM_REJECT", "").split(",") if w.strip()}
    first = target_files(wp.wp_id, wp.owned_files)[0]
    findings = [
        {
            "severity": "P3",
            "kind": "maintainability",
            "location": f"{first}:1",
            "signature": "header-comment",
            "title": "Header comment only",
            "detail": "The simulated implementation is a single comment line.",
        }
    ]
    if wp.wp_id in reject and state.review_cycles == 0:
        findings.append(
            {
                "severity": "P1",
                "kind": "correctness",
                "location": f"{first}:1",
                "signature": "missing-behaviour",
                "title": "Behaviour not implemented",
                "detail": f"{wp.title} is described but not implemented.",
                "suggested_fix": "implement it and say how the review was addressed",
            }
        )
    time.sleep(args.delay)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump({"reviewer": args.agent, "findings": findings}, handle)
    try:
        kitty(
            "-C",
            args.repo,
            "review",
            "submit",
            wp.wp_id,
            "--findings",
            handle.name,
            "--mission",
            args.mission,
            "--agent",
            args.agent,
        )
    finally:
        Path(handle.name).unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m kitty.sim", description=__doc__)
    parser.add_argument("--role", choices=["implement", "review"], required=True)
    parser.add_argument("--agent", required=True)
    parser.add_argument("--wp", required=True)
    parser.add_argument("--mission", required=True)
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--repo", required=True)
    parser.add_argument("--delay", type=float, default=0.1)
    args = parser.parse_args(argv)
    (implement if args.role == "implement" else review)(args)


if __name__ == "__main__":
    main()
