"""`kitty wp show` and `kitty wp search`: a mission's plan read, never written (the
changes are kitty.workflow.planning.edit, which re-exports these)."""

from __future__ import annotations

from typing import Any

from kitty.adapters.files import read_text
from kitty.core import lanes
from kitty.core.log.snapshot import sort_ids
from kitty.errors import NotFound, UsageError
from kitty.mission.workspace import Mission


def summary(mission: Mission, wp_id: str) -> dict[str, Any]:
    wp = mission.wps[wp_id]
    return {
        "mission": mission.slug,
        "wp_id": wp_id,
        "title": wp.title,
        "dependencies": list(wp.dependencies),
        "owned_files": list(wp.owned_files),
        "subtasks": list(wp.subtasks),
        "path": wp.path,
    }


def _node(mission: Mission, wp_id: str) -> dict[str, Any]:
    wp = mission.wps.get(wp_id)
    return {"id": wp_id, "title": wp.title if wp else None, "lane": mission.board.lane(wp_id)}


def _tree(
    mission: Mission, wp_id: str, edges: dict[str, list[str]], path: tuple[str, ...]
) -> list[dict[str, Any]]:
    out = []
    for other in sort_ids(edges.get(wp_id, [])):
        node = _node(mission, other)
        if other in path:
            node["cycle"] = True
            node["children"] = []
        else:
            node["children"] = _tree(mission, other, edges, (*path, other))
        out.append(node)
    return out


def show(mission: Mission, wp_text: str) -> dict[str, Any]:
    """One WP: its fields, lane, subtasks with their status, body, and the dependency tree
    both ways (what it depends on, transitively; what depends on it)."""
    wp_id = mission.resolve_wp(wp_text)
    wp = mission.wps.get(wp_id)
    if wp is None:
        raise NotFound(
            f"{wp_id} has events but no readable WP file",
            f"kitty doctor --mission {mission.slug} lists the problems",
        )
    state = mission.board.wps.get(wp_id)
    up = {w.wp_id: list(w.dependencies) for w in mission.wps.values()}
    down: dict[str, list[str]] = {}
    for other, deps in up.items():
        for dep in deps:
            down.setdefault(dep, []).append(other)
    statuses = state.subtasks if state else {}
    return {
        **summary(mission, wp_id),
        "lane": state.lane if state else None,
        "agent": state.agent if state else None,
        "review_cycles": state.review_cycles if state else 0,
        "subtask_status": {t: statuses.get(t, "planned") for t in wp.subtasks},
        "dependents": sort_ids(down.get(wp_id, [])),
        "depends_on_tree": _tree(mission, wp_id, up, (wp_id,)),
        "dependents_tree": _tree(mission, wp_id, down, (wp_id,)),
        "body": wp.body.strip("\n"),
    }


def search(mission: Mission, query: str, lane: str | None = None) -> dict[str, Any]:
    """WPs whose id, title, owned files or body hold every word of `query` (any case), with
    the matching lines of their file."""
    words = query.lower().split()
    if not words:
        raise UsageError("the search query is empty", 'for example: kitty wp search "cart api"')
    if lane is not None:
        lane = lanes.ALIASES.get(lane, lane)
        if lane not in lanes.LANES:
            raise UsageError(f"no lane {lane!r}", "lanes: " + ", ".join(lanes.LANES))
    hits = []
    for wp_id in sort_ids(mission.wps):
        wp = mission.wps[wp_id]
        current = mission.board.lane(wp_id)
        if lane is not None and current != lane:
            continue
        haystack = "\n".join([wp_id, wp.title, *wp.owned_files, wp.body]).lower()
        if not all(w in haystack for w in words):
            continue
        matches = []
        text = read_text(mission.project.root / wp.path, wp.path) or ""
        for number, line in enumerate(text.split("\n"), start=1):
            if any(w in line.lower() for w in words):
                matches.append({"line": number, "text": line.strip()[:200]})
        hits.append({**_node(mission, wp_id), "path": wp.path, "matches": matches[:5]})
    return {"mission": mission.slug, "query": query, "lane": lane, "results": hits}
