"""Every failure tells the truth (issue 10, findings 3, 5, 7, 8, 10).

Ordinary environment problems are a one-line error with a hint and exit 1 (2 for
usage), never exit 3; doctor reports exactly what the readers refuse, and
`doctor --fix` repairs what is safe to repair.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.helpers import kitty, make_mission, ok

WPS = [{"wp_id": "WP01", "title": "Module A"}, {"wp_id": "WP02", "title": "Module B"}]
SLUG = "demo-01ABCDEF"


def _log(mission: Path) -> Path:
    return mission / "status.events.jsonl"


def _clean_error(run_err: str) -> None:
    assert "Traceback" not in run_err
    assert "unexpected internal error" not in run_err, run_err
    assert len([line for line in run_err.splitlines() if line.startswith("error:")]) == 1, run_err
    assert "hint:" in run_err, run_err


# -- finding 3: the clock ----------------------------------------------------------------


@pytest.mark.parametrize("far", ["9999-12-31T23:59:59.999999+00:00", "2999-01-01T00:00:00+00:00"])
def test_far_future_event_never_moves_the_clock(repo: Path, far: str) -> None:
    mission = make_mission(repo, wps=WPS)
    record = json.loads(_log(mission).read_text().splitlines()[0])
    record.update(event_id="01ZZZZZZZZZZZZZZZZZZZZZZZZ", at=far, wp_id="WP02")
    record.update(from_lane="planned", to_lane="blocked", reason="x", force=True, actor="evil")
    with _log(mission).open("a") as handle:
        handle.write(json.dumps(record, sort_keys=True) + "\n")
    run = ok(repo, "move", "WP01", "claimed", "--agent", "claude", "--json")
    newest = json.loads(_log(mission).read_text().splitlines()[-1])
    assert newest["event_id"] == run.json()["event_ids"][0]
    assert newest["at"].startswith("20") and not newest["at"].startswith(far[:4])
    ok(repo, "status")
    doctor = kitty(repo, "doctor")
    assert doctor.code == 1
    assert "ahead of this machine's clock" in doctor.out and ":3:" in doctor.out, doctor.out


# -- finding 5: typed config and meta ------------------------------------------------------


@pytest.mark.parametrize("value", ["'false'", "'no'", "'off'", '"true"', "1", "yes please"])
def test_auto_commit_must_be_a_yaml_boolean(repo: Path, value: str) -> None:
    make_mission(repo, wps=WPS)
    (repo / ".kittify" / "config.yaml").write_text(
        f"agents:\n  available: [claude]\n  auto_commit: {value}\n"
    )
    run = kitty(repo, "move", "WP01", "claimed", "--agent", "claude")
    assert run.code == 1
    _clean_error(run.err)
    assert ".kittify/config.yaml" in run.err and "auto_commit" in run.err
    doctor = kitty(repo, "doctor")
    assert doctor.code == 1 and "auto_commit" in doctor.out


@pytest.mark.parametrize("text", ["- a\n- b\n", "agents: [x\n", "agents: 5\n", "identity: [1]\n"])
def test_garbage_config_is_refused_by_readers_and_reported_by_doctor(repo: Path, text: str) -> None:
    make_mission(repo, wps=WPS)
    (repo / ".kittify" / "config.yaml").write_text(text)
    for args in (("status",), ("next", "--agent", "claude"), ("move", "WP01", "claimed")):
        run = kitty(repo, *args)
        if run.code != 0:
            assert run.code == 1
            _clean_error(run.err)
    doctor = kitty(repo, "doctor")
    assert doctor.code == 1 and ".kittify/config.yaml" in doctor.out, doctor.out


@pytest.mark.parametrize(
    "meta",
    [
        "[1, 2]",
        "{not json",
        '{"mission_id": "$(touch /tmp/pwned)"}',
        '{"mission_id": 5}',
        '{"target_branch": "--upload-pack=evil"}',
    ],
)
def test_garbage_meta_is_refused_and_reported(repo: Path, meta: str) -> None:
    mission = make_mission(repo, wps=WPS)
    (mission / "meta.json").write_text(meta)
    before = _log(mission).read_text()
    run = kitty(repo, "move", "WP01", "claimed", "--agent", "claude")
    assert run.code == 1
    _clean_error(run.err)
    assert "meta.json" in run.err
    assert _log(mission).read_text() == before
    doctor = kitty(repo, "doctor")
    assert doctor.code == 1 and "meta.json" in doctor.out


# -- finding 7: no exit 3 for the environment ------------------------------------------------


def test_log_is_a_directory(repo: Path) -> None:
    mission = make_mission(repo, wps=WPS)
    _log(mission).unlink()
    _log(mission).mkdir()
    for args in (("status",), ("move", "WP01", "claimed", "--agent", "a")):
        run = kitty(repo, *args)
        assert run.code == 1
        _clean_error(run.err)
    assert kitty(repo, "doctor").code == 1


def test_config_is_a_directory(repo: Path) -> None:
    make_mission(repo, wps=WPS)
    (repo / ".kittify" / "config.yaml").unlink()
    (repo / ".kittify" / "config.yaml").mkdir()
    run = kitty(repo, "move", "WP01", "claimed", "--agent", "a")
    assert run.code == 1
    _clean_error(run.err)


def test_log_is_a_symlink_loop(repo: Path) -> None:
    mission = make_mission(repo, wps=WPS)
    _log(mission).unlink()
    _log(mission).symlink_to(_log(mission).name)
    for args in (("status",), ("move", "WP01", "claimed", "--agent", "a")):
        run = kitty(repo, *args)
        assert run.code == 1
        _clean_error(run.err)


def test_git_kitty_is_a_file(repo: Path) -> None:
    mission = make_mission(repo, wps=WPS)
    lock_dir = repo / ".git" / "kitty"
    shutil.rmtree(lock_dir)  # its locks and the snapshot cache
    lock_dir.write_text("")
    before = _log(mission).read_text()
    run = kitty(repo, "move", "WP01", "claimed", "--agent", "a")
    assert run.code == 1
    _clean_error(run.err)
    assert ".git/kitty" in run.err
    assert _log(mission).read_text() == before
    assert ".git/kitty" in kitty(repo, "doctor").out


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "soon"])
def test_bad_lock_timeout_is_a_usage_error(
    repo: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    make_mission(repo, wps=WPS)
    monkeypatch.setenv("KITTY_LOCK_TIMEOUT", value)
    run = kitty(repo, "move", "WP01", "claimed", "--agent", "a")
    assert run.code == 2
    _clean_error(run.err)
    assert "KITTY_LOCK_TIMEOUT" in run.err


def test_lanes_with_a_self_dependency(repo: Path) -> None:
    mission = make_mission(repo, wps=WPS)
    path = next((mission / "tasks").glob("WP01-*.md"))
    path.write_text(path.read_text().replace("dependencies: []", "dependencies: [WP01]"))
    run = kitty(repo, "lanes")
    assert run.code in (0, 1), run.err  # was exit 3 (networkx NetworkXUnfeasible)
    assert "Traceback" not in run.err and "internal error" not in run.err
    if run.code:
        _clean_error(run.err)
    doctor = kitty(repo, "doctor")
    assert doctor.code == 1 and "WP01 depends on itself" in doctor.out


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
def test_read_only_log(repo: Path) -> None:
    mission = make_mission(repo, wps=WPS)
    _log(mission).chmod(0o444)
    try:
        run = kitty(repo, "move", "WP01", "claimed", "--agent", "a")
    finally:
        _log(mission).chmod(0o644)
    assert run.code == 1
    _clean_error(run.err)


def test_unexpected_os_errors_from_the_environment_are_exit_1(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read-only file system or a full disk anywhere is the machine's problem, not a bug."""
    make_mission(repo, wps=WPS)
    from kitty.workflow import moves

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(30, "Read-only file system", "/somewhere")

    monkeypatch.setattr(moves, "check_move", full)
    run = kitty(repo, "move", "WP01", "claimed", "--agent", "a")
    assert run.code == 1
    _clean_error(run.err)
    assert "/somewhere" in run.err


