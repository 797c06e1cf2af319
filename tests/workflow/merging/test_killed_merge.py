"""A `kitty merge` killed at any moment can be resumed or aborted (issue 35.3).

The merge's state file is written before its worktree is made; `--resume` makes the
worktree again when it is missing or half made, and `--abort` cleans a merge worktree
that has no state file; killed inside the fast-forward of the target's checkout, both put
back the files it half wrote. Each kill point is reached deterministically by the pausing
`git` wrapper of tests/killing.py (`git worktree add|remove`, `git branch`, `git merge
--ff-only`; killed there with the whole process group); a bounded random-kill loop covers
the rest.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from tests.e2e.test_git_workflow import FOUR, approve, implement, planned_repo
from tests.helpers import git, init_repo, kitty, ok
from tests.killing import install_git_wrapper, kill_at, kill_randomly

MERGE_TREE = ".worktrees/demo-01ABCDEF-merge"


@pytest.fixture
def wrapped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return install_git_wrapper(tmp_path, monkeypatch)


def accepted(repo: Path) -> Path:
    planned_repo(repo, FOUR[:2])
    implement(repo, "WP01", "claude", {"src/alpha.py": "A\n"})
    implement(repo, "WP02", "claude", {"src/beta.py": "B\n"})
    approve(repo, "WP01", "codex")
    approve(repo, "WP02", "codex")
    ok(repo, "accept")
    return repo


def merged(repo: Path) -> None:
    lanes = {w["lane"] for w in ok(repo, "status", "--json").json()["work_packages"]}
    assert lanes == {"done"}
    assert (repo / "src" / "alpha.py").is_file() and (repo / "src" / "beta.py").is_file()
    assert not (repo / MERGE_TREE).exists()


@pytest.mark.parametrize("pause", ["add", "add-partial", "remove", "branch-lock"])
def test_a_killed_merge_resumes(repo: Path, wrapped: Path, pause: str) -> None:
    accepted(repo)
    kill_at(repo, pause, wrapped, "merge")
    resumed = kitty(repo, "merge", "--resume", "--json")
    assert resumed.code == 0, resumed.out + resumed.err
    merged(repo)


@pytest.mark.parametrize("pause", ["add", "add-partial"])
def test_a_killed_merge_aborts_and_merges_again(repo: Path, wrapped: Path, pause: str) -> None:
    accepted(repo)
    kill_at(repo, pause, wrapped, "merge")
    ok(repo, "merge", "--abort")
    assert not (repo / MERGE_TREE).exists()
    ok(repo, "merge")
    merged(repo)


FF = ["ff-partial", "ff-checkout"]


def clean(repo: Path) -> None:
    """The merged files are as HEAD has them; no git lock is left."""
    assert git(repo, "status", "--porcelain", "--untracked-files=all", "--", "src") == ""
    assert not list((repo / ".git").glob("*.lock"))


@pytest.mark.parametrize("pause", FF)
def test_a_merge_killed_in_the_targets_fast_forward_resumes_as_doctor_says(
    repo: Path, wrapped: Path, pause: str
) -> None:
    accepted(repo)
    kill_at(repo, pause, wrapped, "merge")
    assert (repo / "src" / "alpha.py").is_file()  # the half-done checkout of main
    report = kitty(repo, "doctor")
    assert report.code == 1 and "kitty merge --resume" in report.out, report.out
    found = re.search(r"`kitty (merge --resume[^`]*)`", report.out)
    assert found and "--mission demo-01ABCDEF" in found[1], report.out
    ok(repo, *found[1].split())  # exactly as printed
    merged(repo)
    clean(repo)
    merges = git(repo, "log", "--merges", "--format=%s", "main").splitlines()
    assert sum("into main" in m for m in merges) == 1, merges
    assert kitty(repo, "doctor").code == 0


@pytest.mark.parametrize("pause", FF)
def test_a_merge_killed_in_the_targets_fast_forward_aborts_and_merges_again(
    repo: Path, wrapped: Path, pause: str
) -> None:
    accepted(repo)
    start = git(repo, "rev-parse", "main")
    kill_at(repo, pause, wrapped, "merge")
    found = re.search(r"`kitty (merge --abort[^`]*)`", kitty(repo, "doctor").out)
    assert found, "doctor names no abort"
    ok(repo, *found[1].split())  # exactly as printed
    assert git(repo, "rev-parse", "main") == start
    assert not (repo / "src" / "alpha.py").exists()
    clean(repo)
    ok(repo, "merge")
    merged(repo)
    clean(repo)


def test_abort_cleans_a_merge_worktree_left_without_a_state_file(repo: Path) -> None:
    """What an older kitty killed between the worktree and its state file left."""
    accepted(repo)
    git(repo, "worktree", "add", "--quiet", "--detach", MERGE_TREE, "main")
    stuck = kitty(repo, "merge")
    assert stuck.code == 1 and "kitty merge --abort" in stuck.err, stuck.err
    assert "nothing was merged" in ok(repo, "merge", "--abort").out
    assert not (repo / MERGE_TREE).exists()
    git(repo, "worktree", "add", "--quiet", "--detach", MERGE_TREE, "main")
    aborted = ok(repo, "merge", "--abort", "--json").json()
    assert aborted["aborted"] is True and not (repo / MERGE_TREE).exists()
    ok(repo, "merge")
    merged(repo)


@pytest.mark.timeout(900)
def test_random_kills_of_a_merge_always_resume_or_abort(tmp_path: Path) -> None:
    """Bounded: four merges killed at random moments; each is finished by --resume (when
    a merge is in progress) or a new `kitty merge` (when the kill came before one)."""
    rng = random.Random(353)
    for round_ in range(4):
        repo = accepted(init_repo(tmp_path / f"r{round_}"))
        kill_randomly(repo, rng, 1.5, "merge")
        lanes = {w["lane"] for w in ok(repo, "status", "--json").json()["work_packages"]}
        if list((repo / ".git" / "kitty").glob("merge-*.json")):
            resumed = kitty(repo, "merge", "--resume")
            assert resumed.code == 0, resumed.out + resumed.err
        elif lanes != {"done"} or (repo / MERGE_TREE).exists():
            ok(repo, "merge")
        merged(repo)
        assert not list((repo / ".git" / "kitty").glob("merge-*.json"))
        assert json.loads(ok(repo, "status", "--json").out)["conflicts"] == []


def test_a_merge_hint_works_as_printed_beside_another_mission(repo: Path) -> None:
    """The commands a refused merge prints name its mission: copied verbatim they work in
    a repository with several missions (where a bare `kitty merge` has to ask which)."""
    accepted(repo)
    ok(repo, "mission", "create", "other")
    git(repo, "worktree", "add", "--quiet", "--detach", MERGE_TREE, "main")
    stuck = kitty(repo, "merge", "--mission", "demo-01ABCDEF")
    printed = re.findall(r"`kitty (merge[^`]*)`", stuck.err)
    assert stuck.code == 1 and len(printed) == 2, stuck.err
    assert "nothing was merged" in ok(repo, *printed[0].split()).out  # the abort
    ok(repo, *printed[1].split())  # `kitty merge` again
    board = ok(repo, "status", "--mission", "demo-01ABCDEF", "--json").json()
    assert {w["lane"] for w in board["work_packages"]} == {"done"}
    assert (repo / "src" / "alpha.py").is_file() and not (repo / MERGE_TREE).exists()
