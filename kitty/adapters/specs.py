"""Read a mission's files: meta.json, the WP files, lanes.json and issue-matrix.json."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kitty.adapters.files import read_json
from kitty.core.model import WorkPackage, wp_id_from_filename, wp_number
from kitty.core.transitions import IssueRow
from kitty.core.wpfile import parse_wp
from kitty.errors import SpecError


@dataclass
class SpecSet:
    wps: dict[str, WorkPackage] = field(default_factory=dict)
    all_wps: list[WorkPackage] = field(default_factory=list)  # including duplicate ids
    errors: list[SpecError] = field(default_factory=list)


def wp_files(tasks_dir: Path) -> list[Path]:
    if not tasks_dir.is_dir():
        return []
    found = [p for p in tasks_dir.iterdir() if wp_id_from_filename(p.name) and p.is_file()]
    return sorted(found, key=lambda p: p.name)


def load_wps(mission_dir: Path, rel_prefix: str) -> SpecSet:
    """Parse every WP file; errors are collected, never raised."""
    result = SpecSet()
    for file in wp_files(mission_dir / "tasks"):
        display = f"{rel_prefix}/tasks/{file.name}"
        try:
            text = file.read_text(encoding="utf-8")
            wp = parse_wp(display, file.name, text)
        except UnicodeDecodeError:
            result.errors.append(SpecError(display, None, "not UTF-8 text", "re-save it as UTF-8"))
            continue
        except SpecError as exc:
            result.errors.append(exc)
            continue
        result.all_wps.append(wp)
        result.wps.setdefault(wp.wp_id, wp)
    _align_dependency_ids(result)
    return result


def _align_dependency_ids(result: SpecSet) -> None:
    """`WP1`/`WP01` in a dependency list names `WP0001` when that is the mission's id."""
    by_number = {wp_number(i): i for i in result.wps}
    for index, wp in enumerate(result.all_wps):
        deps = tuple(
            d if d in result.wps else by_number.get(wp_number(d), d) for d in wp.dependencies
        )
        if deps != wp.dependencies:
            wp = replace(wp, dependencies=deps)
            result.all_wps[index] = wp
            if result.wps.get(wp.wp_id) is not None and result.wps[wp.wp_id].path == wp.path:
                result.wps[wp.wp_id] = wp


def load_meta(mission_dir: Path, display: str) -> dict[str, Any]:
    meta = read_json(mission_dir / "meta.json", f"{display}/meta.json")
    if meta is None:
        return {}
    if not isinstance(meta, dict):
        raise SpecError(
            f"{display}/meta.json", 1, "meta.json is not an object", "restore it from git"
        )
    return meta


def load_lanes(mission_dir: Path, display: str) -> dict[str, Any] | None:
    data = read_json(mission_dir / "lanes.json", f"{display}/lanes.json")
    if data is not None and (not isinstance(data, dict) or not isinstance(data.get("lanes"), list)):
        raise SpecError(
            f"{display}/lanes.json",
            1,
            "lanes.json has no 'lanes' list",
            "re-create it with `kitty finalize`",
        )
    return data


def load_issue_rows(mission_dir: Path, display: str) -> list[IssueRow]:
    path_display = f"{display}/issue-matrix.json"
    data = read_json(mission_dir / "issue-matrix.json", path_display)
    if data is None:
        return []
    rows = data.get("rows") if isinstance(data, dict) else None
    if not isinstance(rows, dict):
        raise SpecError(
            path_display,
            1,
            "issue-matrix.json has no 'rows' object",
            'write it as {"schema_version": 1, "rows": {"#123": {"verdict": ...}}}',
        )
    result = []
    for issue, row in sorted(rows.items()):
        row = row if isinstance(row, dict) else {}
        wp = row.get("wp")
        wps = tuple(str(w) for w in wp) if isinstance(wp, list) else ((str(wp),) if wp else ())
        result.append(IssueRow(issue, str(row.get("verdict") or ""), wps))
    return result
