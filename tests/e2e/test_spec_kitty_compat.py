"""Both ways with Spec Kitty 3.2.7 (its reader and reducer as the oracle): kitty reads
Spec Kitty's history as Spec Kitty does, and Spec Kitty reads what kitty writes."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

from tests import oracle
from tests.helpers import kitty, lane_commit, make_mission, ok, spec_kitty_move

WPS = [{"wp_id": "WP01", "subtasks": ["T001"]}, {"wp_id": "WP02", "subtasks": ["T002"]}]
SLUG = "demo-01ABCDEF"
LEGACY = {
    "action": "implement",
    "agent": "claude",
    "at": "2026-01-01T00:00:00.000001+00:00",
    "event_id": "01KZZZZZZZZZZZZZZZZZZZZZZZ",
    "invocation_id": "01LEGACYDISPATCH",
    "mission_slug": SLUG,
    "model": None,
    "type": "kitty_dispatch",
    "wp_id": "WP01",
}


def test_doctor_fix_migrates_legacy_dispatch_records(repo: Path, tmp_path: Path) -> None:
    mission = make_mission(repo, wps=WPS)
    log = mission / "status.events.jsonl"
    lines = log.read_text().splitlines()
    lines.insert(1, json.dumps(LEGACY, sort_keys=True))
    log.write_text("\n".join(lines) + "\n")
    (refused,) = oracle.run([{"dir": str(mission)}], tmp_path)
    assert refused == {"error": "Invalid event structure on line 2: 'from_lane'"}
    doctor = kitty(repo, "doctor", "--json")
    assert doctor.code == 1
    (problem,) = [p for p in doctor.json()["problems"] if "Spec Kitty" in p]
    assert f"kitty-specs/{SLUG}/status.events.jsonl:2: Spec Kitty 3.2.7 refuses" in problem
    assert "kitty doctor --fix" in problem
    fixed = ok(repo, "doctor", "--fix", "--json").json()
    assert any("rewritten as a KittyDispatch envelope" in a for a in fixed["fixed"])
    migrated = json.loads(log.read_text().splitlines()[1])
    assert migrated == {
        "at": LEGACY["at"],
        "event_id": LEGACY["event_id"],
        "event_type": "KittyDispatch",
        "payload": {
            k: LEGACY[k]
            for k in ("action", "agent", "invocation_id", "mission_slug", "model", "wp_id")
        },
    }
    (read,) = oracle.run([{"dir": str(mission)}], tmp_path)
    assert read["lanes"] == {"WP01": "planned", "WP02": "planned"}
    assert kitty(repo, "doctor").code == 0
    # the migrated record still vouches for its --invocation-id
    ok(
        repo,
        "agent",
        "action",
        "implement",
        "WP01",
        "--agent",
        "claude",
        "--invocation-id",
        "01LEGACYDISPATCH",
    )


def transition(frm: str, to: str, at: str, eid: str, **extra: object) -> str:
    return spec_kitty_move(SLUG, "WP01", frm, to, at, eid, **extra)


def test_doctor_is_quiet_on_history_and_names_kitty_lines_spec_kitty_refuses(
    repo: Path, tmp_path: Path
) -> None:
    mission = make_mission(repo, wps=WPS)
    log = mission / "status.events.jsonl"
    base = log.read_text()
    start = datetime.fromisoformat(json.loads(base.splitlines()[-1])["at"])

    def at(n: int) -> str:  # after the bootstrap, as Spec Kitty writes `at`
        return (start + timedelta(seconds=n)).isoformat()

    history = [  # Spec Kitty's shapes: a self-approval by `user`, for_review -> done
        transition("planned", "claimed", at(1), "01KA0000000000000000000001"),
        transition("claimed", "in_progress", at(2), "01KA0000000000000000000002"),
        transition("in_progress", "for_review", at(3), "01KA0000000000000000000003"),
        transition("for_review", "approved", at(4), "01KA0000000000000000000004"),
        transition("approved", "done", at(5), "01KA0000000000000000000005"),
    ]
    log.write_text(base + "\n".join(history) + "\n")
    (read,) = oracle.run([{"dir": str(mission)}], tmp_path)
    assert read["lanes"]["WP01"] == "done"
    view = ok(repo, "status", "--json").json()
    assert view["work_packages"][0]["lane"] == "done" and view["conflicts"] == []
    ok(repo, "rebuild")  # the hand-written lines left status.json stale: doctor names that
    assert kitty(repo, "doctor").code == 0
    # a line carrying kitty's link with a lane Spec Kitty does not know
    bad = transition(
        "done",
        "doing",
        at(6),
        "01KA0000000000000000000006",
        kitty_after="01KA0000000000000000000005",
        force=True,
        reason="x",
    )
    log.write_text(base + "\n".join([*history, bad]) + "\n")
    number = len(log.read_text().splitlines())
    (refused,) = oracle.run([{"dir": str(mission)}], tmp_path)
    why = f"Invalid event structure on line {number}: 'doing' is not a valid Lane"
    assert refused == {"error": why}  # Spec Kitty names the same line
    doctor = kitty(repo, "doctor")
    assert doctor.code == 1
    assert (
        f"kitty-specs/{SLUG}/status.events.jsonl:{number}: Spec Kitty 3.2.7 refuses the whole log "
        "at this line (to_lane 'doing' is not one of Spec Kitty's lanes); correct or remove "
        "the line"
    ) in doctor.out


def test_doctor_names_every_line_spec_kitty_would_refuse_even_where_it_crashes(
    repo: Path, tmp_path: Path
) -> None:
    """Spec Kitty's reader fails without naming a line on these (an infinite shell_pid, a
    slug that is not a string); `kitty doctor` names each of them, and only them."""
    mission = make_mission(repo, wps=WPS)
    log = mission / "status.events.jsonl"
    lines = log.read_text().splitlines()
    at = json.loads(lines[-1])["at"]
    pid = {"event_id": "01KA0000000000000000000001", "kind": "annotation", "wp_id": "WP01"}
    pid |= {"at": at, "actor": "claude", "delta": {"shell_pid": float("inf")}}
    read = transition("planned", "claimed", at, "01KA0000000000000000000002")
    slug = transition("planned", "claimed", at, "01KA0000000000000000000003", mission_slug=7)
    log.write_text("\n".join([*lines, json.dumps(pid), read, slug]) + "\n")
    first, where = len(lines) + 1, f"kitty-specs/{SLUG}/status.events.jsonl"
    (refused,) = oracle.run([{"read": log.read_text()}], tmp_path)
    assert refused == {"crash": "OverflowError: cannot convert float infinity to integer"}
    ok(repo, "status")  # kitty still reads the mission
    doctor = kitty(repo, "doctor")
    assert doctor.code == 1, (doctor.out, doctor.err)
    named = [line for line in doctor.out.splitlines() if "Spec Kitty 3.2.7 refuses" in line]
    assert named == [
        f"{where}:{first}: Spec Kitty 3.2.7 refuses the whole log at this line "
        "(delta.shell_pid inf is not a number); correct or remove the line",
        f"{where}:{first + 2}: Spec Kitty 3.2.7 refuses the whole log at this line "
        "(mission_slug 7 is not a string); correct or remove the line",
    ]


FOUR = [
    {"wp_id": "WP01", "subtasks": ["T001"]},
    {"wp_id": "WP02", "subtasks": ["T002"]},
    {"wp_id": "WP03", "subtasks": ["T003"]},
    {"wp_id": "WP04", "subtasks": ["T004"]},
]
#: Spec Kitty 3.2.7's top-level keys of `agent tasks status --json`, and its row keys.
SK_KEYS = {
    "mission_slug",
    "mission_number",
    "mission_type",
    "total_wps",
    "by_lane",
    "work_packages",
    "progress_percentage",
    "progress_semantics",
    "weighted_percentage",
    "done_count",
    "done_percentage",
    "stale_wps",
    "stale_verdicts",
    "stalled_wps",
    "auto_commit",
}
SK_ROW_KEYS = {
    "id",
    "title",
    "lane",
    "phase",
    "file",
    "agent",
    "agent_profile",
    "resolved_agent_profile",
    "resolved_role",
    "resolved_model",
    "shell_pid",
    "shell_pid_created_at",
    "execution_mode",
    "workspace_kind",
}


def test_agent_tasks_status_answers_in_spec_kittys_shape(repo: Path, tmp_path: Path) -> None:
    mission = make_mission(repo, wps=FOUR)
    ok(repo, "agent", "action", "implement", "WP01", "--agent", "claude")
    ok(repo, "agent", "tasks", "mark-status", "T001", "--status", "done", "--agent", "claude")
    lane_commit(repo, "WP01")
    ok(repo, "agent", "tasks", "move-task", "WP01", "--to", "for_review", "--agent", "claude")
    ok(repo, "next", "--agent", "codex", "--claim")  # the review, claimed through next
    ok(
        repo,
        "agent",
        "tasks",
        "move-task",
        "WP01",
        "--to",
        "planned",
        "--agent",
        "codex",
        "--note",
        "the tests fail",
    )  # a rejection by note
    ok(repo, "agent", "action", "implement", "WP02", "--agent", "gemini")
    ok(
        repo,
        "agent",
        "tasks",
        "move-task",
        "WP03",
        "--to",
        "canceled",
        "--agent",
        "lead",
        "--note",
        "out of scope",
    )
    ok(
        repo,
        "agent",
        "tasks",
        "move-task",
        "WP04",
        "--to",
        "done",
        "--force",
        "--agent",
        "lead",
        "--note",
        "merged by hand",
    )
    view = ok(repo, "agent", "tasks", "status", "--json").json()
    assert set(view) >= SK_KEYS
    assert all(set(row) >= SK_ROW_KEYS for row in view["work_packages"])
    (expected,) = oracle.run([{"dir": str(mission)}], tmp_path)
    assert "error" not in expected
    rows = {row["id"]: row for row in view["work_packages"]}
    assert {wp: row["lane"] for wp, row in rows.items()} == expected["lanes"]
    assert {wp: row["agent"] for wp, row in rows.items()} == {
        wp: agent or "" for wp, agent in expected["agents"].items()
    }
    # Spec Kitty keeps the canceled WP in the denominator: (0 + 0.3 + 0 + 1) / 4
    assert view["progress_percentage"] == expected["progress_percentage"] == 32.5
    assert view["by_lane"] == {"planned": 1, "in_progress": 1, "canceled": 1, "done": 1}
    assert (view["total_wps"], view["done_count"], view["done_percentage"]) == (4, 1, 25.0)
    assert view["mission_slug"] == SLUG and view["progress_semantics"] == "weighted_readiness"
    assert rows["WP01"]["file"].startswith("WP01") and rows["WP01"]["file"].endswith(".md")
