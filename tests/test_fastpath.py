"""The hot commands without click (kitty/fastpath.py) do exactly what the click commands do.

Reads (`status`, `next`) print the same bytes; writes (`move`, `agent tasks
move-task`, `next --claim`, `agent tasks mark-status`) print the same bytes, exit
with the same code and leave the same files (events, status.json, review-cycle
files) behind, for every outcome: success, kitty's own errors, a busy lock, a bad
setting, an OS error and a crash.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from kitty import fastpath
from kitty.adapters import eventlog
from tests.helpers import kitty, lane_commit, make_mission, ok

SLUG = "fast-01FASTPA"

SAME = [
    ["status"],
    ["status", "--json"],
    ["status", "--mission", SLUG],
    ["status", "-m", SLUG, "--json"],
    ["status", f"--mission={SLUG}", "--json"],
    ["status", "--mission", "nope"],
    ["status", "--json", "--mission", "nope"],
    ["next", "--agent", "claude", "--json"],
    ["next", "-a", "codex", "--json", "--mission", SLUG],
    ["next", "--json", "--agent=claude"],
    ["next", "--json"],
    ["next", "--agent", "claude"],
    ["next", "-a", "codex", "-m", SLUG],
    ["next"],
]

LEFT_TO_CLICK = [
    ["status", "--help"],
    ["status", "--json", "--json"],
    ["status", "--bogus"],
    ["status", "extra"],
    ["status", "--mission"],
    ["status", "--mission", ""],
    ["next", "--agent", "--json"],
    ["next", "--agent", "claude", "--claim", "--remote", "origin"],
    ["next", "--help"],
    ["next", "--force"],
    ["next", "WP01"],
    ["lanes", "--json"],
    ["move", "--help"],
    ["move", "WP01", "claimed", "-h"],
    ["move", "WP01"],
    ["move", "WP01", "claimed", "extra"],
    ["move", "WP01", "claimed", "--note"],
    ["move", "WP01", "claimed", "--note", "-x"],
    ["move", "WP01", "claimed", "--note="],
    ["move", "WP01", "claimed", "--claim"],
    ["move", "--", "WP01", "claimed"],
    ["move", "-x", "claimed"],  # an unknown option where the WP goes
    ["move", "WP01", "claimed", "--review-feedback-file", "fb.md"],
    ["move", "WP01", "approved", "--force", "--self-review-fallback"],
    ["move", "WP01", "claimed", "--agent", "a", "--agent", "b"],
    ["move", "WP01", "claimed", "--to", "claimed"],  # the lane twice: click refuses it
    ["move", "WP01", "--to", "claimed", "--to", "planned"],
    ["agent", "tasks", "move-task", "WP01"],
    ["agent", "tasks", "move-task", "WP01", "claimed"],
    ["agent", "tasks", "move-task", "--help"],
    ["agent", "tasks", "mark-status", "T001", "--status", "bogus"],
    ["agent", "tasks", "mark-status", "T001"],
    ["agent", "tasks", "mark-status", "--help"],
    ["agent", "tasks", "mark-status", "T001", "--status", "done", "--force"],
    ["agent", "tasks"],
    ["agent"],
    [],
]


@pytest.fixture
def mission_repo(repo: Path) -> Path:
    make_mission(
        repo,
        slug=SLUG,
        wps=[
            {"wp_id": "WP01", "subtasks": ["T001"]},
            {"wp_id": "WP02", "deps": ["WP01"]},
            {"wp_id": "WP03", "title": "Broken", "extra": "owned_files: [x"},
        ],
        finalize=False,
    )
    (repo / "kitty-specs" / SLUG / "tasks" / "WP03-broken.md").unlink()
    ok(repo, "finalize", "--mission", SLUG)
    ok(repo, "move", "WP01", "claimed", "--agent", "claude")
    with (repo / "kitty-specs" / SLUG / "status.events.jsonl").open("a") as log:
        log.write("not json\n")  # a warning on stderr
    return repo


@pytest.mark.parametrize("args", SAME, ids=lambda a: " ".join(a) or "-")
def test_fast_route_prints_what_click_prints(
    mission_repo: Path, args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    full = kitty(mission_repo, *args)
    code = fastpath.run(["-C", str(mission_repo), *args])
    fast = capsys.readouterr()
    assert code is not None
    assert (code, fast.out, fast.err) == (full.code, full.out, full.err)


@pytest.mark.parametrize("args", LEFT_TO_CLICK, ids=lambda a: " ".join(a) or "-")
def test_anything_else_is_left_to_click(
    mission_repo: Path, args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert fastpath.run(["-C", str(mission_repo), *args]) is None
    assert capsys.readouterr() == ("", "")


def test_a_missing_directory_is_left_to_click(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert fastpath.run(["-C", str(tmp_path / "missing"), "status"]) is None
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()  # the working directory itself
    assert fastpath.run(["move", "WP01", "claimed"]) is None


def test_hot_commands_do_not_import_click(mission_repo: Path) -> None:
    """Neither click nor git/networkx/filelock; nor yaml once the snapshot cache holds the
    parsed config and WP files (files younger than two seconds are never trusted from it)."""
    probe = (
        "import sys\n"
        "from kitty.entry import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exit:\n"
        "    heavy = [m for m in ('click', 'yaml', 'git', 'networkx', 'filelock')\n"
        "             if m in sys.modules]\n"
        "    print('HEAVY=' + ','.join(heavy), file=sys.stderr)\n"
        "    raise\n"
    )

    def heavy(args: list[str]) -> set[str]:
        done = subprocess.run(
            [sys.executable, "-c", probe, "-C", str(mission_repo), *args],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return set(done.stderr.splitlines()[-1].removeprefix("HEAVY=").split(",")) - {""}

    commands = (["status", "--json"], ["status"], ["next", "--agent", "claude", "--json"])
    for args in commands:
        assert heavy(args) <= {"yaml"}, args
    time.sleep(2.1)
    heavy(["status"])  # caches the files, now old enough to trust
    for args in commands:
        assert heavy(args) == set(), args
    writes = (
        ["move", "WP02", "blocked", "--agent", "lead", "--note", "waits"],
        ["agent", "tasks", "move-task", "WP02", "--to", "planned", "--agent", "lead"],
        ["next", "--agent", "codex", "--claim", "--json"],
        # the ready-for-review guard's git facts (issue 41) run plain git processes
        ["move", "WP01", "for_review", "--agent", "claude", "--force", "--note", "docs only"],
    )
    for args in writes:
        assert heavy(args) == set(), args


# -- writes ---------------------------------------------------------------------------

WSLUG = "write-01WRITEPA"
ULID = re.compile(r"\b[0-9A-HJKMNP-TV-Z]{26}\b")
STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(\+00:00|Z)?")
CRASH_LOG = re.compile(r"\S*kitty-crash-\S+\.log")
# "claimed by claude for 0s": the two runs may fall either side of a second under load
AGE = re.compile(r"\bfor \d+[smhd](\d+[mh])?\b")

WRITES = [
    ["move", "WP01", "claimed", "--agent", "claude"],
    ["move", "WP1", "claimed", "--agent", "claude", "--json"],
    ["move", "1", "claimed", "--agent=claude", "-m", WSLUG],
    ["move", "WP01", "--to", "claimed", "--agent", "claude"],  # move-task's spelling
    ["move", "WP01", "claimed", "--agent=claude", "--note=why=because"],  # '=' in a value
    ["move", "--to=claimed", "WP01", "--json"],
    ["move", "WP01", "claimed"],  # the actor from git's identity
    ["agent", "tasks", "move-task", "WP01", "--to", "claimed", "--agent", "claude", "--json"],
    ["agent", "tasks", "move-task", "--to=claimed", "WP01", "-a", "claude", f"--mission={WSLUG}"],
    ["move", "WP03", "planned", "--agent", "codex", "--note", "the tests fail"],  # a rejection
    ["move", "WP03", "approved", "--agent", "codex", "--json"],
    ["move", "WP01", "blocked", "--force", "--agent", "lead", "--note", "needs a human", "--json"],
    ["agent", "tasks", "move-task", "WP01", "--to", "doing", "--agent", "claude", "--json"],
    ["move", "WP01", "doing", "--agent", "claude", "--note", "on it"],  # claims, then starts
    ["agent", "tasks", "move-task", "WP02", "--to", "doing", "--agent", "claude"],
    ["agent", "tasks", "move-task", "WP03", "--to", "doing", "--agent", "codex"],  # a rejection
    ["next", "--agent", "codex", "--claim", "--json"],
    ["next", "--claim", "--agent", "claude"],
    ["next", "--claim", "-a", "claude", "--json", "--mission", WSLUG],
    ["agent", "tasks", "mark-status", "T001", "--status", "done", "--agent", "claude"],
    ["agent", "tasks", "mark-status", "t001", "--status=done", "--wp", "WP02", "--json"],
    ["agent", "tasks", "mark-status", "T001", "T002", "--status", "in_progress", "-m", WSLUG],
    # errors
    ["move", "WP09", "claimed", "--agent", "claude"],  # no such WP
    ["move", "WP09", "claimed", "--agent", "claude", "--json"],
    ["move", "nope", "claimed", "--agent", "claude"],  # not a WP id
    ["move", "WP01", "done", "--agent", "claude"],  # illegal transition
    ["move", "WP01", "done", "--agent", "claude", "--json"],
    ["move", "WP01", "sideways", "--agent", "claude"],  # no such lane
    ["move", "WP02", "for_review", "--agent", "claude"],  # guard: subtasks not done
    ["move", "WP05", "for_review", "--agent", "claude"],  # guard: nothing committed (41)
    ["move", "WP05", "for_review", "--agent", "claude", "--json"],
    ["move", "WP05", "for_review", "--agent", "claude", "--force", "--note", "docs only"],
    ["move", "WP01", "planned", "--agent", "claude"],  # already there
    ["move", "WP01", "blocked", "--force", "--agent", "lead"],  # --force without --note
    ["move", "WP01", "blocked", "--force", "--agent", "lead", "--json"],
    ["move", "WP03", "approved", "--agent", "claude"],  # the implementer approving itself
    ["move", "WP01", "claimed", "--mission", "nope"],  # no such mission
    ["agent", "tasks", "move-task", "WP01", "--to", "claimed", "-m", "nope", "--json"],
    ["next", "--claim", "--agent", "claude", "--mission", "nope"],
    ["agent", "tasks", "mark-status", "T009", "--status", "done"],  # no such subtask
    ["agent", "tasks", "mark-status", "--status", "done", "--json"],  # no subtask named
    ["agent", "tasks", "mark-status", "T001", "--status", "done", "--wp", "WP01"],
    ["agent", "tasks", "mark-status", "T001", "--status", "done", "--wp", "WP09", "--json"],
]


@pytest.fixture
def write_repo(repo: Path) -> Path:
    """WP01 planned, WP02 claimed by claude with a subtask open, WP03 in review by codex,
    WP05 in progress by claude with nothing committed."""
    make_mission(
        repo,
        slug=WSLUG,
        wps=[
            {"wp_id": "WP01"},
            {"wp_id": "WP02", "subtasks": ["T001", "T002"]},
            {"wp_id": "WP03"},
            {"wp_id": "WP04", "deps": ["WP01"]},
            {"wp_id": "WP05"},
        ],
    )
    for wp, lane, agent in [
        ("WP02", "claimed", "claude"),
        ("WP03", "claimed", "claude"),
        ("WP03", "in_progress", "claude"),
        ("WP03", "for_review", "claude"),
        ("WP03", "in_review", "codex"),
        ("WP05", "in_progress", "claude"),
    ]:
        if lane == "for_review":
            lane_commit(repo, wp)
        ok(repo, "move", wp, lane, "--agent", agent)
    return repo


def _files(repo: Path) -> dict[str, str]:
    """Every mission file, ids and timestamps masked (they differ between two runs)."""
    found = {}
    for path in sorted((repo / "kitty-specs").rglob("*")):
        if path.is_file():
            found[str(path.relative_to(repo))] = _mask(path.read_text())
    return found


def _mask(text: str) -> str:
    masked = CRASH_LOG.sub("<log>", STAMP.sub("<at>", ULID.sub("<ulid>", text)))
    return AGE.sub("for <age>", masked)


def _both(repo: Path, args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """Run `args` on the fast path and on click from the same state; compare everything."""
    saved = repo.parent / "saved"
    shutil.copytree(repo / "kitty-specs", saved / "specs", symlinks=True)
    cache = repo / ".git" / "kitty" / "cache"  # (not the lock files: a held lock stays held)
    shutil.copytree(cache, saved / "cache")
    capsys.readouterr()
    code = fastpath.run(["-C", str(repo), *args])
    fast = capsys.readouterr()
    assert code is not None, args
    fast_files = _files(repo)
    for name, target in (("specs", repo / "kitty-specs"), ("cache", cache)):
        shutil.rmtree(target)
        shutil.copytree(saved / name, target, symlinks=True)
    full = kitty(repo, *args)
    for log in CRASH_LOG.findall(fast.out + fast.err):
        # the crash log names the command that crashed, as click's does
        assert repr(["-C", str(repo), *args]) in Path(log).read_text().splitlines()[0], log
    for log in CRASH_LOG.findall(fast.out + fast.err + full.out + full.err):
        Path(log).unlink(missing_ok=True)
    assert (code, _mask(fast.out), _mask(fast.err)) == (
        full.code,
        _mask(full.out),
        _mask(full.err),
    )
    assert fast_files == _files(repo)
    shutil.rmtree(saved)


@pytest.mark.parametrize("args", WRITES, ids=lambda a: " ".join(a))
def test_fast_writes_do_what_click_does(
    write_repo: Path, args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    _both(write_repo, args, capsys)


def test_fast_writes_outcomes_match_on_a_symlinked_log(
    write_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = write_repo / "kitty-specs" / WSLUG / "status.events.jsonl"
    outside = tmp_path / "elsewhere.jsonl"
    shutil.move(log, outside)
    log.symlink_to(outside)
    for args in (
        ["move", "WP01", "claimed", "--agent", "claude"],
        ["next", "--claim", "--agent", "claude", "--json"],
    ):
        _both(write_repo, args, capsys)
        assert "symbolic link" in kitty(write_repo, *args).out + kitty(write_repo, *args).err


def test_fast_writes_outcomes_match_with_a_busy_lock(
    write_repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KITTY_LOCK_TIMEOUT", "0")
    lock = write_repo / ".git" / "kitty" / f"{WSLUG}.lock"
    with eventlog.locked(lock, "test"):
        _both(write_repo, ["move", "WP01", "claimed", "--agent", "claude"], capsys)
        _both(write_repo, ["next", "--claim", "--agent", "claude", "--json"], capsys)
        assert kitty(write_repo, "move", "WP01", "claimed", "--agent", "claude").code == 75
    monkeypatch.setenv("KITTY_LOCK_TIMEOUT", "soon")
    _both(write_repo, ["move", "WP01", "claimed", "--agent", "claude", "--json"], capsys)


@pytest.mark.parametrize(
    "raise_",
    [
        lambda: RuntimeError("kaboom"),
        lambda: PermissionError(13, "Permission denied", "/nowhere/x"),
        lambda: KeyboardInterrupt(),
    ],
    ids=["crash", "os-error", "interrupt"],
)
def test_fast_writes_report_unexpected_errors_like_click(
    write_repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    raise_: Callable[[], BaseException],
) -> None:
    """What no command expects is reported once, never redone by click after a write."""
    from kitty.workflow import moves
    from kitty.workflow import nextstep as schedule

    def boom(*args: object, **kwargs: object) -> None:
        raise raise_()

    monkeypatch.setattr(moves, "move_task", boom)
    monkeypatch.setattr(schedule, "next_step", boom)
    for args in (
        ["move", "WP01", "claimed", "--agent", "claude"],
        ["move", "WP01", "claimed", "--agent", "claude", "--json"],
        ["next", "--claim", "--agent", "claude"],
    ):
        _both(write_repo, args, capsys)


WARM = [
    ["status"],
    ["status", "--json", "--mission", SLUG],
    ["next", "--agent", "claude"],
    ["next", "-a", "codex", "--json", "-m", SLUG],
]


@pytest.mark.parametrize("args", WARM, ids=" ".join)
def test_a_warm_read_is_printed_from_its_record_without_running_the_command(
    mission_repo: Path,
    args: list[str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The second identical read prints the kept bytes and reads nothing else; a problem
    with the cache is a miss (the command runs), never an empty answer."""
    from kitty import hot
    from kitty.adapters import viewcache

    monkeypatch.setattr(viewcache, "RACY_NS", 0)
    (mission_repo / "kitty-specs" / SLUG / "status.events.jsonl").write_text(
        "".join(
            line + "\n"
            for line in (mission_repo / "kitty-specs" / SLUG / "status.events.jsonl")
            .read_text()
            .splitlines()
            if line.startswith("{")
        )
    )
    assert fastpath.run(["-C", str(mission_repo), *args]) == 0
    first = capsys.readouterr()
    assert first.out
    body = "next_" if args[0] == "next" else "status"
    real = getattr(hot, body)

    def not_run(*a: object, **k: object) -> int:
        raise AssertionError("the command ran instead of its record")

    monkeypatch.setattr(hot, body, not_run)
    assert fastpath.run(["-C", str(mission_repo), *args]) == 0
    assert capsys.readouterr() == first
    monkeypatch.setattr(hot, body, real)

    def broken(*a: object, **k: object) -> None:
        raise RuntimeError("a cache problem")

    monkeypatch.setattr(viewcache, "lookup", broken)
    assert fastpath.run(["-C", str(mission_repo), *args]) == 0
    assert capsys.readouterr() == first


