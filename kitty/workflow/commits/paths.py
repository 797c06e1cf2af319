"""Commit kitty's pending files with plain git: which files are pending (every mission's
log, tracked status.json, review-cycle files, and a command's own files), and one commit
of them that survives concurrent appends (the index reset to HEAD's version, a batch
commit reworded to list every event) and someone else's git holding index.lock (retried
with a back-off). `autocommit` (after a command) and `deferredcommit` (the background
committer) both commit through here.

Plain `git` subprocesses only: GitPython is never imported here (~120 ms a move).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from kitty.adapters import layout
from kitty.errors import GitError
from kitty.mission.workspace import Mission

if TYPE_CHECKING:  # subprocess is imported only when a commit is made: moves stay lean
    from kitty.adapters.git import Git

RETRY_ENV = "KITTY_COMMIT_RETRY_SECONDS"
DEFAULT_RETRY_SECONDS = 10.0
LOG_NAME = "status.events.jsonl"
#: kitty's files in every mission, as git pathspecs relative to the repository root
SHARED_PATHSPECS = (
    f":(glob){layout.SPECS}/*/{LOG_NAME}",
    f":(glob){layout.SPECS}/*/status.json",
    f":(glob){layout.SPECS}/*/tasks/*/review-cycle-*.md",
    f":(glob){layout.SPECS}/*/tasks/*/review-cycle-*.findings.json",
)


def pending(mission: Mission, extra: list[Path] | None = None) -> list[str]:
    """kitty's files that differ from HEAD (repository-relative, sorted); an untracked
    status.json is not kitty's to add (it is derived, and some teams ignore it)."""
    return sorted(pending_files(mission, extra))


def pending_files(mission: Mission, extra: list[Path] | None = None) -> dict[str, bool]:
    """`pending`, each path with whether it is untracked (one `git status`)."""
    from kitty.adapters.git import Git

    root = mission.project.root
    own = [mission.events_path, mission.dir / "lanes.json", mission.dir / "meta.json"]
    specs = [*SHARED_PATHSPECS, *(_relative(root, p) for p in [*own, *(extra or [])])]
    out = Git(root).run(
        "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--", *specs
    )
    found: dict[str, bool] = {}
    for entry in out.split("\0"):
        if len(entry) < 4:
            continue
        code, path = entry[:2], entry[3:]
        if code == "??" and path.endswith("/status.json"):
            continue
        found[path] = code == "??"
    return found


def _relative(root: Path, path: Path) -> str:
    try:
        return ":(literal)" + path.relative_to(root).as_posix()
    except ValueError:
        return ":(literal)" + str(path)


def repair_killed_commit(project: layout.Project) -> list[str]:
    """Call under the commit lock: when the last kitty commit here was killed, remove the
    git locks it left and repair the index (kitty.adapters.gitrepair); what was done."""
    from kitty.adapters import gitrepair

    common = project.git_common_dir
    if not gitrepair.dead_committer(common):
        return []
    from kitty.adapters.git import Git

    places = [project.root, common, project.worktree]
    return gitrepair.clear_dead_committer(Git(project.root), common, places) or []


def commit_recorded(
    project: layout.Project,
    paths: list[str],
    message: str | None,
    untracked: list[str] | None = None,
) -> str | None:
    """`commit_paths` in the project's main checkout with this process's pid recorded
    for as long as it runs (what `repair_killed_commit` goes by)."""
    from kitty.adapters import gitrepair
    from kitty.adapters.git import Git

    with gitrepair.committing(project.git_common_dir):
        return commit_paths(Git(project.root), paths, message, untracked)


def commit_paths(
    git: Git, paths: list[str], message: str | None, untracked: list[str] | None = None
) -> str | None:
    """Commit exactly `paths` (their working-tree content), leaving other staged work
    alone; retries while another git holds the index lock. None: nothing to commit.

    Call under the commit lock. The subject is `kitty: <message>`; when the commit
    takes other writers' events along it counts them and its body lists them all; a
    message of None names the first event committed (the deferred committer's).
    `untracked`: which of `paths` git does not track yet, when the caller knows (from
    `pending_files`; otherwise git is asked).
    """
    logs = [p for p in paths if p.endswith("/" + LOG_NAME)]
    before = _committed_sizes(git, logs)
    deadline = time.monotonic() + retry_seconds()
    pause = 0.02
    while True:
        seen = _stats(git.path, paths)  # before the summary reads the logs
        summary = _summary(git.path, logs, before, None)
        try:
            sha, still = _commit_once(git, paths, _message(message, summary[0]), untracked, seen)
            break
        except GitError as exc:
            left = deadline - time.monotonic()
            if "index.lock" not in exc.message or left <= 0:
                raise
            time.sleep(min(pause, left))
            pause = min(pause * 2, 0.5)
    if sha is not None and logs and not still:
        after = _committed_sizes(git, logs)
        if after != summary[1]:  # the logs grew between the summary and the commit
            lines, _ = _summary(git.path, logs, before, after)
            sha = _reword(git, sha, _message(message, lines))
    return sha


