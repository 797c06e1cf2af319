"""A cloned repository cannot turn kitty against its user (issue 10, findings 1, 2, 4, 6, 9).

Each test reproduces one finding of the hostile-input battery: before the fix the
command exited 0 (or 3) and wrote outside the repository or after a failure.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from tests.helpers import Run, git, kitty, make_mission, ok

WPS = [{"wp_id": "WP01", "title": "Module A"}, {"wp_id": "WP02", "title": "Module B"}]
needs_non_root = pytest.mark.skipif(
    hasattr(os, "geteuid") and os.geteuid() == 0, reason="root ignores file permissions"
)


def _log_lines(mission: Path) -> list[str]:
    return (mission / "status.events.jsonl").read_text().splitlines()


def _one_line_error(err: str, *needles: str) -> None:
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, err
    for needle in needles:
        assert needle in lines[0], err
    assert "Traceback" not in err


def test_symlinked_log_to_a_file_outside_is_refused_and_left_alone(
    repo: Path, tmp_path: Path
) -> None:
    mission = make_mission(repo, wps=WPS)
    bashrc = tmp_path / "home-bashrc"
    bashrc.write_text("export PATH=$PATH\n")
    log = mission / "status.events.jsonl"
    log.unlink()
    log.symlink_to(bashrc)
    run = kitty(repo, "move", "WP02", "claimed", "--agent", "claude")
    assert run.code == 1
    _one_line_error(run.err, "status.events.jsonl", "symbolic link")
    assert bashrc.read_text() == "export PATH=$PATH\n"
    # Reads refuse too: the board is not built from a file outside the repository.
    assert kitty(repo, "status").code == 1


def test_symlinked_review_folder_cannot_receive_feedback(repo: Path, tmp_path: Path) -> None:
    mission = make_mission(repo, wps=WPS)
    ok(repo, "move", "WP01", "claimed", "--agent", "claude")
    ok(repo, "move", "WP01", "for_review", "--agent", "claude", "--force", "--note", "x")
    ok(repo, "move", "WP01", "in_review", "--agent", "codex")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (mission / "tasks" / "WP01-module-a").symlink_to(outside, target_is_directory=True)
    before = _log_lines(mission)
    feedback = tmp_path / "fb.md"
    feedback.write_text("missing tests\n")
    run = kitty(
        repo, "move", "WP01", "planned", "--agent", "codex", "--review-feedback-file", str(feedback)
    )
    assert run.code == 1
    _one_line_error(run.err, "WP01-module-a", "symbolic link")
    assert list(outside.iterdir()) == []
    assert _log_lines(mission) == before


def test_symlinked_specs_folder_is_refused(repo: Path, tmp_path: Path) -> None:
    make_mission(repo, wps=WPS)
    real = tmp_path / "real-specs"
    (repo / "kitty-specs").rename(real)
    (repo / "kitty-specs").symlink_to(real, target_is_directory=True)
    run = kitty(repo, "move", "WP01", "claimed", "--agent", "claude")
    assert run.code == 1
    _one_line_error(run.err, "kitty-specs", "symbolic link")


def test_log_paths_to_files_outside_the_repository_are_never_read(
    repo: Path, tmp_path: Path
) -> None:
    """A crafted `feedback_path` must not copy a private file into an agent's prompt."""
    mission = make_mission(repo, wps=WPS)
    secret = tmp_path / "id_rsa"
    secret.write_text("PRIVATE KEY\n")
    ok(repo, "move", "WP01", "claimed", "--agent", "claude")
    ok(repo, "move", "WP01", "for_review", "--agent", "claude", "--force", "--note", "x")
    ok(repo, "move", "WP01", "in_review", "--agent", "codex")
    feedback = tmp_path / "fb.md"
    feedback.write_text("fix it\n")
    ok(repo, "move", "WP01", "planned", "--agent", "codex", "--review-feedback-file", str(feedback))
    lines = _log_lines(mission)
    doctored = []
    for line in lines:
        record = json.loads(line)
        if isinstance(record.get("review_result"), dict):
            record["review_result"]["feedback_path"] = str(secret)
            record["review_result"]["reference"] = None
            record["review_ref"] = None
        doctored.append(json.dumps(record, sort_keys=True))
    (mission / "status.events.jsonl").write_text("\n".join(doctored) + "\n")
    from kitty.mission.workspace import Mission
    from kitty.workflow.action_prompts import last_feedback

    opened = Mission.open(repo, None)
    text, _ = last_feedback(opened, opened.board.wps["WP01"])
    assert text is not None and "PRIVATE KEY" not in text


