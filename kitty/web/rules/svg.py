"""Pictures drawn by kitty as SVG: the dependency graph (here) and the cumulative flow chart
(kitty.web.rules.flow, re-exported here).

Pure functions of plain data (no networkx, no I/O), so the web board, the static
HTML export and the tests all draw the same picture. Every label is escaped; the
colours are CSS custom properties, so the page decides light or dark.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from typing import Any

from kitty.web.rules.flow import BAND_OF, FLOW_BANDS, Flow, cycle_times, esc, flow_series, flow_svg

__all__ = [
    "BAND_OF",
    "FLOW_BANDS",
    "Flow",
    "Layout",
    "cycle_times",
    "esc",
    "flow_series",
    "flow_svg",
    "graph_svg",
    "lane_hues",
    "layered_layout",
]

CRITICAL_MARK = "◆"
NODE_W = 168
NODE_H = 46
GAP_X = 56
GAP_Y = 14
PAD = 12
LEGEND_ROW = 18
#: Characters of "WPnn title" that fit in a box (the page shows the whole title on hover).
LABEL_CHARS = 23
LEGEND_MIN_W = 420

# -- layered layout -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Layout:
    """Node id -> (layer, slot): columns left to right, slots top to bottom."""

    positions: dict[str, tuple[int, int]]
    layers: list[list[str]]


def layered_layout(
    order: Sequence[str], deps: Mapping[str, Sequence[str]], group: Mapping[str, str]
) -> Layout:
    """A Sugiyama-style layering of the dependency DAG.

    Layer = length of the longest dependency chain leading to the WP (roots at 0).
    Within a layer WPs start grouped by execution lane (`group`), then a few
    barycentre sweeps pull each WP next to its dependencies and dependents to
    cut edge crossings. Deterministic: same input, same picture. WPs caught in a
    cycle (which finalize refuses) are placed by their order instead of hanging.
    """
    known = set(order)
    preds = {n: [d for d in deps.get(n, ()) if d in known and d != n] for n in order}
    succs: dict[str, list[str]] = {n: [] for n in order}
    for node, parents in preds.items():
        for parent in parents:
            succs[parent].append(node)
    layer: dict[str, int] = {}
    pending = {n: len(preds[n]) for n in order}
    ready = [n for n in order if pending[n] == 0]
    while ready:
        node = ready.pop()
        layer[node] = max((layer[p] + 1 for p in preds[node]), default=0)
        for child in succs[node]:
            pending[child] -= 1
            if pending[child] == 0:
                ready.append(child)
    deepest = max(layer.values(), default=-1)
    for node in order:  # a cycle: put what is left after everything else
        layer.setdefault(node, deepest + 1)
    rank = {n: i for i, n in enumerate(order)}
    group_rank: dict[str, int] = {}
    for node in order:
        group_rank.setdefault(group.get(node, ""), len(group_rank))
    layers: list[list[str]] = [[] for _ in range(max(layer.values(), default=-1) + 1)]
    for node in sorted(order, key=lambda n: (group_rank[group.get(n, "")], rank[n])):
        layers[layer[node]].append(node)
    slot = {n: i for nodes in layers for i, n in enumerate(nodes)}

    def sweep(nodes: list[str], neighbours: dict[str, list[str]]) -> None:
        def centre(n: str) -> float:
            near = neighbours[n]
            return sum(slot[m] for m in near) / len(near) if near else float(slot[n])

        nodes.sort(key=lambda n: (centre(n), group_rank[group.get(n, "")], rank[n]))
        for i, n in enumerate(nodes):
            slot[n] = i

    for _ in range(4):
        for nodes in layers[1:]:
            sweep(nodes, preds)
        for nodes in reversed(layers[:-1]):
            sweep(nodes, succs)
    return Layout({n: (layer[n], slot[n]) for n in order}, layers)


@lru_cache(maxsize=16)
def _cached_layout(
    order: tuple[str, ...], deps: tuple[tuple[str, ...], ...], group: tuple[str, ...]
) -> Layout:
    """The layout only depends on the graph: a live board redraws many lane changes with one."""
    return layered_layout(
        order, dict(zip(order, deps, strict=True)), dict(zip(order, group, strict=True))
    )


# -- dependency graph ------------------------------------------------------------------


#: Hues that stay apart in light and dark mode; lanes beyond them are grey and named.
PALETTE = (210, 30, 140, 280, 0, 185, 55, 320)


def lane_hues(
    lanes: Sequence[str], sizes: Mapping[str, int] | None = None
) -> dict[str, int | None]:
    """A hue per execution lane for at most `len(PALETTE)` lanes (the biggest, by
    `sizes`; the first ones seen on a tie), None for the rest: past ~8 colours
    nobody tells them apart, so those lanes are grey and told by their name."""
    sizes = sizes or {}
    ranked = sorted(range(len(lanes)), key=lambda i: (-sizes.get(lanes[i], 0), i))
    hue = {lanes[i]: PALETTE[rank] for rank, i in enumerate(ranked[: len(PALETTE)])}
    return {lane: hue.get(lane) for lane in lanes}


def _lane_style(hue: int | None) -> str:
    return f"--lane-h:{hue}" if hue is not None else "--lane-h:0;--lane-s:0%"


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def graph_svg(nodes: Sequence[Mapping[str, Any]], critical_path: Sequence[str]) -> str:
    """The WP dependency graph as one <svg>: a box per WP, coloured and labelled by lane.

    `nodes`: dicts with `id`, `title`, `lane` (board state; a node without the key
    is drawn without it), `dependencies` and `execution_lane`. Critical-path WPs and
    the edges between them carry the class `critical` (thick red) and `◆` in their
    label. Each box is a link-like group with `data-wp`, `tabindex` and a <title>
    holding the full text.
    """
    order = [str(n["id"]) for n in nodes]
    by_id = {str(n["id"]): n for n in nodes}
    deps = {i: [str(d) for d in by_id[i].get("dependencies") or []] for i in order}
    group = {i: str(by_id[i].get("execution_lane") or "") for i in order}
    layout = _cached_layout(
        tuple(order), tuple(tuple(deps[i]) for i in order), tuple(group[i] for i in order)
    )
    lanes_seen = list(dict.fromkeys(group[i] for i in order))
    sizes: dict[str, int] = {}
    for i in order:
        sizes[group[i]] = sizes.get(group[i], 0) + 1
    hues = lane_hues(lanes_seen, sizes)
    critical = set(critical_path)
    columns = max(len(layout.layers), 1)
    rows = max((len(layer) for layer in layout.layers), default=1)
    width = max(PAD * 2 + columns * NODE_W + (columns - 1) * GAP_X, LEGEND_MIN_W)
    legend, legend_h = _legend(lanes_seen, hues, bool(critical), width)
    height = PAD * 2 + legend_h + rows * NODE_H + (rows - 1) * GAP_Y

    def xy(node: str) -> tuple[int, int]:
        col, row = layout.positions[node]
        return PAD + col * (NODE_W + GAP_X), PAD + legend_h + row * (NODE_H + GAP_Y)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="kitty-graph" role="img" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'aria-label="Dependency graph: {len(order)} work packages, '
        f'critical path {esc(" → ".join(critical_path) or "none")}">',
        _ARROWS,
        '<g class="legend">',
        *legend,
        "</g>",
    ]
    out.append('<g class="edges">')
    crit_edges = set(pairwise(critical_path))
    for node in order:
        for dep in deps[node]:
            if dep not in layout.positions or dep == node:
                continue
            out.append(_edge(dep, node, xy(dep), xy(node), (dep, node) in crit_edges))
    out.append("</g>")
    out.append('<g class="nodes">')
    for node in order:
        style = _lane_style(hues[group[node]])
        out.append(_node(node, by_id[node], group[node], xy(node), node in critical, style))
    out.append("</g></svg>")
    return "".join(out)


_ARROWS = (
    '<defs><marker id="kg-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="9" '
    'markerHeight="9" markerUnits="userSpaceOnUse" orient="auto-start-reverse">'
    '<path d="M0,0 L10,5 L0,10 z" class="arrow"/></marker>'
    '<marker id="kg-arrow-crit" viewBox="0 0 10 10" refX="9" '
    'refY="5" markerWidth="12" markerHeight="12" markerUnits="userSpaceOnUse" '
    'orient="auto-start-reverse">'
    '<path d="M0,0 L10,5 L0,10 z" class="arrow critical"/></marker></defs>'
)


def _legend(
    lanes_seen: list[str], hues: Mapping[str, int | None], critical: bool, width: int
) -> tuple[list[str], int]:
    """One swatch per coloured lane, named (colour is never the only cue), then one for
    the grey lanes, then the critical path's mark; wrapped to the picture's width.
    Returns the items and the legend's height."""
    items = [
        (f'class="lane-fill" style="{_lane_style(hues[lane])}"', lane or "no lane")
        for lane in lanes_seen
        if hues[lane] is not None
    ]
    grey = [lane for lane in lanes_seen if hues[lane] is None]
    if grey:
        items.append(
            (
                f'class="lane-fill" style="{_lane_style(None)}"',
                f"{len(grey)} more lanes (grey, named on each box)",
            )
        )
    legend: list[str] = []
    x, y = PAD, PAD
    for attrs, label in items + ([("", f"{CRITICAL_MARK} critical path")] if critical else []):
        item_w = (16 if attrs else 0) + 7 * len(label) + 14
        if x > PAD and x + item_w > width - PAD:
            x, y = PAD, y + LEGEND_ROW
        if attrs:
            legend.append(
                f'<g class="item"><rect x="{x}" y="{y}" width="12" height="12" rx="2" {attrs}/>'
                f'<text x="{x + 16}" y="{y + 10}">{esc(label)}</text></g>'
            )
        else:
            legend.append(
                f'<g class="item"><text x="{x}" y="{y + 10}" class="critical-label">'
                f"{esc(label)}</text></g>"
            )
        x += item_w
    return legend, y - PAD + LEGEND_ROW + 8


