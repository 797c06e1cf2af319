"""The JSON contract: every command takes --json; what it prints is JSON objects (one per
line for streams) carrying "schema": 1, and every failure is exactly the error object
{"schema": 1, "error": {"code", "message", "hint"}}."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import click
import pytest

from kitty.cli import cli
from tests.helpers import git, kitty, kitty_argv, lane_commit, make_mission, ok

#: Commands that cannot answer in JSON by nature (they print a script or speak a protocol).
NO_JSON = {"completion", "mcp"}
#: Not run here: covered by its own end-to-end test (tests/project/test_demo.py checks its stream).
SLOW = {"demo"}


def commands(group: click.Group = cli, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            found += commands(command, (*path, name))
        else:
            found.append((*path, name))
    return found


def command(path: tuple[str, ...]) -> click.Command:
    cmd: click.Command = cli
    for name in path:
        assert isinstance(cmd, click.Group)
        cmd = cmd.commands[name]
    return cmd


def documents(out: str) -> list[Any]:
    lines = [line for line in out.splitlines() if line.strip()]
    assert lines, "no output"
    try:
        return [json.loads(out)]
    except json.JSONDecodeError:
        return [json.loads(line) for line in lines]  # a stream: one object per line


def check(run: Any) -> list[dict[str, Any]]:
    docs = documents(run.out)
    for doc in docs:
        assert isinstance(doc, dict) and doc.get("schema") == 1, doc
    if run.code != 0:
        (doc,) = docs
        assert set(doc) == {"schema", "error"}, doc
        # A failed git command also carries git's own message (`git_message`).
        assert set(doc["error"]) - {"git_message"} == {"code", "message", "hint"}
        assert doc["error"]["message"]
    else:
        assert all("error" not in doc for doc in docs)
    return docs


def test_every_command_takes_json() -> None:
    missing = [
        " ".join(p)
        for p in commands()
        if p[0] not in NO_JSON and "as_json" not in {x.name for x in command(p).params}
    ]
    assert missing == []


@pytest.mark.parametrize(
    "path", [p for p in commands() if p[0] not in NO_JSON | SLOW], ids=" ".join
)
def test_every_command_outside_a_repo(path: tuple[str, ...], tmp_path: Path) -> None:
    """Outside a git repository (or without its arguments) every command answers in JSON:
    the error object, or (review schema, review personas, prime: they need no repository)
    its document."""
    run = kitty(tmp_path, *path, "--json")
    check(run)
    assert run.code != 0 or path in {("review", "schema"), ("review", "personas"), ("prime",)}


SUCCESS: list[tuple[str, ...]] = [
    ("init", "--agents", "claude,codex"),
    ("mission", "list"),
    ("wp", "list"),
    ("finalize",),
    ("agent", "mission", "finalize-tasks"),
    ("status",),
    ("agent", "tasks", "status"),
    ("lanes",),
    ("next", "--agent", "claude"),
    ("doctor",),
    ("rebuild",),
    ("review", "schema"),
    ("agent", "config", "list"),
    ("agent", "tasks", "mark-status", "T001", "--status", "done"),
    ("move", "WP01", "claimed", "--agent", "claude"),
    ("agent", "action", "implement", "WP01", "--agent", "claude"),
    ("agent", "tasks", "move-task", "WP01", "--to", "for_review", "--agent", "claude"),
    ("agent", "action", "review", "WP01", "--agent", "codex"),
    ("review", "show", "WP01"),
    ("sprint", "--implementer", "claude", "--reviewer", "codex", "--dry-run"),
    ("wp", "add", "--title", "Later", "--owns", "src/later/**"),
    ("wp", "show", "WP02"),
    ("wp", "search", "later"),
    ("wp", "edit", "WP03", "--objective", "Later, with an objective"),
    ("wp", "depend", "WP03", "--on", "WP02"),
    ("wp", "split", "WP03", "--title", "Even later"),
    ("mission", "create", "second"),
]


def test_commands_answer_with_schema(repo: Path) -> None:
    make_mission(
        repo,
        wps=[
            {"wp_id": "WP01", "subtasks": ["T001"], "owned": ["src/a/**"]},
            {"wp_id": "WP02", "deps": ["WP01"], "owned": ["src/b/**"]},
        ],
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plan")
    for args in SUCCESS:
        if args[:3] == ("agent", "tasks", "move-task"):
            lane_commit(repo, "WP01")  # the work that may enter review (issue 41)
        run = kitty(repo, *args, "--json")
        assert run.code == 0, (args, run.out, run.err)
        check(run)
    schema = ok(repo, "review", "schema", "--json").json()
    assert schema["findings_schema"]["type"] == "object"


def test_keep_awake_json(tmp_path: Path) -> None:
    done = subprocess.run(
        kitty_argv(tmp_path, "keep-awake", "--json", "--", "echo", "hello"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"schema": 1, "command": ["echo", "hello"], "exit_code": 0}
    assert "hello" in done.stderr
    failed = kitty(tmp_path, "keep-awake", "--json", "--", "false")
    assert failed.code == 1 and failed.json()["exit_code"] == 1
    missing = kitty(tmp_path, "keep-awake", "--json", "--", "no-such-command-here")
    assert missing.code == 127
    assert check(missing)[0]["error"]["code"] == "cannot_run"


def test_mistyped_lane_suggests_the_closest(repo: Path) -> None:
    make_mission(repo, wps=[{"wp_id": "WP01"}])
    err = kitty(repo, "move", "WP01", "in_reveiw", "--agent", "claude", "--json").json()["error"]
    assert err["code"] == "invalid_transition"
    assert err["message"] == "unknown lane 'in_reveiw'; did you mean 'in_review'?"


def test_missing_directory_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    run = kitty(missing, "status", "--json")
    assert run.code == 2
    err = check(run)[0]["error"]
    assert "does not exist" in err["message"] and str(missing) in err["message"]
    assert "not inside a git repository" not in err["message"]
