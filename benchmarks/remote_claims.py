"""Claims through a git remote: latency of one claim, and claims/s with 3 machines.

Builds a mission of N independent WPs in a temporary directory, pushes it to a
bare repository, clones it three times (the "machines") and times the installed
`kitty`:

* latency: one agent claims WPs one after another (`kitty next --claim
  --remote origin`), through `file://` and through `git daemon` on 127.0.0.1,
  next to a local claim (`kitty next --claim`, the file lock only);
* throughput: 3 machines x 4 claimers claim until every WP is taken; claims/s
  is WPs / wall time, and the run checks that no WP was claimed twice.

    python benchmarks/remote_claims.py --kitty .bench-venv/bin/kitty --wps 60
    python benchmarks/remote_claims.py --smoke    # tiny sizes, seconds (run by the test suite)

Benchmark an installed (non-editable) copy: `make bench` builds one.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

SLUG = "bench-01BENCH00"


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout


def make_remote(tmp: Path, kitty: str, wps: int) -> Path:
    seed = tmp / "seed"
    seed.mkdir()
    git(seed, "init", "-q", "-b", "main")
    mission = seed / "kitty-specs" / SLUG
    (mission / "tasks").mkdir(parents=True)
    (seed / ".kittify").mkdir()
    (seed / ".kittify" / "config.yaml").write_text("agents:\n  available: [claude, codex]\n")
    meta = {"mission_id": "01BENCH0000000000000000000", "mission_slug": SLUG, "slug": SLUG}
    (mission / "meta.json").write_text(json.dumps(meta))
    for i in range(1, wps + 1):
        (mission / "tasks" / f"WP{i:02d}-part.md").write_text(
            f"---\nwork_package_id: WP{i:02d}\ntitle: Part {i}\ndependencies: []\n"
            f"subtasks: [T{i:03d}]\nowned_files: [src/p{i}/**]\n---\n\n# WP{i:02d}\n"
        )
    subprocess.run([kitty, "-C", str(seed), "init"], check=True, capture_output=True)
    subprocess.run([kitty, "-C", str(seed), "finalize"], check=True, capture_output=True)
    git(seed, "add", "-A")
    git(seed, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "mission")
    bare = tmp / "remote.git"
    git(tmp, "init", "-q", "--bare", "-b", "main", str(bare))
    git(seed, "push", "-q", str(bare), "main")
    return bare


def clone(url: str, path: Path) -> Path:
    git(path.parent, "clone", "-q", url, str(path))
    return path


def claim(kitty: str, repo: Path, agent: str, machine: str, remote: bool) -> tuple[float, dict]:
    argv = [kitty, "-C", str(repo), "next", "--agent", agent, "--claim", "--json"]
    if remote:
        argv += ["--remote", "origin"]
    env = dict(os.environ, KITTY_MACHINE=machine)
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"claim failed: {done.stderr}")
    return elapsed, json.loads(done.stdout)


def reset(bare: Path, clones: list[Path]) -> None:
    subprocess.run(["git", "update-ref", "-d", f"refs/heads/kitty/coord/{SLUG}"], cwd=bare)
    for repo in clones:
        git(repo, "checkout", "--", f"kitty-specs/{SLUG}/status.events.jsonl")


def latency(kitty: str, repo: Path, count: int, remote: bool) -> list[float]:
    times = []
    for _ in range(count):
        elapsed, decision = claim(kitty, repo, f"solo{len(times)}", "solo", remote)
        assert decision["claimed"], decision
        times.append(elapsed * 1000)
    return times


def throughput(kitty: str, clones: list[Path], wps: int) -> tuple[float, int, int]:
    claimed: Counter[str] = Counter()

    def worker(repo: Path, index: int) -> int:
        count = 0
        while True:
            # A fresh agent name per claim: an agent holding a WP is told to resume it.
            agent = f"{repo.name}-a{index}-{count}"
            _, decision = claim(kitty, repo, agent, repo.name, True)
            if not decision["claimed"]:
                return count
            claimed[decision["wp_id"]] += 1
            count += 1

    start = time.perf_counter()
    with ThreadPoolExecutor(12) as pool:
        futures = [pool.submit(worker, c, i) for c in clones for i in range(4)]
        total = sum(f.result() for f in futures)
    wall = time.perf_counter() - start
    doubles = sum(1 for n in claimed.values() if n > 1)
    return total / wall, total, doubles


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def row(name: str, times: list[float]) -> str:
    times = sorted(times)
    p90 = times[max(0, int(len(times) * 0.9) - 1)]
    return f"| {name} | {statistics.median(times):.0f} | {p90:.0f} | {len(times)} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kitty", default="kitty", help="the kitty executable to time")
    parser.add_argument("--wps", type=int, default=60, help="WPs in the mission")
    parser.add_argument("--claims", type=int, default=15, help="claims per latency row")
    parser.add_argument(
        "--smoke", action="store_true", help="3 WPs, 1 claim per row: does it work?"
    )
    args = parser.parse_args()
    if args.smoke:
        args.wps, args.claims = 3, 1
    with tempfile.TemporaryDirectory(prefix="kitty-remote-bench-") as name:
        tmp = Path(name)
        bare = make_remote(tmp, args.kitty, args.wps)
        port = free_port()
        daemon = subprocess.Popen(
            [
                "git", "daemon", "--reuseaddr", "--export-all", "--enable=receive-pack",
                "--listen=127.0.0.1", f"--port={port}", f"--base-path={tmp}", str(tmp),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # git-daemon runs as a child of `git`: kill the group
        )  # fmt: skip
        try:
            time.sleep(0.5)
            local = clone(f"file://{bare}", tmp / "local")
            served = clone(f"git://127.0.0.1:{port}/remote.git", tmp / "served")
            machines = [clone(f"file://{bare}", tmp / f"m{i}") for i in range(3)]
            print("| claim | median ms | p90 ms | n |")
            print("|---|---|---|---|")
            print(row("local (file lock only)", latency(args.kitty, local, args.claims, False)))
            reset(bare, [local])
            print(row("remote, file://", latency(args.kitty, local, args.claims, True)))
            reset(bare, [local, served])
            print(row("remote, git daemon", latency(args.kitty, served, args.claims, True)))
            reset(bare, [local, served])
            rate, total, doubles = throughput(args.kitty, machines, args.wps)
            print()
            print("| 3 machines x 4 claimers | WPs claimed | claims/s | double claims |")
            print("|---|---|---|---|")
            print(f"| file:// | {total} | {rate:.1f} | {doubles} |")
        finally:
            os.killpg(daemon.pid, signal.SIGKILL)
            daemon.wait()


if __name__ == "__main__":
    main()
