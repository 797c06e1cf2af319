"""Work packages as read from `tasks/WPxx-*.md`, and the id rules for WPs and missions."""

from __future__ import annotations

import re
from typing import Any

from kitty.core.record import Record

_WP_ID = re.compile(r"^\s*(?:wp)?0*(\d+)\s*$", re.IGNORECASE)
_WP_FILE = re.compile(r"^(WP\d+)(?:[-_.].*)?\.md$")
_KEBAB_STRIP = re.compile(r"[^a-z0-9]+")


class WorkPackage(Record, frozen=True, uncompared=("meta", "body", "key_lines")):
    __slots__ = (
        "body",
        "dependencies",
        "estimate",
        "execution_mode",
        "key_lines",
        "meta",
        "owned_files",
        "path",
        "stem",
        "subtasks",
        "title",
        "wp_id",
    )
    wp_id: str
    title: str
    dependencies: tuple[str, ...]
    subtasks: tuple[str, ...]
    owned_files: tuple[str, ...]
    path: str  # relative to the project root
    stem: str  # file name without `.md`: names the review-cycle folder
    estimate: float | None
    execution_mode: str | None
    meta: dict[str, Any]
    body: str
    key_lines: dict[str, int]

    def __init__(
        self,
        wp_id: str,
        title: str,
        dependencies: tuple[str, ...],
        subtasks: tuple[str, ...],
        owned_files: tuple[str, ...],
        path: str,
        stem: str,
        estimate: float | None = None,
        execution_mode: str | None = None,
        meta: dict[str, Any] | None = None,
        body: str = "",
        key_lines: dict[str, int] | None = None,
    ) -> None:
        object.__setattr__(self, "wp_id", wp_id)
        object.__setattr__(self, "title", title)
        object.__setattr__(self, "dependencies", dependencies)
        object.__setattr__(self, "subtasks", subtasks)
        object.__setattr__(self, "owned_files", owned_files)
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "stem", stem)
        object.__setattr__(self, "estimate", estimate)
        object.__setattr__(self, "execution_mode", execution_mode)
        object.__setattr__(self, "meta", {} if meta is None else meta)
        object.__setattr__(self, "body", body)
        object.__setattr__(self, "key_lines", {} if key_lines is None else key_lines)

    def line_of(self, key: str) -> int:
        return self.key_lines.get(key, 1)


def wp_number(text: str) -> int | None:
    """`WP3`, `wp03`, `3` -> 3; anything else -> None."""
    match = _WP_ID.match(str(text))
    return int(match.group(1)) if match else None


def format_wp_id(number: int) -> str:
    return f"WP{number:02d}"


def wp_id_from_filename(name: str) -> str | None:
    match = _WP_FILE.match(name)
    return match.group(1) if match else None


def kebab(text: str, limit: int = 48) -> str:
    """`Module A: the API!` -> `module-a-the-api`, cut at a word boundary."""
    slug = _KEBAB_STRIP.sub("-", text.lower()).strip("-")
    if len(slug) > limit:
        slug = slug[:limit].rsplit("-", 1)[0] or slug[:limit]
    return slug


def parse_dependencies(value: Any) -> list[str] | None:
    """Accept a list, or the legacy strings `"WP01, WP02"` and `"[]"`. None if unusable."""
    if value is None:
        return []
    if isinstance(value, str):
        text = value.strip().strip("[]")
        return [part.strip().strip("'\"") for part in text.split(",") if part.strip()]
    if isinstance(value, list) and all(isinstance(v, str | int) for v in value):
        return [str(v).strip() for v in value]
    return None
