"""Reliability under real faults (issue 10): run by `make test`, about a minute on 2 cores.

* concurrent writers: real processes cycling their WPs through lanes at once;
* concurrent claimers: more agents than ready WPs, `next --claim` at once;
* concurrent `wp add` / `mission create`: ids and directories allocated under the lock;
* `kill -9` during writes: nothing reported as recorded is lost, nothing half-written;
* a fuzz pass over bad inputs: no traceback, no exit 3, no half-write;
* the symlink cases of finding 1, each in a real process.

The figures (processes, events, kills, fuzz cases, tracebacks, half-writes) are
printed at the end of the run.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import kitty, kitty_argv, make_mission, ok
from tests.reliability.figures import FIGURES

WORKER = Path(__file__).with_name("worker.py")
ROOT = Path(__file__).resolve().parents[2]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


_STARTED: list[subprocess.Popen[str]] = []


@pytest.fixture(autouse=True)
def _reap() -> Any:
    """No process outlives its test, even when an assertion fails half-way."""
    yield
    while _STARTED:
        proc = _STARTED.pop()
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def _track(proc: subprocess.Popen[str]) -> subprocess.Popen[str]:
    FIGURES["processes"] += 1
    _STARTED.append(proc)
    return proc


def _worker(repo: Path, wp: str, agent: str, count: int) -> subprocess.Popen[str]:
    return _track(
        subprocess.Popen(
            [sys.executable, str(WORKER), "cycle", str(repo), wp, agent, str(count)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(),
        )
    )


def _spawn(repo: Path, *args: str) -> subprocess.Popen[str]:
    return _track(
        subprocess.Popen(
            kitty_argv(repo, *args),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(),
        )
    )


def _log_records(mission: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (mission / "status.events.jsonl").read_text().splitlines()]


def _reported(stdout: str) -> tuple[list[str], list[dict[str, Any]]]:
    """Event ids a worker reported as recorded, and its refusals (complete lines only)."""
    ids: list[str] = []
    refusals: list[dict[str, Any]] = []
    for line in stdout.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue  # the line being printed when the worker was killed
        if "ok" in item:
            ids += item["ok"]
        else:
            refusals.append(item)
    return ids, refusals


def _assert_consistent(repo: Path, mission: Path) -> None:
    """Every line is a JSON object, timestamps never repeat, status.json is whole."""
    records = _log_records(mission)
    ats = [r["at"] for r in records]
    assert len(set(ats)) == len(ats), "the hybrid clock repeated a timestamp"
    json.loads((mission / "status.json").read_text())
    doctor = kitty(repo, "doctor")
    assert doctor.code == 0, doctor.out


def test_concurrent_writers_lose_nothing(repo: Path) -> None:
    workers, moves = 8, 30
    mission = make_mission(repo, wps=[{"wp_id": f"WP{i:02d}"} for i in range(1, workers + 1)])
    before = len(_log_records(mission))
    procs = [_worker(repo, f"WP{i:02d}", f"agent{i}", moves) for i in range(1, workers + 1)]
    reported: list[str] = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        ids, refusals = _reported(out)
        assert refusals == [], refusals
        reported += ids
    records = _log_records(mission)
    assert len(records) - before == workers * moves == len(reported)
    assert {r["event_id"] for r in records} >= set(reported)
    FIGURES["events"] += len(reported)
    _assert_consistent(repo, mission)
    status = ok(repo, "status", "--json").json()
    lanes = {wp["id"]: wp["lane"] for wp in status["work_packages"]}
    assert set(lanes.values()) == {"planned"}  # 30 moves = 10 full cycles each


def test_concurrent_claimers_never_double_claim(repo: Path) -> None:
    mission = make_mission(repo, wps=[{"wp_id": f"WP{i:02d}"} for i in range(1, 5)])
    procs = [_spawn(repo, "next", "--agent", f"racer{i}", "--claim", "--json") for i in range(10)]
    claimed = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        result = json.loads(out)
        if result["claimed"]:
            claimed.append(result["wp_id"])
    assert sorted(claimed) == ["WP01", "WP02", "WP03", "WP04"]
    claims = [r for r in _log_records(mission) if r.get("to_lane") == "claimed"]
    assert len(claims) == 4
    FIGURES["events"] += len(claims)


def test_parallel_wp_add_allocates_distinct_valid_wps(repo: Path) -> None:
    mission = make_mission(repo, wps=[], finalize=False)
    brief = ["--objective", "A part", "--subtask", "the code", "--subtask", "its tests"]
    procs = [_spawn(repo, "wp", "add", "--title", f"Part {i}", *brief, "--json") for i in range(8)]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        results.append(json.loads(out))
    ids = sorted(r["wp_id"] for r in results)
    assert ids == [f"WP{i:02d}" for i in range(1, 9)]
    subtasks = [t for r in results for t in r["subtasks"]]
    assert len(set(subtasks)) == 16
    assert len(list((mission / "tasks").glob("WP*.md"))) == 8
    ok(repo, "finalize")


def test_parallel_mission_create_is_clean(repo: Path) -> None:
    ok(repo, "init")
    procs = [_spawn(repo, "mission", "create", "same", "--json") for _ in range(4)]
    created = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode in (0, 1), err
        assert "Traceback" not in err and "internal error" not in err
        if proc.returncode == 0:
            created.append(json.loads(out)["mission"])
        else:
            assert json.loads(out)["error"]["code"] == "already_exists"
    folders = sorted(p.name for p in (repo / "kitty-specs").iterdir())
    assert folders == sorted(set(created)) and created
    for folder in folders:
        json.loads((repo / "kitty-specs" / folder / "meta.json").read_text())


def test_same_mission_slug_at_once_one_wins(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two creates in the same clock tick get the same slug: one wins, one exits 1."""
    from kitty.adapters import eventlog

    ok(repo, "init")
    monkeypatch.setattr(eventlog, "now_us", lambda: 1_800_000_000_000_000)
    first = ok(repo, "mission", "create", "same", "--json").json()["mission"]
    second = kitty(repo, "mission", "create", "same")
    assert second.code == 1 and "already exists" in second.err
    assert [p.name for p in (repo / "kitty-specs").iterdir()] == [first]