def _commit_once(
    git: Git,
    paths: list[str],
    message: str,
    untracked: list[str] | None = None,
    seen: list[tuple[int, int, int, int] | None] | None = None,
) -> tuple[str | None, bool]:
    """The new commit's sha (None: nothing to commit), and whether no path changed on
    disk since `seen` (their stats when the message was written; then the commit holds
    what the message lists and the index what was committed)."""
    if untracked is None:
        listed = git.run("ls-files", "--others", "--exclude-standard", "-z", "--", *paths)
        untracked = sorted(set(listed.split("\0")) - {""})
    if untracked:
        git.run("add", "--", *untracked)
    code, out, err = git.status("commit", "--quiet", "--only", "-m", message, "--", *paths)
    still = code == 0 and seen is not None and _stats(git.path, paths) == seen
    # `commit --only` reads each file twice (for the commit, and for the index); a log
    # appended to in between leaves the index at neither version: put it back at HEAD's
    # (not needed when no file changed on disk during the commit).
    if code == 0 or "nothing to commit" in out or "no changes added" in out:
        if not still:
            git.run("reset", "--quiet", "--", *paths)
        if code != 0:
            return None, False  # someone else's commit took these changes along
        return git.run("rev-parse", "--verify", "HEAD").strip(), still
    git.status("reset", "--quiet", "--", *paths)  # unstage what `add` staged, if it can
    detail = (err or out).strip().replace("\n", " ")[:400]
    raise GitError(f"git commit failed: {detail}", "see the git message above")


def _stats(root: Path, paths: list[str]) -> list[tuple[int, int, int, int] | None]:
    """(inode, size, mtime, ctime in ns) of each path, None for one that is missing."""
    found: list[tuple[int, int, int, int] | None] = []
    for path in paths:
        try:
            st = os.stat(root / path)
        except OSError:
            found.append(None)
            continue
        found.append((st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return found


def _reword(git: Git, sha: str, message: str) -> str:
    """`sha` (HEAD) with `message`; HEAD is moved only if nobody moved it meanwhile."""
    tree, *parents = git.run("show", "-s", "--format=%T %P", sha).split()
    args = [x for p in parents for x in ("-p", p)]
    new = git.run("commit-tree", tree, *args, stdin=message.encode("utf-8")).strip()
    code, _, _ = git.status("update-ref", "-m", "kitty: reword", "HEAD", new, sha)
    return new if code == 0 else sha


def _committed_sizes(git: Git, logs: list[str]) -> dict[str, int]:
    if not logs:
        return {}
    code, out, _ = git.status("ls-tree", "-l", "-z", "HEAD", "--", *logs)
    sizes: dict[str, int] = {}
    for entry in out.split("\0") if code == 0 else []:
        meta, _, path = entry.partition("\t")
        fields = meta.split()
        if len(fields) == 4 and fields[3].isdigit():
            sizes[path] = int(fields[3])
    return sizes


def _message(message: str | None, lines: list[str]) -> str:
    """`kitty: <message>`; a commit that takes other writers' moves along says how many
    more, and lists every event it commits (a move's own note alone adds nothing)."""
    subject = f"kitty: {message or _first(lines)}"
    moves = sum(" -> " in line for line in lines)
    if moves > 1:
        subject += f" and {moves - 1} more move{'s' if moves != 2 else ''}"
    if moves <= 1 and len(lines) <= 2:
        return subject
    return subject + "\n\n" + "\n".join(lines) + "\n"


def _first(lines: list[str]) -> str:
    """The first move (else event) of `lines`, without its actor: `WP01 planned ->
    claimed`, prefixed with its mission when the lines span several."""
    if not lines:
        return "pending status"
    line = next((x for x in lines if " -> " in x), lines[0]).rsplit(" (", 1)[0]
    slugs = {x.split(": ", 1)[0] for x in lines}
    return line if len(slugs) > 1 else line.split(": ", 1)[-1]


def _summary(
    root: Path, logs: list[str], start: dict[str, int], end: dict[str, int] | None
) -> tuple[list[str], dict[str, int]]:
    """One line per event of `logs` between the sizes `start` and `end` (None: the end of
    the file), and the sizes read up to. The log only grows; anything else: no lines."""
    import json

    lines: list[str] = []
    sizes: dict[str, int] = {}
    for log in logs:
        first = start.get(log, 0)
        try:
            with open(root / log, "rb") as handle:
                if first:
                    handle.seek(first - 1)
                    if handle.read(1) != b"\n":
                        continue
                stop = None if end is None else end.get(log, 0)
                tail = handle.read() if stop is None else handle.read(max(stop - first, 0))
        except OSError:
            continue
        tail = tail[: tail.rfind(b"\n") + 1]
        sizes[log] = first + len(tail)
        slug = log.split("/")[-2]
        for raw in tail.splitlines():
            try:
                event = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(event, dict):
                continue
            who = event.get("actor")
            if "to_lane" in event:
                move = f"{event.get('from_lane')} -> {event.get('to_lane')}"
                lines.append(f"{slug}: {event.get('wp_id')} {move} ({who})")
            elif event.get("kind") == "annotation":
                lines.append(f"{slug}: {event.get('wp_id')} noted ({who})")
    return lines, sizes


def retry_seconds() -> float:
    raw = os.environ.get(RETRY_ENV, "").strip()
    try:
        value = float(raw) if raw else DEFAULT_RETRY_SECONDS
    except ValueError:
        value = DEFAULT_RETRY_SECONDS
    return value if 0 <= value < float("inf") else DEFAULT_RETRY_SECONDS
