"""init, mission create, wp add, finalize: happy paths and every refusal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.helpers import kitty, make_mission, ok, write_wp


def test_init_is_idempotent_and_keeps_keys(repo: Path) -> None:
    (repo / ".kittify").mkdir()
    (repo / ".kittify" / "config.yaml").write_text("custom: {keep: me}\nagents:\n  lint: true\n")
    first = ok(repo, "init", "--agents", "claude,codex", "--json").json()
    assert set(first["changed"]) == {
        ".kittify/config.yaml",
        ".gitattributes",
        ".gitignore",
        "AGENTS.md",
    }
    config = yaml.safe_load((repo / ".kittify" / "config.yaml").read_text())
    assert config["custom"] == {"keep": "me"}
    assert config["agents"] == {
        "lint": True,
        "available": ["claude", "codex"],
        "auto_commit": False,
    }
    assert "kitty-specs/**/status.events.jsonl merge=union" in (repo / ".gitattributes").read_text()
    assert ".worktrees/" in (repo / ".gitignore").read_text()
    again = ok(repo, "init", "--json").json()
    assert again["changed"] == [] and again["agents"] == ["claude", "codex"]


def test_init_outside_a_repo(tmp_path: Path) -> None:
    run = kitty(tmp_path, "init")
    assert run.code == 1
    assert "not inside a git repository" in run.err and "git init" in run.err


def test_mission_create_and_wp_add(repo: Path) -> None:
    ok(repo, "init")
    created = ok(repo, "mission", "create", "Checkout Flow", "--title", "Checkout", "--json").json()
    slug = created["mission"]
    assert slug.startswith("checkout-flow-") and len(slug) == len("checkout-flow-") + 8
    meta = json.loads((repo / "kitty-specs" / slug / "meta.json").read_text())
    assert meta["mission_id"].startswith(slug[-8:]) and len(meta["mission_id"]) == 26
    assert meta["target_branch"] == "main" and meta["friendly_name"] == "Checkout"
    a = ok(
        repo,
        "wp",
        "add",
        "--title",
        "Cart API",
        "--subtasks",
        "2",
        "--owns",
        "src/cart/**",
        "--json",
    ).json()
    b = ok(
        repo, "wp", "add", "--title", "Cart UI", "--depends-on", "1", "--subtasks", "1", "--json"
    ).json()
    assert (a["wp_id"], a["subtasks"]) == ("WP01", ["T001", "T002"])
    assert (b["wp_id"], b["dependencies"], b["subtasks"]) == ("WP02", ["WP01"], ["T003"])
    text = Path(b["path"]).read_text()
    front = yaml.safe_load(text.split("---")[1])
    assert front["work_package_id"] == "WP02" and front["dependencies"] == ["WP01"]
    assert "# Work Package Prompt: WP02 – Cart UI" in text
    bad = kitty(repo, "wp", "add", "--title", "X", "--depends-on", "WP07")
    assert bad.code == 1 and "no work package WP07" in bad.err


def test_mission_selection(repo: Path) -> None:
    none = kitty(repo, "status")
    assert none.code == 1 and "no missions" in none.err
    make_mission(repo, "alpha-01AAAAAA", [{"wp_id": "WP01"}])
    make_mission(repo, "beta-01BBBBBB", [{"wp_id": "WP01"}])
    several = kitty(repo, "status")
    assert several.code == 1 and "alpha-01AAAAAA, beta-01BBBBBB" in several.err
    assert ok(repo, "status", "--mission", "be", "--json").json()["mission"]["slug"] == (
        "beta-01BBBBBB"
    )
    unknown = kitty(repo, "status", "--mission", "gamma")
    assert unknown.code == 1 and "no mission named 'gamma'" in unknown.err
    escape = kitty(repo, "status", "--mission", "../../etc", "--json")
    assert escape.code == 2
    assert escape.json()["error"]["code"] == "usage"


def test_finalize_is_idempotent(repo: Path) -> None:
    mission = make_mission(
        repo,
        wps=[
            {"wp_id": "WP01", "owned": ["a.py"]},
            {"wp_id": "WP02", "deps": ["WP01"], "owned": ["b.py"]},
        ],
        finalize=False,
    )
    first = ok(repo, "finalize", "--json").json()
    assert first["bootstrapped"] == ["WP01", "WP02"] and first["lanes_changed"]
    log = (mission / "status.events.jsonl").read_text()
    lanes_before = (mission / "lanes.json").read_text()
    second = ok(repo, "agent", "mission", "finalize-tasks", "--json").json()
    assert second["bootstrapped"] == [] and not second["lanes_changed"]
    assert (mission / "status.events.jsonl").read_text() == log
    assert (mission / "lanes.json").read_text() == lanes_before
    lanes = json.loads(lanes_before)
    assert list(lanes) == [
        "version",
        "mission_slug",
        "mission_id",
        "mission_branch",
        "target_branch",
        "lanes",
        "computed_at",
        "computed_from",
        "planning_artifact_wps",
    ]
    assert lanes["mission_branch"] == "kitty/mission-demo-01ABCDEF"


def _finalize_fails(repo: Path, mission: Path) -> str:
    run = kitty(repo, "finalize")
    assert run.code == 1, run.out
    assert not (mission / "status.events.jsonl").exists()
    assert not (mission / "lanes.json").exists()
    return run.err


def test_finalize_reports_every_problem_and_writes_nothing(repo: Path) -> None:
    mission = make_mission(
        repo,
        wps=[
            {"wp_id": "WP01", "subtasks": ["T001"]},
            {"wp_id": "WP02", "deps": ["WP09"], "subtasks": ["T001"]},
        ],
        finalize=False,
    )
    (mission / "tasks" / "WP03-broken.md").write_text(
        "---\nwork_package_id: WP03\ntitle: [oops\n---\n"
    )
    write_wp(mission, "WP05", name="WP04-misnamed.md")
    err = _finalize_fails(repo, mission)
    assert "tasks/WP03-broken.md:3: unreadable YAML" in err
    assert "tasks/WP02-thing.md:4: unknown dependency WP09" in err
    assert "WP04-misnamed.md:2: work_package_id WP05 does not match" in err
    assert "subtask T001 is also listed by WP01" in err
    assert "nothing was written" in err


def test_finalize_names_the_dependency_cycle(repo: Path) -> None:
    mission = make_mission(
        repo,
        wps=[
            {"wp_id": "WP01"},
            {"wp_id": "WP02", "deps": ["WP04"]},
            {"wp_id": "WP04", "deps": ["WP02"]},
        ],
        finalize=False,
    )
    err = _finalize_fails(repo, mission)
    assert "dependency cycle WP02 → WP04 → WP02" in err
    assert "WP02-thing.md:4" in err


def test_finalize_reports_lane_cycles_and_collapse(repo: Path) -> None:
    mission = make_mission(
        repo,
        wps=[
            {"wp_id": "WP01", "owned": ["x.py"]},
            {"wp_id": "WP02", "deps": ["WP01"], "owned": ["y"]},
            {"wp_id": "WP03", "deps": ["WP02"], "owned": ["x.py"]},
        ],
        finalize=False,
    )
    assert "lane-a → lane-b → lane-a" in _finalize_fails(repo, mission)
    (mission / "tasks" / "WP03-thing.md").unlink()
    write_wp(mission, "WP03", owned=["src/**"])
    write_wp(mission, "WP04", owned=["src/api/x.py"])
    report = ok(repo, "finalize", "--json").json()["collapse_report"]
    assert report == [
        {"wps": ["WP03", "WP04"], "rule": "glob_matches_path", "paths": ["src/**", "src/api/x.py"]}
    ]


def test_finalize_reads_the_log_once(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The re-run validates, then reads the board once, under the lock (it was twice)."""
    from kitty.adapters import snapshots

    make_mission(repo, wps=[{"wp_id": "WP01"}, {"wp_id": "WP02", "deps": ["WP01"]}])
    reads: list[Path] = []
    real = snapshots.read_log

    def counting(path: Path, cache_dir: Path | None) -> snapshots.LogState:
        reads.append(path)
        return real(path, cache_dir)

    monkeypatch.setattr(snapshots, "read_log", counting)
    assert ok(repo, "finalize", "--json").json()["bootstrapped"] == []
    assert len(reads) == 1
