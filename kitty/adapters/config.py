"""`.kittify/config.yaml`: read with defaults, update without losing unknown keys."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kitty.adapters.files import atomic_write
from kitty.core.state import as_dict
from kitty.errors import SpecError

SEVERITIES = ("P0", "P1", "P2", "P3")


@dataclass(frozen=True)
class Config:
    agents: tuple[str, ...] = ()
    auto_commit: bool = False
    max_cycles: int = 3
    block_at: str = "P2"
    identity: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False)


def _load_yaml(path: Path, display: str) -> dict[str, Any]:
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    try:
        data = yaml.safe_load(text)
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


def load(path: Path, display: str = ".kittify/config.yaml") -> Config:
    raw = _load_yaml(path, display)
    agents = as_dict(raw.get("agents"))
    review = as_dict(raw.get("review"))
    available = agents.get("available") or []
    if not isinstance(available, list):
        raise SpecError(
            display, None, "agents.available must be a list", "write it as [claude, codex]"
        )
    max_cycles = review.get("max_cycles", 3)
    if not isinstance(max_cycles, int) or isinstance(max_cycles, bool) or max_cycles < 1:
        raise SpecError(
            display,
            None,
            "review.max_cycles must be a whole number ≥ 1",
            "for example: review: {max_cycles: 3}",
        )
    block_at = str(review.get("block_at", "P2")).upper()
    if block_at not in SEVERITIES:
        raise SpecError(
            display,
            None,
            f"review.block_at must be one of {', '.join(SEVERITIES)}",
            "for example: review: {block_at: P2}",
        )
    identity = raw.get("identity")
    return Config(
        agents=tuple(str(a) for a in available),
        auto_commit=bool(agents.get("auto_commit", False)),
        max_cycles=max_cycles,
        block_at=block_at,
        identity=str(identity) if identity else None,
        raw=raw,
    )


def update(path: Path, agents: list[str] | None, display: str = ".kittify/config.yaml") -> bool:
    """Set agents.available (when given) and default agents.auto_commit; keep every other key.

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
    text = yaml.safe_dump(raw, sort_keys=False, default_flow_style=False)
    if text == before:
        return False
    atomic_write(path, text)
    return True