# -- finding 8: doctor sees what readers see, and repairs --------------------------------------


def _append(mission: Path, record: dict[str, object]) -> None:
    with _log(mission).open("a") as handle:
        handle.write(json.dumps(record, sort_keys=True) + "\n")


def _transition(**fields: object) -> dict[str, object]:
    base: dict[str, object] = {
        "actor": "claude",
        "at": "2026-01-01T00:00:00+00:00",
        "event_id": "01KAAAAAAAAAAAAAAAAAAAAAAA",
        "force": False,
        "from_lane": "planned",
        "to_lane": "claimed",
        "wp_id": "WP01",
    }
    base.update(fields)
    return base


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"at": "2026-01-01T00:00:00"}, "no time zone"),
        ({"force": "yes"}, "force must be true or false"),
        ({"wp_id": 5}, "is not a work package id"),
        ({"reason": 7}, "reason must be a string"),
        ({"review_result": "ok"}, "review_result must be an object"),
        ({"policy_metadata": [1]}, "policy_metadata must be an object"),
        ({"actor": 12}, "actor must be a string or an object"),
        ({"from_lane": "limbo"}, "unknown from_lane"),
    ],
)
def test_doctor_checks_the_type_of_every_event_key(
    repo: Path, fields: dict[str, object], expected: str
) -> None:
    mission = make_mission(repo, wps=WPS)
    _append(mission, _transition(**fields))
    run = kitty(repo, "doctor", "--json")
    assert run.code == 1
    problems = run.json()["problems"]
    assert any(expected in p and ":3:" in p for p in problems), problems


