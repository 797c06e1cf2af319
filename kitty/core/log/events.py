"""Classify and serialize every kind of line in `status.events.jsonl`.

Four kinds share the file (FORMAT.md): lane transitions, annotations, lifecycle
envelopes (`event_type`) and other records (`type`). Only the first two affect
state; the others are kept as `Other` so nothing is lost or rejected.
A bad record never raises: it becomes a `LogWarning` naming its line number.
Reading the file (decoding each line, the dedupe, the order) is `kitty.core.log.read`.
"""

from __future__ import annotations

import json
from typing import Any

from kitty.core import lanes
from kitty.core.clock import parse_at
from kitty.core.record import Record

TRANSITION_REQUIRED = ("event_id", "wp_id", "from_lane", "to_lane", "at")
ANNOTATION_REQUIRED = ("event_id", "wp_id", "at", "delta")


class Transition(Record):
    """A lane transition. Events are not frozen (building a frozen record costs ~3x as
    much, and a log holds hundreds of thousands); nothing changes one after parsing.

    The fields after `line` are what replay reads, taken out of `data` once by
    `parse_record`; an event read by `logread.scan_log` keeps only those (its `data`
    is empty).
    """

    __slots__ = (
        "after",
        "at",
        "at_us",
        "data",
        "event_id",
        "force",
        "from_lane",
        "line",
        "linked",
        "policy",
        "reason",
        "review_result",
        "rollback",
        "to_lane",
        "tool",
        "wp_id",
    )
    event_id: str
    wp_id: str
    from_lane: str
    to_lane: str
    at: str
    at_us: int
    data: dict[str, Any]
    line: int
    tool: str | None  # actor_tool(actor)
    policy: dict[str, Any] | None  # policy_metadata when it is an object
    force: bool  # `force` is exactly true
    reason: str | None  # `reason` when it is a string
    review_result: dict[str, Any] | None  # when it is an object
    #: kitty wrote it: the line carries `kitty_after` (even null), its causal link.
    linked: bool
    #: `kitty_after`: the id of the WP's last applied transition the writer saw.
    after: str | None
    #: Spec Kitty's `_is_rollback_event`: a review rejection back to in_progress.
    rollback: bool

    def __init__(
        self,
        event_id: str,
        wp_id: str,
        from_lane: str,
        to_lane: str,
        at: str,
        at_us: int,
        data: dict[str, Any],
        line: int = 0,
        tool: str | None = None,
        policy: dict[str, Any] | None = None,
        force: bool = False,
        reason: str | None = None,
        review_result: dict[str, Any] | None = None,
        linked: bool = False,
        after: str | None = None,
        rollback: bool = False,
    ) -> None:
        self.event_id = event_id
        self.wp_id = wp_id
        self.from_lane = from_lane
        self.to_lane = to_lane
        self.at = at
        self.at_us = at_us
        self.data = data
        self.line = line
        self.tool = tool
        self.policy = policy
        self.force = force
        self.reason = reason
        self.review_result = review_result
        self.linked = linked
        self.after = after
        self.rollback = rollback

    @property
    def actor(self) -> Any:
        return self.data.get("actor")


#: The key that marks a lane transition as written by kitty; its value is the causal link
#: (the event id of the WP's last applied transition the writer saw, null for none).
#: Spec Kitty's reader (`StatusEvent.from_dict`) reads named keys only and ignores it.
LINK_KEY = "kitty_after"


class Annotation(Record):
    __slots__ = ("at", "at_us", "data", "delta", "event_id", "line", "wp_id")
    event_id: str
    wp_id: str
    at: str
    at_us: int
    delta: dict[str, Any]
    data: dict[str, Any]
    line: int

    def __init__(
        self,
        event_id: str,
        wp_id: str,
        at: str,
        at_us: int,
        delta: dict[str, Any],
        data: dict[str, Any],
        line: int = 0,
    ) -> None:
        self.event_id = event_id
        self.wp_id = wp_id
        self.at = at
        self.at_us = at_us
        self.delta = delta
        self.data = data
        self.line = line

    @property
    def actor(self) -> Any:
        return self.data.get("actor")


class Other(Record):
    """A lifecycle envelope or other record: kept, never affects lanes."""

    __slots__ = ("data", "line")
    data: dict[str, Any]
    line: int

    def __init__(self, data: dict[str, Any], line: int = 0) -> None:
        self.data = data
        self.line = line

    @property
    def event_id(self) -> str | None:
        value = self.data.get("event_id")
        return value if isinstance(value, str) else None


