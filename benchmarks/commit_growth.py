"""Repository growth of a stream of auto-committed moves, committed each or coalesced.

    python benchmarks/commit_growth.py --kitty .venv/bin/kitty --wps 10000 --moves 20

Builds a kitty mission of `--wps` WPs with ~20 events each (benchmarks/missions.py),
commits it, then makes `--moves` sequential moves (one WP flipped between blocked and
planned, as `make bench` does) with `agents.auto_commit: true`, once per delay given
(`--delays 0 2`: 0 commits in every move; D > 0 defers to the background committer,
which is waited for). For each: commits made, CPU and wall time of the moves, growth
of `.git/objects` per move and per 1,000 moves (scaled), and after `git gc --prune=now`.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import tempfile
import time
from pathlib import Path

from bench import ENV
from missions import add_history, init_repo, kitty_mission

MIB = 2**20


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, env=ENV, capture_output=True)
    if done.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed: {done.stderr.decode().strip()}")
    return done.stdout.decode()


def objects_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in (root / ".git" / "objects").rglob("*") if p.is_file())


def settle(root: Path, timeout: float = 600.0) -> None:
    """Wait for the deferred committer: no mark left and its lock free."""
    import fcntl

    marks = root / ".git" / "kitty" / "deferred"
    lock = root / ".git" / "kitty" / "committer.lock"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        busy = False
        if lock.exists():
            fd = os.open(lock, os.O_RDWR)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                busy = True
            finally:
                os.close(fd)
        if not busy and not (marks.is_dir() and any(marks.iterdir())):
            return
        time.sleep(0.1)
    raise SystemExit("the committer did not finish")


def move(kitty: str, root: Path, wp: str, lane: str) -> bool:
    argv = [kitty, "agent", "tasks", "move-task", wp, "--to", lane, "--agent", "bench"]
    return subprocess.run(argv, cwd=root, env=ENV, capture_output=True).returncode == 0


def pick(kitty: str, root: Path, n: int) -> str:
    """The last WP that can move to blocked (moved there: the stream flips it)."""
    for i in range(n, 0, -1):
        if move(kitty, root, f"WP{i:04d}", "blocked"):
            return f"WP{i:04d}"
    raise SystemExit("no WP can move to blocked")


def stream(kitty: str, root: Path, wp: str, moves: int, delay: float) -> dict[str, float]:
    config = root / ".kittify" / "config.yaml"
    config.write_text(
        "agents:\n  available: [claude, codex]\n  auto_commit: true\n"
        f"  auto_commit_delay: {delay:g}\n"
    )
    git(root, "add", "-A")
    git(root, "commit", "-qm", f"bench: delay {delay:g}")
    git(root, "gc", "--quiet", "--prune=now")
    commits0, objects0 = int(git(root, "rev-list", "--count", "HEAD")), objects_bytes(root)
    packed0 = objects0
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    for i in range(moves):
        if not move(kitty, root, wp, ("planned", "blocked")[i % 2]):
            raise SystemExit(f"move {i} of {wp} failed")
    moved = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    settle(root)
    commits = int(git(root, "rev-list", "--count", "HEAD")) - commits0
    grown = objects_bytes(root) - objects0
    git(root, "gc", "--quiet", "--prune=now")
    packed = objects_bytes(root) - packed0
    dirty = git(root, "status", "--porcelain", "--", "kitty-specs")
    assert dirty == "", dirty
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return {
        "commits": commits,
        "moves_wall_s": moved,
        "moves_cpu_s": cpu,
        "mib_per_1000": grown / moves * 1000 / MIB,
        "gc_mib_per_1000": packed / moves * 1000 / MIB,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kitty", required=True)
    parser.add_argument("--wps", type=int, default=10_000)
    parser.add_argument("--moves", type=int, default=20)
    parser.add_argument("--delays", type=float, nargs="+", default=[0.0, 2.0])
    parser.add_argument("--smoke", action="store_true", help="a tiny run: 20 WPs, 4 moves")
    args = parser.parse_args()
    if args.smoke:
        args.wps, args.moves, args.delays = 20, 4, [0.0, 0.3]
    kitty = str(Path(args.kitty).resolve())
    with tempfile.TemporaryDirectory(prefix="kitty-growth-") as tmp:
        root = Path(tmp) / "repo"
        init_repo(root)
        git(root, "config", "gc.auto", "0")  # no background gc between the measurements
        slug = kitty_mission(root, args.wps)
        subprocess.run([kitty, "finalize"], cwd=root, check=True, env=ENV, capture_output=True)
        add_history(root / "kitty-specs" / slug, args.wps)
        log = root / "kitty-specs" / slug / "status.events.jsonl"
        print(f"{args.wps} WPs, log {log.stat().st_size / MIB:.0f} MiB, {args.moves} moves")
        wp = pick(kitty, root, args.wps)
        print(
            "| delay (s) | commits / moves | moves wall (s) | moves CPU (s) "
            "| .git MiB per 1,000 moves | after gc --prune=now |"
        )
        print("|---|---|---|---|---|---|")
        for delay in args.delays:
            row = stream(kitty, root, wp, args.moves, delay)
            print(
                f"| {delay:g} | {row['commits']:.0f} / {args.moves} | {row['moves_wall_s']:.1f} "
                f"| {row['moves_cpu_s']:.1f} | {row['mib_per_1000']:,.0f} "
                f"| {row['gc_mib_per_1000']:,.1f} |",
                flush=True,
            )
        print("(the background committer's CPU is not counted)")


if __name__ == "__main__":
    main()
