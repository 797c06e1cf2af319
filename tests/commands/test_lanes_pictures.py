"""`kitty lanes --format text|mermaid|dot` and the critical path on the terminal board."""

from __future__ import annotations

import re
from pathlib import Path

from kitty.core.model import WorkPackage
from kitty.core.schedule import critical_path
from tests.helpers import make_mission, ok

WPS = [
    {"wp_id": "WP01", "title": "Cart API", "owned": ["src/cart/**"]},
    {"wp_id": "WP02", "title": 'Cart "UI" <b>', "deps": ["WP01"], "owned": ["web/**"]},
    {"wp_id": "WP03", "title": "Checkout", "deps": ["WP02"], "owned": ["src/checkout/**"]},
    {"wp_id": "WP04", "title": "Docs", "owned": ["docs/**"]},
    {"wp_id": "WP05", "title": "Cart tests", "deps": ["WP01"], "owned": ["src/cart/tests/**"]},
]


def wp(wp_id: str, deps: tuple[str, ...] = (), estimate: float | None = None) -> WorkPackage:
    return WorkPackage(wp_id, wp_id, deps, (), (), f"{wp_id}.md", wp_id, estimate)


def test_critical_path_prefers_weight_then_lowest_id_and_survives_cycles() -> None:
    wps = {w.wp_id: w for w in (wp("WP01"), wp("WP02"), wp("WP03", ("WP01",)))}
    assert critical_path(wps) == ["WP01", "WP03"]
    wps["WP04"] = wp("WP04", ("WP02",), estimate=3)
    assert critical_path(wps) == ["WP02", "WP04"]
    ring = {w.wp_id: w for w in (wp("WP01", ("WP02",)), wp("WP02", ("WP01",)))}
    assert critical_path(ring) in (["WP01"], ["WP02"])  # finalize refuses cycles; no hang
    assert critical_path({}) == []


def test_lanes_text_marks_the_critical_path(repo: Path) -> None:
    make_mission(repo, wps=WPS)
    out = ok(repo, "lanes").out
    assert "critical path ◆: WP01 → WP02 → WP03" in out
    assert "◆WP01:planned" in out and "WP04:planned" in out
    assert ok(repo, "lanes", "--format", "text").out == out
    view = ok(repo, "lanes", "--json").json()
    assert view["critical_path"] == ["WP01", "WP02", "WP03"]
    nodes = {n["id"]: n for n in view["nodes"]}
    assert set(nodes) == {"WP01", "WP02", "WP03", "WP04", "WP05"}
    assert nodes["WP02"]["critical"] and not nodes["WP05"]["critical"]
    assert nodes["WP05"]["execution_lane"] == nodes["WP01"]["execution_lane"]


def test_lanes_mermaid_has_lanes_nodes_edges_and_critical_style(repo: Path) -> None:
    make_mission(repo, wps=WPS)
    out = ok(repo, "lanes", "--format", "mermaid").out
    assert out.startswith("flowchart LR\n")
    assert out.count("subgraph ") == 4 and out.count("\n  end") == 4
    assert "n_WP01 ==> n_WP02" in out and "n_WP02 ==> n_WP03" in out
    assert "n_WP01 --> n_WP05" in out
    assert "class n_WP01,n_WP02,n_WP03 critical" in out
    # Quotes and angle brackets in titles cannot break the diagram.
    assert "Cart #quot;UI#quot; #lt;b#gt;" in out
    links = [line for line in out.splitlines() if "-->" in line or "==>" in line]
    style = re.search(r"linkStyle ([\d,]+) ", out)
    assert style is not None
    critical_links = {links[int(i)].strip() for i in style.group(1).split(",")}
    assert critical_links == {"n_WP01 ==> n_WP02", "n_WP02 ==> n_WP03"}


def test_lanes_dot_is_a_digraph_with_clusters_and_red_critical_edges(repo: Path) -> None:
    make_mission(repo, wps=WPS)
    out = ok(repo, "lanes", "--format", "dot").out
    assert out.startswith('digraph "demo-01ABCDEF" {') and out.rstrip().endswith("}")
    assert out.count('subgraph "cluster_lane-') == 4
    assert '"WP01" -> "WP02" [color="#d00000", penwidth=3];' in out
    assert '"WP01" -> "WP05";' in out
    assert 'label="◆ WP02 Cart \\"UI\\" <b>\\nplanned"' in out
    assert out.count("{") == out.count("}")


def test_lanes_format_is_validated(repo: Path) -> None:
    make_mission(repo, wps=WPS)
    from tests.helpers import kitty

    run = kitty(repo, "lanes", "--format", "png")
    assert run.code == 2 and "png" in run.err


def test_status_board_marks_the_critical_path(repo: Path) -> None:
    make_mission(repo, wps=WPS)
    out = ok(repo, "status").out
    assert "◆WP01 Cart API" in out and "◆WP04" not in out
    assert "◆ critical path: WP01 → WP02 → WP03" in out
    data = ok(repo, "status", "--json").json()
    assert data["critical_path"] == ["WP01", "WP02", "WP03"]
    marks = {w["id"]: w["critical"] for w in data["work_packages"]}
    assert marks == {"WP01": True, "WP02": True, "WP03": True, "WP04": False, "WP05": False}


def test_a_single_wp_is_not_called_a_critical_path(repo: Path) -> None:
    make_mission(repo, wps=[{"wp_id": "WP01"}, {"wp_id": "WP02"}])
    out = ok(repo, "status").out
    assert "◆" not in out
