"""The dependency graph as text, Mermaid and Graphviz: pure functions of the lanes view.

The view is what `kitty lanes --json` prints: `lanes` (execution lanes with their
WPs and lane states), `nodes` (every WP with title, state, dependencies, execution
lane and whether it is on the critical path) and `critical_path`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from itertools import pairwise
from typing import Any

CRITICAL_MARK = "◆"
_MERMAID_ID = re.compile(r"[^A-Za-z0-9_]")


def _nodes(view: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {str(n["id"]): n for n in view.get("nodes", [])}


def critical_edges(path: Iterable[str]) -> set[tuple[str, str]]:
    """Consecutive pairs of the critical path as (dependency, dependent) edges."""
    return set(pairwise(path))


def lanes_text(view: dict[str, Any]) -> str:
    """One line per execution lane; WPs on the critical path carry `◆`."""
    critical = set(view.get("critical_path", []))
    lines = []
    for lane in view["lanes"]:
        after = f"  after {', '.join(lane['depends_on_lanes'])}" if lane["depends_on_lanes"] else ""
        wps = ", ".join(
            f"{CRITICAL_MARK if w in critical else ''}{w}:{s or '-'}"
            for w, s in lane["wp_lanes"].items()
        )
        lines.append(f"group {lane['parallel_group']}  {lane['lane_id']}  {wps}{after}")
    if view.get("planning_artifact_wps"):
        lines.append("planning artifacts (no lane): " + ", ".join(view["planning_artifact_wps"]))
    path = view.get("critical_path") or []
    lines.append(f"critical path {CRITICAL_MARK}: " + (" → ".join(path) or "-"))
    return "\n".join(lines)


#: Mermaid reads entity codes inside quoted labels; quotes and angle brackets must go.
_MERMAID_CODES = str.maketrans({"&": "#amp;", '"': "#quot;", "<": "#lt;", ">": "#gt;", "\n": " "})


def _mermaid_label(text: str) -> str:
    return text.translate(_MERMAID_CODES)


def mermaid_id(text: str) -> str:
    return "n_" + _MERMAID_ID.sub("_", text)


class _Graph:
    """What both drawings need from the view: nodes, the critical path, the edges."""

    def __init__(self, view: dict[str, Any]) -> None:
        self.nodes = _nodes(view)
        self.critical = set(view.get("critical_path", []))
        self.crit_edges = critical_edges(view.get("critical_path", []))
        self.lanes: list[dict[str, Any]] = view["lanes"]
        self.edges = [
            (dep, wp_id)
            for wp_id, node in self.nodes.items()
            for dep in node.get("dependencies", [])
            if dep in self.nodes
        ]

    def label(self, wp_id: str) -> tuple[str, str]:
        """(`◆ WP01 Title`, lane state) for one node (the head unstripped: `WP01 ` untitled)."""
        node = self.nodes.get(wp_id, {})
        mark = f"{CRITICAL_MARK} " if wp_id in self.critical else ""
        return f"{mark}{wp_id} {node.get('title') or ''}", node.get("lane") or "unfinalized"

    def unplaced(self) -> list[str]:
        """WPs in no execution lane, in node order."""
        placed = {wp_id for lane in self.lanes for wp_id in lane["wp_ids"]}
        return [wp_id for wp_id in self.nodes if wp_id not in placed]

    def lines(
        self,
        lane_open: Callable[[str], list[str]],
        lane_close: str,
        node_line: Callable[[str, str], str],
        edge_line: Callable[[str, str], str],
    ) -> list[str]:
        """Both drawings' body: a group per execution lane with its WPs, then the WPs in
        no lane, then the edges; each drawing says how a line is written."""
        out = []
        for lane in self.lanes:
            out += lane_open(lane["lane_id"])
            out += [node_line(wp_id, "    ") for wp_id in lane["wp_ids"]]
            out.append(lane_close)
        out += [node_line(wp_id, "  ") for wp_id in self.unplaced()]
        out += [edge_line(dep, wp_id) for dep, wp_id in self.edges]
        return out


def lanes_mermaid(view: dict[str, Any]) -> str:
    """A Mermaid flowchart: one subgraph per execution lane, the critical path in red."""
    g = _Graph(view)
    out = ["flowchart LR"]

    def node_line(wp_id: str, indent: str) -> str:
        head, state = g.label(wp_id)
        return f'{indent}{mermaid_id(wp_id)}["{_mermaid_label(head.strip())}<br/>{state}"]'

    def edge_line(dep: str, wp_id: str) -> str:
        arrow = "==>" if (dep, wp_id) in g.crit_edges else "-->"
        return f"  {mermaid_id(dep)} {arrow} {mermaid_id(wp_id)}"

    out += g.lines(
        lambda lane: [f'  subgraph {mermaid_id(lane)}["{lane}"]'], "  end", node_line, edge_line
    )
    out.append("  classDef critical stroke:#d00,stroke-width:3px")
    if g.critical:
        out.append("  class " + ",".join(mermaid_id(w) for w in sorted(g.critical)) + " critical")
    styled = [str(i) for i, edge in enumerate(g.edges) if edge in g.crit_edges]
    if styled:
        out.append(f"  linkStyle {','.join(styled)} stroke:#d00,stroke-width:3px")
    return "\n".join(out) + "\n"


def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


def _dot_quote(text: str) -> str:
    return '"' + _dot_escape(text) + '"'


def lanes_dot(view: dict[str, Any]) -> str:
    """A Graphviz digraph: one cluster per execution lane, the critical path bold red."""
    g = _Graph(view)
    out = [
        f"digraph {_dot_quote(str(view.get('mission') or 'mission'))} {{",
        "  rankdir=LR;",
        '  node [shape=box, style="rounded"];',
    ]

    def node_line(wp_id: str, indent: str) -> str:
        head, state = g.label(wp_id)
        label = '"' + _dot_escape(head) + "\\n" + _dot_escape(state) + '"'
        extra = ', color="#d00000", penwidth=3' if wp_id in g.critical else ""
        return f"{indent}{_dot_quote(wp_id)} [label={label}{extra}];"

    def edge_line(dep: str, wp_id: str) -> str:
        extra = ' [color="#d00000", penwidth=3]' if (dep, wp_id) in g.crit_edges else ""
        return f"  {_dot_quote(dep)} -> {_dot_quote(wp_id)}{extra};"

    def lane_open(lane: str) -> list[str]:
        return [f"  subgraph {_dot_quote('cluster_' + lane)} {{", f"    label={_dot_quote(lane)};"]

    out += g.lines(lane_open, "  }", node_line, edge_line)
    out.append("}")
    return "\n".join(out) + "\n"
