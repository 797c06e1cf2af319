"""The sprint's rules, each checked by its outcome (not only the exit code).

* a reviewer is never the WP's implementer, even when the two agent lists overlap;
* run logs are numbered by review cycle: `<WP>-<role>-<cycle>.log`, one more after
  each rejection;
* at the cycle cap the `--arbiter` policy applies end to end: `approve` approves
  and records the arbiter decision, `escalate` (the default) blocks with a reason.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import ok
from tests.sprint.test_sprint import calls, events, fakes, lanes_of, planned, sprint  # noqa: F401

pytestmark = pytest.mark.usefixtures("fakes")  # fake agent CLIs first on PATH


def dispatches(stream: list[dict[str, Any]]) -> list[tuple[str, str, str, int]]:
    return [
        (e["wp_id"], e["role"], e["agent"], e["cycle"]) for e in stream if e["event"] == "dispatch"
    ]


def test_overlapping_lists_never_review_your_own_work_and_logs_count_cycles(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("CLAUDE", "CODEX"):
        monkeypatch.setenv(f"FAKE_{name}_REJECT", "WP01")  # WP01's first review rejects
    planned(repo, [{"wp_id": "WP01"}, {"wp_id": "WP02"}])
    done = sprint(repo, "--implementer", "claude,codex", "--reviewer", "claude,codex")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    assert lanes_of(repo) == {"WP01": "approved", "WP02": "approved"}
    runs = dispatches(events(done))
    implementers = {wp: agent for wp, role, agent, _ in runs if role == "implement"}
    assert sorted(implementers.values()) == ["claude", "codex"]  # both lists really overlap
    for wp, role, agent, _ in runs:
        if role == "review":
            assert agent != implementers[wp], runs
    # cycle numbering: WP01 was rejected once, so it has a second round
    assert sorted((wp, role, cycle) for wp, role, _, cycle in runs) == [
        ("WP01", "implement", 1),
        ("WP01", "implement", 2),
        ("WP01", "review", 1),
        ("WP01", "review", 2),
        ("WP02", "implement", 1),
        ("WP02", "review", 1),
    ]
    # one run folder (beside it, the board's live-<mission>.json)
    (run_dir,) = [p for p in (repo / ".kittify" / "runs").iterdir() if p.is_dir()]
    assert sorted(p.name for p in run_dir.glob("*.log")) == [
        "WP01-implement-1.log",
        "WP01-implement-2.log",
        "WP01-review-1.log",
        "WP01-review-2.log",
        "WP02-implement-1.log",
        "WP02-review-1.log",
    ]
    # the fix run's prompt (on the agent's stdin) says which round it is
    made = calls(Path(os.environ["FAKE_AGENT_LOG"]))
    fixes = [c for c in made if c["stdin"].startswith("# Fix WP01")]
    assert len(fixes) == 1 and "cycle 1/3" in fixes[0]["stdin"]


@pytest.mark.parametrize("policy", ["approve", "escalate"])
def test_arbiter_policy_at_the_cycle_cap(
    repo: Path, monkeypatch: pytest.MonkeyPatch, policy: str
) -> None:
    monkeypatch.setenv("FAKE_CODEX_REJECT", "WP01")
    planned(repo, [{"wp_id": "WP01"}, {"wp_id": "WP02", "deps": ["WP01"]}])
    args = ["--implementer", "claude", "--reviewer", "codex", "--max-cycles", "1"]
    if policy == "approve":
        args += ["--arbiter", "approve"]
    done = sprint(repo, *args)
    stream = events(done)
    arbiter = [e for e in stream if e["event"] == "arbiter"]
    assert [(e["wp_id"], e["policy"]) for e in arbiter] == [("WP01", policy)]
    # no fix round after the cap: WP01 was implemented once
    assert [r for r in dispatches(stream) if r[:2] == ("WP01", "implement")] == [
        ("WP01", "implement", "claude", 1)
    ]
    wp01 = ok(repo, "status", "--json").json()["work_packages"][0]
    assert wp01["review_cycles"] == 1
    assert wp01["arbiter"]["decision"] == policy
    assert wp01["arbiter"]["by"] == "sprint-arbiter"
    if policy == "approve":
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr
        # the dependent starts once the arbiter approved its dependency
        assert lanes_of(repo) == {"WP01": "approved", "WP02": "approved"}
        assert wp01["arbiter"]["note"].startswith("Arbiter decision: approved by sprint policy")
    else:
        assert done.returncode == 1
        assert lanes_of(repo) == {"WP01": "blocked", "WP02": "planned"}
        assert wp01["reason"] == (
            "Escalated to human after 1 review cycles (sprint arbiter policy)"
        )
        assert "escalate" in ok(repo, "status").out.lower()
