"""The cached finished status view (kitty/adapters/viewcache.py) prints exactly what an
uncached `kitty status` prints, after every kind of change to what it reads.

Each check runs the same command three ways and compares stdout, stderr and the exit
code byte for byte: through click (no cache), through the fast path with
`KITTY_NO_CACHE=1`, and through the fast path with the cache (twice: the second run
is served from the record the first one may have written).
"""

from __future__ import annotations

import json
import marshal
import os
import time
import zlib
from pathlib import Path

import pytest

import kitty
from kitty import hot
from kitty.adapters import viewcache
from tests.adapters.cached_reads import (
    append,
    committed_mission,
    edit_json,
    fast,
    in_review,
    outputs_after,
    routes_agree,
)
from tests.helpers import git, imported_by, make_mission, ok, write_wp
from tests.helpers import kitty as click_kitty

SLUG = "cache-01CACHEVW"
ARGS = [["status"], ["status", "--json"], ["status", "--mission", "cache"]]


@pytest.fixture
def mission(repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return committed_mission(repo, SLUG, monkeypatch)


def records(repo: Path) -> list[Path]:
    folder = repo / ".git" / "kitty" / "cache" / viewcache.FOLDER
    return sorted(folder.glob("*.view")) if folder.is_dir() else []


def served(repo: Path, args: list[str]) -> bool:
    return viewcache.lookup(str(repo), _mission(args), "--json" in args) is not None


def _mission(args: list[str]) -> str | None:
    return args[args.index("--mission") + 1] if "--mission" in args else None


def same(
    repo: Path,
    args: list[str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    click: bool = True,
) -> tuple[int, str, str]:
    return routes_agree(repo, args, capsys, monkeypatch, served, click=click)


@pytest.mark.parametrize("args", ARGS, ids=" ".join)
def test_every_kind_of_change_is_seen(
    mission: Path,
    args: list[str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    mission_dir = mission / "kitty-specs" / SLUG
    changes = [
        ("nothing", lambda: None),
        ("a move (the log)", lambda: ok(mission, "move", "WP03", "blocked", "--note", "x")),
        ("a torn log line", lambda: append(mission_dir / "status.events.jsonl", "not json\n")),
        ("a WP file", lambda: _retitle(next((mission_dir / "tasks").glob("WP02*")))),
        ("a new WP file", lambda: write_wp(mission_dir, "WP04", title="New")),
        ("a removed WP file", lambda: next((mission_dir / "tasks").glob("WP04*")).unlink()),
        ("lanes.json", lambda: ok(mission, "finalize", "--mission", SLUG)),
        ("meta.json", lambda: edit_json(mission_dir / "meta.json", friendly_name="Other")),
        ("config", lambda: append(mission / ".kittify" / "config.yaml", "  max_cycles: 1\n")),
        ("uncommitted files (git)", lambda: git(mission, "add", "-A")),
        ("a commit (git)", lambda: git(mission, "commit", "-qm", "x")),
        ("COLUMNS", lambda: monkeypatch.setenv("COLUMNS", "150")),
        ("another mission", lambda: make_mission(mission, slug="other-01OTHERMI", finalize=False)),
        ("$KITTY_MISSION", lambda: monkeypatch.setenv("KITTY_MISSION", SLUG)),
    ]
    seen = outputs_after(mission, args, changes, capsys, monkeypatch, served)
    assert len(seen) >= 6  # the changes did change the output


def _retitle(path: Path) -> None:
    text = path.read_text()
    assert "title: Thing" in text
    path.write_text(text.replace("title: Thing", "title: A longer title", 1))


def test_a_new_kitty_version_misses(
    mission: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    same(mission, ["status", "--json"], capsys, monkeypatch)
    monkeypatch.setattr(kitty, "__version__", "99.0")
    assert not served(mission, ["status", "--json"])


def test_colour_and_a_terminal_are_part_of_the_key(
    mission: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.delenv("NO_COLOR")
    plain = same(mission, ["status"], capsys, monkeypatch, click=False)
    as_json = same(mission, ["status", "--json"], capsys, monkeypatch, click=False)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert not served(mission, ["status"]) and not served(mission, ["status", "--json"])
    coloured = same(mission, ["status"], capsys, monkeypatch, click=False)
    indented = same(mission, ["status", "--json"], capsys, monkeypatch, click=False)
    assert "\x1b[" in coloured[1] and "\x1b[" not in plain[1]
    assert indented[1].startswith("{\n") and not as_json[1].startswith("{\n")
    monkeypatch.setenv("NO_COLOR", "1")
    assert not served(mission, ["status"])
    same(mission, ["status"], capsys, monkeypatch, click=False)


def test_the_clock_ends_a_record(
    mission: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A review turns silent after review.stall_minutes (30), and its age then ticks by the
    minute: each moment is served only while the printed text is still true."""
    in_review(mission)
    git(mission, "add", "-A")
    git(mission, "commit", "-qm", "in review")
    real = time.time_ns()
    seen = []
    for minutes in (29, 29.5, 31, 31.2, 32.1, 32.5):
        monkeypatch.setattr(time, "time_ns", lambda m=minutes: real + int(m * 60e9))
        seen.append(same(mission, ["status", "--json"], capsys, monkeypatch)[1])
    stalled = [json.loads(out)["work_packages"][0]["stalled"] for out in seen]
    assert stalled[0] is None and stalled[1] is None
    assert stalled[2] is not None and "silent for 31m" in stalled[2]
    assert stalled[3] == stalled[2] and "silent for 32m" in stalled[4]


def test_no_cache_setting_never_writes_and_the_record_is_untracked(
    mission: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KITTY_NO_CACHE", "1")
    for args in ARGS:
        fast(mission, args, capsys)
    assert records(mission) == []
    monkeypatch.delenv("KITTY_NO_CACHE")
    for args in ARGS:
        fast(mission, args, capsys)
    assert len(records(mission)) == len(ARGS)
    assert git(mission, "status", "--porcelain", "--untracked-files=all") == ""


def test_files_changed_in_the_last_two_seconds_are_not_kept(
    mission: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(viewcache, "RACY_NS", 2_000_000_000)
    append(mission / "kitty-specs" / SLUG / "status.events.jsonl", "")
    write_wp(mission / "kitty-specs" / SLUG, "WP03", title="Just now")
    fast(mission, ["status", "--json"], capsys)
    assert records(mission) == []


def _doctored(record: Path, out: str) -> bytes:
    data = record.read_bytes()
    value = marshal.loads(data[8:])
    value["out"] = out
    body = marshal.dumps(value)
    return data[:4] + zlib.crc32(body).to_bytes(4, "big") + body


def test_a_corrupt_or_symlinked_record_is_ignored(
    mission: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    args = ["status", "--json"]
    want = same(mission, args, capsys, monkeypatch)
    [record] = records(mission)
    good = record.read_bytes()
    record.write_bytes(_doctored(record, "EVIL\n"))
    assert fast(mission, args, capsys)[1] == "EVIL\n"  # a record is trusted as it stands
    for bad in (good[:-7], good[:8] + b"\x00" * (len(good) - 8), b"", b"KSV1"):
        record.write_bytes(bad)
        assert fast(mission, args, capsys) == want
    outside = tmp_path / "elsewhere.view"
    record.write_bytes(good)
    outside.write_bytes(_doctored(record, "EVIL\n"))
    record.unlink()
    record.symlink_to(outside)
    assert fast(mission, args, capsys) == want
    assert record.is_symlink() or record.read_bytes() != outside.read_bytes()


def test_a_symlinked_cache_folder_is_neither_read_nor_written(
    mission: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    args = ["status", "--json"]
    want = same(mission, args, capsys, monkeypatch)
    folder = mission / ".git" / "kitty" / "cache" / viewcache.FOLDER
    elsewhere = tmp_path / "views"
    folder.rename(elsewhere)
    folder.symlink_to(elsewhere)
    for record in elsewhere.glob("*.view"):
        record.write_bytes(_doctored(record, "EVIL\n"))
    assert fast(mission, args, capsys) == want
    assert not served(mission, args)


def test_a_live_agent_process_is_never_cached(
    mission: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whether a sprint's agent still runs can change at any moment."""
    changes: list[int] = []
    from kitty.mission.workspace import Mission
    from kitty.teams.liveness import mark_stalled

    opened = Mission.open(mission, SLUG)
    board = opened.board
    board.wps["WP01"].runtime_claim = {"agent_pid": os.getpid(), "agent": "claude"}
    views = [{"id": "WP01"}]
    mark_stalled(views, board, time.time_ns() // 1000, changes=changes)
    assert changes and min(changes) <= time.time_ns() // 1000
    assert not viewcache.store(
        str(mission), None, True, str(mission / ".git"), [], (0, changes), ("x", ""), None
    )


def test_hot_status_is_the_one_body(mission: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The click command and the fast path run the same function (no second copy)."""
    calls: list[tuple[object, ...]] = []
    original = hot.status

    def spy(*a: object, **k: object) -> int:
        calls.append(a)
        return original(*a, **k)  # type: ignore[arg-type]

    mp = pytest.MonkeyPatch()
    mp.setattr(hot, "status", spy)
    mp.setenv("KITTY_NO_CACHE", "1")
    try:
        click_kitty(mission, "status", "--list")
        fast(mission, ["status"], capsys)
    finally:
        mp.undo()
    assert len(calls) == 2


def test_a_warm_status_imports_almost_nothing(repo: Path) -> None:
    """Served from the cache, `kitty status` imports none of kitty's readers, no click,
    no dataclasses, typing, json or pickle (pathlib and re are left out of the check:
    an editable install's path finder imports them into every interpreter)."""

    make_mission(repo, slug=SLUG, wps=[{"wp_id": "WP01"}])
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "mission")

    def modules(*args: str) -> tuple[str, set[str]]:
        return imported_by(repo, *args)

    time.sleep(2.1)  # older than the racy window
    for args in (["status"], ["status", "--json"]):
        first, cold = modules(*args)
        again, warm = modules(*args)
        assert again == first
        assert "typing" in cold and "kitty.workflow.board" in cold
        heavy = {"dataclasses", "typing", "json", "pickle", "click", "yaml", "shutil"}
        assert not warm & heavy, warm & heavy
        allowed = {"kitty.adapters.viewcache", "kitty.hot", "kitty.fastpath", "kitty.entry"}
        allowed |= {"kitty.grammar"}  # the hot commands' declared parameters (plain data)
        allowed |= {"kitty.core.lanes", "kitty.output", "kitty.core.printable", "kitty.errors"}
        allowed |= {"kitty.workflow.commits.pending", "kitty.adapters.git"}  # its one git status
        kitty_modules = {m for m in warm if m.startswith("kitty.")}
        assert (
            kitty_modules
            - {"kitty.adapters", "kitty.core", "kitty.workflow", "kitty.workflow.commits"}
            <= allowed
        )


def test_from_a_subfolder_and_a_linked_worktree(
    mission: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Which mission is meant follows the worktree and its branch; both are inputs."""
    make_mission(mission, slug="other-01OTHERMI", finalize=False)
    git(mission, "add", "-A")
    git(mission, "commit", "-qm", "two missions")
    lane = mission / ".worktrees" / f"{SLUG}-lane-a"
    git(mission, "worktree", "add", "-q", "-b", f"kitty/mission-{SLUG}-lane-a", str(lane))
    sub = lane / "kitty-specs"
    for where in (lane, sub):
        code, out, _ = same(where, ["status", "--json"], capsys, monkeypatch)
        assert code == 0 and json.loads(out)["mission_slug"] == SLUG
    other = mission / "elsewhere"
    git(mission, "worktree", "add", "-q", "-b", "kitty/mission-other-01OTHERMI", str(other))
    code, out, _ = same(other, ["status", "--json"], capsys, monkeypatch)
    assert json.loads(out)["mission_slug"] == "other-01OTHERMI"
    git(other, "checkout", "-q", "-b", f"kitty/mission-{SLUG}-x")  # the branch says which
    code, out, _ = same(other, ["status", "--json"], capsys, monkeypatch)
    assert json.loads(out)["mission_slug"] == SLUG


def test_only_the_newest_records_are_kept(
    mission: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for width in range(60, 60 + viewcache.KEEP + 3):
        monkeypatch.setenv("COLUMNS", str(width))
        fast(mission, ["status"], capsys)
    assert len(records(mission)) == viewcache.KEEP
    assert served(mission, ["status"])
