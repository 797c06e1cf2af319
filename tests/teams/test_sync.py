"""`kitty sync`: every clone ends with the same board; never mid-merge; survives kill -9."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from pathlib import Path

from tests.helpers import git, kitty, kitty_argv, ok
from tests.remotes import FIVE, clone, publish

CONFIG = "agents:\n  available: [claude, codex]\n"
SLUG = "demo-01ABCDEF"
LOG = f"kitty-specs/{SLUG}/status.events.jsonl"


def event_ids(text: str) -> set[str]:
    return {json.loads(line)["event_id"] for line in text.splitlines() if line.strip()}


def boards(clones: list[Path]) -> list[object]:
    return [
        {k: v for k, v in ok(c, "status", "--json").json().items() if k != "mission"}
        for c in clones
    ]


def test_sync_gives_every_clone_the_same_board(tmp_path: Path) -> None:
    bare = publish(tmp_path, CONFIG)
    clones = [clone(f"file://{bare}", tmp_path / n) for n in ("a", "b", "c")]
    for repo, wp, agent in zip(clones, ("WP01", "WP02", "WP03"), ("al", "bo", "cy"), strict=True):
        ok(repo, "move", wp, "claimed", "--agent", agent)
        ok(repo, "move", wp, "in_progress", "--agent", agent)
        ok(repo, "agent", "tasks", "mark-status", f"T00{wp[-1]}", "--status", "done")
    (clones[0] / "notes.txt").write_text("mine, not kitty's\n")
    (clones[0] / "README.md").write_text("edited, not committed\n")
    for repo in clones:
        result = ok(repo, "sync", "--json").json()
        assert result["commits"] and result["branch"] == "main"
    ok(clones[0], "sync")
    ok(clones[1], "sync")
    views = boards(clones)
    assert views[0] == views[1] == views[2]
    assert [w["lane"] for w in views[0]["work_packages"]] == ["in_progress"] * 3 + ["planned"] * 2
    # Only kitty's files were committed; the user's edits are untouched.
    porcelain = git(clones[0], "status", "--porcelain")
    assert "?? notes.txt" in porcelain and " M README.md" in porcelain
    remote_log = git(bare, "show", f"main:{LOG}")
    assert event_ids(remote_log) == event_ids((clones[2] / LOG).read_text())
    assert kitty(clones[1], "doctor").code == 0


def test_concurrent_syncs_retry_rejected_pushes(tmp_path: Path) -> None:
    """Three syncs at once, and one push that is certainly rejected: clone a's pre-push hook
    first syncs clone d (its first push only), so a's push finds main moved ("fetch
    first"), and a fetches, merges and pushes again: attempts == 2, nothing lost."""
    import shlex
    import sys

    bare = publish(tmp_path, CONFIG)
    clones = [clone(f"file://{bare}", tmp_path / n) for n in ("a", "b", "c")]
    late = clone(f"file://{bare}", tmp_path / "d")
    for i, repo in enumerate([*clones, late], start=1):
        ok(repo, "move", f"WP0{i}", "claimed", "--agent", f"agent{i}")
    marker = tmp_path / "d-pushed-first"
    hook = clones[0] / ".git" / "hooks" / "pre-push"
    d_sync = shlex.join([sys.executable, "-m", "kitty", "-C", str(late), "sync"])
    hook.write_text(
        "#!/bin/sh\nunset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE\n"
        f"[ -e {shlex.quote(str(marker))} ] && exit 0\n"
        f"touch {shlex.quote(str(marker))} && {d_sync} >/dev/null\n"
    )
    hook.chmod(0o755)
    procs = [
        subprocess.Popen(kitty_argv(c, "sync", "--json"), stdout=subprocess.PIPE, text=True)
        for c in clones
    ]
    results = [json.loads(p.communicate(timeout=120)[0]) for p in procs]
    assert all(p.returncode == 0 for p in procs), json.dumps(results)
    assert marker.exists()  # d's push went in between a's fetch and a's push
    assert results[0]["attempts"] >= 2 and results[0]["merged"], results[0]
    every = [*clones, late]
    for repo in every:
        ok(repo, "sync")
    views = boards(every)
    assert views[0] == views[1] == views[2] == views[3]
    assert [w["lane"] for w in views[0]["work_packages"]][:4] == ["claimed"] * 4