Event = Transition | Annotation | Other


class LogWarning(Record, frozen=True):
    __slots__ = ("line", "message")
    line: int
    message: str

    def __init__(self, line: int, message: str) -> None:
        object.__setattr__(self, "line", line)
        object.__setattr__(self, "message", message)

    def render(self, path: str) -> str:
        return f"{path}:{self.line}: {self.message} (line skipped)"


class ParsedLog(Record):
    __slots__ = ("events", "unterminated", "warnings")
    events: list[Event]
    warnings: list[LogWarning]
    #: True when the file does not end with a newline (a torn or foreign write).
    unterminated: bool

    def __init__(
        self,
        events: list[Event] | None = None,
        warnings: list[LogWarning] | None = None,
        unterminated: bool = False,
    ) -> None:
        self.events = [] if events is None else events
        self.warnings = [] if warnings is None else warnings
        self.unterminated = unterminated


def actor_tool(actor: Any) -> str | None:
    """The agent tool behind an actor: the string itself, or `actor["tool"]`."""
    if isinstance(actor, str):
        return actor or None
    if isinstance(actor, dict):
        tool = actor.get("tool")
        return tool if isinstance(tool, str) and tool else None
    return None


def _missing(data: dict[str, Any], keys: tuple[str, ...]) -> list[str]:
    get = data.get
    for key in keys:  # fast path: the common line has every key
        value = get(key)
        if value is None or value == "":
            return [k for k in keys if get(k) in (None, "")]
    return []


#: Every lane name or alias -> its canonical lane (`lanes.canonical` as one lookup).
_CANONICAL = {name: lanes.canonical(name) for name in (*lanes.TRANSITIONS, *lanes.ALIASES)}


def _annotation(
    data: dict[str, Any], event_id: Any, wp_id: Any, at: Any, line: int
) -> Event | LogWarning:
    """`parse_record` of an annotation (`kind` is "annotation")."""
    delta = data.get("delta")
    if not (event_id and wp_id and at and delta):
        missing = _missing(data, ANNOTATION_REQUIRED)
        if missing:
            return LogWarning(line, f"annotation missing {', '.join(missing)}")
    if not _is_wp_id(wp_id):
        return LogWarning(line, f"wp_id {wp_id!r} is not a work package id")
    if not isinstance(delta, dict):
        return LogWarning(line, "annotation delta is not an object")
    try:
        at_us = parse_at(at)
    except ValueError:
        return LogWarning(line, f"bad timestamp {at!r}")
    return Annotation(str(event_id), str(wp_id), at, at_us, delta, data, line)


def parse_record(data: dict[str, Any], line: int = 0) -> Event | LogWarning:
    """Classify one decoded JSON object. Returns a warning for an unusable record.

    Runs once per log line: each key is read once, and the exact checks (`_missing`,
    `lanes.canonical` of a non-string) run only when the quick ones fail.
    """
    if "event_type" in data or "type" in data:
        return Other(data, line)
    get = data.get
    kind = get("kind")
    event_id: Any = get("event_id")
    wp_id: Any = get("wp_id")
    at: Any = get("at")
    if kind == "annotation":
        return _annotation(data, event_id, wp_id, at, line)
    if kind is not None or "kind" in data:
        return Other(data, line)
    frm, to = get("from_lane"), get("to_lane")
    if not (event_id and wp_id and frm and to and at):
        missing = _missing(data, TRANSITION_REQUIRED)
        if missing:
            return LogWarning(line, f"lane transition missing {', '.join(missing)}")
    if not _is_wp_id(wp_id):
        return LogWarning(line, f"wp_id {wp_id!r} is not a work package id")
    to_lane = _CANONICAL.get(to) if type(to) is str else lanes.canonical(str(to))
    if to_lane is None or to_lane == lanes.GENESIS:
        return LogWarning(line, f"unknown to_lane {to!r}")
    if type(frm) is str:
        from_lane = _CANONICAL.get(frm) or frm
    else:
        from_lane = str(frm)
        from_lane = lanes.canonical(from_lane) or from_lane
    try:
        at_us = parse_at(at)
    except ValueError:
        return LogWarning(line, f"bad timestamp {at!r}")
    policy, reason, result = get("policy_metadata"), get("reason"), get("review_result")
    linked = LINK_KEY in data
    after = get(LINK_KEY) if linked else None
    return Transition(
        str(event_id),
        str(wp_id),
        from_lane,
        to_lane,
        at,
        at_us,
        data,
        line,
        actor_tool(get("actor")),
        policy if isinstance(policy, dict) else None,
        get("force") is True,
        reason if isinstance(reason, str) else None,
        result if isinstance(result, dict) else None,
        linked,
        after if isinstance(after, str) else None,
        to_lane == lanes.IN_PROGRESS
        and (frm == lanes.IN_REVIEW or (frm == lanes.FOR_REVIEW and get("review_ref") is not None)),
    )


