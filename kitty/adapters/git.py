"""kitty's one git adapter: every git command kitty runs goes through `Git`.

One interface, two runners behind it:

* `Git(path)` runs plain `git` subprocesses. Auto-commit, sync, remote claims, init and
  finalize use it: they run on hot write paths, where importing GitPython costs about
  120 ms a command (measured in issue 26; tests/workflow/commits/test_autocommit.py checks that an
  auto-committed move never imports it).
* `Git(path, gitpython=True)` runs the same commands through GitPython's command runner
  (the project's chosen git library; it runs git in the C locale, so git's messages are
  English whatever the user's locale). The workflow commands that start worktrees,
  merge and review (implement, review, accept, merge, safe-commit, the review panel)
  use it; GitPython is imported only when such a command runs its first git command.

Both runners return git's stdout and stderr as they are (stdout keeps its final
newline) and report a failure the same way (`GitError`). The read path's one git
command (`kitty status` asking what is uncommitted) uses `spawned_output`. Importing
this module imports neither subprocess nor GitPython: they load on first use.
"""

from __future__ import annotations

import os
from pathlib import Path

from kitty.errors import GIT_HINT, GitError

TYPE_CHECKING = False  # no `typing` import: `kitty status` imports this module warm
if TYPE_CHECKING:
    from typing import Any

    from kitty.adapters.layout import Project

#: The exit status `Git.output` reports when git could not be started / was stopped.
NOT_RUN = 127
TIMED_OUT = 124


def porcelain_paths(out: str) -> list[str]:
    """Paths from `git status --porcelain=v1 -z` output (a rename's source is skipped)."""
    paths, entries = [], out.split("\0")
    index = 0
    while index < len(entries):
        entry = entries[index]
        index += 1
        if not entry:
            continue
        if entry[0] in "RC":
            index += 1  # the rename source follows
        paths.append(entry[3:])
    return paths


class MergeOutcome:
    """What a merge did: whether it went through, the conflicting paths, git's message.
    (A plain class: a dataclass would import `dataclasses` on the warm read path.)"""

    __slots__ = ("conflicts", "message", "ok")

    def __init__(self, ok: bool, conflicts: list[str], message: str = "") -> None:
        self.ok, self.conflicts, self.message = ok, conflicts, message

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MergeOutcome):
            return NotImplemented
        return (self.ok, self.conflicts, self.message) == (other.ok, other.conflicts, other.message)

    def __repr__(self) -> str:
        return (
            f"MergeOutcome(ok={self.ok!r}, conflicts={self.conflicts!r}, message={self.message!r})"
        )


def spawned_output(args: list[str]) -> bytes | None:
    """stdout of `git *args`, or None when git cannot run or exits non-zero; for the read
    path (`kitty status`): started with os.posix_spawnp, so neither subprocess nor
    GitPython is imported, and stderr is discarded."""
    read_end, write_end = os.pipe()
    try:
        null = os.open(os.devnull, os.O_RDWR)
        try:
            pid = os.posix_spawnp(
                "git",
                ["git", *args],
                os.environ,
                file_actions=[
                    (os.POSIX_SPAWN_DUP2, null, 0),
                    (os.POSIX_SPAWN_DUP2, write_end, 1),
                    (os.POSIX_SPAWN_DUP2, null, 2),
                ],
            )
        finally:
            os.close(null)
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return None
    os.close(write_end)
    chunks = []
    with os.fdopen(read_end, "rb") as pipe:
        while chunk := pipe.read(65536):
            chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    return b"".join(chunks) if os.waitstatus_to_exitcode(status) == 0 else None