def test_doctor_reports_symlinks_as_a_security_problem(repo: Path, tmp_path: Path) -> None:
    mission = make_mission(repo, wps=WPS)
    target = tmp_path / "bashrc"
    target.write_text("")
    log = mission / "status.events.jsonl"
    log.unlink()
    log.symlink_to(target)
    run = kitty(repo, "doctor")
    assert run.code == 1
    assert "security:" in run.out and "status.events.jsonl" in run.out, run.out
    assert "Traceback" not in run.err


@needs_non_root
def test_read_only_mission_folder_refuses_before_writing(repo: Path) -> None:
    mission = make_mission(repo, wps=WPS)
    before = _log_lines(mission)
    log = mission / "status.events.jsonl"
    log.chmod(0o444)
    mission.chmod(0o555)
    try:
        run = kitty(repo, "move", "WP01", "claimed", "--agent", "claude")
    finally:
        mission.chmod(0o755)
        log.chmod(0o644)
    assert run.code == 1
    _one_line_error(run.err)
    assert "hint:" in run.err
    assert _log_lines(mission) == before


def test_status_json_replaced_by_a_directory_refuses_before_writing(repo: Path) -> None:
    mission = make_mission(repo, wps=WPS)
    before = _log_lines(mission)
    (mission / "status.json").unlink()
    (mission / "status.json").mkdir()
    run = kitty(repo, "move", "WP01", "claimed", "--agent", "claude")
    assert run.code == 1
    _one_line_error(run.err, "status.json")
    assert _log_lines(mission) == before


def test_status_refresh_failure_after_append_is_exit_0_with_rebuild_hint(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mission = make_mission(repo, wps=WPS)
    from kitty.mission import workspace  # the mission's one write path writes status.json

    real = workspace.atomic_write

    def failing(path: Path, text: str) -> None:
        if path.name == "status.json":
            raise OSError(28, "No space left on device")
        real(path, text)

    monkeypatch.setattr(workspace, "atomic_write", failing)
    run = kitty(repo, "move", "WP01", "claimed", "--agent", "claude")
    assert run.code == 0, run.err
    assert "warning:" in run.err and "kitty rebuild --mission demo-01ABCDEF" in run.err
    assert json.loads(_log_lines(mission)[-1])["to_lane"] == "claimed"
    monkeypatch.setattr(workspace, "atomic_write", real)
    ok(repo, "rebuild")
    status = json.loads((mission / "status.json").read_text())
    assert "claimed" in json.dumps(status)


def test_wp_add_title_with_newline_and_dashes_reads_back(repo: Path) -> None:
    make_mission(repo, wps=[], finalize=False)
    title = "Evil\n---\nowned_files: ['**']\n---"
    added = ok(repo, "wp", "add", "--title", title, "--objective", "x", "--json").json()
    ok(repo, "finalize")
    shown = kitty(repo, "doctor", "--json").json()
    assert shown["problems"] == []
    text = Path(added["path"]).read_text()
    assert text.count("\n---\n") == 1  # only the closing delimiter of the front matter


@pytest.mark.parametrize("mask", [0o022, 0o002, 0o077])
def test_created_files_follow_the_umask(repo: Path, mask: int) -> None:
    from kitty.adapters import files

    files._UMASK.clear()
    old = os.umask(mask)
    try:
        mission = make_mission(repo, wps=WPS)
        ok(repo, "move", "WP01", "claimed", "--agent", "claude")
    finally:
        os.umask(old)
        files._UMASK.clear()
    for name in ("status.json", "lanes.json", "status.events.jsonl"):
        mode = stat.S_IMODE((mission / name).stat().st_mode)
        assert mode == 0o666 & ~mask, (name, oct(mode))


def test_a_committed_symlink_is_caught_after_clone(repo: Path, tmp_path: Path) -> None:
    """The attack as it arrives: a symlink committed in someone else's repository."""
    mission = make_mission(repo, wps=WPS)
    log = mission / "status.events.jsonl"
    victim = tmp_path / "victim.txt"
    victim.write_text(log.read_text())
    log.unlink()
    log.symlink_to("../../../victim.txt")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "evil")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    before = victim.read_text()
    run = kitty(clone, "move", "WP01", "claimed", "--agent", "claude")
    assert run.code == 1
    assert victim.read_text() == before


# -- finding 10: feedback files -------------------------------------------------------------


def _to_review(repo: Path) -> None:
    ok(repo, "move", "WP01", "claimed", "--agent", "claude")
    ok(repo, "move", "WP01", "for_review", "--agent", "claude", "--force", "--note", "x")
    ok(repo, "move", "WP01", "in_review", "--agent", "codex")


