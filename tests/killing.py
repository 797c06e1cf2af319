"""kill -9 at a chosen moment of kitty's git work, or at a random one (issue 35.2, 35.3).

A `git` wrapper first on PATH does what git does up to a point named by
`KITTY_TEST_GIT_PAUSE`, touches the ready file and waits; `kill_at` then kills kitty's
whole process group with SIGKILL, as a terminal's kill or the OOM killer would. The
points, each reached by the first git command that matches it:

* `commit`: a `git commit` that has taken `index.lock` (a torn index in it);
* `commit-ref`: a `git commit` that moved the branch, the index not written yet;
* `merge`: a `git merge` merged without committing, `HEAD.lock` and the ref lock taken;
* `merge-checkout`: a `git merge` that wrote the incoming new files, not the index;
* `add`, `add-partial`, `remove`: `git worktree add|remove` done (or, for `add-partial`,
  a folder git never registered made), not yet returned;
* `branch-lock`: a `git branch` that took `packed-refs.lock`;
* `ff-partial`: a `git merge --ff-only` that took `index.lock` and wrote one incoming file;
* `ff-checkout`: a `git merge --ff-only` that wrote the index and the work tree, not the ref.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import kitty_argv

REAL_GIT = shutil.which("git") or "git"

WRAPPER = f"""#!{sys.executable}
import os, subprocess, sys, time
REAL = {REAL_GIT!r}
args = sys.argv[1:]
pause = os.environ.get("KITTY_TEST_GIT_PAUSE", "")
ready = os.environ.get("KITTY_TEST_GIT_READY", "")
def out(*cmd):
    return subprocess.run([REAL, *cmd], capture_output=True, text=True).stdout.strip()
def take(path, data=b""):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)  # as git's lockfile.c
    os.write(fd, data)
    os.close(fd)
def wait():
    open(ready, "w").close()
    time.sleep(120)
def write_blob(rev, path):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    blob = subprocess.run([REAL, "show", rev + ":" + path], capture_output=True)
    with open(path, "wb") as handle:
        handle.write(blob.stdout)
cmd = args[:1]
if pause and args and not os.path.exists(ready):
    if pause == "commit" and cmd == ["commit"]:
        take(out("rev-parse", "--git-path", "index.lock"), b"DIRC\\0\\0\\0\\2")  # torn
        wait()
    if pause == "commit-ref" and cmd == ["commit"]:
        index = out("rev-parse", "--git-path", "index")
        before = open(index, "rb").read()
        subprocess.run([REAL, *args], capture_output=True)  # the branch moves ...
        with open(index, "wb") as handle:  # ... the index is not written yet
            handle.write(before)
        take(index + ".lock", b"DIRC")
        wait()
    if pause == "merge" and cmd == ["merge"]:
        subprocess.run([REAL, "merge", "--no-commit", "--no-ff", args[-1]], capture_output=True)
        take(out("rev-parse", "--git-path", "HEAD.lock"))
        take(out("rev-parse", "--git-path", out("symbolic-ref", "HEAD") + ".lock"))
        wait()
    if pause == "merge-checkout" and cmd == ["merge"]:
        for path in out("diff", "--name-only", "--diff-filter=A", "HEAD", args[-1]).split():
            write_blob(args[-1], path)
        take(out("rev-parse", "--git-path", "index.lock"), b"DIRC")
        wait()
    if pause == "branch-lock" and cmd == ["branch"]:
        take(out("rev-parse", "--git-path", "packed-refs.lock"))
        wait()
    if args[:2] == ["worktree", pause.split("-")[0]]:
        if pause == "add-partial":  # killed while checking out: a folder never registered
            os.makedirs(args[-2])
            open(os.path.join(args[-2], "README.md"), "w").close()
        else:
            subprocess.run([REAL, *args], capture_output=True)
        wait()
    if pause == "ff-partial" and args[:2] == ["merge", "--ff-only"]:
        take(out("rev-parse", "--git-path", "index.lock"), b"DIRC")
        incoming = out("diff", "--name-only", "--diff-filter=A", "HEAD", args[-1]).split()
        write_blob(args[-1], incoming[0])
        wait()
    if pause == "ff-checkout" and args[:2] == ["merge", "--ff-only"]:
        subprocess.run([REAL, "read-tree", "-m", "-u", "HEAD", args[-1]], capture_output=True)
        wait()
os.execv(REAL, [REAL, *args])
"""


def install_git_wrapper(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The pausing `git` first on PATH (for kitty's subprocesses); returns the ready file."""
    bin_dir = tmp_path / "wrap-bin"
    bin_dir.mkdir()
    (bin_dir / "git").write_text(WRAPPER)
    (bin_dir / "git").chmod(0o755)
    ready = tmp_path / "paused"
    monkeypatch.setenv("KITTY_TEST_GIT_READY", str(ready))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return ready


def _kill(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    if proc.stderr:
        proc.stderr.close()


def kill_at(repo: Path, pause: str, ready: Path, *args: str) -> None:
    """Start `kitty ARGS`, wait until its git reaches `pause`, kill -9 its process group."""
    proc = subprocess.Popen(
        kitty_argv(repo, *args),
        env={**os.environ, "KITTY_TEST_GIT_PAUSE": pause},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        assert time.monotonic() < deadline, f"kitty {args} never reached {pause}"
        time.sleep(0.02)
    _kill(proc)
    ready.unlink()


def kill_randomly(repo: Path, rng: random.Random, most: float, *args: str) -> None:
    """Start `kitty ARGS` and kill -9 its process group after up to `most` seconds (at
    least 0.05), unless it ended first."""
    proc = subprocess.Popen(
        kitty_argv(repo, *args),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    time.sleep(rng.uniform(0.05, most))
    _kill(proc)
