"""Who acts when nobody said: git's configured identity (one small subprocess, no GitPython)."""

from __future__ import annotations

from pathlib import Path

#: The actor of last resort, as Spec Kitty records it.
DEFAULT_ACTOR = "user"


def git_identity(cwd: Path) -> str | None:
    """`user.name`, else `user.email` from git's config as seen in `cwd`, else None."""
    import subprocess  # only when nobody said who acts: status and next never need it

    for key in ("user.name", "user.email"):
        try:
            done = subprocess.run(
                ["git", "config", "--get", key],
                cwd=cwd,
                capture_output=True,
                text=True,
                timeout=10,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return None
        value = done.stdout.strip()
        if done.returncode == 0 and value:
            return value
    return None
