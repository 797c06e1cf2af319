"""Agent onboarding: the guide `kitty prime` prints, the section `kitty init` writes."""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

from kitty.adapters import contain
from kitty.adapters.files import atomic_write, check_writable
from kitty.errors import SpecError
from kitty.project.rules.onboarding import splice

#: AGENTS.md is always written; these only when the repository already has them.
ALWAYS = "AGENTS.md"
WHEN_PRESENT = ("CLAUDE.md", "GEMINI.md")


def _data(name: str) -> str:
    return resources.files("kitty").joinpath(f"data/{name}").read_text("utf-8")


def guide() -> str:
    return _data("agent-guide.md")


def section() -> str:
    return _data("agents-section.md")


Planned = list[tuple[str, Path, str]]


def plan_agent_files(root: Path, git_dir: Path | None = None) -> Planned:
    """What splicing the kitty section into AGENTS.md (and CLAUDE.md / GEMINI.md when
    present) would write: (name, file, new text) for each file that changes. Raises before
    anything is read or written when a file's markers are unbalanced, or when a file is a
    symbolic link leaving the work tree (or into the git directory): UnsafePath."""
    names = [ALWAYS, *(n for n in WHEN_PRESENT if (root / n).is_file() or (root / n).is_symlink())]
    planned: Planned = []
    seen: set[Path] = set()
    forbidden = (root / ".git", *((git_dir,) if git_dir else ()))
    for name in names:
        # CLAUDE.md is often a symlink to AGENTS.md: followed only while it stays inside.
        target = contain.check_link_inside(root / name, root, forbidden).resolve()
        if target in seen:
            continue
        seen.add(target)
        old = ""
        if target.exists():  # newline="": CRLF files keep their line ends
            try:
                with target.open(encoding="utf-8", newline="") as handle:
                    old = handle.read()
            except UnicodeDecodeError as exc:
                raise SpecError(
                    name, None, f"not UTF-8 text ({exc.reason})", "save it as UTF-8, then rerun"
                ) from exc
        check_writable(target)
        new = splice(old, section(), name)
        if new != old:
            planned.append((name, target, new))
    return planned


def write_agent_files(planned: Planned) -> list[str]:
    """Write what plan_agent_files planned; returns the names written."""
    for _name, target, text in planned:
        mode = target.stat().st_mode & 0o777 if target.exists() else 0o644
        atomic_write(target, text)
        os.chmod(target, mode)  # the temp file was 0600; keep the file's own mode
    return [name for name, _target, _text in planned]
