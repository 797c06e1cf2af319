"""`agents.auto_commit`: commit kitty's own files, one commit per command, nothing else."""

from __future__ import annotations

import sys
from pathlib import Path

from kitty.core.state import as_dict
from kitty.services.workspace import Mission


def own_files(mission: Mission, extra: list[Path] | None = None) -> list[str]:
    """The mission's kitty-written files; status.json only while git still tracks it."""
    root = mission.project.root
    candidates = [
        mission.events_path,
        mission.dir / "lanes.json",
        mission.dir / "meta.json",
        *(extra or []),
    ]
    found = [str(p.relative_to(root)) for p in candidates if p.exists()]
    if mission.status_path.exists():
        from kitty.adapters.gitcli import GitCli

        found += GitCli(root).tracked([str(mission.status_path.relative_to(root))])
    return found


def autocommit(mission: Mission, message: str, extra: list[Path] | None = None) -> str | None:
    """Commit the mission's status files when the config asks for it. Returns the sha.

    With `agents.auto_sync: true` the command then runs `kitty sync` (remote
    `agents.sync_remote`, default origin); a failed sync is a warning, never a
    failed command: the event is already safe in the local log.
    """
    sha = _commit(mission, message, extra)
    agents = as_dict(mission.config.raw.get("agents"))
    if agents.get("auto_sync"):
        from kitty.errors import KittyError
        from kitty.services.sync import sync

        remote = str(agents.get("sync_remote") or "origin")
        try:
            sync(mission.project.root, remote)
        except KittyError as exc:
            print(f"warning: auto_sync with {remote} failed: {exc.message}", file=sys.stderr)
    return sha


def _commit(mission: Mission, message: str, extra: list[Path] | None) -> str | None:
    if not mission.config.auto_commit:
        return None
    from kitty.adapters.gitrepo import Git

    git = Git(mission.project.root)
    paths = own_files(mission, extra)
    changed = set(git.changed_paths())
    dirty = [p for p in paths if p in changed]
    if not dirty:
        return None
    return git.commit_only(dirty, f"kitty: {message}")
