"""The dispatch records of `kitty sprint` and the claim check of `--invocation-id`.

A sprint appends a dispatch record before it claims a WP for an agent; a claim that passes
`--invocation-id` (kitty agent action implement) must match one, or it is refused.
"""

from __future__ import annotations

import os
from typing import Any

from kitty.errors import GuardRefused
from kitty.mission.workspace import Mission

#: The `event_type` of the log record a sprint writes per dispatch: a lifecycle envelope,
#: which Spec Kitty's reader skips (a top-level `type` it does not know, as the records
#: older kitty wrote, makes Spec Kitty refuse the whole log; `doctor --fix` migrates).
DISPATCH = "KittyDispatch"
LEGACY_DISPATCH = "kitty_dispatch"  # the `type` of those older records


def dispatch_record(
    mission: Mission, invocation_id: str, wp_id: str, action: str, agent: str, model: str | None
) -> dict[str, Any]:
    """What `kitty sprint` appends before it claims a WP for an agent: the durable record
    an `--invocation-id` must match."""
    return {
        "event_type": DISPATCH,
        "payload": {
            "invocation_id": invocation_id,
            "mission_slug": mission.slug,
            "wp_id": wp_id,
            "action": action,
            "agent": agent,
            "model": model,
        },
    }


def dispatch_of(data: dict[str, Any]) -> dict[str, Any] | None:
    """The dispatch a log record holds (its payload; a legacy record is its own), else None."""
    if data.get("event_type") == DISPATCH:
        payload = data.get("payload")
        return payload if isinstance(payload, dict) else None
    if data.get("type") == LEGACY_DISPATCH:
        return data
    return None


def _events_naming(mission: Mission, text: str) -> list[Any]:
    """The log's events whose line contains `text`, in log order. A plain id (a ULID) is
    searched for in the raw log and only the lines holding it are decoded, so a claim
    with --invocation-id does not parse the whole log (seconds at 10,000 WPs); anything
    else (which JSON might have escaped) takes the full parse."""
    if "log" in mission.__dict__ or not (text.isascii() and text.isalnum()):
        return list(mission.log.events)
    from kitty.adapters.eventlog import open_log
    from kitty.core.log.read import parse_lines

    fd = open_log(mission.events_path)
    if fd is None:
        return []
    with os.fdopen(fd, "rb") as handle:
        data = handle.read()
    needle, lines = text.encode(), []
    at = data.find(needle)
    while at != -1:
        end = data.find(b"\n", at)
        end = len(data) if end == -1 else end
        lines.append(data[data.rfind(b"\n", 0, at) + 1 : end].decode("utf-8", errors="replace"))
        at = data.find(needle, end)
    return list(parse_lines(lines).events)


def check_invocation(
    mission: Mission, invocation_id: str, wp_id: str, action: str, agent: str, model: str | None
) -> None:
    """Fail closed: the id must name a dispatch kitty recorded for this very claim."""
    from kitty.core.log.events import Other

    records = [
        found
        for e in _events_naming(mission, invocation_id)
        if isinstance(e, Other)
        and (found := dispatch_of(e.data)) is not None
        and found.get("invocation_id") == invocation_id
    ]
    hint = (
        "pass the --invocation-id of a dispatch kitty recorded (kitty sprint writes one per "
        "agent run), or claim without --model/--invocation-id"
    )
    if not records:
        raise GuardRefused(f"unknown --invocation-id {invocation_id!r}: no such dispatch", hint)
    record = records[0]
    expected: dict[str, tuple[Any, str | None]] = {
        "mission": (record.get("mission_slug"), mission.slug),
        "WP": (record.get("wp_id"), wp_id),
        "action": (record.get("action"), action),
        "agent": (record.get("agent"), agent),
    }
    if record.get("model") is not None or model is not None:
        expected["model"] = (record.get("model"), model)
    wrong = [
        f"{k} {got!r} (dispatched: {want!r})" for k, (want, got) in expected.items() if want != got
    ]
    if wrong:
        raise GuardRefused(
            f"--invocation-id {invocation_id} does not match its dispatch: " + ", ".join(wrong),
            hint,
        )
