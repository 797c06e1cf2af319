"""`kitty sync`: exchange kitty's state with a git remote, never leaving a merge behind.

Steps: recover from a sync that was killed; fold in every mission's coordination
ref (remote claims) and publish local events to it; commit kitty's own files
(nothing else); fetch; merge the upstream branch (the logs merge by union); rebuild
the derived status.json files; push. A rejected push (someone pushed first) is
retried after fetching again, with backoff. A merge that stops on a non-kitty file
is aborted and reported, so the checkout is never left mid-merge.
"""

from __future__ import annotations

import json
import os
import random
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from kitty.adapters import eventlog, gitlocks, gitrepair, layout
from kitty.adapters.files import atomic_write
from kitty.adapters.git import Git, porcelain_paths
from kitty.errors import GitError, GuardRefused, KittyError, LockBusy
from kitty.mission.workspace import Mission

MARKER = "kitty-sync.json"
DEFAULT_ATTEMPTS = 8
#: Files kitty writes in a mission directory (status.json only while still tracked).
OWN_PATTERNS = (
    "kitty-specs/*/status.events.jsonl",
    "kitty-specs/*/lanes.json",
    "kitty-specs/*/meta.json",
    "kitty-specs/*/tasks/*/review-cycle-*",
)


def _in_progress(git: Git) -> str | None:
    for name, what in (
        ("MERGE_HEAD", "a merge"),
        ("rebase-merge", "a rebase"),
        ("rebase-apply", "a rebase"),
        ("CHERRY_PICK_HEAD", "a cherry-pick"),
    ):
        if git.git_path(name).exists():
            return what
    return None


def _pid_alive(pid: Any) -> bool:
    try:
        os.kill(int(pid), 0)
    except (OSError, ValueError, TypeError):
        return False
    return True


def recover(git: Git, project: layout.Project) -> bool:
    """Undo what a killed sync left; keep every log line.

    The marker (`.git/kitty-sync.json`, the pid of the sync) exists for the whole of a
    sync, so one found with a dead pid means a sync was killed: the git locks it left
    (index.lock, HEAD.lock, ref locks: any, once no live git process works in this
    repository) are removed, a merge it started (`MERGE_HEAD`: sync refuses to start
    during one, so it is its own) is aborted, files its merge had checked out but not
    yet added are deleted (when exactly the upstream's), and kitty's files in an index
    its commit left behind HEAD are reset (kitty.adapters.gitrepair). Without a marker
    nothing is touched.
    """
    marker = git.git_path(MARKER)
    try:
        state = json.loads(marker.read_text())
    except (OSError, ValueError):
        return False
    if not isinstance(state, dict):
        state = {}
    if _pid_alive(state.get("pid")) and state.get("pid") != os.getpid():
        raise LockBusy("another `kitty sync` is running", "wait for it to finish")
    logs = {p: p.read_bytes() for p in project.specs_dir.glob("*/status.events.jsonl")}
    places = [project.root, project.git_common_dir, project.worktree]
    gitlocks.remove(gitlocks.stale_locks(project.git_common_dir, places, min_age=0.0))
    if git.git_path("MERGE_HEAD").exists():
        git.status("merge", "--abort")
    if state.get("phase") == "merge" and not git.git_path("MERGE_HEAD").exists():
        # Killed before git wrote MERGE_HEAD: files the merge had checked out are put back.
        git.status("reset", "--merge", "--quiet", "HEAD")
        upstream = state.get("upstream")
        if isinstance(upstream, str) and git.rev(upstream):
            gitrepair.remove_files(project.root, gitrepair.merge_leftovers(git, upstream))
    gitrepair.reset_index(git, gitrepair.index_behind(git))
    for path, before in logs.items():
        _restore_lines(path, before)
    marker.unlink(missing_ok=True)
    return True


def _mark(marker: Path, phase: str, upstream: str | None = None) -> None:
    state = {"pid": os.getpid(), "at": time.time(), "phase": phase, "upstream": upstream}
    atomic_write(marker, json.dumps(state))


def _restore_lines(path: Path, before: bytes) -> None:
    """Append any line of `before` that the file no longer has (the log only grows)."""
    now = path.read_bytes() if path.exists() else b""
    have = set(now.split(b"\n"))
    missing = [line for line in before.split(b"\n") if line.strip() and line not in have]
    records = []
    for line in missing:
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict):
            records.append(data)
    eventlog.append(path, records)


def _own_dirty(git: Git) -> list[str]:
    out = git.run("status", "--porcelain=v1", "-z", "--untracked-files=all", "--", *OWN_PATTERNS)
    paths = porcelain_paths(out)
    tracked_status = git.tracked(["kitty-specs/*/status.json"])
    dirty_status = git.run("diff", "--name-only", "--", *tracked_status) if tracked_status else ""
    return sorted(set(paths) | {p for p in dirty_status.splitlines() if p})


def _rebuild_all(project: layout.Project) -> None:
    for slug in layout.list_missions(project):
        mission = Mission(project, slug)
        if mission.events_path.exists():
            mission.store_status(mission.board)


def _coordination_refs(git: Git, remote: str) -> list[str]:
    code, out, err = git.status("ls-remote", remote, "refs/heads/kitty/coord/*")
    if code != 0:
        raise GitError(
            f"cannot reach {remote}: {(err or out).strip()[:300]}",
            f"check `git remote -v` and that {remote} is reachable",
            (err or out).strip(),
        )
    return [line.split("refs/heads/kitty/coord/", 1)[1] for line in out.splitlines() if line]


