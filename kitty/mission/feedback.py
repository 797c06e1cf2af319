"""Where a reviewer writes its feedback: a folder inside the lane worktree (where every
agent CLI may write) that git ignores by itself, so the file never makes the worktree
dirty (`kitty accept`, the for_review guard) and is never committed.

`<lane worktree>/.kittify/feedback/` holds a `.gitignore` of `*`, which ignores the
folder's every file, itself included, whatever the project's own ignore rules say.
kitty copies the file into the review cycle (tasks/<WP>/review-cycle-N.md) when the
verdict is recorded, then removes it.
"""

from __future__ import annotations

from pathlib import Path

FOLDER = Path(".kittify") / "feedback"
IGNORE = "# kitty: review feedback, taken into the review cycle and removed (never committed)\n*\n"


def folder(workspace: Path) -> Path:
    return workspace / FOLDER


def feedback_file(workspace: Path, wp_id: str) -> Path:
    """The file the review prompt names for a rejection's feedback."""
    return folder(workspace) / f"{wp_id}-feedback.md"


def findings_file(workspace: Path, wp_id: str) -> Path:
    """The file the review prompt names for structured findings (`kitty review submit`)."""
    return folder(workspace) / f"{wp_id}-findings.json"


def prepare(workspace: Path) -> None:
    """Create the folder and its ignore file in the lane worktree (idempotent); a stale
    file from an earlier review is removed, so the reviewer starts from nothing."""
    from kitty.adapters import contain
    from kitty.adapters.files import atomic_write

    where = contain.check(folder(workspace))
    where.mkdir(parents=True, exist_ok=True)
    ignore = where / ".gitignore"
    if not ignore.is_file() or ignore.read_text(encoding="utf-8") != IGNORE:
        atomic_write(ignore, IGNORE)


def is_kittys(path: Path) -> bool:
    """Whether `path` is a file in a feedback folder kitty prepared (and may remove)."""
    parent = path.absolute().parent
    return (
        parent.name == FOLDER.name
        and parent.parent.name == FOLDER.parent.name
        and (parent / ".gitignore").is_file()
        and path.name != ".gitignore"
    )


def collected(path: Path | None) -> None:
    """Remove a feedback or findings file kitty asked for, once it is in the review cycle."""
    if path is not None and is_kittys(path) and not path.is_symlink():
        path.unlink(missing_ok=True)
