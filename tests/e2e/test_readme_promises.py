"""Promises the README makes, each checked by what the user sees (not an exit code).

Issue 9's README test executes the ```sh blocks; this file checks the claims in
the prose around them: where identity comes from, exit codes 3 and 130, --json
on a terminal versus a pipe, `wp list`, `kitty lanes`, `--target-branch`,
`accepted_by`, `implement` without a WP id, the review prompt's downstream
warnings and the keep-awake fallback notice.
"""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
import time
from pathlib import Path

import click
import pytest

from kitty.cli import run
from tests.helpers import git, install_fakes, kitty, kitty_argv, lane_commit, make_mission, ok

IDENTITY = "agents:\n  available: [claude, codex]\nidentity: lead\n"


def test_identity_from_the_config_is_the_acting_agent(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mission = make_mission(repo, wps=[{"wp_id": "WP01"}, {"wp_id": "WP02"}], config=IDENTITY)
    ok(repo, "move", "WP01", "claimed")  # no --agent, no $KITTY_AGENT
    monkeypatch.setenv("KITTY_AGENT", "codex")
    ok(repo, "move", "WP02", "claimed")  # $KITTY_AGENT beats the config
    ok(repo, "move", "WP02", "in_progress", "--agent", "claude")  # --agent beats both
    events = [json.loads(x) for x in (mission / "status.events.jsonl").read_text().splitlines()]
    moves = [(e["wp_id"], e["to_lane"], e["actor"]) for e in events if e.get("to_lane")]
    assert moves[-3:] == [
        ("WP01", "claimed", "lead"),
        ("WP02", "claimed", "codex"),
        ("WP02", "in_progress", "claude"),
    ]
    monkeypatch.delenv("KITTY_AGENT")
    decision = ok(repo, "next", "--json").json()
    assert decision["action"] == "implement" and decision["wp_id"] == "WP01"  # lead resumes WP01
    assert decision["commands"] == [
        "kitty agent action implement WP01 --mission demo-01ABCDEF --agent lead"
    ]


def _group(exc: BaseException) -> click.Group:
    @click.group()
    def group() -> None:
        pass

    @group.command()
    def boom() -> None:
        raise exc

    return group


def test_an_internal_bug_exits_3_and_names_its_crash_log(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run(_group(RuntimeError("kaboom")), ["boom"]) == 3
    err = capsys.readouterr().err
    match = re.search(r"unexpected internal error \(details in (\S+\.log)\)", err)
    assert match, err
    log = Path(match.group(1))
    try:
        text = log.read_text()
        assert "RuntimeError: kaboom" in text and "Traceback" in text
        assert text.startswith("kitty ") and "['boom']" in text
    finally:
        log.unlink()
    assert "please report it with that log file" in err


def test_an_internal_bug_with_json_is_a_json_error(capsys: pytest.CaptureFixture[str]) -> None:
    @click.group()
    def group() -> None:
        pass

    @group.command()
    @click.option("--json", "as_json", is_flag=True)
    def boom(as_json: bool) -> None:
        raise RuntimeError("kaboom")

    assert run(group, ["boom", "--json"]) == 3
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["code"] == "internal"
    path = Path(re.search(r"details in (\S+\.log)", error["message"]).group(1))  # type: ignore[union-attr]
    assert "RuntimeError: kaboom" in path.read_text()
    path.unlink()


def test_ctrl_c_exits_130(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(_group(KeyboardInterrupt()), ["boom"]) == 130
    assert capsys.readouterr().err.strip() == "interrupted"


def test_ctrl_c_on_a_real_process_exits_130(repo: Path, tmp_path: Path) -> None:
    """SIGINT to a running `kitty keep-awake` (waiting on its command) ends it with 130."""
    ready = tmp_path / "ready"
    child = f"import pathlib, time; pathlib.Path({str(ready)!r}).touch(); time.sleep(60)"
    proc = subprocess.Popen(
        [*kitty_argv(repo, "keep-awake", "--", sys.executable, "-c", child)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        for _ in range(600):
            if ready.exists():
                break
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        os.killpg(proc.pid, 2)  # ^C reaches the whole foreground group
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
            proc.communicate()  # close the pipes: no ResourceWarning leaks into a later test
    assert proc.returncode == 130, err
    assert "interrupted" in err


def _status_json(repo: Path, on_tty: bool) -> str:
    argv = kitty_argv(repo, "status", "--json")
    if not on_tty:
        return subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen(argv, stdout=follower, stderr=subprocess.DEVNULL)
        os.close(follower)
        chunks = []
        while True:
            try:
                data = os.read(leader, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        assert proc.wait(timeout=60) == 0
    finally:
        os.close(leader)
    return b"".join(chunks).decode().replace("\r\n", "\n")


def test_json_is_indented_on_a_terminal_and_one_line_in_a_pipe(repo: Path) -> None:
    make_mission(repo, wps=[{"wp_id": "WP01"}])
    piped = _status_json(repo, on_tty=False)
    assert piped.count("\n") == 1 and piped.endswith("}\n")
    on_tty = _status_json(repo, on_tty=True)
    assert on_tty.count("\n") > 10 and '\n  "mission": ' in on_tty
    assert json.loads(on_tty) == json.loads(piped)
    assert json.loads(piped)["schema"] == 1


def test_wp_list_and_lanes_with_the_critical_path(repo: Path) -> None:
    make_mission(
        repo,
        wps=[
            {"wp_id": "WP01", "title": "Cart API", "owned": ["src/cart/**"]},
            {"wp_id": "WP02", "title": "Cart UI", "deps": ["WP01"], "owned": ["web/**"]},
            {"wp_id": "WP03", "title": "Docs"},
        ],
    )
    assert ok(repo, "wp", "list").out.splitlines() == [
        "WP01  Cart API  deps: -",
        "WP02  Cart UI  deps: WP01",
        "WP03  Docs  deps: -",
    ]
    lanes = ok(repo, "lanes").out
    assert "lane-a  ◆WP01:planned" in lanes
    assert "lane-b  ◆WP02:planned  after lane-a" in lanes
    assert "critical path ◆: WP01 → WP02" in lanes
    assert "◆WP03" not in lanes
    data = ok(repo, "lanes", "--json").json()
    assert data["critical_path"] == ["WP01", "WP02"]


def test_mission_create_records_the_target_branch(repo: Path) -> None:
    git(repo, "branch", "release")
    out = ok(
        repo,
        "mission",
        "create",
        "checkout-flow",
        "--title",
        "Checkout",
        "--target-branch",
        "release",
    ).out
    slug = re.search(r"created mission (\S+)", out).group(1)  # type: ignore[union-attr]
    meta = json.loads((repo / "kitty-specs" / slug / "meta.json").read_text())
    assert (meta["target_branch"], meta["friendly_name"]) == ("release", "Checkout")


def _approved(repo: Path, config: str = IDENTITY) -> Path:
    mission = make_mission(repo, wps=[{"wp_id": "WP01", "subtasks": ["T001"]}], config=config)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plan")
    ok(repo, "agent", "action", "implement", "--agent", "claude")
    ok(repo, "agent", "tasks", "mark-status", "T001", "--status", "done")
    lane_commit(repo, "WP01")
    ok(repo, "move", "WP01", "for_review", "--agent", "claude")
    ok(repo, "move", "WP01", "in_review", "--agent", "codex")
    ok(repo, "move", "WP01", "approved", "--agent", "codex", "--note", "Review passed")
    return mission


def test_accept_records_accepted_by(repo: Path) -> None:
    mission = _approved(repo)
    ok(repo, "accept")  # the actor is `identity: lead`
    meta = json.loads((mission / "meta.json").read_text())
    assert meta["accepted_by"] == "lead"
    assert meta["accepted_at"] and re.fullmatch(r"[0-9a-f]{40}", meta["accept_commit"])
    log = (mission / "status.events.jsonl").read_text()
    assert '"accepted_by": "lead"' in log


def test_implement_without_a_wp_id_takes_what_next_would_choose(repo: Path) -> None:
    make_mission(
        repo,
        wps=[{"wp_id": "WP01"}, {"wp_id": "WP02", "deps": ["WP03"]}, {"wp_id": "WP03"}],
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plan")
    chosen = ok(repo, "next", "--agent", "claude", "--json").json()["wp_id"]
    assert chosen == "WP03"  # the longest chain first, not the lowest id
    out = ok(repo, "agent", "action", "implement", "--agent", "claude").out
    assert out.startswith("Implementing WP03 ")
    workspace = re.search(r"^Workspace: cd (\S+)$", out, re.M).group(1)  # type: ignore[union-attr]
    assert Path(workspace).is_dir() and workspace.endswith("-lane-c")
    prompt = re.search(r"^cat (\S+)$", out, re.M).group(1)  # type: ignore[union-attr]
    assert Path(prompt).name == "WP03-implement.md" and Path(prompt).is_file()
    status = {
        w["id"]: (w["lane"], w["agent"])
        for w in ok(repo, "status", "--json").json()["work_packages"]
    }
    assert status["WP03"] == ("in_progress", "claude")


def test_review_prompt_warns_about_dependent_wps(repo: Path) -> None:
    make_mission(
        repo,
        wps=[
            {"wp_id": "WP01", "title": "Cart API"},
            {"wp_id": "WP02", "title": "Cart UI", "deps": ["WP01"]},
            {"wp_id": "WP03", "title": "Docs", "deps": ["WP01"]},
            {"wp_id": "WP04", "title": "Other"},
        ],
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plan")
    ok(repo, "agent", "action", "implement", "WP01", "--agent", "claude")
    lane_commit(repo, "WP01")
    ok(repo, "move", "WP01", "for_review", "--agent", "claude")
    out = ok(repo, "agent", "action", "review", "WP01", "--agent", "codex").out
    prompt = Path(re.search(r"^cat (\S+)$", out, re.M).group(1)).read_text()  # type: ignore[union-attr]
    section = prompt.split("## Downstream warnings\n\n", 1)[1].split("\n\n", 1)[0]
    assert section.splitlines() == [
        "- WP02 (Cart UI) depends on WP01: approving it unblocks WP02 at once; "
        "check the interfaces it will rely on.",
        "- WP03 (Docs) depends on WP01: approving it unblocks WP03 at once; "
        "check the interfaces it will rely on.",
    ]


def test_keep_awake_prints_a_notice_when_no_inhibitor_exists(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # neither caffeinate nor systemd-inhibit
    run_ = kitty(repo, "keep-awake", "--", sys.executable, "-c", "raise SystemExit(7)")
    assert run_.code == 7  # the command's own exit code
    assert run_.err.strip() == (
        "keep-awake: no idle-sleep inhibitor here (no caffeinate/systemd-inhibit); "
        "make sure the machine does not sleep"
    )


def test_keep_awake_says_so_when_the_inhibitor_fails(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    failing = "#!/bin/sh\necho 'Failed to connect to bus' >&2\nexit 1\n"
    install_fakes(tmp_path / "bin", ("systemd-inhibit", "caffeinate"), failing, monkeypatch)
    run_ = kitty(repo, "keep-awake", "--", sys.executable, "-c", "pass")
    assert run_.code == 0
    assert re.fullmatch(
        r"keep-awake: (systemd-inhibit|caffeinate) exited with 1 \(Failed to connect to bus\); "
        r"continuing without it",
        run_.err.strip(),
    ), run_.err


def test_mission_create_refuses_a_target_branch_that_is_not_there(repo: Path) -> None:
    def missions() -> list[str]:
        specs = repo / "kitty-specs"
        return sorted(p.name for p in specs.iterdir()) if specs.is_dir() else []

    before = missions()
    missing = kitty(repo, "mission", "create", "flow", "--target-branch", "nope")
    assert missing.code == 2, missing.out + missing.err
    assert "--target-branch nope: no branch of that name" in missing.err
    assert "git branch nope" in missing.err
    bad = kitty(repo, "mission", "create", "flow", "--target-branch", "a..b", "--json")
    assert bad.code == 2 and "not a valid branch name" in bad.json()["error"]["message"]
    assert missions() == before
    git(repo, "branch", "nope")
    ok(repo, "mission", "create", "flow", "--target-branch", "nope")
