"""What the web board costs on big missions: building its data, the page, a live update.

Uses the generated missions of benchmarks/bench.py (~20 events per WP), then times
in-process: the first build of the board (what `kitty board --html` and the first
page load pay), a rebuild after one more event in the log (what every live update
pays: the server keeps the parsed WP files), and the page's size. Prints a
Markdown table. The browser side (first paint, update latency in Chromium) is
measured by tests/browser and written to build/browser/figures.json.

    python benchmarks/web_board.py --sizes 100 1000
    python benchmarks/web_board.py --smoke    # tiny sizes, seconds (run by the test suite)
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from missions import add_history, init_repo, kitty_mission


def generate(root: Path, n: int) -> str:
    """A repository with a kitty-written mission of `n` WPs (not finalized); its slug."""
    init_repo(root)
    return kitty_mission(root, n)


def measure(n: int, runs: int, kitty: str) -> dict[str, float]:
    from kitty.web import board as webboard
    from kitty.web import serve as webserve

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        slug = generate(root, n)
        subprocess.run([kitty, "-C", str(root), "finalize"], check=True, capture_output=True)
        add_history(root / "kitty-specs" / slug, n)
        cold = []
        size = 0
        for _ in range(runs):
            start = time.perf_counter()
            hub = webserve.Hub(root, slug)
            snap = hub.snapshot(slug)
            page = webboard.render_page(snap.model, live=True)
            cold.append(time.perf_counter() - start)
            size = len(page.encode("utf-8"))
        warm = []
        for i in range(runs):
            subprocess.run(
                [
                    kitty,
                    "-C",
                    str(root),
                    "move",
                    f"WP{i + 1:04d}",
                    "blocked",
                    "--agent",
                    "lead",
                    "--force",
                    "--note",
                    "bench",
                ],
                check=True,
                capture_output=True,
            )
            start = time.perf_counter()
            hub.snapshot(slug)
            warm.append(time.perf_counter() - start)
        start = time.perf_counter()
        out = Path(tmp) / "board.html"
        subprocess.run(
            [kitty, "-C", str(root), "board", "--html", str(out)], check=True, capture_output=True
        )
        export = time.perf_counter() - start
    return {
        "cold_ms": statistics.median(cold) * 1000,
        "update_ms": statistics.median(warm) * 1000,
        "export_ms": export * 1000,
        "page_kb": size / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--kitty", default=str(Path(sys.executable).with_name("kitty")))
    parser.add_argument("--smoke", action="store_true", help="5 WPs, one run: does it work?")
    args = parser.parse_args()
    if args.smoke:
        args.sizes, args.runs = [5], 1
    print(
        "| WPs | first build + page (ms) | rebuild after a move (ms) "
        "| `board --html` (ms) | page (KiB) |"
    )
    print("|---:|---:|---:|---:|---:|")
    for n in args.sizes:
        r = measure(n, args.runs, args.kitty)
        print(
            f"| {n} | {r['cold_ms']:.0f} | {r['update_ms']:.0f} | {r['export_ms']:.0f} "
            f"| {r['page_kb']:.0f} |"
        )


if __name__ == "__main__":
    main()
