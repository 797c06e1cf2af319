"""The pictures kitty draws: layered layout, dependency graph, cumulative flow, cycle times."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from kitty.web.rules import svg

S = 1_000_000  # microseconds per second


def test_layers_are_dependency_depth_and_lanes_stay_together() -> None:
    order = ["WP01", "WP02", "WP03", "WP04", "WP05"]
    deps = {"WP02": ["WP01"], "WP03": ["WP02", "WP04"], "WP05": ["WP01"]}
    group = {"WP01": "a", "WP02": "b", "WP03": "c", "WP04": "a", "WP05": "a"}
    layout = svg.layered_layout(order, deps, group)
    layer = {n: p[0] for n, p in layout.positions.items()}
    assert layer == {"WP01": 0, "WP02": 1, "WP03": 2, "WP04": 0, "WP05": 1}
    assert sorted(layout.layers[0]) == ["WP01", "WP04"]
    assert svg.layered_layout(order, deps, group) == layout  # deterministic


def crossings(layout: svg.Layout, edges: list[tuple[str, str]]) -> int:
    pos = layout.positions
    count = 0
    for i, (a, b) in enumerate(edges):
        for c, d in edges[i + 1 :]:
            same_layers = pos[a][0] == pos[c][0] and pos[b][0] == pos[d][0]
            if same_layers and (pos[a][1] - pos[c][1]) * (pos[b][1] - pos[d][1]) < 0:
                count += 1
    return count


def test_barycentre_sweeps_remove_an_avoidable_crossing() -> None:
    # Initial order puts X2's child first and X1's child second: one crossing.
    order = ["X1", "X2", "Y2", "Y1"]
    deps = {"Y1": ["X1"], "Y2": ["X2"]}
    layout = svg.layered_layout(order, deps, {})
    assert crossings(layout, [("X1", "Y1"), ("X2", "Y2")]) == 0


def test_a_cycle_does_not_hang_the_layout() -> None:
    layout = svg.layered_layout(["A", "B", "C"], {"A": ["B"], "B": ["A"], "C": []}, {})
    assert set(layout.positions) == {"A", "B", "C"}


def test_graph_svg_is_valid_xml_with_one_node_per_wp_and_the_critical_path() -> None:
    nodes = [
        {
            "id": "WP01",
            "title": "A & <b>",
            "lane": "done",
            "dependencies": [],
            "execution_lane": "lane-a",
        },
        {
            "id": "WP02",
            "title": "B",
            "lane": "in_review",
            "dependencies": ["WP01"],
            "execution_lane": "lane-b",
        },
        {
            "id": "WP03",
            "title": "C",
            "lane": None,
            "dependencies": ["WP01", "WP09"],
            "execution_lane": None,
        },
    ]
    text = svg.graph_svg(nodes, ["WP01", "WP02"])
    root = ET.fromstring(text)
    ns = "{http://www.w3.org/2000/svg}"
    groups = [g for g in root.iter(f"{ns}g") if g.get("data-wp")]
    assert [g.get("data-wp") for g in groups] == ["WP01", "WP02", "WP03"]
    assert [g.get("data-critical") for g in groups] == ["true", "true", "false"]
    edges = [p for p in root.iter(f"{ns}path") if p.get("data-from")]
    assert {(e.get("data-from"), e.get("data-to"), e.get("class")) for e in edges} == {
        ("WP01", "WP02", "edge critical"),
        ("WP01", "WP03", "edge"),
    }  # WP09 is unknown: no dangling edge
    labels = " ".join("".join(t.itertext()) for t in root.iter(f"{ns}text"))
    assert "lane-a" in labels and "lane-b" in labels and "no lane" in labels  # lane as text
    assert "in review" in labels and "A & <b>" in labels and "critical path" in labels


def test_flow_series_counts_every_column_over_time() -> None:
    moves = [
        (1 * S, "WP01", "planned"),
        (1 * S, "WP02", "planned"),
        (2 * S, "WP01", "claimed"),
        (3 * S, "WP01", "in_review"),
        (4 * S, "WP01", "approved"),
        (5 * S, "WP01", "done"),
        (6 * S, "WP02", "canceled"),
    ]
    points = svg.flow_series(moves, ["WP01", "WP02", "WP03"])
    assert [p["at_us"] for p in points] == [1 * S, 2 * S, 3 * S, 4 * S, 5 * S, 6 * S]
    assert points[0]["counts"]["Planned"] == 3
    assert points[1]["counts"]["In progress"] == 1 and points[1]["counts"]["Planned"] == 2
    assert points[2]["counts"]["Review"] == 1
    assert points[-1]["counts"] == {
        "Done": 1,
        "Approved": 0,
        "Review": 0,
        "In progress": 0,
        "Planned": 1,
        "Blocked": 0,
    }
    many = [(i * S, "WP01", "claimed" if i % 2 else "planned") for i in range(1000)]
    thin = svg.flow_series(many, ["WP01"], max_points=50)
    assert len(thin) <= 50 and thin[-1] == svg.flow_series(many, ["WP01"])[-1]


def test_cycle_time_runs_from_first_claim_to_first_approval() -> None:
    moves = [
        (10 * S, "WP01", "claimed"),
        (70 * S, "WP01", "for_review"),
        (80 * S, "WP01", "planned"),  # rejected: the clock keeps running
        (90 * S, "WP01", "claimed"),
        (130 * S, "WP01", "approved"),
        (140 * S, "WP01", "done"),
        (50 * S, "WP02", "in_progress"),
    ]
    times = svg.cycle_times(moves)
    assert times["WP01"] == {"started_us": 10 * S, "finished_us": 130 * S, "seconds": 120}
    assert times["WP02"]["seconds"] is None
    assert "WP03" not in times


def test_flow_svg_draws_bands_axes_and_a_text_legend() -> None:
    points = svg.flow_series([(1 * S, "WP01", "claimed"), (9 * S, "WP01", "done")], ["WP01"])
    text = svg.flow_svg(points, until_us=20 * S)
    root = ET.fromstring(text)
    ns = "{http://www.w3.org/2000/svg}"
    bands = [p for p in root.iter(f"{ns}polygon")]
    assert len(bands) == len(svg.FLOW_BANDS)
    legend = [t.text for t in root.iter(f"{ns}text") if t.get("class") == "legend"]
    assert "Done 1" in legend and "In progress 0" in legend
    # The last state is drawn up to the picture's time: Done has a visible area.
    done = next(p for p in bands if "band-done" in (p.get("class") or ""))
    xs = {float(x.split(",")[0]) for x in (done.get("points") or "").split()}
    assert max(xs) - min(xs) > 100
    empty = svg.flow_svg([])
    assert "No transitions yet" in empty and ET.fromstring(empty) is not None
    assert re.search(r"aria-label=\"Cumulative flow, now: Done 1", text)


def test_past_eight_lanes_the_rest_are_grey_and_the_legend_wraps() -> None:
    nodes = [
        {"id": f"WP{i:02d}", "title": f"T{i}", "dependencies": [], "execution_lane": f"lane-{i}"}
        for i in range(1, 13)
    ]
    nodes.append({"id": "WP13", "title": "x", "dependencies": [], "execution_lane": "lane-12"})
    hues = svg.lane_hues([f"lane-{i}" for i in range(1, 13)], {"lane-12": 2})
    assert hues["lane-12"] == svg.PALETTE[0], "the biggest lane is coloured first"
    assert sum(h is not None for h in hues.values()) == 8 and hues["lane-11"] is None
    text = svg.graph_svg(nodes, [])
    root = ET.fromstring(text)
    ns = "{http://www.w3.org/2000/svg}"
    width = float(root.get("width") or 0)
    legend = next(g for g in root.iter(f"{ns}g") if g.get("class") == "legend")
    labels = [t for t in legend.iter(f"{ns}text")]
    assert "4 more lanes (grey, named on each box)" in [t.text for t in labels]
    for label in labels:  # every item inside the picture, on more than one row
        assert float(label.get("x") or 0) + 7 * len(label.text or "") <= width
    assert len({label.get("y") for label in labels}) > 1
    boxes = [r for r in root.iter(f"{ns}rect") if "box" in (r.get("class") or "")]
    greys = [r for r in boxes if "--lane-s:0%" in (r.get("style") or "")]
    assert len(greys) == 4
    # A node without a board state carries none (a live page paints it).
    assert "data-state" not in text