def _reject(repo: Path, feedback: str, *extra: str) -> Run:
    return kitty(
        repo,
        "move",
        "WP01",
        "planned",
        "--agent",
        "codex",
        "--review-feedback-file",
        feedback,
        *extra,
    )


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null", "fifo"])
def test_feedback_from_a_device_or_fifo_is_refused_without_blocking(
    repo: Path, tmp_path: Path, device: str
) -> None:
    mission = make_mission(repo, wps=WPS)
    _to_review(repo)
    if device == "fifo":
        device = str(tmp_path / "pipe")
        os.mkfifo(device)
    before = _log_lines(mission)
    run = _reject(repo, device, "--force", "--note", "try anyway")
    assert run.code == 2
    assert "not a regular file" in run.err
    assert _log_lines(mission) == before


@pytest.mark.parametrize(
    "pseudo", ["/proc/self/environ", "/proc/self/cmdline", "/sys/devices/system/cpu/online"]
)
def test_feedback_from_proc_or_sys_is_refused_even_with_force(
    repo: Path, pseudo: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """/proc/self/environ stats as a regular file of size 0: its bytes (the environment,
    secrets included) must never be copied into the tracked repository."""
    if not Path(pseudo).exists():
        pytest.skip(f"{pseudo} does not exist here")
    monkeypatch.setenv("KITTY_TEST_SECRET", "hunter2")
    mission = make_mission(repo, wps=WPS)
    _to_review(repo)
    before = _log_lines(mission)
    run = _reject(repo, pseudo, "--force", "--note", "try anyway")
    assert run.code == 2, run.err
    assert "not a regular file" in run.err
    assert _log_lines(mission) == before
    assert not list((mission / "tasks").glob("*/review-cycle-*.md"))
    assert "hunter2" not in git(repo, "status", "--porcelain", "--untracked-files=all")


def test_feedback_outside_repository_and_temp_needs_force(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    system_tmp = tmp_path / "system-tmp"
    system_tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(system_tmp))
    mission = make_mission(repo, wps=WPS)
    _to_review(repo)
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$secret\n")
    refused = _reject(repo, str(secret))
    assert refused.code == 2 and "outside the repository" in refused.err
    assert not list((mission / "tasks").glob("*/review-cycle-*.md"))
    inside_tmp = system_tmp / "fb.md"
    inside_tmp.write_text("fix the tests\n")
    ok(
        repo,
        "move",
        "WP01",
        "planned",
        "--agent",
        "codex",
        "--review-feedback-file",
        str(inside_tmp),
    )
    _to_review(repo)
    forced = _reject(repo, str(secret), "--force", "--note", "the file is mine")
    assert forced.code == 0, forced.err


def test_feedback_larger_than_the_configured_limit_is_refused(repo: Path, tmp_path: Path) -> None:
    config = "agents:\n  available: [claude, codex]\nreview:\n  max_feedback_bytes: 16\n"
    make_mission(repo, wps=WPS, config=config)
    _to_review(repo)
    big = tmp_path / "big.md"
    big.write_text("x" * 17)
    run = _reject(repo, str(big))
    assert run.code == 2 and "larger than 16 bytes" in run.err
    small = tmp_path / "small.md"
    small.write_text("x" * 16)
    assert _reject(repo, str(small)).code == 0


@pytest.mark.parametrize("device", ["/dev/zero", "fifo"])
def test_findings_from_a_device_or_fifo_are_refused_without_blocking(
    repo: Path, tmp_path: Path, device: str
) -> None:
    mission = make_mission(repo, wps=WPS)
    _to_review(repo)
    if device == "fifo":
        device = str(tmp_path / "pipe")
        os.mkfifo(device)
    before = _log_lines(mission)
    run = kitty(repo, "review", "submit", "WP01", "--findings", device, "--agent", "codex")
    assert run.code == 2 and "not a regular file" in run.err, run.err
    assert _log_lines(mission) == before


def test_sprint_refuses_a_committed_runs_symlink_before_claiming(
    repo: Path, tmp_path: Path
) -> None:
    mission = make_mission(repo, wps=WPS)
    outside = tmp_path / "runs-elsewhere"
    outside.mkdir()
    (repo / ".kittify" / "runs").symlink_to(outside, target_is_directory=True)
    before = _log_lines(mission)
    run = kitty(repo, "sprint", "--implementer", "claude", "--reviewer", "codex")
    assert run.code == 1
    _one_line_error(run.err, ".kittify/runs", "symbolic link")
    assert list(outside.iterdir()) == []
    assert _log_lines(mission) == before
