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

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kitty.mission.workspace import Mission


def uncommitted(mission: Mission) -> list[str]:
    """The mission's files (below kitty-specs/<mission>/) that differ from HEAD or are
    untracked; git-ignored ones (status.json) are not counted."""
    # the log and WP files are the primary checkout's
    return uncommitted_in(str(mission.project.root), mission.display)


def uncommitted_in(root: str, display: str) -> list[str]:
    """`uncommitted` from the checkout's root and the mission folder (relative to it)."""
    out = spawned_output(
        [
            "--no-optional-locks",
            "-C",
            root,
            "status",
            "--porcelain",
            "-z",
            "--untracked-files=all",
            "--",
            display,
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
    try:
        auto = mission.config.auto_commit
    except KittyError:
        auto = False  # a broken config is reported on its own
    mark = deferred_mark(mission, auto)
    root = str(mission.project.root)
    return warning_for(root, mission.display, mission.slug, auto, mark, once=False)


#: `KITTY_WARN_UNCOMMITTED=always`: `kitty status` repeats the warning on every run.
ALWAYS_ENV = "KITTY_WARN_UNCOMMITTED"


def _first_time(root: str, slug: str, paths: list[str]) -> bool:
    """Whether `paths` differ from the set last warned about (remembered from now on)."""
    git_dir = os.path.join(root, ".git")
    if not os.path.isdir(git_dir):
        return True  # nowhere to remember: say it every time
    memo = os.path.join(git_dir, "kitty", f"uncommitted-warned-{slug}")
    text = "\0".join(sorted(paths))
    try:
        with open(memo, encoding="utf-8", errors="replace") as handle:
            if handle.read() == text:
                return False
    except OSError:
        if not paths:
            return False
    try:
        if not paths:
            os.unlink(memo)
            return False
        os.makedirs(os.path.dirname(memo), exist_ok=True)
        with open(memo, "w", encoding="utf-8", errors="surrogateescape") as handle:
            handle.write(text)
    except OSError:
        pass  # a read-only git dir: say it every time
    return True


def deferred_mark(mission: Mission, auto: bool) -> str | None:
    """The file that says a deferred commit of this mission is pending, where
    agents.auto_commit_delay defers commits; else None."""
    try:
        delay = mission.config.commit_delay
    except KittyError:
        return None
    if not auto or delay <= 0:
        return None
    from kitty.workflow.commits.deferred import marks_dir

    return str(marks_dir(mission.project) / mission.slug)


def warning_for(
    root: str, folder: str, slug: str, auto: bool, mark: str | None = None, once: bool = True
) -> list[str]:
    """`uncommitted_warning` from plain values (a cached status view asks git this way).
    With `once` (`kitty status`), said once per change of the set of files: the set last
    warned about is remembered in the git dir (a disposable cache); `kitty doctor` always
    says it."""
    paths = uncommitted_in(root, folder)
    once = once and os.environ.get(ALWAYS_ENV, "").strip().lower() != "always"
    if once and not _first_time(root, slug, paths):
        return []
    if not paths:
        return []
    shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
    why = "a commit failed" if auto else "agents.auto_commit is false"
    if mark is not None and os.path.exists(mark):
        why = "yet: agents.auto_commit_delay defers the commit until moves pause"
    import shlex

    git = f"git -C {shlex.quote(root)}"
    return [
        f"{len(paths)} kitty file(s) not committed ({why}): {shown}; commit them: "
        f"`{git} add {folder} && {git} commit -m 'kitty: {slug}' -- {folder}`"
    ]
