"""The WP dependency graph and the execution lanes, built with networkx.

Only write paths (finalize, lanes) import this module: networkx costs ~170 ms
to import, so the read path (`status`, `next`) uses `kitty.core.schedule`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from kitty.core import schedule
from kitty.core.model import WorkPackage, wp_number
from kitty.core.overlap import group_by_overlap, normalise
from kitty.errors import DependencyCycle

PLANNING_ARTIFACT = "planning_artifact"


def build_graph(wps: Mapping[str, WorkPackage]) -> nx.DiGraph:
    """Edge `dep -> wp` for every dependency between known WPs."""
    graph = nx.DiGraph()
    graph.add_nodes_from(sorted(wps, key=_id_key))
    for wp in wps.values():
        for dep in wp.dependencies:
            if dep in wps:
                graph.add_edge(dep, wp.wp_id)
    return graph


def _id_key(wp_id: str) -> tuple[int, str]:
    number = wp_number(wp_id)
    return (number if number is not None else 1 << 30, wp_id)


def find_cycle(graph: nx.DiGraph) -> list[str] | None:
    """A dependency cycle as a closed walk (`[WP02, WP04, WP02]`), or None.

    Acyclicity is checked first: a topological sort is linear, while networkx's
    `find_cycle` on an acyclic graph walks every edge from every node (8 s at
    10,000 WPs). The cycle search runs only when there is one to report.
    """
    if nx.is_directed_acyclic_graph(graph):
        return None
    try:
        edges = nx.find_cycle(graph)
    except nx.NetworkXNoCycle:
        return None
    walk = [edges[0][0]] + [edge[1] for edge in edges]
    # Start at the smallest id so the message is stable.
    start = min(range(len(walk) - 1), key=lambda i: _id_key(walk[i]))
    ring = walk[start:-1] + walk[:start]
    return [*ring, ring[0]]


def critical_path(wps: Mapping[str, WorkPackage]) -> list[str]:
    """The heaviest chain of dependent WPs: one definition, shared with the read path."""
    return schedule.critical_path(wps)


def lane_name(index: int) -> str:
    """0 -> lane-a, 25 -> lane-z, 26 -> lane-aa (bijective base 26)."""
    letters = ""
    index += 1
    while index:
        index, rem = divmod(index - 1, 26)
        letters = chr(ord("a") + rem) + letters
    return f"lane-{letters}"


@dataclass
class LanePlan:
    lanes: list[dict[str, Any]]
    wp_lane: dict[str, str]
    planning_artifact_wps: list[str]
    collapse_report: list[dict[str, Any]] = field(default_factory=list)


def compute_lanes(wps: Mapping[str, WorkPackage]) -> LanePlan:
    """Group WPs whose owned files overlap; dependencies become lane edges."""
    ids = sorted(wps, key=_id_key)
    planning = [i for i in ids if wps[i].execution_mode == PLANNING_ARTIFACT]
    code = [i for i in ids if i not in planning]
    groups, report = group_by_overlap({i: wps[i].owned_files for i in code}, code)
    wp_lane = {wp: lane_name(i) for i, group in enumerate(groups) for wp in group}
    lane_graph = nx.DiGraph()
    lane_graph.add_nodes_from(lane_name(i) for i in range(len(groups)))
    edge_wps: dict[tuple[str, str], list[str]] = {}
    for wp in code:
        for dep in wps[wp].dependencies:
            if dep in wp_lane and wp_lane[dep] != wp_lane[wp]:
                lane_graph.add_edge(wp_lane[dep], wp_lane[wp])
                edge_wps.setdefault((wp_lane[dep], wp_lane[wp]), []).append(f"{wp}→{dep}")
    cycle = find_cycle(lane_graph)
    if cycle:
        pairs = [", ".join(edge_wps[(cycle[i], cycle[i + 1])]) for i in range(len(cycle) - 1)]
        members = {lane: [w for w in code if wp_lane[w] == lane] for lane in cycle}
        raise DependencyCycle(
            "execution lanes depend on each other in a cycle: "
            + " → ".join(cycle)
            + " ("
            + "; ".join(f"{lane}={'+'.join(members[lane])}" for lane in cycle[:-1])
            + "; dependencies "
            + "; ".join(pairs)
            + ")",
            "WPs sharing owned files are merged into one lane; split the shared files or "
            "change the dependencies so the merged lane does not wait on itself",
        )
    depth: dict[str, int] = {}
    for lane in nx.topological_sort(lane_graph):
        depth[lane] = max((depth[p] + 1 for p in lane_graph.predecessors(lane)), default=0)
    lanes: list[dict[str, Any]] = []
    for i, group in enumerate(groups):
        name = lane_name(i)
        scope = sorted({normalise(p) for wp in group for p in wps[wp].owned_files})
        surfaces = sorted(
            {str(s) for wp in group for s in _as_list(wps[wp].meta.get("predicted_surfaces"))}
        )
        lanes.append(
            {
                "lane_id": name,
                "wp_ids": group,
                "write_scope": scope,
                "predicted_surfaces": surfaces,
                "depends_on_lanes": sorted(lane_graph.predecessors(name)),
                "parallel_group": depth[name],
            }
        )
    lanes.sort(key=lambda lane: (lane["parallel_group"], lane["lane_id"]))
    return LanePlan(lanes, wp_lane, planning, report)


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
