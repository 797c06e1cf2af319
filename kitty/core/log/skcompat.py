"""What Spec Kitty 3.2.7's log reader refuses: one bad line makes it refuse the whole
mission (`spec-kitty agent tasks status` answers "Invalid event structure on line N").

`refusal` mirrors its reader (`specify_cli.status.store`, `StatusEvent.from_dict`,
`InnerStateChanged.from_dict`) line by line, so `kitty doctor` can name every line
Spec Kitty would refuse. Its reader ignores keys it does not know, which is why
kitty's causal link (`kitty_after`) and its lifecycle envelopes are safe.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

#: Spec Kitty's `Lane` values (it has no `doing` alias).
SK_LANES = frozenset(
    {
        "genesis",
        "uninitialized",
        "planned",
        "claimed",
        "in_progress",
        "for_review",
        "in_review",
        "approved",
        "done",
        "blocked",
        "canceled",
    }
)
_ULID = re.compile(r"^[0-9A-HJKMNP-TV-Z]{26}$")
_ACTOR_KEYS = frozenset({"role", "profile", "tool", "model"})
_RETRO_TYPES = frozenset(
    {"RetrospectiveCaptured", "RetrospectiveCaptureFailed", "RetrospectiveSkipped"}
)
_TRANSITION_KEYS = ("event_id", "wp_id", "from_lane", "to_lane", "at", "actor", "force")


def _skipped(data: Mapping[str, Any]) -> bool:
    """A record without a `kind` that Spec Kitty's reader skips in place (not a transition)."""
    name = data.get("event_name")
    if isinstance(name, str) and name.startswith("retrospective."):
        return True
    kind = data.get("type")
    if isinstance(kind, str) and kind in _RETRO_TYPES:
        return True
    return "event_type" in data


def refusal(data: Any) -> str | None:
    """Why Spec Kitty 3.2.7's reader refuses this decoded line, or None if it reads it."""
    if not isinstance(data, dict):
        return "expected JSON object"
    kind = data.get("kind")
    if kind is not None:
        if kind != "annotation":
            return f"unknown event kind {kind!r}"
        return _annotation(data)
    if _skipped(data):
        return None
    problem = _slug(data)
    if problem:
        return problem
    for key in _TRANSITION_KEYS:
        if key not in data:
            return f"missing {key!r}"
    if "execution_mode" not in data:
        return "missing 'execution_mode'"
    for key in ("from_lane", "to_lane"):
        if not isinstance(data[key], str) or data[key] not in SK_LANES:
            return f"{key} {data[key]!r} is not one of Spec Kitty's lanes"
    problem = _actor(data["actor"])
    if problem:
        return problem
    evidence = data.get("evidence")
    if evidence:
        problem = _fields(evidence, "evidence", ("review",))
        if problem:
            return problem
        problem = _fields(
            evidence["review"], "evidence.review", ("reviewer", "verdict", "reference")
        )
        if problem:
            return problem
        for key, needed in (
            ("repos", ("repo", "branch", "commit")),
            ("verification", ("command", "result", "summary")),
        ):
            items = evidence.get(key, [])
            if isinstance(items, str | dict) and not items:
                continue  # Spec Kitty iterates it: nothing in it to refuse
            if not isinstance(items, list):
                return f"evidence.{key} is not a list"
            for item in items:
                problem = _fields(item, f"evidence.{key}[]", needed)
                if problem:
                    return problem
    result = data.get("review_result")
    if result:
        return _fields(result, "review_result", ("reviewer", "verdict", "reference"))
    return None


def _slug(data: dict[str, Any]) -> str | None:
    """Without a mission_id, Spec Kitty looks the mission's slug up on disk: a slug that
    is not a string makes its reader fail."""
    if data.get("mission_id"):
        return None
    for key in ("mission_slug", "feature_slug"):
        slug = data.get(key)
        if slug:
            return None if isinstance(slug, str) else f"{key} {slug!r} is not a string"
    return None


def _fields(value: Any, name: str, keys: tuple[str, ...]) -> str | None:
    if not isinstance(value, Mapping):
        return f"{name} is not an object"
    for key in keys:
        if key not in value:
            return f"{name} is missing {key!r}"
    return None


def _actor(actor: Any) -> str | None:
    if not isinstance(actor, dict):
        return None  # Spec Kitty coerces a scalar to a string
    if set(actor) != _ACTOR_KEYS:
        return "a structured actor must have exactly the keys model, profile, role, tool"
    if any(v is not None and not isinstance(v, str) for v in actor.values()):
        return "a structured actor's fields must be strings or null"
    return None


def _annotation(data: dict[str, Any]) -> str | None:
    event_id = data.get("event_id")
    if "event_id" not in data:
        return "missing 'event_id'"
    if not isinstance(event_id, str) or not _ULID.match(event_id):
        return f"annotation event_id {event_id!r} is not a ULID"
    for key in ("delta", "wp_id", "at", "actor"):
        if key not in data:
            return f"missing {key!r}"
    delta = data["delta"]
    if not isinstance(delta, Mapping):
        return "annotation delta is not an object"
    subtasks = delta.get("subtasks")
    if subtasks is not None:
        if not isinstance(subtasks, Mapping):
            return "delta.subtasks is not an object"
        for task, status in subtasks.items():
            if not isinstance(status, str) or status not in SK_LANES:
                return f"delta.subtasks {task}: {status!r} is not one of Spec Kitty's statuses"
    review = delta.get("review")
    if review is not None:
        problem = _fields(review, "delta.review", ("at", "actor", "wp_id", "reason"))
        if problem:
            return problem
    pid = delta.get("shell_pid")
    if pid is not None:
        try:
            int(pid)
        except (TypeError, ValueError, OverflowError):  # OverflowError: infinity
            return f"delta.shell_pid {pid!r} is not a number"
    for key in ("tracker_refs", "tracker_refs_replace"):
        refs = delta.get(key)
        if refs is not None and not isinstance(refs, list | tuple | str | dict):
            return f"delta.{key} is not a list"
    return _actor(data["actor"])
