"""Graph helpers for the read path, in plain Python (no networkx import cost)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kitty.core.model import WorkPackage, wp_number
from kitty.core.overlap import group_by_overlap

#: The last WPs `chain_weights` was asked about and its answer: the sprint asks again
#: for the same (immutable) records before every dispatch.
_LAST: list[tuple[tuple[str, ...], tuple[WorkPackage, ...], dict[str, float]]] = []


def chain_weights(wps: Mapping[str, WorkPackage]) -> dict[str, float]:
    """For each WP, the weight of the heaviest chain of WPs that depend on it, itself included.

    Weights are the `estimate` front-matter numbers (default 1). WPs caught in a
    cycle (which finalize refuses) simply get their own weight.
    """
    ids, records = tuple(wps), tuple(wps.values())
    if _LAST and _LAST[0][0] == ids and _LAST[0][1] == records:
        return dict(_LAST[0][2])
    weights = _chain_weights(wps)
    _LAST[:] = [(ids, records, weights)]
    return dict(weights)


def _chain_weights(wps: Mapping[str, WorkPackage]) -> dict[str, float]:
    dependents: dict[str, list[str]] = {w: [] for w in wps}
    pending: dict[str, int] = dict.fromkeys(wps, 0)
    for wp in wps.values():
        for dep in wp.dependencies:
            if dep in wps:
                dependents[dep].append(wp.wp_id)
                pending[dep] += 1
    # Kahn's algorithm on the reversed graph: sinks first.
    ready = [w for w, n in pending.items() if n == 0]
    weights: dict[str, float] = {}
    while ready:
        node = ready.pop()
        own = wps[node].estimate or 1.0
        weights[node] = own + max((weights[d] for d in dependents[node]), default=0.0)
        for dep in wps[node].dependencies:
            if dep in pending:
                pending[dep] -= 1
                if pending[dep] == 0:
                    ready.append(dep)
    for node in wps:
        weights.setdefault(node, wps[node].estimate or 1.0)
    return weights


def lane_map(
    lanes_doc: Mapping[str, Any] | None, wps: Mapping[str, WorkPackage], order: list[str]
) -> dict[str, str]:
    """WP -> execution lane id, from lanes.json; computed by overlap when it is missing."""
    mapping: dict[str, str] = {}
    if lanes_doc:
        for lane in lanes_doc.get("lanes", []):
            if isinstance(lane, dict):
                for wp_id in lane.get("wp_ids", []):
                    mapping[str(wp_id)] = str(lane.get("lane_id"))
    if not lanes_doc:
        known = [w for w in order if w in wps]
        groups, _ = group_by_overlap({w: wps[w].owned_files for w in known}, known)
        for group in groups:
            for wp_id in group:
                mapping[wp_id] = f"group-{group[0]}"
    for wp_id in order:
        mapping.setdefault(wp_id, f"solo-{wp_id}")  # planning artifacts and new WPs
    return mapping


def critical_path(wps: Mapping[str, WorkPackage]) -> list[str]:
    """The heaviest chain of dependent WPs (weights: `estimate`, default 1).

    Follows `chain_weights` from the heaviest root; ties go to the lowest WP id,
    so the board, `kitty lanes` and the pictures always mark the same chain.
    """
    if not wps:
        return []
    weights = chain_weights(wps)
    dependents: dict[str, list[str]] = {w: [] for w in wps}
    for wp in wps.values():
        for dep in wp.dependencies:
            if dep in wps:
                dependents[dep].append(wp.wp_id)
    order = {w: i for i, w in enumerate(sort_key_ids(wps))}

    def best(candidates: list[str]) -> str:
        return min(candidates, key=lambda w: (-weights[w], order[w]))

    path = [best(list(wps))]
    seen = set(path)
    while True:
        current = path[-1]
        rest = weights[current] - (wps[current].estimate or 1.0)
        nxt = [d for d in dependents[current] if d not in seen and abs(weights[d] - rest) < 1e-9]
        if not nxt:
            return path
        path.append(best(nxt))
        seen.add(path[-1])


def sort_key_ids(ids: Any) -> list[str]:
    """WP ids by number, then text (`WP2` before `WP10`)."""
    return sorted(ids, key=lambda i: (wp_number(i) if wp_number(i) is not None else 1 << 30, i))
