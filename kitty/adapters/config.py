"""`.kittify/config.yaml`: read with defaults, update without losing unknown keys."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kitty.adapters.files import atomic_write, read_text
from kitty.core.limits import DEFAULT_MAX_TEXT_BYTES, TEXT_KEY
from kitty.core.record import Record
from kitty.errors import SpecError

SEVERITIES = ("P0", "P1", "P2", "P3")
#: The largest --review-feedback-file kitty copies into the repository
#: (`review.max_feedback_bytes` in .kittify/config.yaml).
DEFAULT_MAX_FEEDBACK_BYTES = 1 << 20
SOFT_CAP = 999  # review.cap: soft -- no rejection cap


class Config(Record, frozen=True, uncompared=("raw",)):
    agents: tuple[str, ...]
    auto_commit: bool
    #: agents.auto_commit_delay: seconds the log must be quiet before a deferred
    #: auto-commit (0: each command commits before it exits).
    commit_delay: float
    max_cycles: int
    block_at: str
    identity: str | None
    max_feedback_bytes: int
    #: review.stall_minutes: a review silent this long is STALLED (`next` offers a takeover).
    stall_minutes: float
    max_text_bytes: int
    raw: dict[str, Any]

    def __init__(
        self,
        agents: tuple[str, ...] = (),
        auto_commit: bool = False,
        commit_delay: float = 0.0,
        max_cycles: int = 3,
        block_at: str = "P2",
        identity: str | None = None,
        max_feedback_bytes: int = DEFAULT_MAX_FEEDBACK_BYTES,
        stall_minutes: float = 30,
        max_text_bytes: int = DEFAULT_MAX_TEXT_BYTES,
        raw: dict[str, Any] | None = None,
    ) -> None:
        object.__setattr__(self, "agents", agents)
        object.__setattr__(self, "auto_commit", auto_commit)
        object.__setattr__(self, "commit_delay", commit_delay)
        object.__setattr__(self, "max_cycles", max_cycles)
        object.__setattr__(self, "block_at", block_at)
        object.__setattr__(self, "identity", identity)
        object.__setattr__(self, "max_feedback_bytes", max_feedback_bytes)
        object.__setattr__(self, "stall_minutes", stall_minutes)
        object.__setattr__(self, "max_text_bytes", max_text_bytes)
        object.__setattr__(self, "raw", {} if raw is None else raw)


def _load_yaml(path: Path, display: str) -> dict[str, Any]:
    text = read_text(path, display)
    if text is None:
        return {}  # no config: PyYAML is not even imported
    import yaml

    from kitty.core.wpfile import AliasBomb, safe_yaml

    try:
        data = safe_yaml(text)
    except AliasBomb as exc:
        raise SpecError(
            display, exc.line + 1, str(exc), "write the values out instead of nesting aliases"
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise SpecError(
            display,
            mark.line + 1 if mark else None,
            f"unreadable YAML: {getattr(exc, 'problem', exc)}",
            "fix the YAML syntax",
        ) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise SpecError(display, 1, "config is not a mapping", "write it as 'key: value' lines")
    return data


def _section(raw: dict[str, Any], key: str, display: str) -> dict[str, Any]:
    value = raw.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise SpecError(
            display, None, f"{key} must be a mapping", f"write it as '{key}:' and indented keys"
        )
    return value


def _boolean(section: dict[str, Any], key: str, default: bool, display: str) -> bool:
    """A YAML boolean only: the quoted string 'false' is truthy in Python, never here."""
    value = section.get(key, default)
    if not isinstance(value, bool):
        raise SpecError(
            display,
            None,
            f"agents.{key} must be true or false (a YAML boolean), not {value!r}",
            f"write it without quotes, e.g. `{key}: false`",
        )
    return value


def _seconds(section: dict[str, Any], key: str, display: str) -> float:
    """A number of seconds from 0 up to an hour (agents.auto_commit_delay)."""
    value = section.get(key, 0)
    if not isinstance(value, int | float) or isinstance(value, bool) or not 0 <= value <= 3600:
        raise SpecError(
            display,
            None,
            f"agents.{key} must be a number of seconds from 0 to 3600, not {value!r}",
            f"for example: agents: {{{key}: 2}} (0 commits before each command exits)",
        )
    return float(value)


def load(path: Path, display: str = ".kittify/config.yaml") -> Config:
    """Read and type-check the config; a bad value is a SpecError naming file, key and fix."""
    raw = _load_yaml(path, display)
    agents = _section(raw, "agents", display)
    review = _section(raw, "review", display)
    available = agents.get("available") or []
    if not isinstance(available, list) or not all(isinstance(a, str) for a in available):
        raise SpecError(
            display, None, "agents.available must be a list of names", "write it as [claude, codex]"
        )
    max_cycles, block_at, max_feedback, stall = _review(review, display)
    max_text = _whole(
        _section(raw, "limits", display).get("max_text_bytes", DEFAULT_MAX_TEXT_BYTES),
        display,
        f"{TEXT_KEY} must be a whole number of bytes ≥ 1",
        f"for example: limits: {{max_text_bytes: {DEFAULT_MAX_TEXT_BYTES}}}",
    )
    identity = raw.get("identity")
    if identity is not None and not isinstance(identity, str):
        raise SpecError(
            display, None, "identity must be a name (a string)", "for example: identity: claude"
        )
    return Config(
        agents=tuple(available),
        auto_commit=_boolean(agents, "auto_commit", False, display),
        commit_delay=_seconds(agents, "auto_commit_delay", display),
        max_cycles=max_cycles,
        block_at=block_at,
        identity=str(identity) if identity else None,
        max_feedback_bytes=max_feedback,
        stall_minutes=stall,
        max_text_bytes=max_text,
        raw=raw,
    )


def _whole(value: Any, display: str, message: str, hint: str) -> int:
    """A whole number ≥ 1 (never a YAML boolean), else a SpecError saying so."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise SpecError(display, None, message, hint)
    return value


