"""One running agent process: its own session, output to a log, killable as a group."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from typing import IO

from kitty.agents.clis import Invocation

NOT_STARTED = 127  # the shell's "command not found"


def agent_env(agent: str) -> dict[str, str]:
    """The agent's environment: its identity, and this kitty's scripts folder first on PATH
    (always first: an earlier `kitty`, such as the terminal emulator's, must not shadow the
    `kitty` commands in its prompt, even when the venv is not activated)."""
    from kitty.adapters.install import path_with_own_bin_first

    path = path_with_own_bin_first(os.environ.get("PATH", ""))
    return dict(os.environ, KITTY_AGENT=agent, PATH=path)


class AgentRun:
    """Start `invocation` now. The prompt, when it goes on stdin, is fed from a thread
    so a large prompt can never block kitty on a full pipe."""

    def __init__(self, invocation: Invocation, agent: str, log: IO[str]) -> None:
        self.error: str | None = None
        self.cpu = 0.0  # the agent's own CPU seconds (its waited-for children included)
        self._proc: subprocess.Popen[bytes] | None = None
        try:
            self._proc = subprocess.Popen(
                invocation.argv,
                cwd=invocation.cwd,
                env={**agent_env(agent), **invocation.env},
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                stdin=subprocess.PIPE if invocation.stdin is not None else subprocess.DEVNULL,
            )
        except OSError as exc:
            self.error = f"could not start {invocation.argv[0]}: {exc.strerror or exc}"
            if invocation.cwd and not os.path.isdir(invocation.cwd):  # not the program's fault
                self.error = (
                    f"could not start {invocation.argv[0]}: its working directory "
                    f"{invocation.cwd} does not exist"
                )
            log.write(f"# {self.error}\n")
            return
        if invocation.stdin is not None and self._proc.stdin is not None:
            threading.Thread(
                target=self._feed, args=(self._proc.stdin, invocation.stdin), daemon=True
            ).start()

    @staticmethod
    def _feed(pipe: IO[bytes], text: str) -> None:
        try:
            pipe.write(text.encode())
            pipe.close()
        except OSError:
            pass  # the agent exited without reading its prompt; its exit code tells why

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def poll(self) -> int | None:
        """The exit code, or None while it runs. Reaps with wait4 to learn the agent's
        CPU (so the sprint can tell its own cost from the agents')."""
        if self._proc is None:
            return NOT_STARTED
        if self._proc.returncode is None:
            try:
                pid, status, usage = os.wait4(self._proc.pid, os.WNOHANG)
            except ChildProcessError:
                return self._proc.poll()  # reaped elsewhere: Popen knows the code
            if pid == 0:
                return None
            self._proc.returncode = os.waitstatus_to_exitcode(status)
            self.cpu = usage.ru_utime + usage.ru_stime
        return self._proc.returncode

    def kill(self) -> None:
        """SIGTERM the whole process group, then SIGKILL what is left after 2 s."""
        if self._proc is None:
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(self._proc.pid, sig)
            except (ProcessLookupError, PermissionError):
                return
            deadline = time.monotonic() + 2
            while time.monotonic() < deadline:
                if self.poll() is not None:
                    return
                time.sleep(0.02)
