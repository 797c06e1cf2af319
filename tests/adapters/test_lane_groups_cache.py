"""Without lanes.json `next` groups WPs by file overlap; the snapshot cache keeps the
groups for the same ids and owned files (kitty/adapters/derived.py) and never serves
them once a WP's owned files changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import kitty, make_mission, write_wp

SLUG = "lanes-01LANES00"


def decide(repo: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    monkeypatch.setenv("KITTY_NO_CACHE", "1")
    plain = kitty(repo, "next", "--agent", "claude", "--json")
    monkeypatch.delenv("KITTY_NO_CACHE")
    cached = [kitty(repo, "next", "--agent", "claude", "--json") for _ in range(2)]
    for run in cached:
        assert (run.code, run.out, run.err) == (plain.code, plain.out, plain.err)
    decision: dict[str, object] = json.loads(plain.out)
    return decision


def test_the_kept_lane_groups_follow_the_owned_files(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wps = [
        {"wp_id": "WP01", "title": "One", "owned": ["src/a.py"]},
        {"wp_id": "WP02", "title": "Two", "owned": ["src/b.py"]},
    ]
    mission = make_mission(repo, slug=SLUG, wps=wps)
    (mission / "lanes.json").unlink()
    kitty(repo, "move", "WP01", "claimed", "--agent", "other")
    first = decide(repo, monkeypatch)
    assert (first["action"], first["wp_id"]) == ("implement", "WP02")
    # WP02 now writes WP01's file: one lane, held by `other`: WP02 cannot start
    write_wp(mission, "WP02", title="Two", owned=["src/a.py", "src/c.py"])
    second = decide(repo, monkeypatch)
    assert second["wp_id"] != "WP02", second
    write_wp(mission, "WP02", title="Two", owned=["src/b.py"])
    assert decide(repo, monkeypatch)["wp_id"] == "WP02"
