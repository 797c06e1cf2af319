"""Agent CLI versions: `X --version` of each built-in, compared with the range kitty's
command line for it was tested with (kitty.agents.clis.TESTED)."""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from typing import Any

from kitty.agents.clis import MANUAL, NOT_VERIFIED, TESTED, Backend

_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")


def _numbers(text: str) -> tuple[int, int, int] | None:
    match = _VERSION.search(text)
    if match is None:
        return None
    return (int(match.group(1)), int(match.group(2)), int(match.group(3) or 0))


@dataclass(frozen=True)
class VersionCheck:
    agent: str
    executable: str | None
    version: str | None  # as the CLI printed it (first line), when readable
    tested: str | None  # "2.1.332 up to 2.2", for the built-ins tests/agents ran
    warning: str | None  # outside the tested range, or unreadable
    found: bool = True  # on PATH (not found is said in the line; the sprint refuses it)

    def as_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "executable": self.executable,
            "version": self.version,
            "tested": self.tested,
            "warning": self.warning,
            "found": self.found,
        }


def _ask(path: str, timeout: float) -> tuple[int, str] | str:
    """(exit code, first line of `path --version`), or why there is none."""
    import subprocess

    try:
        done = subprocess.run(
            [path, "--version"],
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            errors="replace",
        )
    except subprocess.TimeoutExpired:
        return f"--version gave no answer in {timeout:.0f} s"
    except OSError as exc:
        return f"--version: {exc.strerror or exc}"
    text = (done.stdout.strip() or done.stderr.strip()).splitlines()
    return done.returncode, text[0].strip() if text else ""


def check_version(backend: Backend, timeout: float = 20.0) -> VersionCheck:
    """`X --version` of a built-in agent CLI, compared with the range kitty was tested
    with. A configured command is never run just to ask its version (it runs only in a
    trusted sprint), and a missing or silent CLI is said plainly."""
    name = backend.name
    if backend.kind == MANUAL:
        return VersionCheck(name, None, None, None, None)
    exe = backend.executable() or name
    if backend.kind == "command":
        return VersionCheck(name, exe, None, None, None)
    exe = "cursor" if backend.kind == "cursor" else exe
    low_high = TESTED.get(backend.kind)
    tested = f"{low_high[0]} up to {low_high[1]}" if low_high else None
    if backend.kind in NOT_VERIFIED:
        tested = None
    path = shutil.which(exe)
    if path is None:
        return VersionCheck(name, exe, None, tested, None, found=False)
    answer = _ask(path, timeout)
    if isinstance(answer, str):
        return VersionCheck(name, exe, None, tested, f"{exe} {answer}")
    code, first = answer
    found = _numbers(first) if code == 0 else None
    if found is None:
        said = f": {first[:120]}" if first else ""
        return VersionCheck(
            name, exe, None, tested,
            f"{exe} --version did not print a version (exit {code}){said}",
        )  # fmt: skip
    if backend.kind in NOT_VERIFIED:
        return VersionCheck(
            name, exe, first, None,
            f"{exe} {first}: kitty's command line for {backend.kind} is not verified "
            "against the real CLI",
        )  # fmt: skip
    if low_high is not None:
        low, high = _numbers(low_high[0]), _numbers(low_high[1])
        if low is not None and high is not None and not low <= found < high:
            return VersionCheck(
                name, exe, first, tested,
                f"{exe} {first} is outside the versions kitty was tested with "
                f"({tested}); if a dispatch fails on its command line, pin a tested "
                f"version or set agents.commands.{name} in .kittify/config.yaml",
            )  # fmt: skip
    return VersionCheck(name, exe, first, tested, None)


def check_all(backends: list[Backend]) -> list[VersionCheck]:
    """Every backend's version, asked in parallel (a node CLI takes a second to answer)."""
    from concurrent.futures import ThreadPoolExecutor

    if not backends:
        return []
    with ThreadPoolExecutor(max_workers=min(8, len(backends))) as pool:
        return list(pool.map(check_version, backends))
