"""How long `kitty mcp` takes from spawn to answering `initialize`, and to listing its tools.

    python benchmarks/mcp_startup.py [-n RUNS] [--repo DIR] [--kitty PATH]
    python benchmarks/mcp_startup.py --smoke     # one run: does it work? (run by the tests)

(`PYTHONPATH=/path/to/other/checkout python benchmarks/mcp_startup.py` times another
version of kitty with the same interpreter and SDK.)

Starts `python -m kitty -C REPO mcp` RUNS times (default 10, after one warm-up) in a
repository with a small finalized mission (made in a temporary directory unless --repo),
sends the MCP `initialize` request over stdin, and measures the wall time until its answer
arrives; then `tools/list`. Prints a table of min / median / max in milliseconds. Quote
the median.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "mcp_startup", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


#: How kitty is started: `python -m kitty` with this interpreter, or --kitty PATH.
KITTY = [sys.executable, "-m", "kitty"]


def make_repo(parent: Path) -> Path:
    repo = parent / "repo"
    repo.mkdir()

    def run(*args: str) -> None:
        subprocess.run(args, cwd=repo, check=True, capture_output=True)

    run("git", "init", "-q", "-b", "main")
    run(
        "git",
        "-c",
        "user.name=b",
        "-c",
        "user.email=b@x",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "i",
    )
    kitty = KITTY
    run(*kitty, "init")
    run(*kitty, "mission", "create", "bench")
    for i in range(1, 6):
        run(*kitty, "wp", "add", "--title", f"Part {i}", "--objective", f"part {i}")
    run(*kitty, "finalize")
    return repo


def once(repo: Path) -> tuple[float, float]:
    start = time.monotonic()
    proc = subprocess.Popen(
        [*KITTY, "-C", str(repo), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=repo,  # not this checkout: `-m` would import the kitty/ beside it first
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(INIT) + "\n")
    proc.stdin.flush()
    answer = json.loads(proc.stdout.readline())
    initialized = time.monotonic() - start
    assert answer.get("id") == 1 and "result" in answer, answer
    proc.stdin.write(json.dumps(INITIALIZED) + "\n" + json.dumps(LIST) + "\n")
    proc.stdin.flush()
    tools = json.loads(proc.stdout.readline())
    listed = time.monotonic() - start
    assert tools.get("id") == 2 and tools["result"]["tools"], tools
    proc.stdin.close()
    proc.wait(timeout=30)
    return initialized, listed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", type=int, default=10)
    parser.add_argument("--repo", type=Path)
    parser.add_argument("--kitty", help="the kitty executable to time (default: python -m kitty)")
    parser.add_argument("--smoke", action="store_true", help="one run: does it work?")
    args = parser.parse_args()
    if args.kitty:
        KITTY[:] = [args.kitty]
    if args.smoke:
        args.n = 1
    with tempfile.TemporaryDirectory() as tmp:
        repo = args.repo or make_repo(Path(tmp))
        once(repo)  # warm-up: page cache, .pyc files
        runs = [once(repo) for _ in range(args.n)]
    print("| kitty mcp, from spawn to | min | median | max | runs |")
    print("|---|---:|---:|---:|---:|")
    for label, values in (
        ("`initialize` answered", [r[0] for r in runs]),
        ("`tools/list` answered", [r[1] for r in runs]),
    ):
        ms = sorted(1000 * v for v in values)
        print(
            f"| {label} | {ms[0]:.0f} ms | {statistics.median(ms):.0f} ms | "
            f"{ms[-1]:.0f} ms | {args.n} |"
        )


if __name__ == "__main__":
    main()
