"""The test gate's latest result as the fold keeps it (the `gate*` scalars of a WP's
annotations, kitty.workflow.rules.gate writes them): read back for `kitty status
--json`, the board and `next`. No imports: it is on the hot read path."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

PASSED, FAILED, FLAKY = "passed", "failed", "flaky"
#: Where a gate ran: a WP's lane worktree, or the merge queue's integration tree.
LANE, QUEUE = "lane", "merge queue"


def view(scalars: Mapping[str, Any]) -> dict[str, Any] | None:
    """The latest gate result as `kitty status --json` shows it (None: never ran)."""
    result = scalars.get("gate")
    if result not in (PASSED, FAILED, FLAKY):
        return None
    return {
        "result": result,
        "commit": scalars.get("gate_commit"),
        "where": scalars.get("gate_where"),
        "with": scalars.get("gate_with"),
        "summary": scalars.get("gate_summary"),
        "output": scalars.get("gate_output"),
        "failures": scalars.get("gate_failures") or 0,
        "no_verify": bool(scalars.get("gate_no_verify")),
    }


def short(scalars: Mapping[str, Any]) -> str | None:
    """One line for the board and `next`: `tests passed at 1a2b3c4d5e`."""
    gate = view(scalars)
    if gate is None:
        return None
    commit = str(gate["commit"] or "?")[:10]
    word = {PASSED: "passed", FLAKY: "passed (flaky)", FAILED: "FAILED"}[gate["result"]]
    where = " in the merge queue" if gate["where"] == QUEUE else ""
    return f"tests {word} at {commit}{where}"
