"""The cached finished `kitty next` (kitty/adapters/viewcache.py) prints exactly what an
uncached `kitty next` prints, after every kind of change to what it reads, at every
moment, for every way of naming the agent; `--claim` is never served from it.

Each check runs the same command three ways and compares stdout, stderr and the exit
code byte for byte: through click (no cache), through the fast path with
`KITTY_NO_CACHE=1`, and through the fast path with the cache (twice: the second run
is served from the record the first one wrote).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

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
from tests.helpers import git, imported_by, lane_commit, make_mission, ok, write_wp

SLUG = "nextc-01NEXTCACH"
ARGS = [
    ["next", "--agent", "claude"],
    ["next", "--agent", "codex", "--json"],
    ["next", "--json", "--mission", "nextc"],  # the agent from $KITTY_AGENT
]


@pytest.fixture
def mission(repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KITTY_AGENT", "gemini")
    return committed_mission(repo, SLUG, monkeypatch)


def _option(args: list[str], name: str) -> str | None:
    return args[args.index(name) + 1] if name in args else None


def served(repo: Path, args: list[str]) -> bool:
    command = viewcache.next_command(_option(args, "--agent"))
    found = viewcache.lookup(str(repo), _option(args, "--mission"), "--json" in args, command)
    return found is not None


def same(
    repo: Path,
    args: list[str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    stored: bool = True,
) -> tuple[int, str, str]:
    return routes_agree(repo, args, capsys, monkeypatch, served, stored=stored)


def _depend(path: Path, on: str) -> None:
    write_wp(path.parent.parent, path.name[:4], deps=[on], name=path.name)


@pytest.mark.parametrize("args", ARGS, ids=" ".join)
def test_every_kind_of_change_is_seen(
    mission: Path,
    args: list[str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # One instant for the whole test: a printed age (`for 3s`) would otherwise end a
    # record before it is read again on a slow machine (test_the_clock_ends_a_record
    # moves the clock on purpose); an hour ahead, so every file is older than it.
    instant = time.time_ns() + 3600 * 10**9
    monkeypatch.setattr(time, "time_ns", lambda: instant)
    mission_dir = mission / "kitty-specs" / SLUG
    config = mission / ".kittify" / "config.yaml"
    changes = [
        ("nothing", lambda: None),
        ("a move (the log)", lambda: ok(mission, "move", "WP01", "in_progress")),
        (
            "another move",
            lambda: (lane_commit(mission, "WP01"), ok(mission, "move", "WP01", "for_review")),
        ),
        ("a claim by another agent", lambda: ok(mission, "next", "--claim", "--agent", "qwen")),
        ("a torn log line", lambda: append(mission_dir / "status.events.jsonl", "not json\n")),
        ("a WP file", lambda: _depend(next((mission_dir / "tasks").glob("WP03*")), "WP02")),
        ("a new WP file", lambda: write_wp(mission_dir, "WP04", title="New", deps=["WP01"])),
        ("a removed WP file", lambda: next((mission_dir / "tasks").glob("WP04*")).unlink()),
        ("lanes.json", lambda: ok(mission, "finalize", "--mission", SLUG)),
        ("meta.json", lambda: edit_json(mission_dir / "meta.json", accepted_at="2026-01-01")),
        ("config", lambda: append(config, "review:\n  max_cycles: 1\n")),
        ("$KITTY_AGENT", lambda: monkeypatch.setenv("KITTY_AGENT", "codex")),
        ("a commit (git)", lambda: (git(mission, "add", "-A"), git(mission, "commit", "-qm", "x"))),
        ("another mission", lambda: make_mission(mission, slug="other-01OTHERMI", finalize=False)),
        ("$KITTY_MISSION", lambda: monkeypatch.setenv("KITTY_MISSION", SLUG)),
    ]
    seen = outputs_after(mission, args, changes, capsys, monkeypatch, served)
    assert len(seen) >= 5  # the changes did change the output


def test_a_claim_is_never_served_from_a_cached_read(
    mission: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    log = mission / "kitty-specs" / SLUG / "status.events.jsonl"
    read = same(mission, ["next", "--agent", "codex", "--json"], capsys, monkeypatch)
    assert json.loads(read[1])["claimed"] is False
    lines = len(log.read_text().splitlines())
    code, out, _ = fast(mission, ["next", "--agent", "codex", "--json", "--claim"], capsys)
    assert code == 0 and json.loads(out)["claimed"] is True
    assert len(log.read_text().splitlines()) == lines + 1
    assert same(mission, ["next", "--agent", "codex", "--json"], capsys, monkeypatch) != read


def test_the_clock_ends_a_record(
    mission: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`for 12m` ticks by the minute, a review turns STALLED after review.stall_minutes:
    each moment is served only while the printed text is still true."""
    in_review(mission)
    ok(mission, "move", "WP03", "claimed", "--agent", "gemini")
    # a stall limit between two minute ticks: only the limit itself ends a record there
    (mission / ".kittify" / "config.yaml").write_text("review:\n  stall_minutes: 29.75\n")
    git(mission, "add", "-A")
    git(mission, "commit", "-qm", "in review")
    real = time.time_ns()
    seen = []
    for minutes in (0.02, 0.04, 5, 5.5, 29.6, 29.9, 31, 31.2, 32.1):
        monkeypatch.setattr(time, "time_ns", lambda m=minutes: real + int(m * 60e9))
        for args in (["next", "--agent", "codex"], ["next", "--agent", "qwen", "--json"]):
            seen.append(same(mission, args, capsys, monkeypatch)[1])
    codex = seen[0::2]
    ages = [re.search(r"in_review for (\d+)s\)", out) for out in codex[:2]]
    assert ages[0] and ages[1] and int(ages[1][1]) == int(ages[0][1]) + 1  # by the second
    assert "for 5m" in codex[2] and codex[3] == codex[2]  # then each minute
    actions = [json.loads(out)["action"] for out in seen[1::2]]
    assert actions[:5] == ["wait"] * 5  # qwen waits while codex's review is alive
    taken = [json.loads(out) for out in seen[1::2][5:]]
    assert all(t["action"] == "review" and "no activity" in t["reason"] for t in taken)
    assert "29m" in taken[0]["reason"] and "31m" in taken[1]["reason"]
    assert taken[2] == taken[1] and "32m" in taken[3]["reason"]


