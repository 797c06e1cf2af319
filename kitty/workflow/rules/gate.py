"""The test gate's rules, on data: its settings, what a run of the configured commands
means, what it writes to the log, and how it reads back (board, status, next, prompts).

The gate runs the project's `verify.*` commands (kitty.core.verify) in order and stops
at the first failure; a failing command is run once more at once, and one that then
passes is *flaky*: the gate passes, flagged, never silently. Its settings live apart
from the commands (`verify` values are all commands):

```yaml
gate:
  timeout: 900        # seconds per command (default 900)
  max_failures: 3     # failed gates per WP before the sprint's arbiter (default 3)
```

The result is recorded as one annotation (Spec Kitty 3.2.7 reads it as one): flat
`gate*` scalars the fold keeps (latest wins) and the whole run under `gate_run`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kitty.core.gateview import FAILED, FLAKY, LANE, PASSED, QUEUE
from kitty.errors import SpecError

__all__ = ["FAILED", "FLAKY", "LANE", "PASSED", "QUEUE"]  # with the functions below

DEFAULT_TIMEOUT = 900
DEFAULT_MAX_FAILURES = 3
#: The failing output handed back to an implementer: its last lines, capped.
TAIL_LINES = 60
TAIL_CHARS = 4000


def settings(raw: Mapping[str, Any], display: str = ".kittify/config.yaml") -> tuple[int, int]:
    """(timeout seconds per command, failed gates per WP before the arbiter)."""
    section = raw.get("gate")
    if section is None:
        return DEFAULT_TIMEOUT, DEFAULT_MAX_FAILURES
    if not isinstance(section, Mapping):
        raise SpecError(
            display, None, "gate must be a mapping", "for example: gate: {timeout: 900}"
        )
    values = []
    for key, default in (("timeout", DEFAULT_TIMEOUT), ("max_failures", DEFAULT_MAX_FAILURES)):
        value = section.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise SpecError(
                display,
                None,
                f"gate.{key} must be a whole number of at least 1, not {value!r}",
                f"for example: gate: {{{key}: {default}}}",
            )
        values.append(value)
    return values[0], values[1]


def tail(text: str, lines: int = TAIL_LINES, chars: int = TAIL_CHARS) -> str:
    """The end of a command's output: its last `lines` lines, at most `chars` characters."""
    kept = "\n".join(text.rstrip("\n").splitlines()[-lines:])
    return kept if len(kept) <= chars else "…" + kept[-(chars - 1) :]


def attempt_verdict(exits: Sequence[int | None]) -> tuple[bool, bool]:
    """(passed, flaky) of one command from its attempts' exit codes (None: timed out)."""
    if not exits:
        return False, False
    passed = exits[-1] == 0
    return passed, passed and len(exits) > 1


def needs_rerun(exits: Sequence[int | None]) -> bool:
    """A failing command is run once more, immediately (a timeout is not re-run)."""
    return len(exits) == 1 and exits[0] not in (0, None)


def outcome(commands: Sequence[Mapping[str, Any]]) -> str:
    """passed, failed or flaky, from the commands that ran (each with passed/flaky)."""
    if not commands or not all(c["passed"] for c in commands):
        return FAILED
    return FLAKY if any(c["flaky"] for c in commands) else PASSED


def describe(command: Mapping[str, Any]) -> str:
    """`test: exit 0 in 1.2s` (flaky, timed out)."""
    code = command["exit"]
    how = f"timed out after {command['seconds']:g}s" if code is None else f"exit {code}"
    if code is not None:
        how += f" in {command['seconds']:g}s"
    if command.get("flaky"):
        how += " (flaky: failed, then passed on a re-run)"
    elif len(command.get("exits") or ()) > 1:
        how += " (failed again on an immediate re-run)"
    return f"{command['name']} `{command['line']}`: {how}"