def _subprocess(
    cwd: Path, args: list[str], stdin: bytes | None, timeout: float | None
) -> tuple[int, bytes, bytes]:
    import subprocess  # on first use only: a move without auto-commit never needs it

    try:
        done = subprocess.run(
            args, cwd=cwd, input=stdin, capture_output=True, check=False, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return TIMED_OUT, b"", f"git {args[1]} timed out after {timeout:g}s".encode()
    except OSError as exc:  # no git on PATH, or the directory is gone
        return NOT_RUN, b"", f"cannot run git in {cwd}: {exc.strerror or exc}".encode()
    return done.returncode, done.stdout, done.stderr


def _gitpython(cwd: Path, args: list[str]) -> tuple[int, bytes, bytes]:
    try:
        from git.cmd import Git as Runner  # GitPython, on first use only
        from git.exc import GitCommandNotFound
    except ImportError as exc:  # GitPython refuses to load when it finds no git
        detail = str(exc).splitlines()[0]
        return NOT_RUN, b"", f"cannot run git in {cwd}: {detail}".encode()

    try:
        result: Any = Runner(cwd).execute(
            args,
            with_extended_output=True,
            with_exceptions=False,
            stdout_as_string=False,
            strip_newline_in_stdout=False,
        )
    except GitCommandNotFound as exc:  # no git on PATH, or the directory is gone
        return NOT_RUN, b"", f"cannot run git in {cwd}: {exc.stderr or exc}".encode()
    status, out, err = result
    err_bytes = err.encode("utf-8", "replace") if isinstance(err, str) else bytes(err or b"")
    return int(status), bytes(out or b""), err_bytes


class Git:
    """A git working tree (the primary checkout or a linked worktree)."""

    def __init__(self, path: Path, *, gitpython: bool = False) -> None:
        self.path = path
        self.gitpython = gitpython

    # -- running ------------------------------------------------------------
    def output(
        self, *args: str, stdin: bytes | None = None, timeout: float | None = None
    ) -> tuple[int, bytes, bytes]:
        """(exit status, stdout bytes, stderr bytes) of `git *args`; never raises: git
        missing is NOT_RUN, a run past `timeout` seconds is TIMED_OUT. Input on stdin and
        a timeout always go through a plain subprocess."""
        argv = ["git", *args]
        if self.gitpython and stdin is None and timeout is None:
            return _gitpython(self.path, argv)
        return _subprocess(self.path, argv, stdin, timeout)

    def status(
        self, *args: str, stdin: bytes | None = None, timeout: float | None = None
    ) -> tuple[int, str, str]:
        """(exit status, stdout, stderr) of `git *args`, decoded; never raises for a
        non-zero exit."""
        code, out, err = self.output(*args, stdin=stdin, timeout=timeout)
        return code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")

    def run(self, *args: str, stdin: bytes | None = None) -> str:
        """stdout of `git *args`; a non-zero exit raises GitError with git's message."""
        code, out, err = self.status(*args, stdin=stdin)
        if code != 0:
            detail = (err or out).strip().replace("\n", " ")[:400]
            raise GitError(f"git {args[0]} failed: {detail}", GIT_HINT, (err or out).strip())
        return out

    def ok(self, *args: str) -> bool:
        return self.status(*args)[0] == 0

    # -- objects and paths ---------------------------------------------------
    def rev(self, ref: str) -> str | None:
        code, out, _ = self.status("rev-parse", "--verify", "--quiet", ref)
        return out.strip() if code == 0 and out.strip() else None

    def blob(self, rev: str, path: str) -> bytes:
        code, out, _ = self.output("cat-file", "blob", f"{rev}:{path}")
        return out if code == 0 else b""

    def tracked(self, paths: list[str]) -> list[str]:
        if not paths:
            return []
        out = self.run("ls-files", "-z", "--", *paths)
        return [p for p in out.split("\0") if p]

    def git_path(self, name: str) -> Path:
        """A path inside the git dir of this worktree (`git rev-parse --git-path`)."""
        path = Path(self.run("rev-parse", "--git-path", name).strip())
        return path if path.is_absolute() else self.path / path

    # -- refs ---------------------------------------------------------------
    def branch_exists(self, name: str) -> bool:
        return self.ok("rev-parse", "--verify", "--quiet", f"refs/heads/{name}")

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
        return self.ok("merge-base", "--is-ancestor", ancestor, descendant)

    def current_branch(self) -> str | None:
        code, out, _ = self.status("symbolic-ref", "--quiet", "--short", "HEAD")
        return out.strip() if code == 0 else None

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
        self.run("worktree", "remove", *(["--force"] if force else []), str(path))
        self.status("worktree", "prune")

    # -- working tree state ---------------------------------------------------
    def changed_paths(self) -> list[str]:
        """Modified, staged, deleted and untracked paths (porcelain v1, not ignored)."""
        out = self.run("status", "--porcelain=v1", "-z", "--untracked-files=all")
        return porcelain_paths(out)

    def unmerged_paths(self) -> list[str]:
        out = self.run("diff", "--name-only", "--diff-filter=U")
        return [p for p in out.splitlines() if p]

    def merging(self) -> bool:
        return self.ok("rev-parse", "--verify", "--quiet", "MERGE_HEAD")

    # -- merges -------------------------------------------------------------
    def merge(self, ref: str, message: str, squash: bool = False) -> MergeOutcome:
        """Merge `ref` into HEAD (`--no-ff`, or `--squash` + commit). Conflicts are data."""
        args = ["merge", "--squash", ref] if squash else ["merge", "--no-ff", "-m", message, ref]
        code, out, _ = self.status(*args)
        if code == 0:
            if squash and not self.ok("diff", "--cached", "--quiet"):
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
            self.status("reset", "--hard", "--quiet")

    def predict_conflicts(self, base: str, other: str) -> tuple[str | None, list[str]]:
        """Merge `other` into `base` in memory (git merge-tree); return (commit, conflicts)."""
        code, out, _ = self.status("merge-tree", "--write-tree", "--name-only", base, other)
        lines = out.splitlines()
        if code == 0 and lines:
            tree = lines[0].strip()
            commit = self.run("commit-tree", tree, "-p", base, "-p", other, "-m", "kitty dry run")
            return commit.strip(), []
        if code == 1:
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


#: What to run in a repository whose branch has no commit yet (printed as is).
INITIAL_COMMIT = "git commit --allow-empty -m init"


def unborn_branch(project: Project) -> str | None:
    """The checked-out branch when it has no commit yet (a new `git init`), else None."""
    from kitty.adapters.layout import current_branch

    branch = current_branch(project)
    if branch is None or Git(project.root).rev(f"refs/heads/{branch}^{{commit}}"):
        return None
    return branch


def initial_commit(project: Project) -> str | None:
    """Give an unborn branch its first commit, an empty one (`init`): kitty's lane worktrees
    branch from it. Whatever is staged stays staged. Returns the branch, None if it had one."""
    branch = unborn_branch(project)
    if branch is None:
        return None
    git = Git(project.root)
    empty = git.run("mktree", stdin=b"").strip()
    commit = git.run("commit-tree", empty, "-m", "init").strip()
    git.run("update-ref", f"refs/heads/{branch}", commit, "")  # only if still unborn
    return branch
