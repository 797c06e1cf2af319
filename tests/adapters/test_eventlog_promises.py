"""The event log's promises to the user, in-process (the mutants of kitty/adapters/eventlog.py):

- a log kitty cannot read or write is a clear error naming the file and the way out,
  and nothing is written;
- the lock waits (polling 1 ms, doubling, at most 20 ms) up to KITTY_LOCK_TIMEOUT, then
  says who holds what; a bad KITTY_LOCK_TIMEOUT is a usage error;
- every byte of every record is written, on a line of its own.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path

import pytest

from kitty.adapters import eventlog
from kitty.errors import EnvironmentProblem, LockBusy, UnsafePath, UsageError


def test_a_missing_log_reads_as_empty_and_a_directory_is_an_error(tmp_path: Path) -> None:
    log = tmp_path / "status.events.jsonl"
    assert eventlog.open_log(log) is None
    parsed = eventlog.read(log)
    assert parsed.events == [] and parsed.warnings == []
    log.write_text('{"a": 1}\n')
    assert len(eventlog.read(log).warnings) == 1  # read and parsed (not a valid event)
    log.unlink()
    log.mkdir()
    with pytest.raises(EnvironmentProblem) as caught:
        eventlog.read(log)
    assert caught.value.message == f"cannot read the event log {log}: Is a directory"
    assert caught.value.hint == (
        "it must be a readable regular file; restore it with `git checkout -- <path>`"
    )


@pytest.mark.parametrize(
    ("raw", "seconds"),
    [(None, 15.0), ("", 15.0), ("  ", 15.0), ("2.5", 2.5), ("0", 0.0), (" 7 ", 7.0)],
)
def test_the_lock_timeout_comes_from_the_environment(
    raw: str | None, seconds: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    if raw is None:
        monkeypatch.delenv("KITTY_LOCK_TIMEOUT", raising=False)
    else:
        monkeypatch.setenv("KITTY_LOCK_TIMEOUT", raw)
    assert eventlog.lock_timeout() == seconds


@pytest.mark.parametrize("raw", ["abc", "nan", "inf", "-inf", "-1", "-0.001"])
def test_a_bad_lock_timeout_is_a_usage_error(raw: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KITTY_LOCK_TIMEOUT", raw)
    with pytest.raises(UsageError) as caught:
        eventlog.lock_timeout()
    assert caught.value.message == f"KITTY_LOCK_TIMEOUT={raw!r} is not a number of seconds"
    assert caught.value.hint == (
        "set it to a finite number ≥ 0 (e.g. KITTY_LOCK_TIMEOUT=15) or unset it"
    )


def hold(path: Path) -> int:
    fd = os.open(path, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def test_a_busy_lock_is_polled_ever_less_often_until_the_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "m.lock"
    fd = hold(path)
    clock = [100.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        clock[0] += seconds

    monkeypatch.setattr(eventlog.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(eventlog.time, "sleep", sleep)
    try:
        with pytest.raises(LockBusy) as caught, eventlog.locked(path, "mission m", timeout=0.1):
            pass
    finally:
        os.close(fd)
    assert caught.value.message == f"mission m is locked by another kitty process ({path})"
    assert caught.value.hint == ("retry in a moment; if no kitty is running, the lock frees itself")
    assert slept[:6] == pytest.approx([0.001, 0.002, 0.004, 0.008, 0.016, 0.02])
    assert set(slept[5:-1]) == {0.02}
    assert sum(slept) == pytest.approx(0.1)  # the last wait is what was left
    assert slept[-1] < 0.02


def test_the_lock_timeout_of_the_environment_is_used_and_zero_means_no_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "m.lock"
    fd = hold(path)
    slept: list[float] = []
    monkeypatch.setattr(eventlog.time, "sleep", slept.append)
    monkeypatch.setenv("KITTY_LOCK_TIMEOUT", "0")
    try:
        with pytest.raises(LockBusy), eventlog.locked(path, "mission m"):
            pass
    finally:
        os.close(fd)
    assert slept == []
    with eventlog.locked(path, "mission m"):  # free now
        assert path.exists()


def test_the_lock_directory_is_created_and_a_file_in_its_way_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "m.lock"
    with eventlog.locked(path, "mission m", timeout=0):
        assert path.is_file()
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with (
        pytest.raises(EnvironmentProblem) as caught,
        eventlog.locked(blocker / "m.lock", "mission m", timeout=0),
    ):
        pass
    assert caught.value.message.startswith(f"cannot create the lock directory {blocker}: ")
    assert caught.value.hint == (
        "it must be a writable directory; if a file is in the way, move it aside"
    )


def test_a_lock_that_cannot_be_opened_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "m.lock"
    path.mkdir()
    with pytest.raises(EnvironmentProblem) as caught, eventlog.locked(path, "m", timeout=0):
        pass
    assert caught.value.message == f"cannot take the lock {path}: Is a directory"
    assert caught.value.hint == "the git directory must be writable by you"


def test_a_symlinked_lock_is_refused(tmp_path: Path) -> None:
    (tmp_path / "real.lock").write_text("")
    (tmp_path / "m.lock").symlink_to(tmp_path / "real.lock")
    with pytest.raises(EnvironmentProblem), eventlog.locked(tmp_path / "m.lock", "m", timeout=0):
        pass


def no_write_access(monkeypatch: pytest.MonkeyPatch, target: Path) -> None:
    """os.access says `target` is not writable (the tests may run as root, who may write)."""
    real = os.access

    def access(path: object, mode: int) -> bool:
        if Path(str(path)) == target and mode == os.W_OK:
            return False
        return real(path, mode)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "access", access)


def test_a_log_kitty_cannot_write_is_refused_before_anything_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "m"
    folder.mkdir()
    log = folder / "status.events.jsonl"
    no_write_access(monkeypatch, folder)
    with pytest.raises(EnvironmentProblem) as caught:
        eventlog.append(log, [{"a": 1}])
    assert caught.value.message == f"cannot create the event log: {folder} is not writable"
    assert caught.value.hint == (
        "make the mission directory writable (chmod u+w) and run the command again"
    )
    assert not log.exists()
    monkeypatch.undo()
    log.write_text('{"a": 1}\n')
    no_write_access(monkeypatch, log)
    with pytest.raises(EnvironmentProblem) as ro:
        eventlog.append(log, [{"b": 2}])
    assert ro.value.message == f"the event log {log} is read-only"
    assert ro.value.hint == (
        "make it writable (chmod u+w) and run the command again; nothing was written"
    )
    assert log.read_text() == '{"a": 1}\n'
    monkeypatch.undo()
    # a missing log in a writable folder is fine
    eventlog.check_appendable(folder / "new.jsonl")


def test_a_log_that_is_not_a_regular_file_or_a_symlink_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "status.events.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(EnvironmentProblem) as caught:
        eventlog.append(fifo, [{"a": 1}])
    assert caught.value.message == f"the event log {fifo} is not a regular file"
    assert caught.value.hint == ("move it aside and restore the log with `git checkout -- <path>`")
    target = tmp_path / "elsewhere.jsonl"
    target.write_text("")
    link = tmp_path / "linked.jsonl"
    link.symlink_to(target)
    with pytest.raises(UnsafePath):
        eventlog.append(link, [{"a": 1}])
    assert target.read_text() == ""
    dangling = tmp_path / "dangling.jsonl"
    dangling.symlink_to(tmp_path / "nowhere")
    with pytest.raises(UnsafePath):
        eventlog.append(dangling, [{"a": 1}])
    assert not (tmp_path / "nowhere").exists()


def test_an_append_the_file_system_refuses_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "status.events.jsonl"
    real_open = os.open

    def refuse(path: object, flags: int, mode: int = 0o777) -> int:
        if Path(str(path)) == log:
            raise OSError(28, "No space left on device")
        return real_open(path, flags, mode)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", refuse)
    with pytest.raises(EnvironmentProblem) as caught:
        eventlog.append(log, [{"a": 1}])
    assert caught.value.message == (
        f"cannot append to the event log {log}: No space left on device"
    )
    assert caught.value.hint == "check the file's permissions; nothing was written"


def test_every_byte_is_written_even_in_short_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "status.events.jsonl"
    log.write_text('{"a": 1}\n')
    real_write = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: real_write(fd, bytes(data)[:3]))
    eventlog.append(log, [{"b": "x" * 20}, {"c": 3}])
    lines = log.read_text().splitlines()
    assert [json.loads(x) for x in lines] == [{"a": 1}, {"b": "x" * 20}, {"c": 3}]
    assert log.read_text().endswith("\n")


def test_a_new_or_whole_log_gets_no_extra_newline(tmp_path: Path) -> None:
    log = tmp_path / "new" / "mission" / "status.events.jsonl"  # folders created
    eventlog.append(log, [{"a": 1}])
    assert log.read_text() == '{"a": 1}\n'
    eventlog.append(log, [{"b": 2}])
    assert log.read_text() == '{"a": 1}\n{"b": 2}\n'
    mode = log.stat().st_mode & 0o777
    assert mode == 0o666 & ~current_umask()


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_the_clock_and_the_randomness() -> None:
    before = time.time_ns() // 1000
    now = eventlog.now_us()
    assert before <= now <= time.time_ns() // 1000
    assert len(eventlog.random_bytes()) == 10 and len(eventlog.random_bytes(4)) == 4
    assert eventlog.random_bytes() != eventlog.random_bytes()


def test_a_symlink_that_appears_after_the_check_is_never_written_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "elsewhere.jsonl"
    target.write_text("")
    link = tmp_path / "status.events.jsonl"
    link.symlink_to(target)
    monkeypatch.setattr(eventlog, "check_appendable", lambda path: None)  # the race window
    with pytest.raises(UnsafePath):
        eventlog.append(link, [{"a": 1}])
    assert target.read_text() == ""
