"""Every git operation kitty performs, through GitPython, in one place.

Imported only by write paths (implement, review, merge, safe-commit,
auto-commit): GitPython costs ~30 ms to import and `status`/`next` never need it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from git import GitCommandError, Repo

from kitty.adapters.gitcli import porcelain_paths
from kitty.errors import GIT_HINT, GitError


@dataclass(frozen=True)
class MergeOutcome:
    ok: bool
    conflicts: list[str]
    message: str = ""


def _fail(action: str, exc: GitCommandError) -> GitError:
    output = (exc.stderr or exc.stdout or str(exc)).strip()
    detail = output.replace("\n", " ").removeprefix("stderr: ").strip("'\" ")
    output = output.removeprefix("stderr: ").strip("'\" ")
    return GitError(f"git {action} failed: {detail}", GIT_HINT, output)


class Git:
    """A git working tree (the primary checkout or a linked worktree)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.repo = Repo(path)

    def run(self, *args: str) -> str:
        try:
            return str(self.repo.git.execute(["git", *args]))
        except GitCommandError as exc:
            raise _fail(args[0], exc) from None

    def try_run(self, *args: str) -> tuple[int, str]:
        """Run and return (status, stdout) instead of raising."""
        status, out, _ = self.repo.git.execute(
            ["git", *args], with_extended_output=True, with_exceptions=False
        )
        return int(status), str(out)

    # -- refs ---------------------------------------------------------------
    def branch_exists(self, name: str) -> bool:
        return self.try_run("rev-parse", "--verify", "--quiet", f"refs/heads/{name}")[0] == 0

    def sha(self, ref: str = "HEAD") -> str:
        return self.run("rev-parse", "--verify", f"{ref}^{{commit}}").strip()

    def create_branch(self, name: str, start: str) -> None:
        self.run("branch", name, start)

    def delete_branch(self, name: str) -> None:
        if self.branch_exists(name):
            self.run("branch", "-D", name)

    def set_branch(self, name: str, sha: str) -> None:
        self.run("update-ref", f"refs/heads/{name}", sha)

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        return self.try_run("merge-base", "--is-ancestor", ancestor, descendant)[0] == 0

    def current_branch(self) -> str | None:
        status, out = self.try_run("symbolic-ref", "--quiet", "--short", "HEAD")
        return out.strip() if status == 0 else None

    # -- worktrees ----------------------------------------------------------
    def worktrees(self) -> dict[Path, str | None]:
        """Registered worktrees -> the branch each has checked out (None: detached)."""
        found: dict[Path, str | None] = {}
        current: Path | None = None
        for line in self.run("worktree", "list", "--porcelain").splitlines():
            if line.startswith("worktree "):
                current = Path(line[len("worktree ") :])
                found[current] = None
            elif line.startswith("branch ") and current is not None:
                found[current] = line[len("branch ") :].removeprefix("refs/heads/")
        return found

    def worktree_of(self, branch: str) -> Path | None:
        return next((p for p, b in self.worktrees().items() if b == branch), None)

    def add_worktree(self, path: Path, branch: str) -> None:
        self.run("worktree", "add", "--quiet", str(path), branch)

    def add_detached_worktree(self, path: Path, ref: str) -> None:
        self.run("worktree", "add", "--quiet", "--detach", str(path), ref)

    def remove_worktree(self, path: Path, force: bool = False) -> None:
        args = ["worktree", "remove", *(["--force"] if force else []), str(path)]
        self.run(*args)
        self.try_run("worktree", "prune")

    # -- working tree state ---------------------------------------------------
    def changed_paths(self) -> list[str]:
        """Modified, staged, deleted and untracked paths (porcelain v1, not ignored)."""
        out = self.run("status", "--porcelain=v1", "-z", "--untracked-files=all")
        return porcelain_paths(out)

    def unmerged_paths(self) -> list[str]:
        out = self.run("diff", "--name-only", "--diff-filter=U")
        return [p for p in out.splitlines() if p]

    def merging(self) -> bool:
        return self.try_run("rev-parse", "--verify", "--quiet", "MERGE_HEAD")[0] == 0

    # -- merges -------------------------------------------------------------
    def merge(self, ref: str, message: str, squash: bool = False) -> MergeOutcome:
        """Merge `ref` into HEAD (`--no-ff`, or `--squash` + commit). Conflicts are data."""
        args = ["merge", "--squash", ref] if squash else ["merge", "--no-ff", "-m", message, ref]
        status, out = self.try_run(*args)
        if status == 0:
            if squash and self.try_run("diff", "--cached", "--quiet")[0] != 0:
                self.run("commit", "--quiet", "-m", message)
            return MergeOutcome(True, [])
        conflicts = self.unmerged_paths()
        if not conflicts:
            raise GitError(
                f"git merge {ref} failed: {out.strip()[:300]}",
                "commit or stash local changes in that worktree, then retry",
            )
        return MergeOutcome(False, conflicts, out.strip())

    def abort_merge(self) -> None:
        if self.merging():
            self.run("merge", "--abort")
        else:
            self.try_run("reset", "--hard", "--quiet")

    def predict_conflicts(self, base: str, other: str) -> tuple[str | None, list[str]]:
        """Merge `other` into `base` in memory (git merge-tree); return (commit, conflicts)."""
        status, out = self.try_run("merge-tree", "--write-tree", "--name-only", base, other)
        lines = out.splitlines()
        if status == 0 and lines:
            tree = lines[0].strip()
            commit = self.run("commit-tree", tree, "-p", base, "-p", other, "-m", "kitty dry run")
            return commit.strip(), []
        if status == 1:
            conflicts = []
            for line in lines[1:]:
                if not line.strip():
                    break
                conflicts.append(line.strip())
            return None, conflicts
        raise GitError(f"git merge-tree failed: {out.strip()[:300]}", "needs git 2.38 or newer")

    # -- commits ------------------------------------------------------------
    def commit_only(self, paths: list[str], message: str) -> str:
        """Commit exactly `paths` (their working-tree content), leaving other staged work alone."""
        untracked = set(
            self.run("ls-files", "--others", "--exclude-standard", "-z", "--", *paths).split("\0")
        ) - {""}
        if untracked:
            self.run("add", "--", *sorted(untracked))
        self.run("commit", "--quiet", "--only", "-m", message, "--", *paths)
        return self.sha()

    def log_subjects(self, base: str, head: str) -> list[str]:
        out = self.run("log", "--format=%h %s", f"{base}..{head}")
        return [line for line in out.splitlines() if line]

    def changed_between(self, base: str, head: str) -> list[str]:
        return [p for p in self.run("diff", "--name-only", f"{base}..{head}").splitlines() if p]