def test_sync_never_leaves_a_merge_behind(tmp_path: Path) -> None:
    bare = publish(tmp_path, CONFIG)
    a = clone(f"file://{bare}", tmp_path / "a")
    b = clone(f"file://{bare}", tmp_path / "b")
    for repo, text in ((a, "alice\n"), (b, "bob\n")):
        (repo / "README.md").write_text(text)
        git(repo, "commit", "-q", "-am", "readme")
    ok(a, "sync")
    ok(b, "move", "WP01", "claimed", "--agent", "bob")
    refused = kitty(b, "sync")
    assert refused.code == 1
    assert "README.md" in refused.err and "merge was undone" in refused.err
    assert not (b / ".git" / "MERGE_HEAD").exists()
    assert git(b, "status", "--porcelain", "--untracked-files=no") == ""
    assert "kitty: sync" in git(b, "log", "-1", "--format=%s")  # the event is committed
    git(b, "merge", "-q", "--abort") if (b / ".git" / "MERGE_HEAD").exists() else None
    # Mid-merge by the user: sync leaves it alone and says what to do.
    git(b, "fetch", "-q", "origin")
    subprocess.run(["git", "merge", "origin/main"], cwd=b, capture_output=True, check=False)
    busy = kitty(b, "sync")
    assert busy.code == 1 and "in the middle of a merge" in busy.err


def test_kill_9_during_sync_loses_no_event(tmp_path: Path) -> None:
    bare = publish(tmp_path, CONFIG, FIVE)
    a = clone(f"file://{bare}", tmp_path / "a")
    b = clone(f"file://{bare}", tmp_path / "b")
    rng = random.Random(11)
    for round_ in range(6):
        ok(b, "agent", "tasks", "mark-status", "T001", "--status", "done", "--agent", f"b{round_}")
        ok(b, "sync")  # the remote moves, so a's sync has to merge
        ok(a, "agent", "tasks", "mark-status", "T002", "--status", "done", "--agent", f"a{round_}")
        proc = subprocess.Popen(
            kitty_argv(a, "sync"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        time.sleep(rng.uniform(0.05, 0.6))
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    ok(a, "sync")
    ok(b, "sync")
    ok(a, "sync")
    assert not (a / ".git" / "MERGE_HEAD").exists()
    ids_a, ids_b = event_ids((a / LOG).read_text()), event_ids((b / LOG).read_text())
    assert ids_a == ids_b == event_ids(git(bare, "show", f"main:{LOG}"))
    marks = [
        json.loads(line)
        for line in (a / LOG).read_text().splitlines()
        if '"kind": "annotation"' in line
    ]
    assert {m["actor"] for m in marks} >= {f"{s}{r}" for s in "ab" for r in range(6)}
    assert boards([a]) == boards([b])


def test_auto_sync_pushes_after_each_command(tmp_path: Path) -> None:
    config = CONFIG + "  auto_sync: true\n"
    bare = publish(tmp_path, config)
    a = clone(f"file://{bare}", tmp_path / "a")
    b = clone(f"file://{bare}", tmp_path / "b")
    ok(a, "move", "WP01", "claimed", "--agent", "alice")
    assert '"to_lane": "claimed"' in git(bare, "show", f"main:{LOG}")
    git(b, "pull", "-q", "--no-edit", "origin", "main")
    assert ok(b, "status", "--json").json()["work_packages"][0]["lane"] == "claimed"
    git(a, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    moved = kitty(a, "move", "WP01", "in_progress", "--agent", "alice")
    assert moved.code == 0 and "warning: auto_sync with origin failed" in moved.err


def test_sync_brings_remote_claims_into_the_branch(tmp_path: Path) -> None:
    bare = publish(tmp_path, CONFIG)
    a = clone(f"file://{bare}", tmp_path / "a")
    b = clone(f"file://{bare}", tmp_path / "b")
    claim = ok(a, "next", "--agent", "alice", "--claim", "--remote", "origin", "--json").json()
    result = ok(b, "sync", "--json").json()  # b never claimed: it learns from the coord ref
    assert result["coordinated"] == [SLUG]
    lanes = {w["id"]: w["lane"] for w in ok(b, "status", "--json").json()["work_packages"]}
    assert lanes[claim["wp_id"]] == "claimed"
    assert '"to_lane": "claimed"' in git(bare, "show", f"main:{LOG}")