def test_readers_do_not_take_a_string_force_or_numeric_wp_id(repo: Path) -> None:
    mission = make_mission(repo, wps=WPS)
    _append(mission, _transition(wp_id=5, event_id="01KAAAAAAAAAAAAAAAAAAAAAA1"))
    _append(mission, _transition(force="no", event_id="01KAAAAAAAAAAAAAAAAAAAAAA2"))
    status = ok(repo, "status", "--json").json()
    text = json.dumps(status)
    assert '"5"' not in text
    from kitty.mission.workspace import Mission

    opened = Mission.open(repo, None)
    assert sorted(opened.board.wps) == ["WP01", "WP02"]
    assert opened.board.wps["WP01"].force_count == 0


def test_doctor_fix_quarantines_torn_and_corrupt_lines(repo: Path) -> None:
    mission = make_mission(repo, wps=WPS)
    ok(repo, "move", "WP01", "claimed", "--agent", "claude")
    with _log(mission).open("a") as handle:
        handle.write("garbage here\n[1, 2]\n")
    ok(repo, "move", "WP02", "claimed", "--agent", "codex")
    with _log(mission).open("a") as handle:
        handle.write('{"torn": tr')
    before = kitty(repo, "doctor")
    assert before.code == 1 and "doctor --fix" in before.out
    fixed = kitty(repo, "doctor", "--fix")
    assert fixed.code == 0, fixed.out + fixed.err
    assert fixed.out.count("fixed:") == 4  # three lines and status.json
    quarantine = mission / "status.events.jsonl.quarantine"
    kept = [json.loads(line)["text"] for line in quarantine.read_text().splitlines()]
    assert kept == ["garbage here", "[1, 2]", '{"torn": tr']
    lines = _log(mission).read_text().splitlines()
    assert all(isinstance(json.loads(line), dict) for line in lines)
    markers = [json.loads(line) for line in lines if "KittyLineQuarantined" in line]
    assert [m["payload"]["line"] for m in markers] == [4, 5, 7]
    assert kitty(repo, "doctor").code == 0
    status = ok(repo, "status", "--json").json()
    assert "claimed" in json.dumps(status)
    # Writing still works after the repair, and a second --fix has nothing to move.
    ok(repo, "move", "WP01", "in_progress", "--agent", "claude")
    again = ok(repo, "doctor", "--fix")
    assert again.out.count("fixed:") == 1


def test_doctor_fix_leaves_symlinks_to_the_user(repo: Path, tmp_path: Path) -> None:
    mission = make_mission(repo, wps=WPS)
    target = tmp_path / "outside.jsonl"
    target.write_text("not json\n")
    _log(mission).unlink()
    _log(mission).symlink_to(target)
    run = kitty(repo, "doctor", "--fix")
    assert run.code == 1 and "security:" in run.out
    assert target.read_text() == "not json\n"


@pytest.mark.parametrize(
    ("delta", "expected"),
    [
        ({"subtasks": ["T001"]}, "delta.subtasks must map"),
        ({"note": 5}, "delta.note must be a string"),
        ({"release_runtime_claim": "yes"}, "delta.release_runtime_claim must be true or false"),
    ],
)
def test_doctor_checks_annotation_deltas(
    repo: Path, delta: dict[str, object], expected: str
) -> None:
    mission = make_mission(repo, wps=WPS)
    _append(
        mission,
        {
            "kind": "annotation",
            "actor": "claude",
            "at": "2026-01-01T00:00:00+00:00",
            "event_id": "01KBBBBBBBBBBBBBBBBBBBBBBB",
            "wp_id": "WP01",
            "delta": delta,
        },
    )
    problems = kitty(repo, "doctor", "--json").json()["problems"]
    assert any(expected in p and ":3:" in p for p in problems), problems