def _edge(dep: str, node: str, start: tuple[int, int], end: tuple[int, int], is_crit: bool) -> str:
    """The arrow from a dependency's box (at `start`) to its dependent's (at `end`)."""
    x1, y1 = start
    x2, y2 = end
    sx, sy = x1 + NODE_W, y1 + NODE_H // 2
    ex, ey = x2 - 2, y2 + NODE_H // 2
    bend = max(24, (ex - sx) // 2)
    cls = "edge critical" if is_crit else "edge"
    marker = "kg-arrow-crit" if is_crit else "kg-arrow"
    return (
        f'<path class="{cls}" data-from="{esc(dep)}" data-to="{esc(node)}" '
        f'd="M{sx},{sy} C{sx + bend},{sy} {ex - bend},{ey} {ex},{ey}" '
        f'marker-end="url(#{marker})"/>'
    )


def _node(
    node: str,
    data: Mapping[str, Any],
    lane: str,
    at: tuple[int, int],
    is_crit: bool,
    style: str,
) -> str:
    """One WP's box: its id and title, its lane and state, the full text on hover."""
    x, y = at
    # Without a `lane` the node carries no board state (a live page paints it).
    state = str(data.get("lane") or "unfinalized") if "lane" in data else None
    title = str(data.get("title") or "")
    mark = f"{CRITICAL_MARK} " if is_crit else ""
    sub = lane or "no lane"
    tip = f"{node} {title} — "
    if state is not None:
        sub += f" · {state.replace('_', ' ')}"
        tip += f"{state}, "
    tip += (lane or "no lane") + (", on the critical path" if is_crit else "")
    cls = "node critical" if is_crit else "node"
    state_attr = f'data-state="{esc(state)}" ' if state is not None else ""
    return (
        f'<g class="{cls}" data-wp="{esc(node)}" data-lane="{esc(lane)}" '
        f'{state_attr}data-critical="{"true" if is_crit else "false"}" '
        f'tabindex="0" role="button" aria-label="{esc(tip)}">'
        f"<title>{esc(tip)}</title>"
        f'<rect x="{x}" y="{y}" width="{NODE_W}" height="{NODE_H}" rx="6" '
        f'class="lane-fill box" style="{style}"/>'
        f'<text x="{x + 8}" y="{y + 18}" class="label">'
        f'<tspan class="wp-id">{esc(mark + node)}</tspan> '
        f"{esc(_clip(title, max(4, LABEL_CHARS - len(mark + node))))}</text>"
        f'<text x="{x + 8}" y="{y + 36}" class="sub">{esc(_clip(sub, 26))}</text></g>'
    )
