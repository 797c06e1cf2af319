"""Which mission a command acts on without --mission: $KITTY_MISSION, else the lane
worktree or branch you stand in, else the only one; otherwise the error lists them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import git, kitty, make_mission, ok

A, B = "alpha-01AAAAAA", "beta-01BBBBBB"


@pytest.fixture
def two(repo: Path) -> Path:
    make_mission(repo, slug=A, wps=[{"wp_id": "WP01", "owned": ["src/a/**"]}])
    make_mission(repo, slug=B, wps=[{"wp_id": "WP01", "owned": ["src/b/**"]}])
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plan")
    return repo


def mission_of(repo: Path, *args: str) -> str:
    return str(ok(repo, *args, "status", "--json").json()["mission"]["slug"])


def test_several_missions_without_a_default_list_them(two: Path) -> None:
    run = kitty(two, "status", "--json")
    assert run.code == 1
    err = run.json()["error"]
    assert err["code"] == "ambiguous" and "KITTY_MISSION" in err["message"]
    assert err["hint"] == f"missions: {A}, {B}"


def test_kitty_mission_env(two: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KITTY_MISSION", "beta")
    assert mission_of(two) == B
    assert ok(two, "status", "--mission", A, "--json").json()["mission"]["slug"] == A
    monkeypatch.setenv("KITTY_MISSION", "gamma")
    err = kitty(two, "status", "--json").json()["error"]
    assert err["code"] == "not_found" and "$KITTY_MISSION" in err["message"]


def test_lane_worktree_picks_its_mission(two: Path) -> None:
    out = ok(two, "agent", "action", "implement", "WP01", "--mission", B, "--agent", "claude")
    workspace = two / ".worktrees" / f"{B}-lane-a"
    assert f"cd {workspace}" in out.out
    assert mission_of(workspace) == B
    (workspace / "src").mkdir()
    assert mission_of(workspace / "src") == B
    listed = ok(workspace, "mission", "list", "--json").json()
    assert listed["default"] == B


def test_mission_branch_picks_its_mission(two: Path) -> None:
    git(two, "checkout", "-q", "-b", f"kitty/mission-{A}-lane-a")
    assert mission_of(two) == A
    git(two, "checkout", "-q", "main")
    assert kitty(two, "status").code == 1


def test_mistyped_mission_suggests_the_closest(two: Path) -> None:
    err = kitty(two, "status", "--mission", "alpah", "--json").json()["error"]
    assert "did you mean 'alpha-01AAAAAA'?" in err["message"]


def test_mission_list_returns_objects(two: Path) -> None:
    listed = ok(two, "mission", "list", "--json").json()
    assert listed["schema"] == 1 and listed["default"] is None
    assert [m["slug"] for m in listed["missions"]] == [A, B]
    first = listed["missions"][0]
    assert first == {
        "slug": A,
        "title": "Demo",
        "mission_id": "01ABCDEFGHJKMNPQRSTVWXYZ00",
        "target_branch": "main",
        "work_packages": 1,
    }
    text = ok(two, "mission", "list").out
    assert f"  {A}  Demo  (1 WPs → main)" in text