def test_kill_9_during_writes_loses_nothing(repo: Path) -> None:
    workers, rounds = 4, 4
    mission = make_mission(repo, wps=[{"wp_id": f"WP{i:02d}"} for i in range(1, workers + 1)])
    lines_before = len(_log_records(mission))
    rng = random.Random(10)
    reported: list[str] = []
    kills = 0
    for _ in range(rounds):
        size = (mission / "status.events.jsonl").stat().st_size
        procs = [_worker(repo, f"WP{i:02d}", f"k{i}", 10_000) for i in range(1, workers + 1)]
        # start-up (seconds on a loaded machine), then a stream of locked appends: kill
        # while they write, not before the first one (a fixed sleep did under load)
        deadline = time.monotonic() + 60
        while (mission / "status.events.jsonl").stat().st_size == size:
            assert time.monotonic() < deadline, "no worker wrote within 60 s"
            time.sleep(0.02)
        time.sleep(rng.uniform(0.2, 0.6))
        for proc in procs:
            time.sleep(rng.uniform(0.0, 0.15))
            proc.send_signal(signal.SIGKILL)
            kills += 1
        for proc in procs:
            out, _ = proc.communicate(timeout=60)
            assert proc.returncode == -signal.SIGKILL
            ids, refusals = _reported(out)
            # A worker killed between its append and its report restarts one lane
            # further than it thinks: such refusals (exit 1) are legitimate; crashes are not.
            assert all(r["code"] == 1 for r in refusals), refusals
            reported += ids
    FIGURES["kills"] += kills
    logged = _log_records_tolerant(mission)
    FIGURES["events"] += len(logged) - lines_before
    assert len(reported) > kills, "the workers were killed before they wrote anything"
    ids = {r["event_id"] for r in logged}
    lost = [i for i in reported if i not in ids]
    assert lost == [], f"{len(lost)} events reported as recorded are missing"
    json.loads((mission / "status.json").read_text())  # derived file never half-written
    fix = kitty(repo, "doctor", "--fix")
    assert fix.code == 0, fix.out
    _assert_consistent(repo, mission)


def _log_records_tolerant(mission: Path) -> list[dict[str, Any]]:
    records = []
    for line in (mission / "status.events.jsonl").read_text().splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            FIGURES["torn lines after kill"] += 1
    return records


# -- fuzz ------------------------------------------------------------------------------------