def test_an_agent_from_gits_config_or_a_halts_questions_are_never_stored(
    mission: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """git's user.name and a HALT's file are read from outside the cache's inputs."""
    monkeypatch.delenv("KITTY_AGENT")
    same(mission, ["next", "--json"], capsys, monkeypatch, stored=False)
    git(mission, "config", "user.name", "someone-else")
    assert "someone-else" in same(mission, ["next"], capsys, monkeypatch, stored=False)[1]
    (mission / ".kittify" / "config.yaml").write_text("identity: claude\n")
    same(mission, ["next", "--json"], capsys, monkeypatch)  # a named identity is an input
    from kitty.mission.workspace import Mission

    opened = Mission.open(mission, SLUG)
    opened.board.wps["WP01"].scalars["review_halt"] = "halt.json"
    from kitty import hot

    assert not hot._storable_next(opened, "codex")
    del opened.board.wps["WP01"].scalars["review_halt"]
    assert hot._storable_next(opened, "codex")


def test_a_warm_next_imports_almost_nothing(mission: Path) -> None:
    """Served from the cache, `kitty next` imports none of kitty's readers and rules, no
    click, dataclasses, typing, json, pickle or yaml."""

    def modules(*args: str) -> tuple[str, set[str]]:
        return imported_by(mission, *args)

    time.sleep(2.1)  # older than the racy window (the subprocess keeps the real one)
    for args in (["next", "--agent", "codex"], ["next", "--json"]):
        first, cold = modules(*args)
        again, warm = modules(*args)
        assert again == first
        assert "kitty.core.decide.steps" in cold
        heavy = {"dataclasses", "typing", "json", "pickle", "click", "yaml", "shutil"}
        assert not warm & heavy, warm & heavy
        allowed = {"kitty.adapters.viewcache", "kitty.hot", "kitty.fastpath", "kitty.entry"}
        allowed |= {"kitty.grammar"}  # the hot commands' declared parameters (plain data)
        allowed |= {"kitty.core.lanes"}
        kitty_modules = {m for m in warm if m.startswith("kitty.")}
        assert kitty_modules - {"kitty.adapters", "kitty.core"} <= allowed, kitty_modules
