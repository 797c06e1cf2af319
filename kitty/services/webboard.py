"""The web board's data: everything the page shows about one mission, as one JSON object.

Built from the same reads as `kitty status` (the log, the WP files, lanes.json,
review-cycle files, run logs) plus the pictures drawn by `kitty.core.svg`.
Reads only: nothing here writes a file.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import re
from importlib import resources
from pathlib import Path
from typing import Any

from kitty import SCHEMA
from kitty.adapters import layout
from kitty.core import svg
from kitty.core.clock import format_at
from kitty.core.events import Annotation, Transition, actor_tool
from kitty.core.render import COLUMNS
from kitty.core.schedule import lane_map
from kitty.errors import KittyError
from kitty.services.board import status_view
from kitty.services.workspace import Mission

#: Annotation keys too chatty for a timeline (a running agent beats once a minute).
_QUIET = frozenset({"heartbeat"})


def ordered_events(mission: Mission) -> list[Transition | Annotation]:
    """Transitions and annotations in replay order: first copy of an id, sorted by time."""
    seen: set[str] = set()
    events: list[Transition | Annotation] = []
    for ev in mission.log.events:
        if not isinstance(ev, Transition | Annotation):
            continue
        if ev.event_id in seen:
            continue
        seen.add(ev.event_id)
        events.append(ev)
    events.sort(key=lambda e: (e.at_us, e.event_id))
    return events


def _timeline_entry(ev: Transition | Annotation) -> dict[str, Any] | None:
    who = actor_tool(ev.actor)
    if isinstance(ev, Transition):
        reason = ev.data.get("reason")
        return {
            "at": ev.at,
            "who": who,
            "kind": "move",
            "from": ev.from_lane,
            "to": ev.to_lane,
            "force": ev.force,
            "note": reason if isinstance(reason, str) else None,
        }
    parts = []
    for key, value in ev.delta.items():
        if key in _QUIET:
            continue
        if key == "note" and isinstance(value, str):
            parts.append(value)
        elif key == "subtasks" and isinstance(value, dict):
            parts.append(", ".join(f"{t} {s}" for t, s in value.items()))
        elif not isinstance(value, dict | list):
            parts.append(f"{key}: {value}")
    if not parts:
        return None
    return {"at": ev.at, "who": who, "kind": "note", "note": "; ".join(parts)}


def run_logs(project: layout.Project) -> dict[str, list[str]]:
    """WP id -> its agent run logs (`.kittify/runs/<run>/<WP>-<role>-<cycle>.log`)."""
    found: dict[str, list[tuple[float, str]]] = {}
    runs = project.kittify / "runs"
    try:
        run_dirs = list(os.scandir(runs))
    except OSError:
        return {}
    for run_dir in run_dirs:
        if not run_dir.is_dir():
            continue
        try:
            entries = list(os.scandir(run_dir.path))
        except OSError:
            continue
        for entry in entries:
            if entry.name.endswith(".log") and "-" in entry.name:
                wp_id = entry.name.split("-", 1)[0]
                rel = project.rel(Path(entry.path))
                found.setdefault(wp_id, []).append((entry.stat().st_mtime, rel))
    return {wp: [p for _, p in sorted(items)] for wp, items in found.items()}


def _reviews(mission: Mission, wp_id: str) -> list[dict[str, Any]]:
    state = mission.board.wps.get(wp_id)
    if state is None or not state.reviews:
        return []
    from kitty.services.reviews import show

    try:
        return list(show(mission, wp_id)["reviews"])
    except (KittyError, OSError, ValueError):
        return []


def board_model(mission: Mission, now_us: int | None = None) -> dict[str, Any]:
    """The whole page's data for `mission` (see the README's web board section)."""
    from kitty.services.worktrees import lane_branch, lane_path

    view = status_view(mission, now_us)
    ids = [wp["id"] for wp in view["work_packages"]]
    wp_lane = lane_map(mission.lanes_doc, mission.wps, ids) if mission.lanes_doc else {}
    dependents: dict[str, list[str]] = {i: [] for i in ids}
    for wp in view["work_packages"]:
        for dep in wp["dependencies"]:
            if dep in dependents:
                dependents[dep].append(wp["id"])
    events = ordered_events(mission)
    timeline: dict[str, list[dict[str, Any]]] = {i: [] for i in ids}
    moves: list[tuple[int, str, str]] = []
    for ev in events:
        if isinstance(ev, Transition):
            moves.append((ev.at_us, ev.wp_id, ev.to_lane))
        entry = _timeline_entry(ev)
        if entry is not None:
            timeline.setdefault(ev.wp_id, []).append(entry)
    cycles = svg.cycle_times(moves)
    logs = run_logs(mission.project)
    lane_ids = {str(lane.get("lane_id")) for lane in (mission.lanes_doc or {}).get("lanes", [])}
    for wp in view["work_packages"]:
        wp_id = wp["id"]
        lane_id = wp_lane.get(wp_id)
        wp["execution_lane"] = lane_id
        if lane_id in lane_ids:
            path = lane_path(mission, lane_id)
            wp["worktree"] = mission.project.rel(path)
            wp["worktree_exists"] = path.is_dir()
            wp["branch"] = lane_branch(mission, lane_id)
        else:
            wp["worktree"] = "." if wp_id in mission.wps else None
            wp["worktree_exists"] = wp_id in mission.wps
            wp["branch"] = None
        wp["dependents"] = dependents.get(wp_id, [])
        wp["timeline"] = timeline.get(wp_id, [])
        wp["reviews"] = _reviews(mission, wp_id)
        wp["run_logs"] = logs.get(wp_id, [])
        cycle = cycles.get(wp_id)
        wp["cycle_time_s"] = cycle["seconds"] if cycle else None
        wp["started_at"] = format_at(cycle["started_us"] or 0) if cycle else None
        finished = cycle["finished_us"] if cycle else None
        wp["finished_at"] = format_at(finished) if finished else None
        state = mission.board.wps.get(wp_id)
        claim = state.runtime_claim if state else None
        wp["claim"] = dict(claim) if claim else None
        wp["path"] = mission.wps[wp_id].path if wp_id in mission.wps else None
    graph = svg.graph_svg(
        [
            {
                "id": wp["id"],
                "title": wp["title"],
                "lane": wp["lane"],
                "dependencies": wp["dependencies"],
                "execution_lane": wp["execution_lane"],
            }
            for wp in view["work_packages"]
        ],
        view["critical_path"] if len(view["critical_path"]) > 1 else [],
    )
    flow = svg.flow_svg(svg.flow_series(moves, ids), until_us=now_us)
    return {
        "schema": SCHEMA,
        "mission": view["mission"],
        "missions": layout.list_missions(mission.project),
        "columns": [{"title": title, "lanes": list(lanes)} for title, lanes in COLUMNS]
        + [
            {"title": "Blocked", "lanes": ["blocked"]},
            {"title": "Canceled", "lanes": ["canceled"]},
        ],
        "work_packages": view["work_packages"],
        "summary": view["summary"],
        "progress": view["progress"],
        "critical_path": view["critical_path"],
        "warnings": view["warnings"],
        "event_count": mission.board.event_count,
        "generated_at": format_at(now_us) if now_us else None,
        "graph_svg": graph,
        "flow_svg": flow,
    }


def signature(
    project: layout.Project, slug: str, with_log: bool = True, with_wp_files: bool = True
) -> str:
    """Changes whenever anything the board shows changes: the log, lanes.json, meta,
    the WP files, the config, the run-log folder. Stats only (cheap)."""
    base = project.specs_dir / slug
    paths = [
        base / "lanes.json",
        base / "meta.json",
        base / "tasks",
        project.config_path,
        project.kittify / "runs",
    ]
    if with_log:
        paths.insert(0, base / "status.events.jsonl")
    text = _stats(paths)
    if with_wp_files:
        text += wp_files_signature(project, slug)
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def wp_files_signature(project: layout.Project, slug: str) -> str:
    """The stats of every WP file (an edit in place changes no folder)."""
    paths: list[Path] = []
    with contextlib.suppress(OSError):
        tasks = project.specs_dir / slug / "tasks"
        paths = sorted(Path(e.path) for e in os.scandir(tasks) if e.name.endswith(".md"))
    return hashlib.blake2b(_stats(paths).encode(), digest_size=8).hexdigest()


def _stats(paths: list[Path]) -> str:
    parts = []
    for path in paths:
        try:
            st = path.stat()
        except OSError:
            parts.append("-")
            continue
        parts.append(f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}")
    return "|".join(parts)


# -- the page ----------------------------------------------------------------------------

_PLACEHOLDER = re.compile(r"__KITTY_(CSP|TITLE|DATA)__")


def _template() -> str:
    return resources.files("kitty").joinpath("data/board.html").read_text(encoding="utf-8")


def _script_hash(page: str) -> str:
    """The CSP hash of the page's one executable inline script."""
    start = page.index("<script>\n") + len("<script>")
    end = page.index("</script>", start)
    digest = hashlib.sha256(page[start:end].encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def content_security_policy(live: bool) -> str:
    """Only kitty's own script runs; the page loads nothing and (offline) calls nothing."""
    connect = "'self'" if live else "'none'"
    return (
        f"default-src 'none'; script-src {_script_hash(_template())}; "
        f"style-src 'unsafe-inline'; img-src data:; connect-src {connect}; "
        "base-uri 'none'; form-action 'none'"
    )


def page_json(model: dict[str, Any]) -> str:
    """JSON safe inside a <script> element and an SSE `data:` line (one line, no `<`)."""
    text = json.dumps(model, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def render_page(model: dict[str, Any], live: bool) -> str:
    """One self-contained HTML document: inline CSS, JS, SVG and data; nothing fetched."""
    values = {
        "CSP": content_security_policy(live),
        "TITLE": svg.esc(f"{model['mission']['title']} · kitty board"),
        "DATA": page_json(dict(model, live=live)),
    }
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], _template())