def _review(review: dict[str, Any], display: str) -> tuple[int, str, int, float]:
    """The review section: max_cycles (max_rounds is its alias; a soft cap lifts it),
    block_at, max_feedback_bytes, stall_minutes."""
    # One counter: review.max_rounds (the review panel's word) is an alias of max_cycles.
    max_cycles = _whole(
        review.get("max_cycles", review.get("max_rounds", 3)),
        display,
        "review.max_cycles must be a whole number ≥ 1",
        "for example: review: {max_cycles: 3}",
    )
    if review.get("cap") == "soft":
        max_cycles = SOFT_CAP  # the panel warns every soft_warn_rounds instead of stopping
    block_at = str(review.get("block_at", "P2")).upper()
    if block_at not in SEVERITIES:
        raise SpecError(
            display,
            None,
            f"review.block_at must be one of {', '.join(SEVERITIES)}",
            "for example: review: {block_at: P2}",
        )
    max_feedback = _whole(
        review.get("max_feedback_bytes", DEFAULT_MAX_FEEDBACK_BYTES),
        display,
        "review.max_feedback_bytes must be a whole number of bytes ≥ 1",
        "for example: review: {max_feedback_bytes: 1048576}",
    )
    stall = review.get("stall_minutes", 30)
    if not isinstance(stall, int | float) or isinstance(stall, bool) or stall < 0:
        raise SpecError(
            display,
            None,
            "review.stall_minutes must be a number of minutes ≥ 0",
            "for example: review: {stall_minutes: 30}",
        )
    return max_cycles, block_at, max_feedback, stall


def update(
    path: Path,
    agents: list[str] | None,
    display: str = ".kittify/config.yaml",
    verify: Mapping[str, Any] | None = None,
) -> bool:
    """Set agents.available (when given) and default agents.auto_commit, and `verify`
    (when given and the file has no `verify` key); keep every other key.

    Returns True when the file changed.
    """
    import yaml

    raw = _load_yaml(path, display)
    section = raw.get("agents")
    if not isinstance(section, dict):
        section = {}
    before = yaml.safe_dump(raw, sort_keys=False) if path.exists() else None
    if agents is not None:
        section["available"] = agents
    section.setdefault("available", [])
    section.setdefault("auto_commit", False)
    raw["agents"] = section
    if verify and "verify" not in raw:
        raw["verify"] = dict(verify)
    text = yaml.safe_dump(raw, sort_keys=False, default_flow_style=False)
    if text == before:
        return False
    atomic_write(path, text)
    return True