def delta(
    run: Mapping[str, Any], failures_before: int, where: str, others: Sequence[str] = ()
) -> dict[str, Any]:
    """The annotation's delta for one gate run: flat scalars (the fold keeps them) and
    the whole run under `gate_run`. `failures_before`: this WP's failed gates so far."""
    result = outcome(run["commands"])
    failed = [c for c in run["commands"] if not c["passed"]]
    return {
        "gate": result,
        "gate_commit": run["commit"],
        "gate_where": where,
        "gate_with": ", ".join(others) or None,
        "gate_summary": "; ".join(describe(c) for c in run["commands"]),
        "gate_output": run["output"],
        "gate_failures": failures_before + (1 if result == FAILED else 0),
        "gate_tail": failed[0].get("tail") if failed else None,
        "gate_clean": run.get("clean", True),
        "gate_run": dict(run),
    }


def failed(scalars: Mapping[str, Any]) -> bool:
    return scalars.get("gate") == FAILED


def failure_text(scalars: Mapping[str, Any]) -> str:
    """What a fix prompt says first after a failed gate: which command failed where, the
    other WPs on the tree, and the failing output's tail."""
    commit = str(scalars.get("gate_commit") or "?")[:10]
    if scalars.get("gate_where") == QUEUE:
        others = scalars.get("gate_with")
        where = (
            f"the merge queue's integration tree at {commit} (your lane merged together with "
            f"{others})"
            if others
            else f"the merge queue's integration tree at {commit} (your lane on the target)"
        )
    else:
        where = f"your lane worktree at {commit}"
    lines = [
        f"kitty ran the project's verification commands on {where}, and they failed:",
        "",
        str(scalars.get("gate_summary") or ""),
        "",
        f"The full output is in {scalars.get('gate_output')}. Its end:",
        "",
        "```",
        str(scalars.get("gate_tail") or "(no output)"),
        "```",
    ]
    return "\n".join(lines)


def passed_text(scalars: Mapping[str, Any]) -> str | None:
    """What a review prompt says: `the tests passed at <commit>` (None unless they did)."""
    if scalars.get("gate") not in (PASSED, FLAKY):
        return None
    flaky = " (one command was flaky: it failed, then passed on a re-run)"
    dirty = (
        " (with uncommitted changes in the worktree: the commit alone was not tested)"
        if scalars.get("gate_clean") is False
        else ""
    )
    return (
        f"kitty ran the project's verification commands and the tests passed at "
        f"{scalars.get('gate_commit')}{flaky if scalars.get('gate') == FLAKY else ''}{dirty}: "
        f"{scalars.get('gate_summary')}. Review that commit's tree."
    )


#: What a sprint does after a gate (`after_gate`).
REVIEW, FIX, ESCALATE = "review", "fix", "escalate"


def after_gate(result: str, failures: int, cap: int) -> str:
    """REVIEW (the gate passed, flaky or not), FIX (back to the implementer, the failing
    output at the top of its prompt) or ESCALATE (the cap of failed gates is reached: a
    human decides; no arbiter policy approves a WP whose tests fail)."""
    if result != FAILED:
        return REVIEW
    return ESCALATE if failures >= cap else FIX


def fix_note(scalars: Mapping[str, Any], cap: int, implementer: str | None) -> str:
    """The note of the move that sends a WP back after a failed gate."""
    commit = str(scalars.get("gate_commit") or "?")[:10]
    who = implementer or "its implementer"
    return (
        f"test gate failed at {commit} ({scalars.get('gate_summary')}; failed gate "
        f"{scalars.get('gate_failures')} of {cap}): back to {who} in fix mode; "
        f"output: {scalars.get('gate_output')}"
    )


def escalate_note(scalars: Mapping[str, Any], cap: int) -> str:
    return (
        f"Escalated to a human: the test gate failed {scalars.get('gate_failures')} times "
        f"(gate.max_failures is {cap}); last at {str(scalars.get('gate_commit'))[:10]}: "
        f"{scalars.get('gate_summary')}; output: {scalars.get('gate_output')}"
    )
