"""A newcomer's first five minutes: `kitty` alone, `kitty init`, `kitty move --to`, the sprint's
progress lines."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from kitty.commands.sprint import describe
from tests.helpers import kitty, make_mission, ok


def test_kitty_without_arguments_prints_help_and_exits_0(repo: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kitty"], cwd=repo, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Usage: kitty [OPTIONS] [COMMAND] [ARGS]...")
    assert "Quick start" in done.stdout and "init" in done.stdout and done.stderr == ""
    inside = kitty(repo)
    assert inside.code == 0 and "Quick start" in inside.out


def test_init_names_the_next_step_and_what_no_agents_means(repo: Path) -> None:
    text = ok(repo, "init").out
    assert "agents: (none)" in text
    assert "kitty sprint --implementer AGENT --reviewer AGENT" in text
    assert "next: kitty demo" in text and "kitty mission create NAME" in text
    text = ok(repo, "init", "--agents", "claude,codex").out
    assert "agents: claude, codex" in text and "(none)" not in text
    ok(repo, "mission", "create", "shop")
    assert "next: kitty wp add --mission shop-" in ok(repo, "init").out


def test_move_accepts_to_like_move_task(repo: Path) -> None:
    make_mission(repo, wps=[{"wp_id": "WP01"}, {"wp_id": "WP02"}])
    moved = ok(repo, "move", "WP01", "--to", "claimed", "--agent", "claude", "--json").json()
    assert (moved["wp_id"], moved["to_lane"]) == ("WP01", "claimed")
    ok(repo, "move", "WP02", "claimed", "--agent", "claude")  # the positional lane still works
    both = kitty(repo, "move", "WP01", "in_progress", "--to", "in_progress")
    assert both.code == 2 and "once" in both.err
    neither = kitty(repo, "move", "WP01")
    assert neither.code == 2 and "LANE" in neither.err and "--to" in neither.err


def _finished(**extra: object) -> dict[str, object]:
    return {
        "event": "finished",
        "wp_id": "WP03",
        "role": "review",
        "agent": "codex",
        "how": "exit 0",
        "seconds": 2.5,
        "ok": True,
        **extra,
    }


def test_a_rejected_review_reads_as_a_rejection() -> None:
    rejected = describe(_finished(lane="planned", verdict="changes_requested", cycle=1))
    assert rejected is not None and not rejected.startswith("✓")
    assert "rejected" in rejected and "review cycle 1" in rejected and "→ planned" in rejected
    approved = describe(_finished(lane="approved", verdict="approved", cycle=0))
    assert approved is not None and approved.startswith("✓") and "approved" in approved


def test_the_quick_start_of_the_help_runs_as_printed(repo: Path) -> None:
    import shlex

    help_text = kitty(repo).out
    block = help_text.split("Quick start", 1)[1].split("\n\n", 1)[0]
    lines = [ln.strip() for ln in block.split("\n")[1:] if ln.strip()]
    commands, pending = [], ""
    for line in lines:
        pending += line.removesuffix("\\").strip() + " "
        if not line.endswith("\\"):
            commands.append(shlex.split(pending))
            pending = ""
    assert [c[:2] for c in commands][:4] == [
        ["kitty", "init"],
        ["kitty", "mission"],
        ["kitty", "wp"],
        ["kitty", "finalize"],
    ]
    for argv in commands:
        ok(repo, *argv[1:])
