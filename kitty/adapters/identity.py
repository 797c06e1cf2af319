"""Who acts when nobody said: git's configured identity (one small subprocess, no GitPython)."""

from __future__ import annotations

from pathlib import Path

#: The actor of last resort, as Spec Kitty records it.
DEFAULT_ACTOR = "user"


def git_identity(cwd: Path) -> str | None:
    """`user.name`, else `user.email` from git's config as seen in `cwd`, else None."""
    from kitty.adapters.git import NOT_RUN, TIMED_OUT, Git  # only when nobody said who acts

    for key in ("user.name", "user.email"):
        code, out, _ = Git(cwd).status("config", "--get", key, timeout=10)
        if code in (NOT_RUN, TIMED_OUT):
            return None
        value = out.strip()
        if code == 0 and value:
            return value
    return None
