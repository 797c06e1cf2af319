"""Mission-wide checks of the work package files (what `kitty finalize` refuses)."""

from __future__ import annotations

from collections.abc import Sequence

from kitty.core.model import WorkPackage
from kitty.errors import SpecError


def mission_problems(wps: Sequence[WorkPackage]) -> list[SpecError]:
    """Duplicate ids, unknown dependencies, self-dependencies and duplicate subtasks."""
    problems: list[SpecError] = []
    by_id: dict[str, WorkPackage] = {}
    for wp in wps:
        first = by_id.get(wp.wp_id)
        if first is not None:
            problems.append(
                SpecError(
                    wp.path,
                    wp.line_of("work_package_id"),
                    f"duplicate work_package_id {wp.wp_id} (also {first.path})",
                    "give each WP file its own id",
                )
            )
            continue
        by_id[wp.wp_id] = wp
    subtask_owner: dict[str, str] = {}
    for wp in by_id.values():
        for dep in wp.dependencies:
            if dep == wp.wp_id:
                problems.append(
                    SpecError(
                        wp.path,
                        wp.line_of("dependencies"),
                        f"{wp.wp_id} depends on itself",
                        "remove it from its own dependencies",
                    )
                )
            elif dep not in by_id:
                known = summarize_ids(sorted(by_id))
                problems.append(
                    SpecError(
                        wp.path,
                        wp.line_of("dependencies"),
                        f"unknown dependency {dep}",
                        f"known WPs: {known}",
                    )
                )
        for task in wp.subtasks:
            owner = subtask_owner.setdefault(task, wp.wp_id)
            if owner != wp.wp_id:
                problems.append(
                    SpecError(
                        wp.path,
                        wp.line_of("subtasks"),
                        f"subtask {task} is also listed by {owner}",
                        "subtask ids must be unique across the mission",
                    )
                )
    return problems


def summarize_ids(ids: Sequence[str], limit: int = 8) -> str:
    """`WP01, WP02, … WP40 (40 in all)`: short enough for a one-line hint."""
    if not ids:
        return "none"
    if len(ids) <= limit:
        return ", ".join(ids)
    return ", ".join(ids[: limit - 1]) + f", … {ids[-1]} ({len(ids)} in all)"


def format_cycle(cycle: Sequence[str]) -> str:
    return " → ".join(cycle)
