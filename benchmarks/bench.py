"""Median wall times of the installed `kitty` on generated missions.

Generates, in a temporary git repo, a mission of N work packages (random DAG,
fixed seed, ~20 events per WP), then times commands end to end as an agent
would run them. Prints a Markdown table.

    python benchmarks/bench.py --kitty .bench-venv/bin/kitty --sizes 100 1000

Benchmark an installed (non-editable) copy: `make bench` builds one.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

LIFECYCLE = [
    ("planned", "claimed"),
    ("claimed", "in_progress"),
    ("in_progress", "for_review"),
    ("for_review", "in_review"),
    ("in_review", "planned"),
    ("planned", "claimed"),
    ("claimed", "in_progress"),
    ("in_progress", "for_review"),
    ("for_review", "in_review"),
    ("in_review", "approved"),
]


def generate(root: Path, n: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    slug = f"bench-{n}-01BENCH0"
    mission = root / "kitty-specs" / slug
    (mission / "tasks").mkdir(parents=True)
    (root / ".kittify").mkdir()
    (root / ".kittify" / "config.yaml").write_text("agents:\n  available: [claude, codex]\n")
    (mission / "meta.json").write_text(
        json.dumps(
            {
                "mission_id": "01BENCH0000000000000000000",
                "mission_slug": slug,
                "slug": slug,
                "friendly_name": f"Benchmark {n}",
                "target_branch": "main",
            }
        )
    )
    task = 1
    for i in range(1, n + 1):
        deps = (
            sorted(
                {f"WP{rng.randint(max(1, i - 20), i - 1):04d}" for _ in range(rng.randint(0, 3))}
            )
            if i > 1
            else []
        )
        subtasks = [f"T{task + k:05d}" for k in range(3)]
        task += 3
        owned = [f"src/mod{i:04d}/**", f"tests/test_mod{i:04d}.py"]
        front = (
            f"---\nwork_package_id: WP{i:04d}\ntitle: Module {i}\n"
            f"dependencies: {json.dumps(deps)}\nsubtasks: {json.dumps(subtasks)}\n"
            f"owned_files: {json.dumps(owned)}\nexecution_mode: code_change\n"
            f"requirement_refs: [FR-{i:03d}]\n---\n\n# WP{i:04d}\n\nBody text.\n"
        )
        (mission / "tasks" / f"WP{i:04d}-module-{i}.md").write_text(front)
    return slug


def add_history(mission: Path, n: int, seed: int = 7) -> int:
    """Append ~20 events per WP (two review cycles) to the finalized log."""
    rng = random.Random(seed)
    lines = []
    clock = 1_800_000_000_000_000
    for i in range(1, n + 1):
        wp = f"WP{i:04d}"
        steps = LIFECYCLE[: rng.randint(4, len(LIFECYCLE))]
        for frm, to in steps:
            clock += 1000
            lines.append(
                {
                    "actor": "claude",
                    "at": _iso(clock),
                    "event_id": f"E{clock}",
                    "evidence": None,
                    "execution_mode": "worktree",
                    "force": False,
                    "from_lane": frm,
                    "mission_id": "01BENCH",
                    "mission_slug": mission.name,
                    "policy_metadata": {"agent": "claude", "shell_pid": 1},
                    "reason": None,
                    "review_ref": None,
                    "review_result": None,
                    "to_lane": to,
                    "wp_id": wp,
                }
            )
            for _ in range(2):
                clock += 1000
                lines.append(
                    {
                        "actor": "claude",
                        "at": _iso(clock),
                        "event_id": f"A{clock}",
                        "kind": "annotation",
                        "wp_id": wp,
                        "delta": {"note": f"step {to}", "model": "m"},
                    }
                )
    with (mission / "status.events.jsonl").open("a") as handle:
        for record in lines:
            handle.write(json.dumps(record, sort_keys=True) + "\n")
    return len(lines)


def _iso(us: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(us / 1e6, tz=UTC).isoformat(timespec="microseconds")


def median_ms(cmd: list[str], runs: int, cwd: Path) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kitty", default=shutil.which("kitty"), help="kitty executable")
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args()
    if not args.kitty:
        raise SystemExit("no kitty executable: pass --kitty PATH")
    kitty = str(Path(args.kitty).resolve())
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        rows.append(("kitty --help", "-", median_ms([kitty, "--help"], args.runs, Path(tmp))))
        for n in args.sizes:
            root = Path(tmp) / f"m{n}"
            slug = generate(root, n)
            start = time.perf_counter()
            subprocess.run([kitty, "finalize"], cwd=root, check=True, stdout=subprocess.DEVNULL)
            rows.append(
                ("kitty finalize (first run)", str(n), (time.perf_counter() - start) * 1000)
            )
            events = add_history(root / "kitty-specs" / slug, n)
            label = f"{n} ({events + n} events)"
            rows.append(
                (
                    "kitty status --json",
                    label,
                    median_ms([kitty, "status", "--json"], args.runs, root),
                )
            )
            rows.append(
                ("kitty status (board)", label, median_ms([kitty, "status"], args.runs, root))
            )
            rows.append(
                (
                    "kitty next --agent codex --json",
                    label,
                    median_ms([kitty, "next", "--agent", "codex", "--json"], args.runs, root),
                )
            )
            flip = [
                [kitty, "move", f"WP{n:04d}", lane, "--agent", "bench"]
                for lane in ("blocked", "planned")
            ]
            times = []
            for i in range(args.runs):
                start = time.perf_counter()
                subprocess.run(flip[i % 2], cwd=root, check=True, stdout=subprocess.DEVNULL)
                times.append((time.perf_counter() - start) * 1000)
            rows.append(("kitty move (one move-task)", label, statistics.median(times)))
    print(f"| command | WPs | median ms ({args.runs} runs) |")
    print("|---|---|---:|")
    for name, size, ms in rows:
        print(f"| {name} | {size} | {ms:.0f} |")


if __name__ == "__main__":
    main()
