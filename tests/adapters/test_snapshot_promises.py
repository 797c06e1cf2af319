"""What the snapshot cache promises a user, in-process (for `make mutation`): it is
never served after any change to the log or a WP file, a foreign, corrupt or
symlinked cache is never trusted, `KITTY_NO_CACHE=1` turns it off and `=0` does not,
and a read gives the same board, warnings and parsed files as a read without it."""

from __future__ import annotations

import json
import os
import shutil
import time
from datetime import datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest

from kitty.adapters import contain, snapshots
from kitty.mission.workspace import Mission
from tests.adapters.test_snapshot_growth import WPS, board_text, full_only
from tests.helpers import make_mission, ok


def same_as_plain(path: Path, cached: snapshots.LogState) -> None:
    plain = snapshots.read_log(path, None)
    assert board_text(cached) == board_text(plain)
    assert repr(cached.board) == repr(plain.board)  # conflicts and event counts included
    assert [str(w) for w in cached.warnings] == [str(w) for w in plain.warnings]
    assert cached.unterminated == plain.unterminated


def claimed_mission(repo: Path) -> tuple[Mission, dict[str, object]]:
    make_mission(repo, wps=WPS)
    mission = Mission.open(repo, None)
    snapshots.read_log(mission.events_path, mission.cache_dir)  # builds the snapshot
    ok(repo, "next", "--agent", "claude", "--claim")
    last = json.loads(mission.events_path.read_text().splitlines()[-1])
    return mission, last


def later(event: dict[str, object], seconds: float, **changes: object) -> bytes:
    at = datetime.fromisoformat(str(event["at"])) + timedelta(seconds=seconds)
    line = {**event, "at": at.isoformat(), **changes}
    return (json.dumps(line, sort_keys=True) + "\n").encode()


def append(path: Path, data: bytes) -> None:
    with path.open("ab") as handle:
        handle.write(data)


def test_a_missing_log_reads_as_an_empty_board_with_no_warnings(repo: Path) -> None:
    state = snapshots.read_log(repo / "nowhere.jsonl", repo / "cache")
    assert state.warnings == []
    assert not state.unterminated
    assert state.board.wps == {}


def test_a_board_served_from_the_cache_is_the_board_of_a_full_read(repo: Path) -> None:
    make_mission(repo, wps=WPS)
    mission = Mission.open(repo, None)
    snapshots.read_log(mission.events_path, mission.cache_dir)
    same_as_plain(mission.events_path, snapshots.read_log(mission.events_path, mission.cache_dir))