def test_a_claim_always_runs_the_command(
    mission_repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from kitty import hot
    from kitty.adapters import viewcache

    monkeypatch.setattr(viewcache, "RACY_NS", 0)
    read = ["-C", str(mission_repo), "next", "--agent", "codex", "--json"]
    assert fastpath.run(read) == 0
    capsys.readouterr()
    calls: list[dict[str, object]] = []
    real = hot.next_

    def spy(*a: object, **k: object) -> int:
        calls.append(k)
        return real(*a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(hot, "next_", spy)
    assert fastpath.run([*read, "--claim"]) == 0
    assert calls and calls[0]["claim"] is True and calls[0]["cache"] is False
    assert '"action": "wait"' in capsys.readouterr().out


def test_the_mcp_server_starts_in_the_directory_given(
    mission_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kitty import hot

    started: list[str] = []
    monkeypatch.setattr(hot, "mcp", lambda cwd: started.append(cwd) or 0)
    assert fastpath.run(["-C", str(mission_repo), "mcp"]) == 0
    assert started == [str(mission_repo)]


def test_without_dash_c_the_hot_commands_run_in_the_current_directory(
    mission_repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(mission_repo)
    for args in (["status", "--json"], ["next", "--agent", "claude"]):
        assert fastpath.run(args) == 0, args
        assert capsys.readouterr().out == kitty(mission_repo, *args).out


def test_a_reader_that_closed_the_pipe_ends_the_command_quietly(
    mission_repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`kitty status | head -1`: exit 0, no traceback, and the work is not done twice."""
    from kitty import hot
    from kitty.adapters import viewcache

    monkeypatch.setattr(viewcache, "RACY_NS", 0)
    args = ["-C", str(mission_repo), "status", "--json"]
    assert fastpath.run(args) == 0  # keeps the record
    capsys.readouterr()

    def closed(*a: object, **k: object) -> None:
        raise BrokenPipeError

    def not_run(*a: object, **k: object) -> int:
        raise AssertionError("the command ran again after the pipe closed")

    monkeypatch.setattr(hot, "put", closed)
    monkeypatch.setattr(hot, "status", not_run)
    assert fastpath.run(args) == 0  # the record's print met the closed pipe
    monkeypatch.setattr(hot, "status", closed)
    monkeypatch.setenv("KITTY_NO_CACHE", "1")
    assert fastpath.run(args) == 0  # the command's own print met it
    assert capsys.readouterr().err == ""
