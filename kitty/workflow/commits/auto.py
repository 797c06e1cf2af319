"""`agents.auto_commit`: commit kitty's own files with plain git, never failing the command.

Once a command's events are appended they are recorded: the commit that follows can
only warn. The rule:

* kitty's own commits queue on one commit lock (`.git/kitty/commit.lock`), so two
  kitty processes never run `git commit` at once (git's index.lock would refuse one);
* the lock holder commits every kitty file that is pending, not only its own: the
  logs (every mission's), tracked status.json files, review-cycle files, and its own
  mission's lanes.json/meta.json plus the files this command wrote. A writer that
  then finds nothing pending (another writer's commit took its events along) makes
  no commit: concurrent writers share commits instead of each storing the whole log;
* the wait for the commit lock is at least a minute (the work ahead of a waiter is
  one or two commits, which a loaded machine can stretch past the mission lock's
  KITTY_LOCK_TIMEOUT);
* someone else's git holding `.git/index.lock` is retried with a back-off for
  `KITTY_COMMIT_RETRY_SECONDS` (default 10);
* any failure is a warning naming the git message and a command that commits what
  is pending; the next kitty write commits it anyway (it is still pending);
* with `agents.auto_commit_delay: D` (seconds, > 0) a command that wrote only the log
  and kitty's shared files leaves its commit to a background committer that commits
  once the log has been quiet for D seconds (workflow/deferredcommit.py).

The commit itself: workflow/commitpaths.py (plain `git`, never GitPython: ~120 ms a move).
"""

from __future__ import annotations

import sys
from pathlib import Path

from kitty.adapters import eventlog
from kitty.core.log.state import as_dict
from kitty.errors import KittyError
from kitty.mission.workspace import Mission
from kitty.workflow.commits.paths import commit_recorded, pending_files, repair_killed_commit


def autocommit(mission: Mission, message: str, extra: list[Path] | None = None) -> str | None:
    """Commit the pending kitty files when the config asks for it. Returns the sha
    (None: auto-commit off, nothing pending, or a failure reported as a warning).

    With `agents.auto_sync: true` the command then runs `kitty sync` (remote
    `agents.sync_remote`, default origin); a failed sync is a warning, never a
    failed command: the event is already safe in the local log.
    """
    sha = _commit(mission, message, extra)
    agents = as_dict(mission.config.raw.get("agents"))
    if agents.get("auto_sync"):
        from kitty.teams.sync import sync

        remote = str(agents.get("sync_remote") or "origin")
        try:
            sync(mission.project.root, remote)
        except KittyError as exc:
            print(f"warning: auto_sync with {remote} failed: {exc.message}", file=sys.stderr)
    return sha


def _commit(mission: Mission, message: str, extra: list[Path] | None) -> str | None:
    if not mission.config.auto_commit:
        return None
    if mission.config.commit_delay > 0 and not extra:
        from kitty.workflow.commits.deferred import defer

        defer(mission.project, mission.slug)
        return None
    paths: list[str] = []
    try:
        lock = mission.project.lock_path("commit")
        with eventlog.locked(lock, "kitty's auto-commit", max(eventlog.lock_timeout(), 60.0)):
            repair_killed_commit(mission.project)
            found = pending_files(mission, extra)
            paths = sorted(found)
            if not paths:
                return None  # nothing of kitty's is pending: another writer committed it
            untracked = [path for path in paths if found[path]]
            return commit_recorded(mission.project, paths, message, untracked)
    except KittyError as exc:
        _warn_pending(mission, message, exc, paths)
        return None


def _warn_pending(mission: Mission, message: str, exc: KittyError, paths: list[str]) -> None:
    import shlex

    from kitty.output import warn

    root = mission.project.root
    if not paths:
        paths = [mission.project.rel(mission.events_path)]
    quoted = " ".join(shlex.quote(p) for p in paths)
    where = shlex.quote(str(root))
    fix = (
        f"git -C {where} add -- {quoted} && "
        f"git -C {where} commit -m {shlex.quote('kitty: pending status')} -- {quoted}"
    )
    lines = [f"{message} is recorded but not committed: {exc.message}"]
    if "index.lock" in exc.message:
        lock = mission.project.git_common_dir / "index.lock"
        lines.append(f"if no git command is running, a crashed one left {lock}: remove it first")
    lines.append(f"the next kitty write commits it, or commit it now: {fix}")
    warn(lines)
