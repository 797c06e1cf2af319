"""The sprint runs the test gate after each implementer's run, before review: a failure
goes back to the implementer in fix mode with the failing output at the top of its
prompt, with a cap of its own (fake agent CLIs, a real pytest suite, real git)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.sprint.test_sprint import calls, events, fakes, lanes_of, sprint
from tests.workflow.gating.project import project

__all__ = ["fakes"]  # a fixture
pytestmark = pytest.mark.usefixtures("spec_kitty_reads_what_is_left")

#: The fake agent writes impl_wpNN.txt saying "(Implement, <ns>)" or "(Fix, <ns>)": WP01's first
#: version fails the suite, its fix passes.
FIRST_FAILS = """\
from pathlib import Path


def test_wp01_is_fixed():
    path = Path("impl_wp01.txt")
    assert not path.exists() or "(Implement" not in path.read_text(), "WP01 is not fixed"
"""
ALWAYS_FAILS = "def test_never():\n    assert False, 'never passes'\n"


@pytest.mark.timeout(180)
def test_a_failing_gate_sends_the_wp_back_in_fix_mode_then_review(repo: Path, fakes: Path) -> None:
    project(repo, wps=2, suite=FIRST_FAILS)
    done = sprint(repo, "--implementer", "claude", "--reviewer", "codex")
    stream = events(done)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    gates = [(e["wp_id"], e["result"]) for e in stream if e["event"] == "gate"]
    assert sorted(gates) == [("WP01", "failed"), ("WP01", "passed"), ("WP02", "passed")]
    assert [e["wp_id"] for e in stream if e["event"] == "gate_fix"] == ["WP01"]
    prompts = [c["stdin"] for c in calls(fakes) if c["name"] == "claude"]
    (fix,) = [p for p in prompts if p.startswith("# Fix WP01")]
    top = fix.split("## Workspace")[0]
    assert "## The test gate failed" in top and "WP01 is not fixed" in top
    assert "1 failed" in top
    reviews = [c["stdin"] for c in calls(fakes) if c["name"] == "codex"]
    assert all("the tests passed at" in r for r in reviews), reviews
    # no review of WP01 before its gate passed: codex saw it once, at the fixed commit
    assert sum("# Review WP01" in r for r in reviews) == 1
    assert lanes_of(repo) == {"WP01": "approved", "WP02": "approved"}
    log = repo / "kitty-specs" / "demo-01ABCDEF" / "status.events.jsonl"
    recorded = [json.loads(line) for line in log.read_text().splitlines()]
    results = [e["delta"]["gate"] for e in recorded if "gate" in e.get("delta", {})]
    assert sorted(results) == ["failed", "passed", "passed"]


@pytest.mark.timeout(180)
def test_a_gate_that_keeps_failing_goes_to_a_human_at_its_cap(repo: Path, fakes: Path) -> None:
    project(repo, wps=1, suite=ALWAYS_FAILS, extra="gate:\n  max_failures: 2\n")
    done = sprint(repo, "--implementer", "claude", "--reviewer", "codex")
    stream = events(done)
    assert [e["result"] for e in stream if e["event"] == "gate"] == ["failed", "failed"]
    (blocked,) = [e for e in stream if e["event"] == "blocked"]
    assert "the test gate failed 2 times" in blocked["reason"]
    assert lanes_of(repo) == {"WP01": "blocked"}
    assert not [c for c in calls(fakes) if c["name"] == "codex"]  # never reviewed
    assert stream[-1]["event"] == "end" and not stream[-1]["ok"]


#: The fake agent writes impl_wpNN.txt: two first versions clash when merged together,
#: each passes alone; a fix says "(Fix, <ns>)" and clashes with nothing.
CLASH = """\
from pathlib import Path


def test_no_two_first_versions_together():
    first = [p.name for p in Path(".").glob("impl_*.txt") if "(Implement" in p.read_text()]
    assert len(first) < 2, f"{first} clash"
"""


@pytest.mark.timeout(240)
def test_the_sprints_merge_queue_sends_the_culprit_back_and_main_stays_green(
    repo: Path, fakes: Path
) -> None:
    from tests.helpers import git

    project(repo, wps=2, suite=CLASH)
    done = sprint(repo, "--implementer", "claude", "--reviewer", "codex", "--merge")
    stream = events(done)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    (queued,) = [e for e in stream if e["event"] == "queue"]
    (back,) = queued["sent_back"]
    assert back["with"] and back["why"] == "gate"
    culprit = back["wp_ids"][0]
    merges = [e for e in stream if e["event"] == "merged"]
    assert [m["wp_ids"] for m in merges] == [back["with"], [culprit]]
    assert all(m["verified"] for m in merges)
    fixes = [c["stdin"] for c in calls(fakes) if c["stdin"].startswith(f"# Fix {culprit}")]
    assert len(fixes) == 1 and f"merged together with {back['with'][0]}" in fixes[0]
    assert lanes_of(repo) == {"WP01": "done", "WP02": "done"}
    assert stream[-1]["ok"] and stream[-1]["merged"]
    # main never held the two first versions together
    for commit in git(repo, "rev-list", "--first-parent", "main").split():
        names = git(repo, "ls-tree", "--name-only", commit).split()
        texts = [git(repo, "show", f"{commit}:{n}") for n in names if n.startswith("impl_")]
        assert sum("(Implement" in t for t in texts) < 2, commit


@pytest.mark.timeout(180)
def test_work_waiting_for_review_untested_is_gated_before_a_reviewer_starts(
    repo: Path, fakes: Path
) -> None:
    """A WP moved to for_review by hand (or left there by a sprint killed before its
    gate): the sprint runs the gate before it dispatches a reviewer."""
    from tests.helpers import ok
    from tests.workflow.gating.project import implement

    project(repo, wps=1, suite=ALWAYS_FAILS, extra="gate:\n  max_failures: 1\n")
    implement(repo, "WP01", "by hand\n")
    ok(repo, "agent", "tasks", "move-task", "WP01", "--to", "for_review", "--agent", "claude",
       "--note", "ready")  # fmt: skip
    done = sprint(repo, "--implementer", "claude", "--reviewer", "codex")
    stream = events(done)
    assert [e["result"] for e in stream if e["event"] == "gate"] == ["failed"]
    assert not [c for c in calls(fakes) if c["name"] == "codex"]  # never reviewed
    assert lanes_of(repo) == {"WP01": "blocked"}
