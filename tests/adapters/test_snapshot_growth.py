"""What the board snapshot is for: after a command appends to the log, the next read
parses only the appended lines, and gives what a full replay gives. A torn last line
or a rewritten log is always read in full. (In-process, for `make mutation`.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kitty.adapters import snapshots
from kitty.mission.workspace import Mission
from tests.helpers import make_mission, ok

WPS = [{"wp_id": "WP01", "title": "One"}, {"wp_id": "WP02", "title": "Two"}]


def full_only(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the full replays: a whole read (`_full`) or the streamed one (`_streamed`,
    which folds a log a block at a time), one entry each."""
    calls: list[int] = []
    real, streamed = snapshots._full, snapshots._streamed

    def counted(data: bytes) -> tuple[snapshots.LogState, set[str], int]:
        calls.append(len(data))
        return real(data)

    def counted_stream(handle: Any, keep_ids: bool = True) -> Any:
        result = streamed(handle, keep_ids)
        calls.append(result[3])
        return result

    monkeypatch.setattr(snapshots, "_full", counted)
    monkeypatch.setattr(snapshots, "_streamed", counted_stream)
    return calls


def board_text(state: snapshots.LogState) -> str:
    return repr(sorted((w, st.lane, st.agent) for w, st in state.board.wps.items()))


