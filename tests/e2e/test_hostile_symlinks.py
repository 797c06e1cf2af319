"""Committed symlinks kitty must not follow when it writes (issue 27.1, 27.2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import git, kitty, make_mission, ok

WPS = [{"wp_id": "WP01", "title": "Module A", "owned": ["src/a/**"]}]


def committed(repo: Path) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "hostile")


def test_a_committed_worktrees_symlink_never_receives_a_lane_checkout(
    repo: Path, tmp_path: Path
) -> None:
    make_mission(repo, wps=WPS)
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / ".worktrees").symlink_to(outside, target_is_directory=True)
    committed(repo)
    run = kitty(repo, "agent", "action", "implement", "WP01", "--agent", "claude")
    assert run.code == 1, run.out + run.err
    assert ".worktrees" in run.err and "symbolic link" in run.err and "Traceback" not in run.err
    assert list(outside.iterdir()) == []
    assert "kitty/mission-" not in git(repo, "branch", "--list")  # nothing left half-made
    assert ok(repo, "status", "--json").json()["work_packages"][0]["lane"] == "planned"
    doctor = kitty(repo, "doctor")
    assert doctor.code == 1 and "security:" in doctor.out and ".worktrees" in doctor.out
    merge = kitty(repo, "merge")
    assert list(outside.iterdir()) == [], merge.out + merge.err


@pytest.mark.parametrize("name", ["AGENTS.md", "CLAUDE.md", ".gitignore", ".gitattributes"])
def test_init_never_writes_through_a_symlink_leaving_the_repository(
    repo: Path, tmp_path: Path, name: str
) -> None:
    victim = tmp_path / "home" / ".gitconfig"
    victim.parent.mkdir()
    victim.write_text("[user]\n\tname = me\n")
    (repo / name).symlink_to(victim)
    committed(repo)
    run = kitty(repo, "init")
    assert run.code == 1, run.out + run.err
    assert name in run.err and "symbolic link" in run.err and "Traceback" not in run.err
    assert victim.read_text() == "[user]\n\tname = me\n"
    assert not (repo / ".kittify").exists()  # refused before anything was written


def test_init_refuses_a_symlink_into_the_git_directory(repo: Path) -> None:
    (repo / "AGENTS.md").symlink_to(repo / ".git" / "config")
    before = (repo / ".git" / "config").read_text()
    run = kitty(repo, "init")
    assert run.code == 1 and "AGENTS.md" in run.err
    assert (repo / ".git" / "config").read_text() == before


def test_claude_md_linked_to_agents_md_inside_the_repository_still_works(repo: Path) -> None:
    (repo / "AGENTS.md").write_text("# Agents\n")
    (repo / "CLAUDE.md").symlink_to("AGENTS.md")
    ok(repo, "init")
    assert (repo / "CLAUDE.md").is_symlink()
    assert "kitty" in (repo / "AGENTS.md").read_text()


def test_a_committed_runs_folder_symlink_never_receives_review_logs(
    repo: Path, tmp_path: Path
) -> None:
    make_mission(repo, wps=WPS)
    outside = tmp_path / "outside-runs"
    outside.mkdir()
    (repo / ".kittify" / "runs").symlink_to(outside, target_is_directory=True)
    committed(repo)
    doctor = kitty(repo, "doctor")
    assert doctor.code == 1 and ".kittify/runs" in doctor.out


def _log_bytes(repo: Path) -> bytes:
    return next((repo / "kitty-specs").glob("*/status.events.jsonl")).read_bytes()


@pytest.mark.parametrize("where", ["dir", "file"])
def test_a_symlinked_prompt_is_refused_before_the_claim(
    repo: Path, tmp_path: Path, where: str
) -> None:
    """issue 35.4: `.kittify/prompts` (or the prompt file itself) linked elsewhere is
    refused before the WP is claimed or its worktree made; doctor names it."""
    mission = make_mission(repo, wps=WPS)
    outside = tmp_path / "outside"
    outside.mkdir()
    prompts = repo / ".kittify" / "prompts"
    if where == "dir":
        prompts.symlink_to(outside, target_is_directory=True)
    else:
        (prompts / mission.name).mkdir(parents=True)
        (prompts / mission.name / "WP01-implement.md").symlink_to(outside / "stolen.md")
    committed(repo)
    before = _log_bytes(repo)
    for _ in range(2):  # a retry appends nothing either
        run = kitty(repo, "agent", "action", "implement", "WP01", "--agent", "claude")
        assert run.code == 1, run.out + run.err
        assert "prompts" in run.err and "symbolic link" in run.err and "Traceback" not in run.err
    assert _log_bytes(repo) == before
    assert list(outside.iterdir()) == []
    assert not (repo / ".worktrees").exists() or not list((repo / ".worktrees").iterdir())
    assert ok(repo, "status", "--json").json()["work_packages"][0]["lane"] == "planned"
    doctor = kitty(repo, "doctor")
    assert doctor.code == 1 and "security:" in doctor.out, doctor.out
    assert ("WP01-implement.md" if where == "file" else ".kittify/prompts") in doctor.out
