"""Where things live: the repository, its primary checkout and a mission's files.

Found by reading `.git` directly (no subprocess, no GitPython), so read-only
commands start fast. Inside a linked worktree (`.worktrees/<mission>-<lane>`)
the project root is still the primary checkout: one log for every worktree.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from kitty.adapters import contain
from kitty.core.record import Record
from kitty.errors import AmbiguousId, NotARepo, NotFound, UsageError

SPECS = "kitty-specs"
MISSION_ENV = "KITTY_MISSION"
_MISSION_BRANCH = "kitty/mission-"
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class Project(Record, frozen=True):
    root: Path  # the primary checkout's work tree
    git_common_dir: Path
    worktree: Path  # the work tree the command was run in

    def __init__(self, root: Path, git_common_dir: Path, worktree: Path) -> None:
        object.__setattr__(self, "root", root)
        object.__setattr__(self, "git_common_dir", git_common_dir)
        object.__setattr__(self, "worktree", worktree)

    @property
    def specs_dir(self) -> Path:
        return self.root / SPECS

    @property
    def kittify(self) -> Path:
        return self.root / ".kittify"

    @property
    def config_path(self) -> Path:
        return self.kittify / "config.yaml"

    def lock_path(self, name: str) -> Path:
        return self.git_common_dir / "kitty" / f"{name}.lock"

    def rel(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.root))
        except ValueError:
            return str(path)


def _read_gitdir_file(dot_git: Path) -> Path:
    text = dot_git.read_text(encoding="utf-8").strip()
    if not text.startswith("gitdir:"):
        raise NotARepo(f"{dot_git} is not a git directory link", "repair the worktree")
    target = Path(text[len("gitdir:") :].strip())
    return (dot_git.parent / target).resolve() if not target.is_absolute() else target


def find_project(start: Path) -> Project:
    """Locate the git repository containing `start` and its primary checkout."""
    start = start.resolve()
    for folder in (start, *start.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            gitdir = dot_git
        elif dot_git.is_file():
            gitdir = _read_gitdir_file(dot_git)
        else:
            continue
        common = gitdir
        commondir_file = gitdir / "commondir"
        if commondir_file.is_file():
            common = (gitdir / commondir_file.read_text(encoding="utf-8").strip()).resolve()
        root = common.parent if common.name == ".git" else folder
        contain.trust(root, common, folder)
        return Project(root=root, git_common_dir=common, worktree=folder)
    raise NotARepo(
        f"not inside a git repository: {start}", "run `git init` first, or cd into your project"
    )


def current_branch(project: Project) -> str | None:
    """The branch checked out in the primary checkout (None when detached)."""
    head = project.git_common_dir / "HEAD"
    try:
        text = head.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    prefix = "ref: refs/heads/"
    return text[len(prefix) :] if text.startswith(prefix) else None


def check_name(kind: str, name: str) -> str:
    """Refuse names that could escape the specs folder (`../../etc`, `a/b`)."""
    if not _SAFE_NAME.match(name) or ".." in name:
        raise UsageError(
            f"{kind} {name!r} is not a valid name",
            "use letters, digits, '.', '_' and '-' only (no '/' or '..')",
        )
    return name


def list_missions(project: Project) -> list[str]:
    specs = project.specs_dir
    if not specs.is_dir():
        return []
    return sorted(
        entry.name
        for entry in specs.iterdir()
        if entry.is_dir() and ((entry / "meta.json").is_file() or (entry / "tasks").is_dir())
    )


def _worktree_head(worktree: Path) -> str | None:
    """The branch checked out in the work tree the command runs in (None when detached)."""
    dot_git = worktree / ".git"
    try:
        gitdir = _read_gitdir_file(dot_git) if dot_git.is_file() else dot_git
        text = (gitdir / "HEAD").read_text(encoding="utf-8").strip()
    except (OSError, NotARepo):
        return None
    prefix = "ref: refs/heads/"
    return text[len(prefix) :] if text.startswith(prefix) else None


def _owner(name: str, missions: list[str]) -> str | None:
    """The mission `name` (`<slug>` or `<slug>-<lane>`) belongs to; the longest slug wins."""
    owners = [m for m in missions if name == m or name.startswith(m + "-")]
    return max(owners, key=len) if owners else None


def mission_here(project: Project, missions: list[str]) -> str | None:
    """The mission of the lane worktree (`.worktrees/<mission>-<lane>`) or of the branch
    (`kitty/mission-<mission>[-<lane>]`) the command runs in."""
    worktree = project.worktree
    if worktree != project.root and worktree.parent.name == ".worktrees":
        found = _owner(worktree.name, missions)
        if found:
            return found
    branch = _worktree_head(worktree)
    if branch and branch.startswith(_MISSION_BRANCH):
        return _owner(branch[len(_MISSION_BRANCH) :], missions)
    return None


def _did_you_mean(name: str, missions: list[str]) -> str:
    """`; did you mean 'checkout-01AB…'?` for a slug (or its name without the id) close to
    `name`, else ''."""
    names = {m: m for m in missions}
    names.update({m.rsplit("-", 1)[0]: m for m in missions if "-" in m})
    import difflib  # only for a typo's suggestion

    close = difflib.get_close_matches(name, list(names), n=1, cutoff=0.6)
    return f"; did you mean {names[close[0]]!r}?" if close else ""


def resolve_mission(project: Project, name: str | None) -> str:
    """A mission by full slug or unambiguous prefix. Without one: $KITTY_MISSION, else the
    mission of the lane worktree or branch you stand in, else the only mission there is."""
    missions = list_missions(project)
    source = "--mission"
    if name is None and os.environ.get(MISSION_ENV):
        name, source = os.environ[MISSION_ENV], f"${MISSION_ENV}"
    if name is None:
        here = mission_here(project, missions)
        if here:
            return here
        if len(missions) == 1:
            return missions[0]
        if not missions:
            raise NotFound(
                "this repository has no missions yet", "create one: kitty mission create NAME"
            )
        raise AmbiguousId(
            f"several missions exist; say which with --mission (or set ${MISSION_ENV})",
            "missions: " + ", ".join(missions),
        )
    check_name("mission", name)
    if name in missions:
        return name
    matches = [m for m in missions if m.startswith(name)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise AmbiguousId(
            f"mission {name!r} ({source}) is ambiguous", "candidates: " + ", ".join(matches)
        )
    guess = _did_you_mean(name, missions)
    raise NotFound(
        f"no mission named {name!r} ({source}){guess}",
        "missions: " + (", ".join(missions) if missions else "none yet"),
    )