def serialize(record: dict[str, Any]) -> str:
    """One log line: keys sorted, newline-terminated, the same style as Spec Kitty."""
    return json.dumps(record, sort_keys=True) + "\n"


_OPTIONAL_STR = ("reason", "review_ref", "mission_id", "mission_slug", "execution_mode")
_OPTIONAL_OBJECT = ("policy_metadata", "review_result", "evidence")


def _is_wp_id(value: Any) -> bool:
    return isinstance(value, str) and value[:2] == "WP" and value[2:].isdigit()


def field_problems(data: dict[str, Any]) -> list[str]:
    """Type problems of one decoded lane transition or annotation (doctor's strict view).

    Readers tolerate what they can; this names every key whose type is wrong, so
    `kitty doctor` can say exactly what to fix. Lifecycle and other records are free-form.
    """
    if "event_type" in data or "type" in data:
        return []
    kind = data.get("kind")
    if kind is not None and kind != "annotation":
        return []
    problems: list[str] = []
    for key in ("event_id", "at"):
        if key in data and not isinstance(data[key], str):
            problems.append(f"{key} must be a string, not {_type(data[key])}")
    if "wp_id" in data and not _is_wp_id(data["wp_id"]):
        problems.append(f"wp_id must be a string like 'WP01', not {data['wp_id']!r}")
    at = data.get("at")
    if isinstance(at, str):
        try:
            from datetime import datetime

            if datetime.fromisoformat(at).utcoffset() is None:
                problems.append(f"at {at!r} has no time zone (write it as …+00:00)")
        except ValueError:
            pass  # the parser already reports a bad timestamp
    actor = data.get("actor")
    if actor is not None and not isinstance(actor, str | dict):
        problems.append(f"actor must be a string or an object, not {_type(actor)}")
    if kind == "annotation":
        return problems + _delta_problems(data.get("delta"))
    for key in ("from_lane", "to_lane"):
        if key in data and not isinstance(data[key], str):
            problems.append(f"{key} must be a string, not {_type(data[key])}")
    if isinstance(data.get("from_lane"), str):
        lane = data["from_lane"]
        if lane != lanes.GENESIS and lanes.canonical(lane) is None:
            problems.append(f"unknown from_lane {lane!r}")
    if "force" in data and not isinstance(data["force"], bool):
        problems.append(f"force must be true or false, not {data['force']!r}")
    for key in _OPTIONAL_STR:
        if data.get(key) is not None and not isinstance(data[key], str):
            problems.append(f"{key} must be a string or null, not {_type(data[key])}")
    for key in _OPTIONAL_OBJECT:
        if data.get(key) is not None and not isinstance(data[key], dict):
            problems.append(f"{key} must be an object or null, not {_type(data[key])}")
    return problems


def _delta_problems(delta: Any) -> list[str]:
    if not isinstance(delta, dict):
        return []  # the parser already reports it
    problems = []
    subtasks = delta.get("subtasks")
    if subtasks is not None and (
        not isinstance(subtasks, dict)
        or not all(isinstance(k, str) and isinstance(v, str) for k, v in subtasks.items())
    ):
        problems.append('delta.subtasks must map subtask ids to statuses, e.g. {"T001": "done"}')
    if "note" in delta and not isinstance(delta["note"], str):
        problems.append(f"delta.note must be a string, not {_type(delta['note'])}")
    claim = delta.get("release_runtime_claim")
    if claim is not None and not isinstance(claim, bool):
        problems.append(f"delta.release_runtime_claim must be true or false, not {claim!r}")
    return problems


def _type(value: Any) -> str:
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string"}.get(
        type(value), "a list" if isinstance(value, list) else "an object" if value else "null"
    )