def sync(cwd: Path, remote: str = "origin", attempts: int = DEFAULT_ATTEMPTS) -> dict[str, Any]:
    project = layout.find_project(cwd)
    git = Git(project.root)
    recovered = recover(git, project)
    busy = _in_progress(git)
    if busy:
        raise GuardRefused(
            f"the checkout is in the middle of {busy}; kitty sync leaves it alone",
            "finish it (git commit / git rebase --continue) or abort it, then run kitty sync",
        )
    marker = git.git_path(MARKER)
    _mark(marker, "sync")  # from here on a killed sync is recovered by the next one
    try:
        result = _sync(git, project, remote, attempts)
    except GitError as exc:
        marker.unlink(missing_ok=True)
        raise _name_lock(exc) from None
    except KittyError:
        marker.unlink(missing_ok=True)  # refused cleanly (a merge that stops was undone)
        raise
    # Any other exit (^C, a crash) keeps the marker: the next sync checks what is left.
    marker.unlink(missing_ok=True)
    result["recovered"] = recovered
    return result


def _name_lock(exc: GitError) -> GitError:
    """git's "Unable to create '…/x.lock': File exists" gets a hint naming the lock and
    the command that removes it once stale."""
    import re

    found = re.search(r"Unable to create '([^']+\.lock)'", exc.message + " " + exc.output)
    if found is None:
        return exc
    return GitError(
        exc.message,
        f"{found.group(1)} is left by a git command that was killed: if no git command is "
        "running in this repository, `kitty doctor --fix` removes it (or delete the file), "
        "then run kitty sync again",
        output=exc.output,
    )


def _sync(git: Git, project: layout.Project, remote: str, attempts: int) -> dict[str, Any]:
    from kitty.teams.remote import lost_race, transact

    branch = git.status("symbolic-ref", "--quiet", "--short", "HEAD")[1].strip()
    if not branch:
        raise GuardRefused("HEAD is detached: kitty sync needs a branch", "git switch <branch>")
    if remote not in git.run("remote").split():
        raise GuardRefused(f"no git remote named {remote!r}", "git remote -v lists the remotes")
    slugs = layout.list_missions(project)
    coordinated = [s for s in _coordination_refs(git, remote) if s in slugs]
    for slug in coordinated:
        transact(Mission(project, slug), remote, lambda board: [], "sync")
    marker = git.git_path(MARKER)
    commits: list[str] = []
    merged = False
    for attempt in range(1, attempts + 1):
        upstream = _fetch(git, remote, branch)
        with ExitStack() as stack:
            for slug in slugs:
                stack.enter_context(eventlog.locked(project.lock_path(slug), f"mission {slug}"))
            _commit_own(git, commits)
            if upstream and not git.ok("merge-base", "--is-ancestor", upstream, "HEAD"):
                _merge(git, marker, remote, branch, upstream)
                merged = True
            _rebuild_all(project)
        code, out, err = git.status("push", "--porcelain", remote, f"HEAD:refs/heads/{branch}")
        if code == 0:
            return {
                "remote": remote,
                "branch": branch,
                "commits": commits,
                "merged": merged,
                "attempts": attempt,
                "coordinated": coordinated,
                "head": git.run("rev-parse", "HEAD").strip(),
            }
        text = out + err
        if not lost_race(text):
            raise GitError(
                f"git push {remote} {branch} failed: {text.strip()[:300]}",
                f"check that you may push to {remote}",
                text.strip(),
            )
        time.sleep(min(2.0, 0.05 * 2**attempt) * random.uniform(0.5, 1.5))
    raise LockBusy(
        f"{remote}/{branch} kept moving: gave up after {attempts} attempts",
        "run kitty sync again",
    )


def _fetch(git: Git, remote: str, branch: str) -> str | None:
    """Fetch the upstream branch; its tip, or None when the remote has no such branch yet."""
    code, out, err = git.status("fetch", "--quiet", remote, branch)
    upstream = git.rev("FETCH_HEAD") if code == 0 else None
    if code != 0 and "couldn't find remote ref" not in (err + out).lower():
        raise GitError(
            f"git fetch {remote} {branch} failed: {(err or out).strip()[:300]}",
            f"check that {remote} is reachable",
            (err or out).strip(),
        )
    return upstream


def _commit_own(git: Git, commits: list[str]) -> None:
    """Commit kitty's own changed files (nothing else); the new commit goes to `commits`."""
    gitrepair.reset_index(git, gitrepair.index_behind(git))  # a killed commit's index
    dirty = _own_dirty(git)
    if dirty:
        untracked = git.run("ls-files", "--others", "-z", "--", *dirty).split("\0")
        if any(untracked):
            git.run("add", "--", *[p for p in untracked if p])
        git.run("commit", "--quiet", "--only", "-m", "kitty: sync", "--", *dirty)
        commits.append(git.run("rev-parse", "HEAD").strip())


def _merge(git: Git, marker: Path, remote: str, branch: str, upstream: str) -> None:
    """Merge `upstream`; a merge that stops is aborted and refused (never left behind)."""
    _mark(marker, "merge", upstream)
    # What a merge killed mid-checkout left untracked (exactly the upstream's files) would
    # stop this merge: it is the merge's own to write.
    gitrepair.remove_files(git.path, gitrepair.merge_leftovers(git, upstream))
    code, out, err = git.status(
        "merge", "--no-edit", "-m", f"kitty: sync with {remote}/{branch}", upstream
    )
    if code != 0:
        conflicts = git.run("diff", "--name-only", "--diff-filter=U").split()
        git.status("merge", "--abort")
        raise GuardRefused(
            f"merging {remote}/{branch} stops on "
            + (", ".join(conflicts) or (err or out).strip()[:300])
            + "; the merge was undone and kitty's own commits were kept",
            f"git pull {remote} {branch}, resolve those files, then run kitty sync",
        )
    _mark(marker, "sync")
