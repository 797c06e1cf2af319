"""End to end with the REAL claude (implementer) and codex (reviewer) behind the scripted
model double on 127.0.0.1, on a repository with a real pytest suite as `verify.test`:

(a) the implementer's first version fails a test: kitty's gate gives the failure back
    (a `# Fix` prompt that starts with it), the fix passes, the WP is reviewed, merged;
(b) two WPs pass alone and fail together: the merge queue merges one, sends the culprit
    back to fix mode naming the other, and main never holds the failing tree.

The double writes `<WP> implemented by the double` (and `fixed after review` in a fix):
the suites below turn that into a failing, then passing, test.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.agents.clis import environment, require
from tests.agents.double import Script, anthropic, responses
from tests.agents.loopback import serve
from tests.agents.test_sprint_double import DENIED, events
from tests.helpers import git, kitty_argv, make_mission, ok
from tests.workflow.gating.project import PYTEST

pytestmark = pytest.mark.usefixtures("spec_kitty_reads_what_is_left")

FIRST_WP01_FAILS = """\
from pathlib import Path


def test_wp01_has_its_fix():
    path = Path("src/wp01.txt")
    assert not path.exists() or "fixed after review" in path.read_text(), "WP01 needs a fix"
"""
TWO_FIRSTS_CLASH = """\
from pathlib import Path


def test_two_first_versions_clash():
    first = [p.name for p in Path("src").glob("wp*.txt") if "fixed" not in p.read_text()]
    assert len(first) < 2, f"{first} clash"
"""
WPS = [{"wp_id": f"WP0{i}", "owned": [f"src/wp0{i}.txt"]} for i in (1, 2)]


def sprint(repo: Path, tmp_path: Path, suite: str) -> tuple[dict[str, Any], list[Any], Script]:
    (repo / "checks").mkdir()
    (repo / "checks" / "test_suite.py").write_text(suite)
    (repo / ".gitignore").write_text("__pycache__/\n.pytest_cache/\n")
    config = f"agents:\n  available: [claude, codex]\nverify:\n  test: {PYTEST!r}\n"
    make_mission(repo, wps=WPS, config=config)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plan")
    script = Script(feedback_dir=tmp_path)
    with serve() as double:
        double.responders += [anthropic(script), responses(script)]
        home = tmp_path / "agent-home"
        env: dict[str, str] = {}
        for name in ("claude", "codex"):
            env.update(environment(name, home, double.url))
        # the user trusts the repository's commands (kitty reads its trust file from there)
        subprocess.run(kitty_argv(repo, "trust"), env=env, check=True, capture_output=True)
        done = subprocess.run(
            kitty_argv(repo, "sprint", "--no-caffeinate", "--json", "--implementer", "claude",
                       "--reviewer", "codex", "--merge", "--parallel", "2", "--timeout", "120"),
            capture_output=True, text=True, timeout=280, env=env,
        )  # fmt: skip
    logs = "\n".join(
        f"--- {p.name}\n{p.read_text()[-1500:]}"
        for p in sorted(repo.rglob(".kittify/runs/*/*.log"))
    )
    stream = events(done.stdout)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:] + logs
    assert not [r for r in script.results if DENIED.search(r)]
    end = stream[-1]
    assert end["event"] == "end" and end["ok"] and end["merged"], end
    return end, stream, script


def main_is_green_throughout(repo: Path, suite_test: str) -> None:
    """Every commit main pointed at (its first-parent history) passes the suite's rule
    (checked on its files; the lanes' own commits are not trees main held)."""
    for commit in git(repo, "rev-list", "--first-parent", "main").split():
        names = git(repo, "ls-tree", "--name-only", commit, "src/").split()
        texts = {n.removeprefix("src/"): git(repo, "show", f"{commit}:{n}") for n in names}
        first = [n for n, t in texts.items() if n.startswith("wp") and "fixed" not in t]
        if suite_test == "wp01":
            assert "wp01.txt" not in first, commit
        else:
            assert len(first) < 2, commit


@pytest.mark.timeout(300)
def test_a_failing_test_goes_back_to_the_implementer_then_review_and_merge(
    repo: Path, tmp_path: Path
) -> None:
    require("claude")
    require("codex")
    _, stream, script = sprint(repo, tmp_path, FIRST_WP01_FAILS)
    gates = [(e["wp_id"], e["result"]) for e in stream if e["event"] == "gate"]
    assert sorted(gates) == [("WP01", "failed"), ("WP01", "passed"), ("WP02", "passed")]
    (fix,) = [p for p in script.prompts if p.startswith("# Fix WP01")]
    top = fix.split("## Workspace")[0]
    assert "## The test gate failed" in top and "WP01 needs a fix" in top
    reviews = [p for p in script.prompts if p.startswith("IMPORTANT: After reviewing")]
    assert len(reviews) == 2 and all("the tests passed at" in r for r in reviews)
    assert "fixed after review" in git(repo, "show", "main:src/wp01.txt")
    status = ok(repo, "status", "--json").json()["work_packages"]
    assert {w["id"]: w["lane"] for w in status} == {"WP01": "done", "WP02": "done"}
    main_is_green_throughout(repo, "wp01")


@pytest.mark.timeout(300)
def test_two_wps_that_fail_together_are_caught_by_the_merge_queue(
    repo: Path, tmp_path: Path
) -> None:
    require("claude")
    require("codex")
    _, stream, script = sprint(repo, tmp_path, TWO_FIRSTS_CLASH)
    (queued,) = [e for e in stream if e["event"] == "queue"]
    (back,) = queued["sent_back"]
    culprit, other = back["wp_ids"][0], back["with"][0]
    assert back["why"] == "gate"
    (fix,) = [p for p in script.prompts if p.startswith(f"# Fix {culprit}")]
    assert f"merged together with {other}" in fix.split("## Workspace")[0]
    merges = [e["wp_ids"] for e in stream if e["event"] == "merged"]
    assert merges == [[other], [culprit]]
    assert "fixed after review" in git(repo, "show", f"main:src/{culprit.lower()}.txt")
    main_is_green_throughout(repo, "pair")
    log = repo / "kitty-specs" / "demo-01ABCDEF" / "status.events.jsonl"
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    queue_gates = [e for e in lines if e.get("delta", {}).get("gate_where") == "merge queue"]
    assert {e["delta"]["gate"] for e in queue_gates} == {"passed", "failed"}
