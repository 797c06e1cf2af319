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
