"""`kitty demo` (what `make demo` runs): a real sprint with simulated agents, end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def test_demo_sprint_rejects_once_then_merges(tmp_path: Path) -> None:
    parent = tmp_path / "not" / "there yet"  # made for the demo
    done = subprocess.run(
        [sys.executable, "-m", "kitty", "demo", "--dir", str(parent), "--json"],
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
    repo = next(parent.glob("kitty-demo-*"))
    assert (repo / "src" / "shop" / "catalog.py").read_text().count("# WP0") == 2  # WP01 + WP06
    assert (repo / "docs" / "wp08.md").is_file()
    log = subprocess.run(
        ["git", "-C", str(repo), "log", "--format=%s"], capture_output=True, text=True, check=True
    ).stdout
    assert "Merge mission bookshop-" in log and "feat(WP03): Pricing rules" in log


def test_the_try_line_runs_as_printed_in_a_new_shell(tmp_path: Path) -> None:
    """`make demo` runs .venv/bin/kitty, which a new shell does not find on PATH: the
    printed `try:` line names this kitty by its full path, so it works as printed."""
    import os

    bare = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    bare["PATH"] = "/usr/bin:/bin"  # a new shell: no .venv/bin on it
    done = subprocess.run(
        [sys.executable, "-m", "kitty", "demo", "--dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=180,
        env=bare,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr
    [line] = [x for x in done.stdout.splitlines() if x.startswith("try: ")]
    shell = subprocess.run(
        ["sh", "-c", line.removeprefix("try: ")],
        capture_output=True,
        text=True,
        timeout=120,
        env=bare,
        cwd=tmp_path,
    )
    assert shell.returncode == 0, line + "\n" + shell.stdout[-2000:] + shell.stderr
    assert "WP03" in shell.stdout


def test_a_demo_folder_that_cannot_be_made_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    done = subprocess.run(
        [sys.executable, "-m", "kitty", "demo", "--dir", str(tmp_path / "a-file" / "sub")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.splitlines() == [
        f"error: cannot create the demo's folder {tmp_path / 'a-file' / 'sub'}: Not a directory",
        "hint: pass --dir a folder you can write to, or leave it out (the temp dir)",
    ]