def test_kitty_no_cache_0_keeps_the_cache_on(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_mission(repo, wps=WPS)
    mission = Mission.open(repo, None)
    monkeypatch.setenv("KITTY_NO_CACHE", "0")
    snapshots.read_log(mission.events_path, mission.cache_dir)
    assert (mission.cache_dir / "board.pickle").exists()
    calls = full_only(monkeypatch)
    snapshots.read_log(mission.events_path, mission.cache_dir)
    assert calls == []


def test_a_changed_parsing_module_means_a_full_replay(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An upgrade of kitty (a module that parses or replays changed on disk) never
    reads a snapshot written by the old code."""
    from kitty.core.log import state as state_module

    module = tmp_path / "state.py"
    module.write_text("# old\n")
    monkeypatch.setattr(state_module, "__file__", str(module))
    make_mission(repo, wps=WPS)
    mission = Mission.open(repo, None)
    snapshots.read_log(mission.events_path, mission.cache_dir)
    module.write_text("# new code\n")
    calls = full_only(monkeypatch)
    snapshots.read_log(mission.events_path, mission.cache_dir)
    assert len(calls) == 1


def test_an_event_id_repeated_in_the_appended_lines_reads_as_a_full_replay(repo: Path) -> None:
    mission, last = claimed_mission(repo)
    path = mission.events_path
    fresh = {**last, "event_id": "01M91BKYTKRZNH6EEX2SHBZZZZ", "wp_id": "WP02"}
    fresh["kitty_after"] = json.loads(path.read_text().splitlines()[1])["event_id"]
    append(path, later(fresh, 1))
    append(path, later(fresh, 2, to_lane="in_progress", from_lane="claimed"))
    same_as_plain(path, snapshots.read_log(path, mission.cache_dir))
    # and an id seen in an earlier tail, repeated in a later one
    snapshots.read_log(path, mission.cache_dir, resave_tail=0)
    append(path, later(fresh, 3, to_lane="blocked", from_lane="claimed"))
    same_as_plain(path, snapshots.read_log(path, mission.cache_dir))


def test_an_appended_event_at_the_same_instant_as_the_newest_is_ordered_like_a_replay(
    repo: Path,
) -> None:
    """Replay orders events of one instant by id: an appended event that sorts before
    the newest one at the same instant cannot just be folded on top."""
    mission, last = claimed_mission(repo)
    path = mission.events_path
    snapshots.read_log(path, mission.cache_dir, resave_tail=0)  # the snapshot has the claim
    early = {**last, "event_id": "00000000000000000000000000", "to_lane": "blocked"}
    append(path, later(early, 0))
    cached = snapshots.read_log(path, mission.cache_dir)
    same_as_plain(path, cached)


def test_an_id_list_left_by_another_save_is_never_used(repo: Path) -> None:
    """Two saves that interleave leave the id list of one next to the board of the
    other: the pair is not trusted, so a repeated event id is still seen."""
    mission, last = claimed_mission(repo)
    path, ids = mission.events_path, mission.cache_dir / "ids.pickle"
    old = ids.read_bytes()  # from the save before the claim
    snapshots.read_log(path, mission.cache_dir, resave_tail=0)  # saved with the claim
    ids.write_bytes(old)
    append(path, later(last, 1, to_lane="in_progress", from_lane="claimed"))
    same_as_plain(path, snapshots.read_log(path, mission.cache_dir))


def test_a_log_just_under_the_sampling_size_is_compared_whole(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Up to 17 blocks the whole prefix is fingerprinted: one byte changed in place
    anywhere (same size, same mtime) means a full read, never the old board."""
    make_mission(repo, wps=WPS)
    mission = Mission.open(repo, None)
    path = mission.events_path
    end = snapshots.BLOCK * (snapshots.SAMPLES + 1) - 1
    size = path.stat().st_size
    line = b'{"kind": "padding", "pad": "%s"}\n'
    while size < end:
        pad = min(200, end - size - len(line % b""))
        append(path, line % (b"a" * pad))
        size = path.stat().st_size
    assert size == end
    snapshots.read_log(path, mission.cache_dir)
    step = (end - snapshots.BLOCK) // snapshots.SAMPLES
    where = (snapshots.SAMPLES - 1) * step + snapshots.BLOCK + 4  # between two samples
    data = bytearray(path.read_bytes())
    if data[where : where + 1] != b"a":
        where = data.index(b"a", where - 150)
    assert where < end - snapshots.BLOCK
    data[where : where + 1] = b"b"
    before = path.stat()
    path.write_bytes(bytes(data))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    calls = full_only(monkeypatch)
    snapshots.read_log(path, mission.cache_dir)
    assert calls == [end]


# -- WP files -------------------------------------------------------------------------


class Parser:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.parsed: list[str] = []

    def __call__(self, name: str) -> str:
        self.parsed.append(name)
        return (self.folder / name).read_text()


class Aged:
    """A file's stat as a filesystem reports it `age` seconds after the last change
    (mtime and ctime that far back; size and inode as they are)."""

    def __init__(self, path: Path, age: float) -> None:
        st = path.stat()
        self.st_size, self.st_ino = st.st_size, st.st_ino
        self.st_mtime_ns = self.st_ctime_ns = time.time_ns() - int(age * 1e9)


def wp_files(folder: Path, age: float = 60.0) -> list[tuple[str, os.stat_result]]:
    folder.mkdir(exist_ok=True)
    for name in ("WP01.md", "WP02.md"):
        path = folder / name
        if not path.exists():
            path.write_text(f"# {name}\n")
    names = ("WP01.md", "WP02.md")
    return [(name, cast(os.stat_result, Aged(folder / name, age))) for name in names]


def test_unchanged_wp_files_are_parsed_once_and_the_cache_left_alone(tmp_path: Path) -> None:
    folder, cache = tmp_path / "tasks", tmp_path / "cache"
    files = wp_files(folder)
    parse = Parser(folder)
    first = snapshots.cached_parse(cache, files, parse)
    assert parse.parsed == ["WP01.md", "WP02.md"]
    stored = (cache / "wps.pickle").stat()
    parse.parsed.clear()
    assert snapshots.cached_parse(cache, files, parse) == first
    assert parse.parsed == []
    again = (cache / "wps.pickle").stat()
    assert (again.st_ino, again.st_mtime_ns) == (stored.st_ino, stored.st_mtime_ns)


def test_a_changed_wp_file_is_parsed_again_even_with_its_old_mtime(tmp_path: Path) -> None:
    folder, cache = tmp_path / "tasks", tmp_path / "cache"
    files = wp_files(folder)
    parse = Parser(folder)
    snapshots.cached_parse(cache, files, parse)
    (folder / "WP02.md").write_text("# WP02 retitled\n")
    edited = Aged(folder / "WP02.md", 60)
    edited.st_mtime_ns = edited.st_ctime_ns = files[1][1].st_mtime_ns  # timestamps kept
    files = [files[0], ("WP02.md", cast(os.stat_result, edited))]
    parse.parsed.clear()
    results = snapshots.cached_parse(cache, files, parse)
    assert results == ["# WP01.md\n", "# WP02 retitled\n"]
    assert parse.parsed == ["WP02.md"]
    parse.parsed.clear()  # parsed once, then served from the cache again
    assert snapshots.cached_parse(cache, files, parse) == results
    assert parse.parsed == []


def test_a_wp_file_modified_in_the_last_two_seconds_is_never_served(tmp_path: Path) -> None:
    """On a filesystem with coarse timestamps an edit can keep every stat field: a file
    that recent is parsed again on every read until its stat is old enough."""
    folder, cache = tmp_path / "tasks", tmp_path / "cache"
    files = wp_files(folder, age=0.5)
    parse = Parser(folder)
    snapshots.cached_parse(cache, files, parse)
    (folder / "WP01.md").write_text("# WP01 edit\n")  # same size, and the same stat is passed
    assert snapshots.cached_parse(cache, files, parse)[0] == "# WP01 edit\n"


def test_no_cache_or_kitty_no_cache_parses_every_time_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, cache = tmp_path / "tasks", tmp_path / "cache"
    files = wp_files(folder)
    parse = Parser(folder)
    assert snapshots.cached_parse(None, files, parse) == ["# WP01.md\n", "# WP02.md\n"]
    monkeypatch.setenv("KITTY_NO_CACHE", "1")
    snapshots.cached_parse(cache, files, parse)
    snapshots.cached_parse(cache, files, parse)
    assert len(parse.parsed) == 6
    assert not cache.exists()


def test_a_symlinked_or_corrupt_wp_cache_is_never_trusted(repo: Path, tmp_path: Path) -> None:
    make_mission(repo, wps=WPS)
    mission = Mission.open(repo, None)
    contain.trust(repo, mission.cache_dir.parent)
    folder = tmp_path / "tasks"
    files = wp_files(folder)
    parse = Parser(folder)
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.rmtree(mission.cache_dir, ignore_errors=True)
    mission.cache_dir.parent.mkdir(parents=True, exist_ok=True)
    mission.cache_dir.symlink_to(outside)
    snapshots.cached_parse(mission.cache_dir, files, parse)
    assert list(outside.iterdir()) == []
    mission.cache_dir.unlink()
    mission.cache_dir.mkdir()
    (mission.cache_dir / "wps.pickle").write_bytes(b"\x80\x05not a pickle")
    assert snapshots.cached_parse(mission.cache_dir, files, parse) == ["# WP01.md\n", "# WP02.md\n"]


def test_a_wp_file_changed_exactly_two_seconds_ago_is_not_yet_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, cache = tmp_path / "tasks", tmp_path / "cache"
    files = wp_files(folder)
    changed = files[0][1].st_mtime_ns
    clock = SimpleNamespace(time_ns=lambda: changed + snapshots.RACY_NS)
    monkeypatch.setattr(snapshots, "time", clock)
    parse = Parser(folder)
    snapshots.cached_parse(cache, files[:1], parse)
    (folder / "WP01.md").write_text("# WP01 edit\n")  # same size, and the same stat
    assert snapshots.cached_parse(cache, files[:1], parse) == ["# WP01 edit\n"]
