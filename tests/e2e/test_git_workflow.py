"""Worktrees, prompts, safe-commit, accept and merge, in real git repositories."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.helpers import git, kitty, make_mission, ok

FOUR = [
    {"wp_id": "WP01", "title": "Alpha", "subtasks": ["T001"], "owned": ["src/alpha.py"]},
    {"wp_id": "WP02", "title": "Beta", "subtasks": ["T002"], "owned": ["src/beta.py"]},
    {
        "wp_id": "WP03",
        "title": "Gamma",
        "deps": ["WP01", "WP02"],
        "subtasks": ["T003"],
        "owned": ["src/gamma/**"],
    },
    {
        "wp_id": "WP04",
        "title": "Delta",
        "deps": ["WP03"],
        "subtasks": ["T004"],
        "owned": ["src/gamma/delta.py"],
    },
]


def planned_repo(repo: Path, wps: list[dict[str, object]], config: str | None = None) -> Path:
    kwargs = {"config": config} if config else {}
    mission = make_mission(repo, wps=wps, **kwargs)  # type: ignore[arg-type]
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plan the mission")
    return mission


def implement(repo: Path, wp: str, agent: str, files: dict[str, str]) -> Path:
    out = ok(repo, "agent", "action", "implement", wp, "--agent", agent).out
    workspace = Path(re.search(r"Workspace: cd (.+)", out).group(1))  # type: ignore[union-attr]
    for name, text in files.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text)
    ok(workspace, "safe-commit", *files, "-m", f"feat({wp}): work")
    tasks = ok(repo, "status", "--json").json()["work_packages"]
    subtasks = next(w["subtasks"] for w in tasks if w["id"] == wp)
    ok(repo, "agent", "tasks", "mark-status", *subtasks, "--status", "done")
    ok(repo, "agent", "tasks", "move-task", wp, "--to", "for_review", "--agent", agent)
    return workspace


def approve(repo: Path, wp: str, reviewer: str) -> None:
    ok(repo, "agent", "action", "review", wp, "--agent", reviewer)
    ok(
        repo,
        "agent",
        "tasks",
        "move-task",
        wp,
        "--to",
        "approved",
        "--agent",
        reviewer,
        "--note",
        "Review passed",
    )


def lanes(repo: Path) -> dict[str, str]:
    doc = json.loads((repo / "kitty-specs" / "demo-01ABCDEF" / "lanes.json").read_text())
    return {wp: lane["lane_id"] for lane in doc["lanes"] for wp in lane["wp_ids"]}


def test_four_wps_from_implement_to_merge(repo: Path) -> None:
    planned_repo(repo, FOUR)
    assert lanes(repo) == {"WP01": "lane-a", "WP02": "lane-b", "WP03": "lane-c", "WP04": "lane-c"}
    implement(repo, "WP01", "claude", {"src/alpha.py": "ALPHA = 1\n"})
    implement(repo, "WP02", "codex", {"src/beta.py": "BETA = 2\n"})
    approve(repo, "WP01", "codex")
    blocked = kitty(repo, "agent", "action", "implement", "WP03", "--agent", "claude")
    assert blocked.code == 1 and "depends on WP02 (for_review)" in blocked.err
    approve(repo, "WP02", "claude")
    gamma = implement(repo, "WP03", "claude", {"src/gamma/__init__.py": "GAMMA = 3\n"})
    assert (gamma / "src" / "alpha.py").is_file() and (gamma / "src" / "beta.py").is_file()
    approve(repo, "WP03", "codex")
    delta = implement(repo, "WP04", "gemini", {"src/gamma/delta.py": "DELTA = 4\n"})
    assert delta == gamma  # same lane, same worktree
    approve(repo, "WP04", "codex")
    assert ok(repo, "next", "--agent", "claude", "--json").json()["action"] == "accept"
    accepted = ok(repo, "accept", "--json").json()
    meta = json.loads((repo / "kitty-specs" / "demo-01ABCDEF" / "meta.json").read_text())
    assert meta["accepted_at"] == accepted["accepted_at"] and meta["accept_commit"]
    assert ok(repo, "next", "--agent", "claude", "--json").json()["action"] == "merge"
    plan = ok(repo, "merge", "--dry-run", "--json").json()
    assert [s.get("lane_id") for s in plan["steps"]] == ["lane-a", "lane-b", "lane-c", None]
    assert not plan["conflicts"]
    result = ok(repo, "merge", "--json").json()
    assert sorted(result["done"]) == ["WP01", "WP02", "WP03", "WP04"]
    for name in ("src/alpha.py", "src/beta.py", "src/gamma/__init__.py", "src/gamma/delta.py"):
        assert (repo / name).is_file(), name
    assert git(repo, "branch", "--show-current").strip() == "main"
    assert "Merge mission demo-01ABCDEF into main" in git(repo, "log", "-1", "--format=%s")
    status = ok(repo, "status", "--json").json()
    assert {w["lane"] for w in status["work_packages"]} == {"done"}
    assert not any((repo / ".worktrees").iterdir())
    assert "kitty/mission-demo-01ABCDEF-lane-a" not in git(repo, "branch")
    assert ok(repo, "next", "--agent", "claude", "--json").json()["action"] == "done"


def test_workspace_and_prompt_lines_extract_like_the_skill(repo: Path) -> None:
    planned_repo(repo, FOUR)
    out = ok(
        repo,
        "agent",
        "action",
        "implement",
        "WP01",
        "--agent",
        "claude",
        "--profile",
        "python-pedro",
    ).out
    workspace = [
        line.split("Workspace: cd ", 1)[1] for line in out.splitlines() if "Workspace: cd " in line
    ]
    prompt = [line.split("cat ", 1)[1] for line in out.splitlines() if "cat " in line]
    assert len(workspace) == 1 and Path(workspace[0]).is_dir()
    assert len(prompt) == 1 and Path(prompt[0]).is_file()
    assert prompt[0].endswith(".kittify/prompts/demo-01ABCDEF/WP01-implement.md")
    text = Path(prompt[0]).read_text()
    assert "# Implement WP01 – Alpha" in text and "work_package_id: WP01" in text
    assert "kitty agent tasks mark-status T001 --mission demo-01ABCDEF --status done" in text
    assert "move-task WP01 --mission demo-01ABCDEF --to for_review" in text
    data = ok(repo, "status", "--json").json()["work_packages"][0]
    assert (data["lane"], data["agent"]) == ("in_progress", "claude")
    again = ok(repo, "agent", "action", "implement", "WP01", "--agent", "claude", "--json").json()
    assert again["workspace"] == workspace[0]
    other = kitty(repo, "agent", "action", "implement", "WP01", "--agent", "codex")
    assert other.code == 1 and "held by claude" in other.err
    model_only = kitty(repo, "agent", "action", "implement", "WP02", "--agent", "x", "--model", "m")
    assert model_only.code == 2 and "--model needs --invocation-id" in model_only.err
    from kitty.mission.workspace import Mission
    from kitty.workflow.actions import dispatch_record

    opened = Mission.open(repo, None)  # the dispatch record an --invocation-id must match
    op = dispatch_record(opened, "op-1", "WP02", "implement", "codex", "gpt-x")
    opened.record(lambda board: [op])
    with_model = ok(
        repo,
        "agent",
        "action",
        "implement",
        "WP02",
        "--agent",
        "codex",
        "--model",
        "gpt-x",
        "--invocation-id",
        "op-1",
        "--json",
    ).json()
    assert with_model["wp_id"] == "WP02"
    log = (repo / "kitty-specs" / "demo-01ABCDEF" / "status.events.jsonl").read_text()
    assert '"invocation_id": "op-1"' in log and '"model": "gpt-x"' in log


def test_rejection_then_fix_mode_prompt(repo: Path, tmp_path: Path) -> None:
    planned_repo(repo, FOUR)
    implement(repo, "WP01", "claude", {"src/alpha.py": "ALPHA = 0\n"})
    ok(repo, "agent", "action", "review", "WP01", "--agent", "codex")
    feedback = tmp_path / "fb.md"
    feedback.write_text("**Issue 1**: ALPHA must be 1, not 0.\n")
    ok(repo, "move", "WP01", "planned", "--agent", "codex", "--review-feedback-file", str(feedback))
    decision = ok(repo, "next", "--agent", "claude", "--json").json()
    assert (decision["action"], decision["cycle"]) == ("fix", "1/3")
    result = ok(repo, "agent", "action", "implement", "WP01", "--agent", "claude", "--json").json()
    assert result["fix_mode"] and result["cycle"] == "1/3"
    text = Path(result["prompt"]).read_text()
    assert text.startswith("# Fix WP01 – Alpha")
    assert "This is cycle 1/3" in text and "ALPHA must be 1, not 0." in text
    implement_out = Path(result["workspace"])
    (implement_out / "src" / "alpha.py").write_text("ALPHA = 1\n")
    ok(implement_out, "safe-commit", "src/alpha.py", "-m", "fix")
    ok(repo, "agent", "tasks", "mark-status", "T001", "--status", "done")
    ok(repo, "move", "WP01", "for_review", "--agent", "claude")
    prompt = ok(repo, "agent", "action", "review", "WP01", "--agent", "codex", "--json").json()
    review_text = Path(prompt["prompt"]).read_text()
    assert "(cycle 1/3)" in review_text and "ALPHA must be 1" in review_text
    assert review_text.count("src/alpha.py") >= 1 and "diff " in review_text
    assert Path(prompt["prompt"]).name == "WP01-review.md"  # beside, not over, the fix prompt
    assert Path(result["prompt"]).read_text().startswith("# Fix WP01")


def test_self_review_is_refused(repo: Path) -> None:
    planned_repo(repo, FOUR)
    implement(repo, "WP01", "claude", {"src/alpha.py": "A\n"})
    refused = kitty(repo, "agent", "action", "review", "WP01", "--agent", "claude")
    assert refused.code == 1 and "self-review" in refused.err
    assert ok(repo, "status", "--json").json()["work_packages"][0]["lane"] == "for_review"
    allowed = ok(
        repo,
        "agent",
        "action",
        "review",
        "WP01",
        "--agent",
        "claude",
        "--allow-self-review",
        "--json",
    ).json()
    assert allowed["wp_id"] == "WP01"
    nothing = kitty(repo, "agent", "action", "review", "--agent", "gemini")
    assert nothing.code == 1 and "nothing to review" in nothing.err


def test_dependency_lane_conflict_leaves_the_repo_as_it_was(repo: Path) -> None:
    planned_repo(repo, FOUR[:3])
    implement(repo, "WP01", "claude", {"src/alpha.py": "A\n", "README.md": "alpha readme\n"})
    implement(repo, "WP02", "codex", {"src/beta.py": "B\n", "README.md": "beta readme\n"})
    approve(repo, "WP01", "codex")
    approve(repo, "WP02", "claude")
    before_branches = git(repo, "branch")
    run = kitty(repo, "agent", "action", "implement", "WP03", "--agent", "claude")
    assert run.code == 1
    assert "merging lane-b conflicts on README.md" in run.err
    assert git(repo, "branch") == before_branches
    assert not (repo / ".worktrees" / "demo-01ABCDEF-lane-c").exists()
    assert ok(repo, "status", "--json").json()["work_packages"][2]["lane"] == "planned"


def _conflicting_mission(repo: Path) -> None:
    planned_repo(repo, FOUR[:2])
    implement(repo, "WP01", "claude", {"src/alpha.py": "A\n", "shared.txt": "from alpha\n"})
    implement(repo, "WP02", "codex", {"src/beta.py": "B\n", "shared.txt": "from beta\n"})
    approve(repo, "WP01", "codex")
    approve(repo, "WP02", "claude")
    ok(repo, "accept")


def test_merge_conflict_then_abort(repo: Path) -> None:
    _conflicting_mission(repo)
    mission_sha = (
        git(repo, "rev-parse", "kitty/mission-demo-01ABCDEF").strip()
        if "kitty/mission-demo-01ABCDEF" in git(repo, "branch")
        else None
    )
    main_before = git(repo, "rev-parse", "main").strip()
    status_before = git(repo, "status", "--porcelain")
    predicted = ok(repo, "merge", "--dry-run", "--json").json()
    assert predicted["conflicts"] and predicted["steps"][1]["predicted_conflicts"] == ["shared.txt"]
    run = kitty(repo, "merge", "--json")
    assert run.code == 1
    error = run.json()["error"]
    assert error["code"] == "merge_conflict" and error["files"] == ["shared.txt"]
    assert "--resume" in error["hint"]
    assert git(repo, "status", "--porcelain") == status_before  # the checkout was not touched
    assert git(repo, "rev-parse", "main").strip() == main_before
    busy = kitty(repo, "merge")
    assert busy.code == 1 and "already in progress" in busy.err
    ok(repo, "merge", "--abort")
    assert not (repo / ".worktrees" / "demo-01ABCDEF-merge").exists()
    if mission_sha:
        assert git(repo, "rev-parse", "kitty/mission-demo-01ABCDEF").strip() == mission_sha
    lanes_now = {w["lane"] for w in ok(repo, "status", "--json").json()["work_packages"]}
    assert lanes_now == {"approved"}


def test_merge_conflict_then_resume(repo: Path) -> None:
    _conflicting_mission(repo)
    assert kitty(repo, "merge").code == 1
    merge_tree = repo / ".worktrees" / "demo-01ABCDEF-merge"
    early = kitty(repo, "merge", "--resume")
    assert early.code == 1 and "still conflicted: shared.txt" in early.err
    (merge_tree / "shared.txt").write_text("from alpha and beta\n")
    git(merge_tree, "add", "shared.txt")
    result = ok(repo, "merge", "--resume", "--json").json()
    assert sorted(result["done"]) == ["WP01", "WP02"]
    assert (repo / "shared.txt").read_text() == "from alpha and beta\n"
    assert not merge_tree.exists()


def test_squash_strategy_and_keep_worktrees(repo: Path) -> None:
    planned_repo(repo, FOUR[:1])
    implement(repo, "WP01", "claude", {"src/alpha.py": "A\n"})
    approve(repo, "WP01", "codex")
    ok(repo, "accept")
    ok(repo, "merge", "--strategy", "squash", "--keep-worktrees")
    parents = git(repo, "log", "-1", "--format=%P", "main").split()
    assert len(parents) == 1  # a squash commit, not a merge commit
    assert (repo / "src" / "alpha.py").is_file()
    assert (repo / ".worktrees" / "demo-01ABCDEF-lane-a").is_dir()


def test_accept_lists_every_problem(repo: Path) -> None:
    mission = planned_repo(repo, FOUR[:2])
    (mission / "issue-matrix.json").write_text(
        json.dumps(
            {
                "schema_version": 1,
                "rows": {
                    "#7": {"verdict": "unknown"},
                    "#8": {"verdict": "in-mission"},
                    "#9": {"verdict": "fixed"},
                },
            }
        )
    )
    workspace = implement(repo, "WP01", "claude", {"src/alpha.py": "A\n"})
    (workspace / "scratch.txt").write_text("left behind\n")
    run = kitty(repo, "accept", "--json")
    assert run.code == 1
    problems = run.json()["error"]["problems"]
    assert "WP01 is for_review (needs approved or done)" in problems
    assert "WP02 subtasks not done: T002" in problems
    assert "issue-matrix.json: #7 has verdict unknown" in problems
    assert any("#8 is still in-mission" in p for p in problems)
    assert "lane-a worktree has uncommitted changes: scratch.txt" in problems
    assert not json.loads((mission / "meta.json").read_text()).get("accepted_at")


def test_merge_needs_acceptance(repo: Path) -> None:
    planned_repo(repo, FOUR[:1])
    run = kitty(repo, "merge")
    assert run.code == 1 and "kitty accept" in run.err


def test_safe_commit_commits_exactly_the_listed_paths(repo: Path, tmp_path: Path) -> None:
    (repo / "a.py").write_text("a\n")
    (repo / "b.py").write_text("b\n")
    (repo / "staged.py").write_text("s\n")
    git(repo, "add", "staged.py")
    (tmp_path / "outside.txt").write_text("x\n")
    (repo / ".worktrees" / "x").mkdir(parents=True)
    (repo / ".worktrees" / "x" / "f").write_text("f\n")
    refused = kitty(
        repo,
        "safe-commit",
        "a.py",
        str(tmp_path / "outside.txt"),
        "README.md",
        ".worktrees/x/f",
        "-m",
        "m",
    )
    assert refused.code == 1
    assert "outside this worktree" in refused.err and "README.md: not changed" in refused.err
    assert ".worktrees/x/f: inside .worktrees/" in refused.err
    assert git(repo, "log", "--oneline").count("\n") == 1  # nothing committed
    result = ok(repo, "safe-commit", "a.py", "-m", "feat: a", "--json").json()
    assert result["paths"] == ["a.py"]
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == ["a.py"]
    status = git(repo, "status", "--porcelain")
    assert "A  staged.py" in status and "?? b.py" in status


def test_auto_commit_commits_only_kittys_files(repo: Path) -> None:
    config = "agents:\n  available: [claude, codex]\n  auto_commit: true\n"
    planned_repo(repo, FOUR[:1], config=config)
    (repo / "user.txt").write_text("mine\n")
    git(repo, "add", "user.txt")
    count = int(git(repo, "rev-list", "--count", "HEAD"))
    ok(repo, "move", "WP01", "claimed", "--agent", "claude")
    assert int(git(repo, "rev-list", "--count", "HEAD")) == count + 1
    files = git(repo, "show", "--name-only", "--format=", "HEAD").split()
    assert files == [
        "kitty-specs/demo-01ABCDEF/status.events.jsonl",
        "kitty-specs/demo-01ABCDEF/status.json",
    ]
    assert "A  user.txt" in git(repo, "status", "--porcelain")
    ok(repo, "agent", "action", "implement", "WP01", "--agent", "claude")
    assert int(git(repo, "rev-list", "--count", "HEAD")) == count + 2
    lane = repo / ".worktrees" / "demo-01ABCDEF-lane-a"
    assert git(lane, "status", "--porcelain") == ""


@pytest.mark.parametrize("auto", [False])
def test_without_auto_commit_kitty_never_commits(repo: Path, auto: bool) -> None:
    planned_repo(repo, FOUR[:1])
    count = git(repo, "rev-list", "--count", "HEAD")
    ok(repo, "move", "WP01", "claimed", "--agent", "claude")
    assert git(repo, "rev-list", "--count", "HEAD") == count
