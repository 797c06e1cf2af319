"""`git pull` (merge or rebase, auto_commit on or off) never stops on a kitty file:
the log merges by union and status.json is derived, untracked and rebuilt."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import git, ok
from tests.remotes import clone, publish


@pytest.mark.parametrize("rebase", [False, True], ids=["merge", "rebase"])
@pytest.mark.parametrize("auto_commit", [True, False], ids=["auto", "manual"])
def test_concurrent_moves_then_pull(tmp_path: Path, rebase: bool, auto_commit: bool) -> None:
    config = f"agents:\n  available: [claude, codex]\n  auto_commit: {str(auto_commit).lower()}\n"
    bare = publish(tmp_path, config)
    a = clone(f"file://{bare}", tmp_path / "a")
    b = clone(f"file://{bare}", tmp_path / "b")
    for repo, agent, wps in ((a, "alice", ("WP01", "WP02")), (b, "bob", ("WP03", "WP04"))):
        for wp in wps:
            ok(repo, "move", wp, "claimed", "--agent", agent)
            ok(repo, "move", wp, "in_progress", "--agent", agent)
        if not auto_commit:
            git(repo, "add", "-A")
            git(repo, "commit", "-q", "-m", f"{agent}'s work")
    mode = "--rebase" if rebase else "--no-rebase"
    git(a, "push", "-q", "origin", "main")
    git(b, "pull", "-q", mode, "--no-edit", "origin", "main")
    git(b, "push", "-q", "origin", "main")
    git(a, "pull", "-q", mode, "--no-edit", "origin", "main")
    for repo in (a, b):
        assert git(repo, "status", "--porcelain", "--untracked-files=no") == ""
        view = ok(repo, "status", "--json").json()
        assert [w["lane"] for w in view["work_packages"]] == ["in_progress"] * 4 + ["planned"]
        assert view["conflicts"] == [] and view["warnings"] == []
        assert "status.json" not in git(repo, "ls-files")


def test_init_stops_tracking_status_json(repo: Path) -> None:
    ok(repo, "init")
    mission = repo / "kitty-specs" / "m-01ABCDEF"
    mission.mkdir(parents=True)
    (mission / "status.json").write_text("{}\n")
    git(repo, "add", "-f", str(mission / "status.json"))
    git(repo, "commit", "-q", "-m", "tracked")
    result = ok(repo, "init", "--json").json()
    assert result["untracked"] == ["kitty-specs/m-01ABCDEF/status.json"]
    assert (mission / "status.json").exists()
    assert "D  kitty-specs/m-01ABCDEF/status.json" in git(repo, "status", "--porcelain")
    assert "kitty-specs/*/status.json" in (repo / ".gitignore").read_text()
