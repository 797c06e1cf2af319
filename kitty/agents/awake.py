"""Keep the machine awake while an unattended run lasts: one context, every platform.

The helper process is tied to our pid (`caffeinate -w PID`, `tail --pid PID`),
so the inhibitor is released even when kitty is killed with SIGKILL.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

ES_CONTINUOUS = 0x80000000
ES_SYSTEM_REQUIRED = 0x00000001


def inhibitor_command(pid: int, reason: str, platform: str | None = None) -> list[str] | None:
    """The helper command for this platform, or None when there is none."""
    platform = platform or sys.platform
    if platform == "darwin" and shutil.which("caffeinate"):
        return ["caffeinate", "-i", "-w", str(pid)]
    if platform.startswith("linux") and shutil.which("systemd-inhibit"):
        return [
            "systemd-inhibit",
            "--what=idle:sleep",
            f"--why={reason}",
            "tail",
            "--pid",
            str(pid),
            "-f",
            "/dev/null",
        ]
    return None


@contextmanager
def prevent_idle_sleep(
    enabled: bool = True, reason: str = "kitty sprint", notice: Callable[[str], None] = print
) -> Iterator[str]:
    """Hold an idle-sleep inhibitor for the duration of the block. Yields what it did."""
    if not enabled:
        yield "disabled (--no-caffeinate)"
        return
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        import ctypes

        kernel = ctypes.windll.kernel32  # type: ignore[attr-defined]
        kernel.SetThreadExecutionState(ES_CONTINUOUS | ES_SYSTEM_REQUIRED)
        try:
            yield "SetThreadExecutionState"
        finally:
            kernel.SetThreadExecutionState(ES_CONTINUOUS)
        return
    command = inhibitor_command(os.getpid(), reason)
    if command is None:
        notice(
            "keep-awake: no idle-sleep inhibitor here (no caffeinate/systemd-inhibit); "
            "make sure the machine does not sleep"
        )
        yield "none available"
        return
    helper = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        code = helper.wait(timeout=0.3)
    except subprocess.TimeoutExpired:
        code = None
    if code is not None:
        err = ""
        if helper.stderr:
            with helper.stderr:
                err = helper.stderr.read().decode(errors="replace").strip()
        notice(
            f"keep-awake: {command[0]} exited with {code} ({err[:120] or 'no message'}); "
            "continuing without it"
        )
        yield f"{command[0]} failed"
        return
    try:
        yield " ".join(command)
    finally:
        helper.terminate()
        try:
            helper.wait(timeout=3)
        except subprocess.TimeoutExpired:
            helper.kill()
            helper.wait()
        if helper.stderr:
            helper.stderr.close()
