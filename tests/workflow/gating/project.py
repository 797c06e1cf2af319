"""A tiny project with a real pytest suite, for the test gate and the merge queue.

Each WP owns `src/wpNN.txt`. The suite (`checks/test_suite.py`) fails when a file holds
`bad`, and when two files are there that both say `clash` (two WPs that pass alone and
fail together); `verify.test` is this interpreter's `python -m pytest -q checks`.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from tests.helpers import git, kitty, make_mission, ok, trust

SLUG = "demo-01ABCDEF"
SUITE = """\
from pathlib import Path


def texts():
    return {p.name: p.read_text() for p in sorted(Path("src").glob("*.txt"))}


def test_no_file_is_bad():
    assert not [name for name, text in texts().items() if "bad" in text]


def test_no_two_files_clash():
    clashing = [name for name, text in texts().items() if "clash" in text]
    assert len(clashing) < 2, f"{clashing} clash"
"""
#: Without the plugins of kitty's own venv (hypothesis, xdist, ...): 0.5 s, not 3 s, a run.
PYTEST = (
    f"env PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {shlex.quote(sys.executable)} -m pytest -q "
    "-p no:cacheprovider checks"
)


def config(extra: str = "") -> str:
    return f"agents:\n  available: [claude, codex]\nverify:\n  test: {PYTEST!r}\n" + extra


def project(
    repo: Path,
    wps: int = 2,
    extra: str = "",
    deps: dict[str, list[str]] | None = None,
    suite: str = SUITE,
) -> Path:
    """The mission (WP01..WPnn, one owned file each) on a repo with the suite, committed
    and trusted."""
    (repo / "checks").mkdir()
    (repo / "checks" / "test_suite.py").write_text(suite)
    (repo / "src").mkdir()
    (repo / "src" / "base.txt").write_text("base\n")
    (repo / ".gitignore").write_text("__pycache__/\n.pytest_cache/\n")
    specs = [
        {"wp_id": f"WP0{i}", "owned": [f"src/wp0{i}.txt"], "deps": (deps or {}).get(f"WP0{i}")}
        for i in range(1, wps + 1)
    ]
    mission = make_mission(repo, wps=specs, config=config(extra))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plan")
    trust(repo)
    return mission


def implement(repo: Path, wp: str, text: str, agent: str = "claude") -> Path:
    """Claim `wp` and commit `text` as its file in its lane worktree; the worktree."""
    workspace = Path(
        ok(repo, "agent", "action", "implement", wp, "--agent", agent, "--json").json()["workspace"]
    )
    path = workspace / "src" / f"{wp.lower()}.txt"
    path.write_text(text)
    git(workspace, "add", str(path))
    git(workspace, "commit", "-qm", f"feat({wp}): {text.strip()}")
    return workspace


def approve(repo: Path, wp: str, implementer: str = "claude", reviewer: str = "codex") -> None:
    """for_review, then approved by another agent."""
    ok(repo, "agent", "tasks", "move-task", wp, "--to", "for_review", "--agent", implementer,
       "--note", "ready")  # fmt: skip
    ok(repo, "agent", "tasks", "move-task", wp, "--to", "in_review", "--agent", reviewer)
    ok(repo, "agent", "tasks", "move-task", wp, "--to", "approved", "--agent", reviewer,
       "--note", "fine")  # fmt: skip


def status(repo: Path) -> dict[str, dict[str, object]]:
    rows = kitty(repo, "status", "--json").json()
    return {row["wp_id"]: row for row in rows["wps"]} if "wps" in rows else rows
