"""Kitty's files that git has not committed yet (`agents.auto_commit: false` leaves them).

`kitty status` (text) and `kitty doctor` warn about them with the command that commits
them. One `git status` of the mission folder, started with os.posix_spawnp
(adapters/git.py `spawned_output`: the read path never imports subprocess) and
`--no-optional-locks` (a read never takes git's index lock, which a concurrent
`git commit` would then find taken). No git, or not a git work tree:
nothing is said.
"""

from __future__ import annotations

import os

from kitty.adapters.git import spawned_output
from kitty.errors import KittyError
from kitty.services.workspace import Mission


def uncommitted(mission: Mission) -> list[str]:
    """The mission's files (below kitty-specs/<mission>/) that differ from HEAD or are
    untracked; git-ignored ones (status.json) are not counted."""
    root = mission.project.root  # the log and WP files are the primary checkout's
    out = spawned_output(
        [
            "--no-optional-locks",
            "-C",
            str(root),
            "status",
            "--porcelain",
            "-z",
            "--untracked-files=all",
            "--",
            mission.display,
        ]
    )
    if not out:
        return []
    entries = out.split(b"\0")
    paths: list[str] = []
    index = 0
    while index < len(entries):
        entry = entries[index]
        index += 1
        if len(entry) < 4:
            continue
        if entry[:1] in (b"R", b"C"):
            index += 1  # a rename's source path follows
        paths.append(os.fsdecode(entry[3:]))
    return paths


def uncommitted_warning(mission: Mission) -> list[str]:
    """One warning naming the uncommitted files and the command that commits them."""
    paths = uncommitted(mission)
    if not paths:
        return []
    shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
    try:
        auto = mission.config.auto_commit
    except KittyError:
        auto = False  # a broken config is reported on its own
    why = "a commit failed" if auto else "agents.auto_commit is false"
    if auto and mission.config.commit_delay > 0:
        from kitty.services.deferredcommit import marks_dir

        if (marks_dir(mission.project) / mission.slug).exists():
            why = "yet: agents.auto_commit_delay defers the commit until moves pause"
    import shlex

    git = f"git -C {shlex.quote(str(mission.project.root))}"
    folder = mission.display
    return [
        f"{len(paths)} kitty file(s) not committed ({why}): {shown}; commit them: "
        f"`{git} add {folder} && {git} commit -m 'kitty: {mission.slug}' -- {folder}`"
    ]
