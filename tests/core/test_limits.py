"""Limits on what enters the tracked, append-only log (and the WP/mission files).

Agent ids: 1-64 characters of letters, digits, ``._@:+-/()`` and single inner spaces (the
characters real Spec Kitty histories use). Notes and titles: at most
``limits.max_text_bytes`` of UTF-8 (16 KiB by default). A refusal is a usage error (exit 2)
and writes nothing; every entry point (click, the fast path, MCP tools, the sprint) applies
the same rule. Old history with long notes still reads.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kitty import fastpath
from kitty.core import limits
from kitty.errors import UsageError
from tests.helpers import kitty, lane_commit, make_mission, ok

SLUG = "lim-01LIMITSA"


@pytest.fixture
def mission(repo: Path) -> Path:
    return make_mission(
        repo, slug=SLUG, wps=[{"wp_id": "WP01", "subtasks": ["T001"]}, {"wp_id": "WP02"}]
    )


def _log(mission: Path) -> bytes:
    return (mission / "status.events.jsonl").read_bytes()


# -- the rule ---------------------------------------------------------------------------

HISTORY_ACTORS = [  # every kind of actor found in real Spec Kitty logs
    "claude",
    "user",
    "finalize-tasks",
    "migration:backfill_runtime_state",
    "claude:sonnet-4-6:implementer:implementer",
    "cursor:composer:python-pedro:implementer",
    "Stijn Dejongh",
    "reviewer-renata (claude/opus)",
    "spec-kitty agent tasks map-requirements",
    "me+kitty@example.com",
    "José Müller",
    "a" * 64,
]

BAD_ACTORS = [
    "",
    "a" * 65,
    "x" * (10 << 20),
    "two\nlines",
    "tab\there",
    "esc\x1b[31mred",
    "a;rm -rf /",
    "$(id)",
    "quote'd",
    "back`tick`",
    " leading",
    "trailing ",
    "two  spaces",
    "zero\u200bwidth",
    "bidi\u202eevil",
]


@pytest.mark.parametrize("name", HISTORY_ACTORS)
def test_every_actor_real_histories_use_is_accepted(name: str) -> None:
    assert limits.check_agent(name) == name


@pytest.mark.parametrize("name", BAD_ACTORS, ids=lambda n: repr(n[:20]))
def test_bad_agent_ids_are_usage_errors(name: str) -> None:
    with pytest.raises(UsageError) as caught:
        limits.check_agent(name, "--agent")
    assert "--agent" in caught.value.message
    assert len(caught.value.message) < 300  # a 10 MiB name is not echoed back


def test_text_cap_counts_utf8_bytes() -> None:
    limits.check_text("é" * 8192, "--note", 16384)  # 16384 bytes: at the cap
    with pytest.raises(UsageError, match="16384"):
        limits.check_text("é" * 8192 + "x", "--note", 16384)
    assert limits.DEFAULT_MAX_TEXT_BYTES == 16 * 1024


def test_an_oversized_note_is_refused_with_the_limit_and_where_long_text_goes() -> None:
    with pytest.raises(UsageError) as caught:
        limits.check_text("n" * 101, "--note", 100)
    assert caught.value.message == "--note is 101 bytes; at most 100 go into the tracked files"
    assert "limits.max_text_bytes" in caught.value.hint
    assert caught.value.hint.endswith("long feedback belongs in a file: --review-feedback-file")


def test_no_event_is_appended_with_a_bad_actor_or_an_oversized_note_or_reason() -> None:
    """The last check before the log, whoever built the event: its actor, its reason and
    its note, each against the configured cap (not the default)."""
    fine = {"actor": "claude", "reason": "r" * 100, "delta": {"note": "n" * 100}}
    limits.check_record(fine, 100)
    refused = {
        "actor": {**fine, "actor": "bad\x1bname"},
        "reason": {**fine, "reason": "r" * 101},
        "note": {**fine, "delta": {"note": "n" * 101}},
    }
    for field, rec in refused.items():
        with pytest.raises(UsageError) as caught:
            limits.check_record(rec, 100)
        if field == "actor":
            assert caught.value.message.startswith("the agent 'bad\\x1bname' contains")
        else:
            assert caught.value.message == (
                "the note is 101 bytes; at most 100 go into the tracked files"
            ), field
    huge = "n" * (limits.DEFAULT_MAX_TEXT_BYTES + 1)
    for rec in ({"reason": huge}, {"delta": {"note": huge}}):
        with pytest.raises(UsageError, match="at most 16384"):
            limits.check_record(rec)


def test_event_fields_that_are_not_text_are_not_measured() -> None:
    """Only text is a note: a record carrying other values there is not refused for them."""
    limits.check_record({"actor": 7, "reason": 12345, "delta": {"note": ["x"] * 50}}, 100)
    limits.check_record({"actor": "claude", "reason": None, "delta": "moved"}, 100)


# -- the CLI (click and the fast path) ---------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["move", "WP01", "claimed", "--agent", "a" * 65],
        ["move", "WP01", "claimed", "--agent", "x" * 100_000, "--json"],
        ["move", "WP01", "claimed", "--agent", "bad\x1bname"],
        ["move", "WP01", "blocked", "--force", "--agent", "lead", "--note", "n" * 16385],
        ["agent", "tasks", "move-task", "WP01", "--to", "claimed", "--agent", "a b  c"],
        ["next", "--claim", "--agent", "a" * 65, "--json"],
        ["agent", "tasks", "mark-status", "T001", "--status", "done", "--agent", "a" * 65],
    ],
    ids=["long", "huge-json", "escape", "long-note", "move-task", "claim", "mark"],
)
def test_cli_refuses_and_writes_nothing(
    mission: Path, args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    repo = mission.parents[1]
    before = _log(mission)
    run = kitty(repo, *args)
    assert run.code == 2, run.out + run.err
    assert _log(mission) == before
    assert "Traceback" not in run.out + run.err
    if "--json" in args:
        assert run.json()["error"]["code"] == "usage"
    # the fast path (no click) says the same, byte for byte
    code = fastpath.run(["-C", str(repo), *args])
    fast = capsys.readouterr()
    assert (code, fast.out, fast.err) == (run.code, run.out, run.err)
    assert _log(mission) == before


def test_a_note_at_the_cap_is_accepted_and_the_cap_is_configurable(mission: Path) -> None:
    repo = mission.parents[1]
    ok(repo, "move", "WP01", "blocked", "--force", "--agent", "lead", "--note", "n" * 16384)
    config = repo / ".kittify" / "config.yaml"
    config.write_text(config.read_text() + "limits:\n  max_text_bytes: 100\n")
    before = _log(mission)
    run = kitty(repo, "move", "WP02", "blocked", "--force", "--agent", "lead", "--note", "n" * 101)
    assert run.code == 2
    assert "limits.max_text_bytes" in run.out + run.err
    assert _log(mission) == before
    ok(repo, "move", "WP02", "blocked", "--force", "--agent", "lead", "--note", "n" * 100)


@pytest.mark.parametrize("value", ["0", "big", "true", "-5"])
def test_a_bad_cap_in_the_config_names_the_key(mission: Path, value: str) -> None:
    repo = mission.parents[1]
    config = repo / ".kittify" / "config.yaml"
    config.write_text(config.read_text() + f"limits:\n  max_text_bytes: {value}\n")
    run = kitty(repo, "move", "WP01", "claimed", "--agent", "claude")
    assert run.code != 0
    assert "limits.max_text_bytes" in run.out + run.err


def test_a_long_rejection_note_writes_no_review_file(mission: Path) -> None:
    repo = mission.parents[1]
    for lane, agent in [("claimed", "claude"), ("in_progress", "claude")]:
        ok(repo, "move", "WP02", lane, "--agent", agent)
    lane_commit(repo, "WP02")
    ok(repo, "move", "WP02", "for_review", "--agent", "claude")
    ok(repo, "move", "WP02", "in_review", "--agent", "codex")
    before = _log(mission)
    run = kitty(repo, "move", "WP02", "planned", "--agent", "codex", "--note", "x" * 20000)
    assert run.code == 2
    assert _log(mission) == before
    assert not list((mission / "tasks").rglob("review-cycle-*"))


def test_agent_from_the_environment_and_the_config_is_checked(
    mission: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = mission.parents[1]
    before = _log(mission)
    monkeypatch.setenv("KITTY_AGENT", "z" * 1000)
    run = kitty(repo, "move", "WP01", "claimed")
    assert run.code == 2 and "KITTY_AGENT" in run.out + run.err
    monkeypatch.delenv("KITTY_AGENT")
    config = repo / ".kittify" / "config.yaml"
    config.write_text(config.read_text() + "identity: 'bad\\nname'\n")
    run = kitty(repo, "move", "WP01", "claimed")
    assert run.code == 2 and "identity" in run.out + run.err
    assert _log(mission) == before


def test_history_actors_can_keep_writing(mission: Path) -> None:
    repo = mission.parents[1]
    ok(repo, "move", "WP01", "claimed", "--agent", "reviewer-renata (claude/opus)")
    ok(repo, "move", "WP01", "in_progress", "--agent", "Stijn Dejongh", "--force", "--note", "x")
    actors = {json.loads(line)["actor"] for line in _log(mission).splitlines()}
    assert {"reviewer-renata (claude/opus)", "Stijn Dejongh"} <= actors


def test_old_history_with_huge_notes_and_names_still_reads(mission: Path) -> None:
    """Limits are for new writes: a log that already holds a 100 KiB note and a 200-character
    actor reads, and new writes beside it work."""
    repo = mission.parents[1]
    log = mission / "status.events.jsonl"
    last = json.loads(log.read_bytes().splitlines()[-1])
    old = dict(last, event_id="01HZZZZZZZZZZZZZZZZZZZZZZZ", actor="q" * 200, reason="r" * 100_000)
    old.update(from_lane="planned", to_lane="claimed", wp_id="WP01", force=True)
    with log.open("a") as out:
        out.write(json.dumps(old, sort_keys=True) + "\n")
    run = ok(repo, "status", "--json")
    assert run.json()
    assert "Traceback" not in run.err
    ok(repo, "move", "WP01", "in_progress", "--agent", "claude", "--force", "--note", "go")


# -- titles ----------------------------------------------------------------------------


def test_titles_are_capped(mission: Path) -> None:
    repo = mission.parents[1]
    tasks = sorted(p.name for p in (mission / "tasks").iterdir())
    run = kitty(repo, "wp", "add", "--mission", SLUG, "--title", "t" * 16385)
    assert run.code == 2, run.out + run.err
    assert sorted(p.name for p in (mission / "tasks").iterdir()) == tasks
    missions = sorted(p.name for p in (repo / "kitty-specs").iterdir())
    run = kitty(repo, "mission", "create", "big", "--title", "t" * 16385)
    assert run.code == 2, run.out + run.err
    assert sorted(p.name for p in (repo / "kitty-specs").iterdir()) == missions


# -- MCP tools and the sprint ------------------------------------------------------------


def test_mcp_tools_apply_the_same_rule(mission: Path) -> None:
    from kitty.mcp import tools as mcp_tools

    repo = mission.parents[1]
    before = _log(mission)
    with pytest.raises(UsageError):
        mcp_tools.move(repo, "WP01", "claimed", agent="x" * (1 << 20))
    with pytest.raises(UsageError):
        mcp_tools.move(repo, "WP01", "blocked", agent="lead", note="n" * (1 << 20), force=True)
    with pytest.raises(UsageError):
        mcp_tools.next_step(repo, agent="a" * 65, claim=True)
    with pytest.raises(UsageError):
        mcp_tools.mark_status(repo, ["T001"], "done", agent="bad\nname")
    with pytest.raises(UsageError):
        mcp_tools.implement(repo, "WP01", agent="a" * 65)
    assert _log(mission) == before


def test_sprint_agent_names_are_checked(mission: Path) -> None:
    repo = mission.parents[1]
    for args in (
        ["--implementer", "a" * 65, "--reviewer", "codex"],
        ["--implementer", "claude", "--reviewer", "bad name!"],
    ):
        run = kitty(repo, "sprint", *args, "--dry-run")
        assert run.code == 2, run.out + run.err
        assert "--implementer" in run.out + run.err or "--reviewer" in run.out + run.err


@pytest.mark.parametrize("name", ["Stijn Dejongh", "reviewer-renata (claude/opus)"])
def test_commands_printed_for_an_agent_id_with_spaces_run_as_printed(
    mission: Path, name: str
) -> None:
    """Agent ids may hold spaces and parentheses (real Spec Kitty actors do): every
    command kitty prints for them is quoted, so a shell splits it back into that id."""
    import shlex

    repo = mission.parent.parent
    step = ok(repo, "next", "--agent", name, "--json").json()
    (command,) = step["commands"]
    assert f"--agent {shlex.quote(name)}" in command
    argv = shlex.split(command)
    assert argv[0] == "kitty" and argv[argv.index("--agent") + 1] == name
    claimed = ok(repo, *argv[1:], "--json").json()
    prompt = Path(claimed["prompt"]).read_text()
    for line in prompt.splitlines():
        if f"--agent {shlex.quote(name)}" in line:
            break
    else:
        raise AssertionError(f"no quoted --agent in the prompt:\n{prompt}")
