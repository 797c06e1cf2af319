"""The one append path: whole lines, a torn tail repaired, and fsync before returning."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kitty.adapters import eventlog


def test_append_fsyncs_the_log_itself(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "m" / "status.events.jsonl"
    synced: list[tuple[int, int]] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        st = os.fstat(fd)
        synced.append((st.st_ino, st.st_size))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    eventlog.append(log, [{"b": 1, "a": "x"}, {"c": 2}])
    # the log's own file was synced, after both lines were written
    assert synced == [(log.stat().st_ino, log.stat().st_size)]
    assert [json.loads(line) for line in log.read_text().splitlines()] == [
        {"a": "x", "b": 1},
        {"c": 2},
    ]
    eventlog.append(log, [])
    assert len(synced) == 1  # nothing to write, nothing synced


def test_append_after_a_torn_line_starts_on_a_new_line(tmp_path: Path) -> None:
    log = tmp_path / "status.events.jsonl"
    log.write_text('{"a": 1}\n{"torn": ')
    eventlog.append(log, [{"b": 2}])
    assert log.read_text() == '{"a": 1}\n{"torn": \n{"b": 2}\n'
    bad_json = [w for w in eventlog.read(log).warnings if w.message == "not valid JSON"]
    assert [w.line for w in bad_json] == [2]  # only the fragment; our line stays whole


def test_lock_excludes_filelock_and_times_out_busy(tmp_path: Path) -> None:
    """The flock taken by `locked` is the one filelock takes: each excludes the other."""
    from filelock import FileLock, Timeout

    from kitty.errors import LockBusy

    path = tmp_path / "kitty" / "m.lock"
    path.parent.mkdir()
    busy = "mission m is locked by another kitty process"
    with (
        FileLock(str(path)),
        pytest.raises(LockBusy, match=busy),
        eventlog.locked(path, "mission m", timeout=0.05),
    ):
        pass
    with eventlog.locked(path, "mission m", timeout=0), pytest.raises(Timeout):
        FileLock(str(path), timeout=0.05).acquire()
    with eventlog.locked(path, "mission m", timeout=0):  # released on exit
        pass


def test_lock_waits_for_a_holder_that_lets_go(tmp_path: Path) -> None:
    import subprocess
    import sys
    import time

    path = tmp_path / "m.lock"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time\n"
            "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\n"
            "print('held', flush=True)\n"
            "time.sleep(0.3)\n",
            str(path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    start = time.monotonic()
    with eventlog.locked(path, "mission m", timeout=10):
        waited = time.monotonic() - start
    holder.communicate()
    assert 0.1 < waited < 5
