"""Plain `git` subprocess calls for sync and remote claims (no GitPython import).

These paths run on every claim through a remote, so they avoid GitPython's
import cost and keep full control of stdin, exit codes and porcelain output.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from kitty.errors import GIT_HINT, GitError


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


class GitCli:
    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd

    def status(self, *args: str, stdin: bytes | None = None) -> tuple[int, str, str]:
        done = subprocess.run(
            ["git", *args], cwd=self.cwd, input=stdin, capture_output=True, check=False
        )
        out = done.stdout.decode("utf-8", "replace")
        return done.returncode, out, done.stderr.decode("utf-8", "replace")

    def run(self, *args: str, stdin: bytes | None = None) -> str:
        code, out, err = self.status(*args, stdin=stdin)
        if code != 0:
            detail = (err or out).strip().replace("\n", " ")[:400]
            raise GitError(f"git {args[0]} failed: {detail}", GIT_HINT, (err or out).strip())
        return out

    def ok(self, *args: str) -> bool:
        return self.status(*args)[0] == 0

    def rev(self, ref: str) -> str | None:
        code, out, _ = self.status("rev-parse", "--verify", "--quiet", ref)
        return out.strip() if code == 0 and out.strip() else None

    def blob(self, rev: str, path: str) -> bytes:
        done = subprocess.run(
            ["git", "cat-file", "blob", f"{rev}:{path}"],
            cwd=self.cwd,
            capture_output=True,
            check=False,
        )
        return done.stdout if done.returncode == 0 else b""

    def tracked(self, paths: list[str]) -> list[str]:
        if not paths:
            return []
        out = self.run("ls-files", "-z", "--", *paths)
        return [p for p in out.split("\0") if p]

    def git_path(self, name: str) -> Path:
        """A path inside the git dir of this worktree (`git rev-parse --git-path`)."""
        path = Path(self.run("rev-parse", "--git-path", name).strip())
        return path if path.is_absolute() else self.cwd / path
