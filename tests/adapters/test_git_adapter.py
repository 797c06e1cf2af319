"""One git adapter: every git process kitty starts goes through kitty/adapters/git.py,
and its two runners (plain subprocess, GitPython's command runner) answer alike."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import kitty
from kitty.adapters.git import NOT_RUN, TIMED_OUT, Git, spawned_output
from kitty.errors import GitError
from tests.helpers import init_repo

ADAPTER = Path(kitty.__file__).parent / "adapters" / "git.py"


def _starts_git(node: ast.Call) -> bool:
    """A call whose first argument is a list/tuple literal starting with "git", or a
    spawn of the program "git"."""
    if not node.args:
        return False
    first = node.args[0]
    if isinstance(first, ast.List | ast.Tuple) and first.elts:
        head = first.elts[0]
        return isinstance(head, ast.Constant) and head.value == "git"
    return isinstance(first, ast.Constant) and first.value == "git"


def test_no_module_but_the_adapter_runs_git_or_imports_gitpython() -> None:
    found = []
    for path in sorted(Path(kitty.__file__).parent.rglob("*.py")):
        if path == ADAPTER:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            name = f"{path.name}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Import) and any(
                a.name == "git" or a.name.startswith("git.") for a in node.names
            ):
                found.append(f"{name} imports GitPython")
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module == "git" or node.module.startswith("git."):
                    found.append(f"{name} imports GitPython")
            elif isinstance(node, ast.Call) and _starts_git(node):
                found.append(f"{name} starts git itself")
    assert found == []


@pytest.mark.parametrize("gitpython", [False, True], ids=["subprocess", "gitpython"])
def test_both_runners_answer_alike(tmp_path: Path, gitpython: bool) -> None:
    repo = init_repo(tmp_path / "r")
    git = Git(repo, gitpython=gitpython)
    assert git.run("rev-parse", "--abbrev-ref", "HEAD") == "main\n"  # stdout as it is
    assert git.current_branch() == "main" and git.branch_exists("main")
    code, out, _ = git.status("rev-parse", "--verify", "--quiet", "nope")
    assert (code, out) == (1, "")
    with pytest.raises(GitError) as caught:
        git.run("checkout", "nope")
    assert caught.value.message == (
        "git checkout failed: error: pathspec 'nope' did not match any file(s) known to git"
    )
    (repo / "a.txt").write_text("a\n")
    assert git.changed_paths() == ["a.txt"]
    sha = git.commit_only(["a.txt"], "add a")
    assert git.sha() == sha and git.log_subjects("HEAD~1", "HEAD") == [f"{sha[:7]} add a"]
    assert git.blob("HEAD", "a.txt") == b"a\n"
    assert git.run("hash-object", "--stdin", stdin=b"a\n").strip() == git.rev("HEAD:a.txt")


def test_git_missing_or_slow_is_an_answer_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = init_repo(tmp_path / "r")
    code, _, err = Git(repo).status("-c", "alias.slow=!sleep 1", "slow", timeout=0.2)
    assert code == TIMED_OUT and "git -c timed out after 0.2s" in err
    monkeypatch.setenv("PATH", "/nonexistent")
    for gitpython in (False, True):
        code, _, err = Git(repo, gitpython=gitpython).status("status")
        assert code == NOT_RUN and "cannot run git" in err
        with pytest.raises(GitError, match="git status failed: cannot run git"):
            Git(repo, gitpython=gitpython).run("status")
    assert spawned_output(["-C", str(repo), "status"]) is None


def test_the_read_path_runner_reads_stdout(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "r")
    (repo / "b.txt").write_text("b\n")
    out = spawned_output(["-C", str(repo), "status", "--porcelain", "-z"])
    assert out == b"?? b.txt\0"