GOOD_LINE = json.dumps(
    {
        "actor": "claude",
        "at": "2026-01-01T00:00:00+00:00",
        "event_id": "01KAAAAAAAAAAAAAAAAAAAAAAA",
        "force": False,
        "from_lane": "planned",
        "to_lane": "claimed",
        "wp_id": "WP01",
    },
    sort_keys=True,
)
NASTY = [
    "",
    "\x00",
    "\xff",
    "null",
    "[]",
    "{}",
    '{"wp_id": 5}',
    "{'a': 1}",
    "1e999",
    '"' + "x" * 5000 + '"',
    "---",
    "- a\n- b",
    "{[",
    "\u2028",
    "9999-12-31T23:59:59.999999+00:00",
    "-1",
    "true",
    "NaN",
]


def _mutate(rng: random.Random, text: str) -> str:
    choice = rng.randrange(6)
    if choice == 0 and text:
        cut = rng.randrange(len(text))
        return text[:cut]
    if choice == 1:
        return text + rng.choice(NASTY)
    if choice == 2 and text:
        pos = rng.randrange(len(text))
        return text[:pos] + rng.choice(NASTY) + text[pos:]
    if choice == 3:
        return rng.choice(NASTY)
    if choice == 4:
        return "".join(chr(rng.randrange(1, 0x3000)) for _ in range(rng.randrange(1, 40)))
    return text.replace(rng.choice([":", "[", "]", '"', "-", "\n"]), rng.choice(NASTY), 1)


EVENT_KEYS = [*json.loads(GOOD_LINE), "kind", "delta", "review_result", "policy_metadata"]
BAD_VALUES: list[object] = [
    *(None, 5, -1, 1.5, True, "yes", "", [], {}, {"x": [1]}, "WP", "annotation"),
    *("doing", "9999-12-31T23:59:59.999999+00:00", "2999-01-01T00:00:00+00:00"),
]
#: Every bad value in every event key once, then random mutations.
DIRECTED = [(key, value) for key in EVENT_KEYS for value in BAD_VALUES]


def _mutate_event(rng: random.Random, case: int) -> str:
    record = json.loads(GOOD_LINE)
    key, value = (
        DIRECTED[case] if case < len(DIRECTED) else (rng.choice(EVENT_KEYS), rng.choice(BAD_VALUES))
    )
    record[key] = value
    record["event_id"] = f"01KFUZZ{rng.randrange(10**18):019d}"
    return json.dumps(record)


TARGETS = ("log", "event", "config", "meta", "wp", "lanes")
COMMANDS = (
    ("status", "--json"),
    ("next", "--agent", "claude"),
    ("move", "WP01", "claimed", "--agent", "claude"),
    ("agent", "tasks", "mark-status", "T001", "--status", "done", "--agent", "claude"),
    ("doctor",),
    ("lanes",),
    ("finalize",),
)


def test_fuzz_bad_inputs_no_traceback_no_half_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.helpers import init_repo

    rng = random.Random(1010)
    cases = int(os.environ.get("KITTY_FUZZ_CASES", str(len(DIRECTED) + 240)))
    crash_dir = tmp_path / "crashes"
    crash_dir.mkdir()
    monkeypatch.setenv("TMPDIR", str(crash_dir))  # exit-3 crash logs land here
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(crash_dir))
    repo = init_repo(tmp_path / "repo")
    wps = [
        {"wp_id": "WP01", "title": "One", "subtasks": ["T001"]},
        {"wp_id": "WP02", "title": "Two", "deps": ["WP01"]},
    ]
    mission = make_mission(repo, wps=wps)
    pristine = {p: p.read_bytes() for p in _state_files(repo, mission)}
    tracebacks = half_writes = 0
    for case in range(cases):
        for path, data in pristine.items():
            path.write_bytes(data)
        target = "event" if case < len(DIRECTED) else TARGETS[case % len(TARGETS)]
        _corrupt(rng, target, repo, mission, case)
        for args in rng.sample(COMMANDS, 3):
            log_before = (mission / "status.events.jsonl").read_bytes()
            run = kitty(repo, *args)
            text = run.out + run.err
            if run.code == 3 or "Traceback" in text:
                tracebacks += 1
                print(f"case {case} target {target} {args}: {run.code}\n{text}")
            log_after = (mission / "status.events.jsonl").read_bytes()
            if not _whole(log_before, log_after, wrote=run.code == 0):
                half_writes += 1
                print(f"case {case} target {target} {args}: half write")
            status = mission / "status.json"
            if status.exists():
                try:
                    json.loads(status.read_bytes())
                except ValueError:
                    half_writes += 1
        FIGURES["fuzz cases"] += 1
    FIGURES["tracebacks"] += tracebacks + len(list(crash_dir.glob("kitty-crash-*")))
    FIGURES["half-writes"] += half_writes
    assert tracebacks == 0 and half_writes == 0
    assert list(crash_dir.glob("kitty-crash-*")) == []


