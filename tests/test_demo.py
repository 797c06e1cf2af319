"""`kitty demo` (what `make demo` runs): a real sprint with simulated agents, end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def test_demo_sprint_rejects_once_then_merges(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kitty", "demo", "--dir", str(tmp_path), "--json"],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr
    stream = [json.loads(line) for line in done.stdout.splitlines()]
    assert all(event["schema"] == 1 for event in stream)
    end = stream[-1]
    assert end["event"] == "end" and end["ok"] and end["merged"]
    rows = {r["wp_id"]: r for r in end["summary"]}
    assert len(rows) == 8 and {r["lane"] for r in rows.values()} == {"done"}
    assert rows["WP03"]["review_cycles"] == 1
    assert sum(r["review_cycles"] for r in rows.values()) == 1
    repo = next(tmp_path.glob("kitty-demo-*"))
    assert (repo / "src" / "shop" / "catalog.py").read_text().count("# WP0") == 2  # WP01 + WP06
    assert (repo / "docs" / "wp08.md").is_file()
    log = subprocess.run(
        ["git", "-C", str(repo), "log", "--format=%s"], capture_output=True, text=True, check=True
    ).stdout
    assert "Merge mission bookshop-" in log and "feat(WP03): Pricing rules" in log