def test_an_appended_event_is_folded_without_a_full_replay(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_mission(repo, wps=WPS)
    mission = Mission.open(repo, None)
    snapshots.read_log(mission.events_path, mission.cache_dir)  # builds the snapshot
    ok(repo, "next", "--agent", "claude", "--claim")  # appends a claim
    calls = full_only(monkeypatch)
    grown = snapshots.read_log(mission.events_path, mission.cache_dir)
    assert calls == []  # only the tail was parsed
    plain = snapshots.read_log(mission.events_path, None)
    assert board_text(grown) == board_text(plain)
    assert "claimed" in board_text(grown)
    assert grown.warnings == plain.warnings


def test_a_torn_last_line_is_read_in_full_and_reported(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_mission(repo, wps=WPS)
    mission = Mission.open(repo, None)
    snapshots.read_log(mission.events_path, mission.cache_dir)
    with mission.events_path.open("ab") as handle:
        handle.write(b'{"event_id": "torn", "kind"')
    calls = full_only(monkeypatch)
    state = snapshots.read_log(mission.events_path, mission.cache_dir)
    assert len(calls) == 1
    assert state.unterminated
    assert state.unterminated == snapshots.read_log(mission.events_path, None).unterminated


def test_a_missing_or_foreign_id_list_means_a_full_replay(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_mission(repo, wps=WPS)
    mission = Mission.open(repo, None)
    snapshots.read_log(mission.events_path, mission.cache_dir)
    ids = mission.cache_dir / "ids.pickle"
    ids.write_bytes(b"not a pickle")
    ok(repo, "next", "--agent", "claude", "--claim")
    calls = full_only(monkeypatch)
    state = snapshots.read_log(mission.events_path, mission.cache_dir)
    assert len(calls) == 1
    assert board_text(state) == board_text(snapshots.read_log(mission.events_path, None))


def test_a_large_log_rewritten_in_place_is_never_served_from_the_cache(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same size, same mtime, one byte changed in a sampled block of a 200 KiB log: the
    snapshot is not used (the log is read in full)."""
    import os

    make_mission(repo, wps=WPS)
    mission = Mission.open(repo, None)
    path = mission.events_path
    with path.open("ab") as handle:
        for index in range(1600):
            handle.write(b'{"kind": "padding", "n": %d, "pad": "%s"}\n' % (index, b"a" * 100))
    snapshots.read_log(path, mission.cache_dir)  # builds the snapshot
    data = bytearray(path.read_bytes())
    end = len(data)
    assert end > 200_000
    step = (end - snapshots.BLOCK) // snapshots.SAMPLES
    where = data.index(b"a", 8 * step)  # the first padding byte of the ninth sampled block
    assert where < 8 * step + 200
    data[where : where + 1] = b"b"
    before = path.stat()
    path.write_bytes(bytes(data))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size
    calls = full_only(monkeypatch)
    snapshots.read_log(path, mission.cache_dir)
    assert calls == [end]
    # and the last block is always compared
    calls.clear()
    data[-20:-19] = b"b" if data[-20:-19] != b"b" else b"c"
    path.write_bytes(bytes(data))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    snapshots.read_log(path, mission.cache_dir)
    assert calls == [end]


def test_kitty_no_cache_writes_and_reads_no_snapshot(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_mission(repo, wps=WPS)
    mission = Mission.open(repo, None)
    monkeypatch.setenv("KITTY_NO_CACHE", "1")
    snapshots.read_log(mission.events_path, mission.cache_dir)
    assert not (mission.cache_dir / "board.pickle").exists()


def test_a_symlinked_cache_folder_is_never_used(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kitty.adapters import contain

    make_mission(repo, wps=WPS)
    mission = Mission.open(repo, None)
    contain.trust(repo, mission.cache_dir.parent)
    outside = tmp_path / "outside"
    outside.mkdir()
    import shutil

    shutil.rmtree(mission.cache_dir, ignore_errors=True)
    mission.cache_dir.parent.mkdir(parents=True, exist_ok=True)
    mission.cache_dir.symlink_to(outside)
    snapshots.read_log(mission.events_path, mission.cache_dir)
    assert list(outside.iterdir()) == []


def test_a_resaved_snapshot_keeps_line_numbers_and_is_used_next_time(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sprint re-saves the snapshot after every few appended bytes: the next read
    must still fold only the new tail, and report a bad line with its real number."""
    make_mission(repo, wps=WPS)
    mission = Mission.open(repo, None)
    path = mission.events_path
    snapshots.read_log(path, mission.cache_dir)
    ok(repo, "next", "--agent", "claude", "--claim")
    snapshots.read_log(path, mission.cache_dir, resave_tail=0)  # grown, then re-saved
    ok(repo, "next", "--agent", "codex", "--claim")
    calls = full_only(monkeypatch)
    grown = snapshots.read_log(path, mission.cache_dir)
    assert calls == []
    assert board_text(grown) == board_text(snapshots.read_log(path, None))
    with path.open("ab") as handle:
        handle.write(b"not json\n")
    cached = snapshots.read_log(path, mission.cache_dir)
    plain = snapshots.read_log(path, None)
    assert [str(w) for w in cached.warnings] == [str(w) for w in plain.warnings]
    assert cached.warnings


def test_an_append_within_the_same_mtime_tick_is_not_missed(repo: Path) -> None:
    import os

    make_mission(repo, wps=WPS)
    mission = Mission.open(repo, None)
    path = mission.events_path
    snapshots.read_log(path, mission.cache_dir)
    before = path.stat()
    ok(repo, "next", "--agent", "claude", "--claim")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    cached = snapshots.read_log(path, mission.cache_dir)
    assert "claimed" in board_text(cached)
    assert board_text(cached) == board_text(snapshots.read_log(path, None))


def test_a_large_log_that_grew_is_folded_from_its_tail(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past 68 KiB the prefix is fingerprinted by samples: appending must not disturb them."""
    make_mission(repo, wps=WPS)
    mission = Mission.open(repo, None)
    path = mission.events_path
    with path.open("ab") as handle:
        for index in range(1600):
            handle.write(b'{"kind": "padding", "n": %d, "pad": "%s"}\n' % (index, b"a" * 100))
    snapshots.read_log(path, mission.cache_dir)
    ok(repo, "next", "--agent", "claude", "--claim")
    calls = full_only(monkeypatch)
    grown = snapshots.read_log(path, mission.cache_dir)
    assert calls == []
    assert board_text(grown) == board_text(snapshots.read_log(path, None))
