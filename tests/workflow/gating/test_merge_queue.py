"""`kitty merge` through the merge queue (real git, a real pytest suite): the target
moves only to a tree whose gate passed; a lane that breaks it goes back to fix mode
naming the WP it was merged with; the rest merge; nothing is merged twice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import oracle
from tests.helpers import git, kitty, ok
from tests.workflow.gating.project import SLUG, approve, implement, project

pytestmark = pytest.mark.usefixtures("spec_kitty_reads_what_is_left")


def lanes_of(repo: Path) -> dict[str, str]:
    return {w["id"]: w["lane"] for w in ok(repo, "status", "--json").json()["work_packages"]}


def ready(repo: Path, texts: dict[str, str]) -> None:
    for wp, text in texts.items():
        implement(repo, wp, text)
        approve(repo, wp)
    ok(repo, "accept")


def on_main(repo: Path) -> list[str]:
    return sorted(git(repo, "ls-tree", "--name-only", "main", "src/").split())


def suite_passes_on(repo: Path, ref: str, tmp_path: Path) -> bool:
    import subprocess
    import sys

    where = tmp_path / f"check-{ref[:8]}"
    git(repo, "worktree", "add", "-q", "--detach", str(where), ref)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
         "checks"], cwd=where, capture_output=True, text=True,
    )  # fmt: skip
    git(repo, "worktree", "remove", "--force", str(where))
    return done.returncode == 0


def test_lanes_that_pass_together_merge_after_one_gate(repo: Path) -> None:
    project(repo)
    ready(repo, {"WP01": "one\n", "WP02": "two\n"})
    result = ok(repo, "merge", "--json").json()
    assert result["verified"] and result["merged"] and result["complete"]
    assert result["mode"] == "batch" and result["sent_back"] == []
    assert sorted(result["done"]) == ["WP01", "WP02"]
    assert on_main(repo) == ["src/base.txt", "src/wp01.txt", "src/wp02.txt"]
    assert git(repo, "rev-parse", "main").strip() == result["merge_commit"]
    assert lanes_of(repo) == {"WP01": "done", "WP02": "done"}
    gates = list(Path(result["gate_output"]).glob("*.log"))
    assert [p.name for p in gates] == ["queue-all-1-test.log"]  # one gate for both
    meta = json.loads((repo / "kitty-specs" / SLUG / "meta.json").read_text())
    assert meta["merge_verified"] is True and meta["merge_commit"] == result["merge_commit"]
    gate = ok(repo, "status", "--json").json()["work_packages"][0]["gate"]
    assert gate["where"] == "merge queue" and gate["with"] == "WP02"
    assert not (repo / ".worktrees" / f"{SLUG}-queue").exists()
    assert "merge queue" not in git(repo, "worktree", "list")


def test_two_lanes_that_fail_together_merge_one_and_send_the_culprit_back(
    repo: Path, tmp_path: Path
) -> None:
    project(repo)
    ready(repo, {"WP01": "clash\n", "WP02": "clash\n"})
    main_before = git(repo, "rev-parse", "main").strip()
    run = kitty(repo, "merge", "--json")
    assert run.code == 1, run.out + run.err
    result = run.json()
    assert result["mode"] == "try" and result["done"] == ["WP01"]
    assert result["sent_back"] == [
        {"lane_id": result["sent_back"][0]["lane_id"], "wp_ids": ["WP02"], "with": ["WP01"],
         "why": "gate"}
    ]  # fmt: skip
    assert on_main(repo) == ["src/base.txt", "src/wp01.txt"]
    assert git(repo, "rev-parse", "main^1").strip() == main_before
    assert suite_passes_on(repo, "main", tmp_path)
    assert lanes_of(repo) == {"WP01": "done", "WP02": "planned"}
    # the culprit's fix prompt starts with the failure and names the other WP
    prompt = ok(repo, "agent", "action", "implement", "WP02", "--agent", "claude", "--json")
    text = Path(prompt.json()["prompt"]).read_text()
    assert text.startswith("# Fix WP02")
    top = text.split("## Workspace")[0]
    assert "merged together with WP01" in top and "clash" in top
    # fixed, approved again: merges; WP01 is not merged twice
    workspace = Path(prompt.json()["workspace"])
    (workspace / "src" / "wp02.txt").write_text("two, fixed\n")
    git(workspace, "commit", "-qam", "fix(WP02): no clash")
    approve(repo, "WP02")
    again = ok(repo, "merge", "--json").json()
    assert again["done"] == ["WP02"] and again["complete"]
    assert on_main(repo) == ["src/base.txt", "src/wp01.txt", "src/wp02.txt"]
    assert suite_passes_on(repo, "main", tmp_path)
    log = repo / "kitty-specs" / SLUG / "status.events.jsonl"
    done = [
        json.loads(line)["wp_id"]
        for line in log.read_text().splitlines()
        if json.loads(line).get("to_lane") == "done"
    ]
    assert sorted(done) == ["WP01", "WP02"]  # each once
    (read,) = oracle.run([{"dir": str(repo / "kitty-specs" / SLUG)}], tmp_path)
    assert read["lanes"] == {"WP01": "done", "WP02": "done"}


def test_a_lane_that_conflicts_is_the_culprit(repo: Path) -> None:
    project(repo)
    for wp, text in (("WP01", "one\n"), ("WP02", "two\n")):
        workspace = implement(repo, wp, text)
        (workspace / "src" / "base.txt").write_text(f"changed by {wp}\n")
        git(workspace, "commit", "-qam", f"{wp} edits base")
        approve(repo, wp)
    ok(repo, "accept")
    result = kitty(repo, "merge", "--json").json()
    assert result["done"] == ["WP01"]
    (back,) = result["sent_back"]
    assert back["wp_ids"] == ["WP02"] and back["why"] == "conflict"
    assert git(repo, "show", "main:src/base.txt") == "changed by WP01\n"
    st = ok(repo, "status", "--json").json()["work_packages"][1]
    assert st["lane"] == "planned" and st["gate"]["result"] == "failed"


def test_no_verify_merges_without_the_gate_and_says_so(repo: Path) -> None:
    project(repo)
    ready(repo, {"WP01": "clash\n", "WP02": "clash\n"})
    result = ok(repo, "merge", "--no-verify", "--json").json()
    assert result["merged"] and result["no_verify"] and not result["verified"]
    log = (repo / "kitty-specs" / SLUG / "status.events.jsonl").read_text()
    notes = [json.loads(x) for x in log.splitlines() if "gate_no_verify" in x]
    assert sorted(n["wp_id"] for n in notes) == ["WP01", "WP02"]
    assert all("--no-verify" in n["delta"]["note"] for n in notes)


def test_a_lane_that_fails_on_its_own_leaves_main_untouched(repo: Path) -> None:
    project(repo, wps=1)
    ready(repo, {"WP01": "clash\n"})
    config = repo / ".kittify" / "config.yaml"  # main's suite grew stricter meanwhile
    (repo / "checks" / "test_more.py").write_text(
        "from pathlib import Path\n\ndef test_no_clash():\n"
        "    assert 'clash' not in ''.join(p.read_text() for p in Path('src').glob('*'))\n"
    )
    git(repo, "add", "checks")
    git(repo, "commit", "-qm", "a stricter suite")
    del config
    before = git(repo, "rev-parse", "main").strip()
    result = kitty(repo, "merge", "--json").json()
    assert not result["merged"] and result["sent_back"][0]["with"] == []
    assert git(repo, "rev-parse", "main").strip() == before
    assert len(list(Path(result["gate_output"]).glob("*.log"))) == 2  # the batch, its re-run


def test_one_merge_queue_at_a_time(repo: Path) -> None:
    from filelock import FileLock

    project(repo, wps=1)
    ready(repo, {"WP01": "one\n"})
    with FileLock(str(repo / ".git" / "kitty" / f"queue-{SLUG}.lock")):
        run = kitty(repo, "merge")
    assert run.code == 75 and "another kitty merge is running" in run.err
    assert lanes_of(repo) == {"WP01": "approved"}
    assert ok(repo, "merge", "--json").json()["done"] == ["WP01"]


def test_squash_lands_the_tested_tree_as_one_commit(repo: Path) -> None:
    project(repo)
    ready(repo, {"WP01": "one\n", "WP02": "two\n"})
    before = git(repo, "rev-parse", "main").strip()
    result = ok(repo, "merge", "--strategy", "squash", "--json").json()
    head = result["merge_commit"]
    assert git(repo, "rev-parse", "main").strip() == head
    assert git(repo, "rev-list", "--parents", "-n1", head).split() == [head, before]
    assert on_main(repo) == ["src/base.txt", "src/wp01.txt", "src/wp02.txt"]
    tested = git(repo, "rev-parse", f"{result['tested_commit']}^{{tree}}").strip()
    assert git(repo, "rev-parse", f"{head}^{{tree}}").strip() == tested
