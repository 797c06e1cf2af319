"""WP files are read through one descriptor of the tasks folder, with the same results
and the same errors as reading each file on its own (contain.read_bytes)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kitty.adapters import contain, specs
from kitty.errors import UnsafePath
from tests.helpers import make_mission

WPS = [
    {"wp_id": "WP01", "title": "One"},
    {"wp_id": "WP02", "title": "Two", "deps": ["WP01"], "subtasks": ["T001"]},
    {"wp_id": "WP03", "title": "Three", "owned": ["src/x/**"]},
]


def general_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(specs._Folder, "read", lambda self, name: None)


def test_the_folder_reads_what_each_file_read_gives(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mission = make_mission(repo, wps=WPS, finalize=False)
    (mission / "tasks" / "WP04-bad.md").write_text("no front matter\n")
    (mission / "tasks" / "WP05-latin.md").write_bytes(b"---\ntitle: caf\xe9\n---\n")
    contain.trust(repo)
    fast = specs.load_wps(mission, "kitty-specs/m")
    assert sorted(fast.wps) == ["WP01", "WP02", "WP03"]
    assert ["not UTF-8 text" in str(e) for e in fast.errors] == [False, True]
    general_path(monkeypatch)
    assert repr(specs.load_wps(mission, "kitty-specs/m")) == repr(fast)


@pytest.mark.parametrize("fast", [True, False])
def test_a_symlinked_wp_file_is_refused_either_way(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fast: bool
) -> None:
    mission = make_mission(repo, wps=WPS, finalize=False)
    outside = tmp_path / "outside.md"
    outside.write_text((mission / "tasks" / "WP01-one.md").read_text())
    (mission / "tasks" / "WP01-one.md").unlink()
    (mission / "tasks" / "WP01-one.md").symlink_to(outside)
    contain.trust(repo)
    if not fast:
        general_path(monkeypatch)
    with pytest.raises(UnsafePath, match=r"WP01-one\.md, a symbolic link"):
        specs.load_wps(mission, "kitty-specs/m")


def test_a_symlinked_tasks_folder_is_refused(repo: Path, tmp_path: Path) -> None:
    mission = make_mission(repo, wps=WPS, finalize=False)
    real = tmp_path / "real-tasks"
    (mission / "tasks").rename(real)
    (mission / "tasks").symlink_to(real, target_is_directory=True)
    contain.trust(repo)
    with pytest.raises(UnsafePath, match="tasks, a symbolic link"):
        specs.load_wps(mission, "kitty-specs/m")


def test_the_folder_descriptor_is_closed(repo: Path) -> None:
    mission = make_mission(repo, wps=WPS, finalize=False)
    contain.trust(repo)
    before = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 0
    for _ in range(5):
        specs.load_wps(mission, "kitty-specs/m")
    after = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 0
    assert after <= before
