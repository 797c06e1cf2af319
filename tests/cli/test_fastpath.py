"""`status` and `next --json` without click print exactly what the click commands print."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from kitty import fastpath
from tests.helpers import kitty, make_mission, ok

SLUG = "fast-01FASTPA"

SAME = [
    ["status"],
    ["status", "--json"],
    ["status", "--mission", SLUG],
    ["status", "-m", SLUG, "--json"],
    ["status", f"--mission={SLUG}", "--json"],
    ["status", "--mission", "nope"],
    ["status", "--json", "--mission", "nope"],
    ["next", "--agent", "claude", "--json"],
    ["next", "-a", "codex", "--json", "--mission", SLUG],
    ["next", "--json", "--agent=claude"],
    ["next", "--json"],
]

LEFT_TO_CLICK = [
    ["status", "--help"],
    ["status", "--json", "--json"],
    ["status", "--bogus"],
    ["status", "extra"],
    ["status", "--mission"],
    ["status", "--mission", ""],
    ["next", "--agent", "claude"],
    ["next", "--agent", "claude", "--claim", "--json"],
    ["next", "--agent", "--json"],
    ["lanes", "--json"],
    [],
]


@pytest.fixture
def mission_repo(repo: Path) -> Path:
    make_mission(
        repo,
        slug=SLUG,
        wps=[
            {"wp_id": "WP01", "subtasks": ["T001"]},
            {"wp_id": "WP02", "deps": ["WP01"]},
            {"wp_id": "WP03", "title": "Broken", "extra": "owned_files: [x"},
        ],
        finalize=False,
    )
    (repo / "kitty-specs" / SLUG / "tasks" / "WP03-broken.md").unlink()
    ok(repo, "finalize", "--mission", SLUG)
    ok(repo, "move", "WP01", "claimed", "--agent", "claude")
    with (repo / "kitty-specs" / SLUG / "status.events.jsonl").open("a") as log:
        log.write("not json\n")  # a warning on stderr
    return repo


@pytest.mark.parametrize("args", SAME, ids=lambda a: " ".join(a) or "-")
def test_fast_route_prints_what_click_prints(
    mission_repo: Path, args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    full = kitty(mission_repo, *args)
    code = fastpath.run(["-C", str(mission_repo), *args])
    fast = capsys.readouterr()
    assert code is not None
    assert (code, fast.out, fast.err) == (full.code, full.out, full.err)


@pytest.mark.parametrize("args", LEFT_TO_CLICK, ids=lambda a: " ".join(a) or "-")
def test_anything_else_is_left_to_click(
    mission_repo: Path, args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert fastpath.run(["-C", str(mission_repo), *args]) is None
    assert capsys.readouterr() == ("", "")


def test_a_missing_directory_is_left_to_click(tmp_path: Path) -> None:
    assert fastpath.run(["-C", str(tmp_path / "missing"), "status"]) is None


def test_status_and_next_do_not_import_click(mission_repo: Path) -> None:
    """Neither click nor git/networkx; nor yaml once the snapshot cache holds the parsed
    config and WP files (files younger than two seconds are never trusted from it)."""
    probe = (
        "import sys\n"
        "from kitty.entry import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exit:\n"
        "    heavy = [m for m in ('click', 'yaml', 'git', 'networkx') if m in sys.modules]\n"
        "    print('HEAVY=' + ','.join(heavy), file=sys.stderr)\n"
        "    raise\n"
    )

    def heavy(args: list[str]) -> set[str]:
        done = subprocess.run(
            [sys.executable, "-c", probe, "-C", str(mission_repo), *args],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return set(done.stderr.splitlines()[-1].removeprefix("HEAVY=").split(",")) - {""}

    commands = (["status", "--json"], ["status"], ["next", "--agent", "claude", "--json"])
    for args in commands:
        assert heavy(args) <= {"yaml"}, args
    time.sleep(2.1)
    heavy(["status"])  # caches the files, now old enough to trust
    for args in commands:
        assert heavy(args) == set(), args
