"""issue 35.7: a status.json older than the log (after a plain `git pull`, which brings the
log but never rewrites the derived file) is named by `kitty doctor` with the command that
refreshes it; reads never write it."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from tests.helpers import git, kitty, make_mission, ok

WPS = [{"wp_id": "WP01", "subtasks": ["T001"]}, {"wp_id": "WP02"}]


def test_doctor_names_a_stale_status_json_and_its_command_refreshes_it(repo: Path) -> None:
    mission = make_mission(repo, wps=WPS)
    status = mission / "status.json"
    old = status.read_bytes()
    ok(repo, "move", "WP01", "claimed", "--agent", "al")
    status.write_bytes(old)  # what a pull leaves: the new log, the old derived file
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "pulled")
    ok(repo, "status")  # a read: never writes a tracked file
    assert status.read_bytes() == old
    report = kitty(repo, "doctor")
    assert report.code == 1, report.out
    line = next(x for x in report.out.splitlines() if "status.json" in x)
    assert "stale" in line and "WP01" in line, line
    command = line.split("`")[1]
    assert command.startswith("kitty rebuild")
    ok(repo, *shlex.split(command)[1:])  # the command works exactly as printed
    assert json.loads(status.read_bytes())["work_packages"]["WP01"]["lane"] == "claimed"
    assert kitty(repo, "doctor").code == 0
