"""Parse and serialize every kind of line in `status.events.jsonl`.

Four kinds share the file (FORMAT.md): lane transitions, annotations, lifecycle
envelopes (`event_type`) and other records (`type`). Only the first two affect
state; the others are kept as `Other` so nothing is lost or rejected.
A bad line never raises: it becomes a `LogWarning` naming its line number.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kitty.core import lanes
from kitty.core.clock import parse_at

TRANSITION_REQUIRED = ("event_id", "wp_id", "from_lane", "to_lane", "at")
ANNOTATION_REQUIRED = ("event_id", "wp_id", "at", "delta")


@dataclass(frozen=True, slots=True)
class Transition:
    event_id: str
    wp_id: str
    from_lane: str
    to_lane: str
    at: str
    at_us: int
    data: dict[str, Any]
    line: int = 0

    @property
    def actor(self) -> Any:
        return self.data.get("actor")

    @property
    def force(self) -> bool:
        return bool(self.data.get("force"))


@dataclass(frozen=True, slots=True)
class Annotation:
    event_id: str
    wp_id: str
    at: str
    at_us: int
    delta: dict[str, Any]
    data: dict[str, Any]
    line: int = 0

    @property
    def actor(self) -> Any:
        return self.data.get("actor")


@dataclass(frozen=True, slots=True)
class Other:
    """A lifecycle envelope or other record: kept, never affects lanes."""

    data: dict[str, Any]
    line: int = 0

    @property
    def event_id(self) -> str | None:
        value = self.data.get("event_id")
        return value if isinstance(value, str) else None


Event = Transition | Annotation | Other


@dataclass(frozen=True, slots=True)
class LogWarning:
    line: int
    message: str

    def render(self, path: str) -> str:
        return f"{path}:{self.line}: {self.message} (line skipped)"


@dataclass(slots=True)
class ParsedLog:
    events: list[Event] = field(default_factory=list)
    warnings: list[LogWarning] = field(default_factory=list)
    #: True when the file does not end with a newline (a torn or foreign write).
    unterminated: bool = False


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


def parse_record(data: dict[str, Any], line: int = 0) -> Event | LogWarning:
    """Classify one decoded JSON object. Returns a warning for an unusable record."""
    if "event_type" in data or "type" in data:
        return Other(data, line)
    if data.get("kind") == "annotation":
        missing = _missing(data, ANNOTATION_REQUIRED)
        if missing:
            return LogWarning(line, f"annotation missing {', '.join(missing)}")
        if not isinstance(data["delta"], dict):
            return LogWarning(line, "annotation delta is not an object")
        try:
            at_us = parse_at(data["at"])
        except ValueError:
            return LogWarning(line, f"bad timestamp {data['at']!r}")
        return Annotation(
            str(data["event_id"]), str(data["wp_id"]), data["at"], at_us, data["delta"], data, line
        )
    if "kind" in data:
        return Other(data, line)
    missing = _missing(data, TRANSITION_REQUIRED)
    if missing:
        return LogWarning(line, f"lane transition missing {', '.join(missing)}")
    to_lane = lanes.canonical(str(data["to_lane"]))
    if to_lane is None or to_lane == lanes.GENESIS:
        return LogWarning(line, f"unknown to_lane {data['to_lane']!r}")
    from_lane = str(data["from_lane"])
    from_lane = lanes.canonical(from_lane) or from_lane
    try:
        at_us = parse_at(data["at"])
    except ValueError:
        return LogWarning(line, f"bad timestamp {data['at']!r}")
    return Transition(
        str(data["event_id"]), str(data["wp_id"]), from_lane, to_lane, data["at"], at_us, data, line
    )


def parse_lines(lines: Iterable[str], *, unterminated: bool = False) -> ParsedLog:
    """Decode a log. Line numbers are 1-based; blank lines are ignored."""
    result = ParsedLog(unterminated=unterminated)
    numbered = list(enumerate(lines, start=1))
    last = numbered[-1][0] if numbered else 0
    loads = json.loads
    for number, text in numbered:
        if not text.strip():
            continue
        try:
            data = loads(text)
        except ValueError:
            torn = unterminated and number == last
            result.warnings.append(
                LogWarning(
                    number, "torn last line (write interrupted)" if torn else "not valid JSON"
                )
            )
            continue
        if not isinstance(data, dict):
            result.warnings.append(LogWarning(number, "not a JSON object"))
            continue
        parsed = parse_record(data, number)
        if isinstance(parsed, LogWarning):
            result.warnings.append(parsed)
        else:
            result.events.append(parsed)
    return result


def serialize(record: dict[str, Any]) -> str:
    """One log line: keys sorted, newline-terminated, the same style as Spec Kitty."""
    return json.dumps(record, sort_keys=True) + "\n"