def _state_files(repo: Path, mission: Path) -> list[Path]:
    return [
        repo / ".kittify" / "config.yaml",
        mission / "meta.json",
        mission / "lanes.json",
        mission / "status.events.jsonl",
        mission / "status.json",
        *sorted((mission / "tasks").glob("*.md")),
    ]


def _corrupt(rng: random.Random, target: str, repo: Path, mission: Path, case: int) -> None:
    log = mission / "status.events.jsonl"
    if target == "log":
        log.write_text(_mutate(rng, log.read_text()), errors="surrogatepass")
    elif target == "event":
        with log.open("a") as handle:
            handle.write(_mutate_event(rng, case) + "\n")
    elif target == "config":
        path = repo / ".kittify" / "config.yaml"
        path.write_text(_mutate(rng, path.read_text()))
    elif target == "meta":
        path = mission / "meta.json"
        path.write_text(_mutate(rng, path.read_text()))
    elif target == "lanes":
        path = mission / "lanes.json"
        path.write_text(_mutate(rng, path.read_text()))
    else:
        path = rng.choice(sorted((mission / "tasks").glob("*.md")))
        path.write_text(_mutate(rng, path.read_text()))


def _whole(before: bytes, after: bytes, *, wrote: bool) -> bool:
    """A refused command leaves the log as it was; a write only adds whole lines."""
    if after == before:
        return True
    if not wrote or not after.startswith(before):
        return False
    added = after[len(before) :]
    if before and not before.endswith(b"\n"):
        if not added.startswith(b"\n"):
            return False
        added = added[1:]
    if not added.endswith(b"\n"):
        return False
    try:
        return all(isinstance(json.loads(line), dict) for line in added.splitlines())
    except ValueError:
        return False


# -- symlinks (finding 1), each in a real process ------------------------------------------


def _link(kind: str, repo: Path, mission: Path, outside: Path) -> Path:
    """Replace one of kitty's paths by a symlink to `outside`; return what must stay intact."""
    if kind == "log":
        target = outside / "bashrc"
        target.write_text("# shell start-up\n")
        (mission / "status.events.jsonl").unlink()
        (mission / "status.events.jsonl").symlink_to(target)
    elif kind == "status":
        target = outside / "status.json"
        target.write_text("{}\n")
        (mission / "status.json").unlink()
        (mission / "status.json").symlink_to(target)
    elif kind == "config":
        target = outside / "config.yaml"
        target.write_text((repo / ".kittify" / "config.yaml").read_text())
        (repo / ".kittify" / "config.yaml").unlink()
        (repo / ".kittify" / "config.yaml").symlink_to(target)
    elif kind == "mission":
        target = outside / "mission"
        mission.rename(target)
        mission.symlink_to(target, target_is_directory=True)
    elif kind == "wp":
        wp = next((mission / "tasks").glob("WP01-*.md"))
        target = outside / wp.name
        target.write_text(wp.read_text())
        wp.unlink()
        wp.symlink_to(target)
    else:  # the lock directory
        target = outside / "locks"
        target.mkdir()
        lock_dir = repo / ".git" / "kitty"
        shutil.rmtree(lock_dir)  # its locks and the snapshot cache
        lock_dir.symlink_to(target, target_is_directory=True)
    return target


def _snapshot(path: Path) -> dict[str, bytes]:
    if path.is_dir():
        return {str(p): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}
    return {str(path): path.read_bytes()}


@pytest.mark.parametrize("kind", ["log", "status", "config", "mission", "wp", "locks"])
def test_symlinks_are_refused_in_a_real_process(repo: Path, tmp_path: Path, kind: str) -> None:
    mission = make_mission(repo, wps=[{"wp_id": "WP01", "title": "One"}])
    outside = tmp_path / "outside"
    outside.mkdir()
    target = _link(kind, repo, mission, outside)
    before = _snapshot(target)
    proc = _spawn(repo, "move", "WP01", "claimed", "--agent", "claude")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, (out, err)
    assert err.startswith("error: refusing to use ") and "symbolic link" in err, err
    assert "Traceback" not in err
    assert _snapshot(target) == before
    doctor = kitty(repo, "doctor")
    assert doctor.code == 1 and "security:" in doctor.out
