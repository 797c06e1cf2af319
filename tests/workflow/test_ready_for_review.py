"""Ready for review means committed work (issue 41), in real git repositories: the
guard on every path to for_review, the commits for_review and approval record, and
merge's refusal of a lane that moved after its approval."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import git, kitty, make_mission, ok

#: Spec Kitty 3.2.7 reads every log these tests leave (lane_head, approved_commit,
#: review_ready in policy_metadata; the forced moves).
pytestmark = pytest.mark.usefixtures("spec_kitty_reads_what_is_left")

SLUG = "demo-01ABCDEF"
WPS = [
    {"wp_id": "WP01", "title": "Alpha", "owned": ["src/alpha.py"]},
    {"wp_id": "WP02", "title": "Beta", "owned": ["src/beta.py"]},
]


def planned(repo: Path) -> Path:
    mission = make_mission(repo, wps=WPS)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plan the mission")
    return mission


def start(repo: Path, wp: str = "WP01", agent: str = "claude") -> Path:
    out = ok(repo, "agent", "action", "implement", wp, "--agent", agent).out
    return Path(re.search(r"Workspace: cd (.+)", out).group(1))  # type: ignore[union-attr]


def commit(workspace: Path, name: str = "src/alpha.py", text: str = "ALPHA = 1\n") -> str:
    (workspace / name).parent.mkdir(parents=True, exist_ok=True)
    (workspace / name).write_text(text)
    git(workspace, "add", name)
    git(workspace, "commit", "-qm", f"work on {name}")
    return git(workspace, "rev-parse", "HEAD").strip()


def events(repo: Path) -> list[dict[str, object]]:
    path = repo / "kitty-specs" / SLUG / "status.events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def last_move(repo: Path) -> dict[str, object]:
    return [e for e in events(repo) if "to_lane" in e][-1]


def to_review(repo: Path, wp: str = "WP01", agent: str = "claude", *extra: str) -> object:
    return kitty(
        repo, "agent", "tasks", "move-task", wp, "--to", "for_review", "--agent", agent, *extra
    )


def lane(repo: Path, wp: str = "WP01") -> str:
    rows = ok(repo, "status", "--json").json()["work_packages"]
    return str(next(w["lane"] for w in rows if w["id"] == wp))


def test_no_commit_is_refused_and_the_log_is_unchanged(repo: Path) -> None:
    planned(repo)
    start(repo)
    before = events(repo)
    run = to_review(repo)
    assert run.code != 0  # type: ignore[attr-defined]
    err = run.err  # type: ignore[attr-defined]
    assert "WP01 is not ready for review" in err
    assert "no commit of WP01's own since its implement began" in err
    assert events(repo) == before and lane(repo) == "in_progress"


def test_left_files_are_named_and_the_printed_commands_work(repo: Path) -> None:
    planned(repo)
    ws = start(repo)
    (ws / "src").mkdir()
    (ws / "src" / "alpha.py").write_text("ALPHA = 1\n")
    (ws / "notes.txt").write_text("scratch\n")
    (ws / "README.md").write_text("changed\n")
    run = to_review(repo)
    assert run.code != 0  # type: ignore[attr-defined]
    err = run.err  # type: ignore[attr-defined]
    assert "notes.txt (untracked)" in err and "src/alpha.py (untracked)" in err
    assert "README.md (uncommitted)" in err
    assert lane(repo) == "in_progress"
    # the printed commit command, run as printed, then the printed move
    fix = re.search(r"commit what belongs to WP01: (git -C .+?); then: (kitty agent .+?);", err)
    assert fix, err
    subprocess.run(fix.group(1), shell=True, check=True, cwd=repo, capture_output=True)
    argv = shlex.split(fix.group(2))[1:]
    done = subprocess.run(
        [sys.executable, "-m", "kitty", "-C", str(repo), *argv], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert lane(repo) == "for_review"


def test_a_clean_commit_enters_review_and_the_event_records_the_head(repo: Path) -> None:
    planned(repo)
    ws = start(repo)
    head = commit(ws)
    assert to_review(repo).code == 0  # type: ignore[attr-defined]
    last = last_move(repo)
    assert last["to_lane"] == "for_review"
    assert last["policy_metadata"]["lane_head"] == head  # type: ignore[index]
    assert ok(repo, "status", "--json").json()["work_packages"][0]["lane"] == "for_review"


def test_force_with_a_note_enters_review_and_the_log_says_it_was_forced(repo: Path) -> None:
    planned(repo)
    start(repo)
    run = to_review(repo, "WP01", "claude", "--force", "--note", "docs only: nothing to commit")
    assert run.code == 0, run.err  # type: ignore[attr-defined]
    last = last_move(repo)
    assert last["force"] is True and last["to_lane"] == "for_review"
    assert str(last["policy_metadata"]["review_ready"]).startswith("forced: WP01 is not ready")  # type: ignore[index]
    assert last["reason"] == "docs only: nothing to commit"


def test_a_fix_cycle_needs_a_new_commit_since_the_rejection(repo: Path) -> None:
    planned(repo)
    ws = start(repo)
    commit(ws)
    ok(repo, "agent", "tasks", "move-task", "WP01", "--to", "for_review", "--agent", "claude")
    ok(repo, "agent", "action", "review", "WP01", "--agent", "codex")
    ok(repo, "move", "WP01", "planned", "--agent", "codex", "--note", "handle empty input")
    start(repo)
    run = to_review(repo)
    assert run.code != 0  # type: ignore[attr-defined]
    assert "no commit of WP01's own since the rejection" in run.err  # type: ignore[attr-defined]
    commit(ws, text="ALPHA = 2\n")
    assert to_review(repo).code == 0  # type: ignore[attr-defined]


def test_an_approval_records_its_commit_and_a_later_commit_makes_merge_refuse(repo: Path) -> None:
    planned(repo)
    for wp, name in (("WP01", "src/alpha.py"), ("WP02", "src/beta.py")):
        ws = start(repo, wp)
        commit(ws, name)
        ok(repo, "agent", "tasks", "move-task", wp, "--to", "for_review", "--agent", "claude")
        ok(repo, "agent", "action", "review", wp, "--agent", "codex")
        ok(repo, "move", wp, "approved", "--agent", "codex", "--note", "Review passed")
    approved = last_move(repo)
    assert approved["policy_metadata"]["approved_commit"]  # type: ignore[index]
    ws1 = repo / ".worktrees" / f"{SLUG}-lane-a"
    late = commit(ws1, "src/alpha.py", "ALPHA = 'unreviewed'\n")
    ok(repo, "accept")
    run = kitty(repo, "merge")
    assert run.code != 0
    assert "WP01" in run.err and late[:7] in run.err
    assert "unreviewed" not in git(repo, "show", "main:README.md")
    assert lane(repo) == "approved"


def test_an_approval_is_refused_when_the_lane_moved_since_it_entered_review(repo: Path) -> None:
    planned(repo)
    ws = start(repo)
    commit(ws)
    ok(repo, "agent", "tasks", "move-task", "WP01", "--to", "for_review", "--agent", "claude")
    commit(ws, text="ALPHA = 3\n")  # after for_review, before the review starts
    ok(repo, "move", "WP01", "in_review", "--agent", "codex")
    run = kitty(repo, "move", "WP01", "approved", "--agent", "codex", "--note", "ok")
    assert run.code != 0
    assert "moved since WP01 entered review" in run.err
    assert lane(repo) == "in_review"


def test_a_wp_moved_by_hand_without_a_lane_branch_is_refused(repo: Path) -> None:
    planned(repo)
    ok(repo, "move", "WP01", "doing", "--agent", "claude")
    run = to_review(repo)
    assert run.code != 0  # type: ignore[attr-defined]
    assert "does not exist: nothing of WP01 is committed" in run.err  # type: ignore[attr-defined]


def test_the_review_prompt_names_the_reviewed_commit_and_its_diff_stat(repo: Path) -> None:
    planned(repo)
    ws = start(repo)
    head = commit(ws, "src/alpha.py", "ALPHA = 1\nBETA = 2\n")
    ok(repo, "agent", "tasks", "move-task", "WP01", "--to", "for_review", "--agent", "claude")
    answer = ok(repo, "agent", "action", "review", "WP01", "--agent", "codex", "--json").json()
    assert answer["reviewed_commit"] == head
    prompt = Path(answer["prompt"]).read_text()
    assert f"You review commit {head}" in prompt
    base = answer["base"]
    assert f"diff {base}..{head}" in prompt
    assert re.search(r"src/alpha\.py \| 2 \+\+", prompt), prompt
    assert "1 file changed, 2 insertions(+)" in prompt


def test_accept_finds_nothing_the_review_guards_could_have_caught(repo: Path) -> None:
    """Issue 41.4: what accept checks of lane worktrees is checked at review entry and at
    approval, so a mission whose WPs were all approved the ordinary way is acceptable."""
    planned(repo)
    for wp, name in (("WP01", "src/alpha.py"), ("WP02", "src/beta.py")):
        ws = start(repo, wp)
        commit(ws, name)
        ok(repo, "agent", "tasks", "move-task", wp, "--to", "for_review", "--agent", "claude")
        ok(repo, "move", wp, "in_review", "--agent", "codex")  # no fingerprint: by hand
        (ws / "review-notes.md").write_text("the reviewer's notes\n")  # the feedback-file trap
        run = kitty(repo, "move", wp, "approved", "--agent", "codex", "--note", "ok")
        assert run.code != 0 and "review-notes.md (untracked)" in run.err
        (ws / "review-notes.md").unlink()
        ok(repo, "move", wp, "approved", "--agent", "codex", "--note", "Review passed")
    assert ok(repo, "accept", "--json").json()["accepted"] is True


def test_the_web_board_moves_through_the_same_guard(repo: Path) -> None:
    from kitty.web import serve as webserve
    from tests.web.test_web_board import get, page_data, post, running_server

    planned(repo)
    ws = start(repo)
    log = repo / "kitty-specs" / SLUG / "status.events.jsonl"
    server = webserve.make_server(repo, None, "127.0.0.1", 0, allow_remote=False, edit=True)
    with running_server(server):
        token = page_data(get(server, "/")[2])["edit"]["token"]
        move = {"wp": "WP01", "to": "for_review", "agent": "claude"}
        before = log.read_bytes()
        status, err = post(server, "/api/move", move, token)
        assert status == 409 and "WP01 is not ready for review" in err["message"], err
        assert log.read_bytes() == before
        commit(ws)
        status, done = post(server, "/api/move", move, token)
        assert status == 200 and done["to_lane"] == "for_review", done
