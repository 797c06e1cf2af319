"""What the web board's pictures promise a reader, checked on the SVG itself: where each
box, arrow, band, tick and legend item sits, what its text says, and that nothing falls
outside the picture or on top of something else."""

from __future__ import annotations

import itertools
import re
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from kitty.web.rules import flow, svg
from tests.web.rules.test_svg import crossings

S = 1_000_000  # microseconds per second
NS = "{http://www.w3.org/2000/svg}"
T0 = 1_767_225_600 * S  # 2026-01-01T00:00:00Z


def parse(text: str) -> ET.Element:
    return ET.fromstring(text)


def floats(element: ET.Element, *names: str) -> tuple[float, ...]:
    return tuple(float(element.get(name) or "nan") for name in names)


# -- the dependency graph ----------------------------------------------------------


def wp(
    ident: str, deps: list[str], xlane: str | None, title: str = "", **more: Any
) -> dict[str, Any]:
    """A graph node; `xlane` is its execution lane, `lane=` (in `more`) its board state."""
    return {
        "id": ident,
        "title": title or f"Title {ident}",
        "dependencies": deps,
        "execution_lane": xlane,
        **more,
    }


def boxes(root: ET.Element) -> dict[str, tuple[float, ...]]:
    """WP -> its box (x, y, width, height)."""
    found = {}
    for group in root.iter(f"{NS}g"):
        if group.get("data-wp"):
            rect = group.find(f"{NS}rect")
            assert rect is not None
            found[group.get("data-wp") or ""] = floats(rect, "x", "y", "width", "height")
    return found


def test_boxes_stand_in_columns_by_dependency_depth_inside_a_tight_picture() -> None:
    """A WP stands one column right of its deepest dependency, a column's boxes one
    under another without overlapping, all of them inside the picture with the same
    12-pixel margin on every side: the picture is no larger than what it shows."""
    nodes = [
        wp("WP01", [], "a"),
        wp("WP02", ["WP01"], "a"),
        wp("WP03", ["WP01"], "b"),
        wp("WP04", ["WP02", "WP03"], "a"),
        wp("WP05", [], "b"),
        wp("WP06", ["WP04"], "b"),
        wp("WP07", ["WP03"], "a"),
    ]
    root = parse(svg.graph_svg(nodes, []))
    width, height = floats(root, "width", "height")
    assert root.get("viewBox") == f"0 0 {width:g} {height:g}"
    placed = boxes(root)
    column = {
        wp: round((x - svg.PAD) / (svg.NODE_W + svg.GAP_X)) for wp, (x, *_r) in placed.items()
    }
    assert column == {"WP01": 0, "WP05": 0, "WP02": 1, "WP03": 1, "WP07": 2, "WP04": 2, "WP06": 3}
    for x, _y, w, h in placed.values():
        assert (w, h) == (svg.NODE_W, svg.NODE_H)
        assert x == svg.PAD + column_of(x) * (svg.NODE_W + svg.GAP_X)
    for (a, ra), (b, rb) in itertools.combinations(placed.items(), 2):
        apart_x = ra[0] + ra[2] <= rb[0] or rb[0] + rb[2] <= ra[0]
        apart_y = ra[1] + ra[3] + svg.GAP_Y <= rb[1] or rb[1] + rb[3] + svg.GAP_Y <= ra[1]
        assert apart_x or apart_y, (a, b)
    right = max(x + w for x, _, w, _ in placed.values())
    bottom = max(y + h for _, y, _, h in placed.values())
    assert width - right == svg.PAD and height - bottom == svg.PAD
    top_row = min(y for _, y, _, _ in placed.values())
    rows = {round((y - top_row) / (svg.NODE_H + svg.GAP_Y)) for _, y, _, _ in placed.values()}
    assert rows == {0, 1}  # two WPs in the fullest column, so two rows
    legend = next(g for g in root.iter(f"{NS}g") if g.get("class") == "legend")
    legend_bottom = max(float(t.get("y") or 0) for t in legend.iter(f"{NS}text"))
    assert legend_bottom < top_row  # the legend sits above the boxes, never on them


def column_of(x: float) -> int:
    return round((x - svg.PAD) / (svg.NODE_W + svg.GAP_X))


def test_a_narrow_graph_is_as_wide_as_its_legend() -> None:
    root = parse(svg.graph_svg([wp("WP01", [], "a")], []))
    assert floats(root, "width") == (svg.LEGEND_MIN_W,)
    ((x, _y, _, _),) = boxes(root).values()
    assert x == svg.PAD


def test_an_empty_graph_is_still_a_picture() -> None:
    root = parse(svg.graph_svg([], []))
    assert boxes(root) == {}
    assert "0 work packages, critical path none" in (root.get("aria-label") or "")
    assert svg.layered_layout([], {}, {}) == svg.Layout({}, [])


def test_each_arrow_runs_from_the_dependencys_right_side_to_the_dependents_left() -> None:
    """An arrow leaves the middle of the dependency's right side and its head stops
    2 pixels short of the middle of the dependent's left side, leaving and arriving
    horizontally; a long arrow bends halfway, a short one by at least 24 pixels."""
    nodes = [wp("WP01", [], "a"), wp("WP02", ["WP01"], "a"), wp("WP03", ["WP01", "WP02"], "b")]
    root = parse(svg.graph_svg(nodes, ["WP01", "WP03"]))
    placed = boxes(root)
    paths = {
        (p.get("data-from") or "", p.get("data-to") or ""): p
        for p in root.iter(f"{NS}path")
        if p.get("data-from")
    }
    assert set(paths) == {("WP01", "WP02"), ("WP01", "WP03"), ("WP02", "WP03")}
    for (dep, node), path in paths.items():
        numbers = [int(n) for n in re.findall(r"-?\d+", path.get("d") or "")]
        sx, sy, c1x, c1y, c2x, c2y, ex, ey = numbers
        dx, dy, dw, dh = placed[dep]
        nx, ny, _, nh = placed[node]
        assert (sx, sy) == (dx + dw, dy + dh // 2)
        assert (ex, ey) == (nx - 2, ny + nh // 2)
        assert c1y == sy and c2y == ey
        bend = max(24, (ex - sx) // 2)
        assert (c1x, c2x) == (sx + bend, ex - bend)
        crit = (dep, node) == ("WP01", "WP03")
        assert path.get("class") == ("edge critical" if crit else "edge")
        assert path.get("marker-end") == ("url(#kg-arrow-crit)" if crit else "url(#kg-arrow)")
    markers = {m.get("id"): m for m in root.iter(f"{NS}marker")}
    assert set(markers) == {"kg-arrow", "kg-arrow-crit"}
    assert markers["kg-arrow-crit"].get("markerWidth") == "12"


def test_a_wp_depending_on_itself_or_on_an_unknown_wp_draws_no_arrow() -> None:
    nodes = [wp("WP01", ["WP01", "WP99"], "a"), wp("WP02", ["WP01"], "a")]
    root = parse(svg.graph_svg(nodes, []))
    arrows = [
        (p.get("data-from"), p.get("data-to")) for p in root.iter(f"{NS}path") if p.get("data-from")
    ]
    assert arrows == [("WP01", "WP02")]
    layout = svg.layered_layout(["WP01", "WP02"], {"WP01": ["WP01", "WP99"]}, {})
    assert layout.positions == {"WP01": (0, 0), "WP02": (0, 1)}


def node_texts(root: ET.Element, ident: str) -> dict[str, str]:
    group = next(g for g in root.iter(f"{NS}g") if g.get("data-wp") == ident)
    texts = {t.get("class") or "": "".join(t.itertext()) for t in group.iter(f"{NS}text")}
    title = group.find(f"{NS}title")
    texts["title"] = title.text or "" if title is not None else ""
    texts["aria"] = group.get("aria-label") or ""
    return texts


def test_a_box_names_the_wp_its_lane_and_state_and_the_whole_title_on_hover() -> None:
    """The box shows "WPnn title" cut to fit with "…", and "lane · state"; hovering (or
    a screen reader) gives the whole title, the state as written, the lane and whether
    it is on the critical path. The texts sit inside the box."""
    long = "Make the parser accept every legal document"
    nodes = [
        wp("WP01", [], "lane-a", long, lane="in_review"),
        wp("WP02", ["WP01"], None, "Short", lane=None),
        wp("WP03", [], "an-extremely-long-lane-name-indeed", "Exactly twenty-one ch"),
    ]
    root = parse(svg.graph_svg(nodes, ["WP01"]))
    one = node_texts(root, "WP01")
    assert one["label"] == "◆ WP01 Make the parser …"
    assert len(one["label"]) == len("◆ WP01 ") + svg.LABEL_CHARS - len("◆ WP01")
    assert one["sub"] == "lane-a · in review"
    assert one["title"] == one["aria"] == f"WP01 {long} — in_review, lane-a, on the critical path"
    two = node_texts(root, "WP02")
    assert two["label"] == "WP02 Short" and two["sub"] == "no lane · unfinalized"
    assert two["title"] == "WP02 Short — unfinalized, no lane"
    three = node_texts(root, "WP03")
    assert three["label"] == "WP03 Exactly twenty-one ch"[: len("WP03 ") + 18] + "…"
    assert three["sub"] == "an-extremely-long-lane-na…" and len(three["sub"]) == 26
    assert three["title"] == "WP03 Exactly twenty-one ch — an-extremely-long-lane-name-indeed"
    group = next(g for g in root.iter(f"{NS}g") if g.get("data-wp") == "WP03")
    assert "data-state" not in group.attrib
    assert sorted(group.attrib) == [
        "aria-label", "class", "data-critical", "data-lane", "data-wp", "role", "tabindex",
    ]  # fmt: skip
    assert group.get("data-critical") == "false"
    for ident, (x, y, _w, h) in boxes(root).items():
        group = next(g for g in root.iter(f"{NS}g") if g.get("data-wp") == ident)
        label, sub = group.iter(f"{NS}text")
        assert floats(label, "x", "y") == (x + 8, y + 18)
        assert floats(sub, "x", "y") == (x + 8, y + 36)
        assert y + 36 < y + h


@pytest.mark.parametrize(
    ("title", "shown"),
    [
        ("x" * 19, "x" * 19),  # exactly what fits beside "WP01 ": whole
        ("x" * 20, "x" * 18 + "…"),
    ],
)
def test_a_title_is_cut_only_when_it_does_not_fit(title: str, shown: str) -> None:
    root = parse(svg.graph_svg([wp("WP01", [], "a", title)], []))
    assert node_texts(root, "WP01")["label"] == f"WP01 {shown}"


def test_every_label_and_attribute_is_escaped_quotes_included() -> None:
    nodes = [wp('W"P1', [], 'la"ne', 'say "hi" & <b>', lane="done")]
    text = svg.graph_svg(nodes, ['W"P1'])
    root = parse(text)  # well-formed although every field holds markup
    group = next(g for g in root.iter(f"{NS}g") if g.get("data-wp"))
    assert group.get("data-wp") == 'W"P1' and group.get("data-lane") == 'la"ne'
    assert 'say "hi" & <b>' in node_texts(root, 'W"P1')["title"]
    assert svg.esc("\"<&>'") == "&quot;&lt;&amp;&gt;&#x27;"


def legend_items(root: ET.Element) -> list[tuple[ET.Element | None, ET.Element]]:
    legend = next(g for g in root.iter(f"{NS}g") if g.get("class") == "legend")
    return [
        (item.find(f"{NS}rect"), item.find(f"{NS}text"))  # type: ignore[misc]
        for item in legend.iter(f"{NS}g")
        if item.get("class") == "item"
    ]


def test_the_legend_names_each_coloured_lane_then_the_grey_ones_then_the_mark() -> None:
    """One 12-pixel swatch per coloured lane with its name 16 pixels to its right, on
    one row from the left margin, items side by side without touching; the lanes past
    the palette share one grey swatch; the critical path's mark comes last."""
    nodes = [wp(f"WP{i:02d}", [], f"l{i}") for i in range(1, 11)]
    nodes.append(wp("WP11", [], None))
    root = parse(svg.graph_svg(nodes, ["WP01"]))
    items = legend_items(root)
    labels = [text.text for _, text in items]
    assert labels == [
        *(f"l{i}" for i in range(1, 9)),
        "3 more lanes (grey, named on each box)",
        "◆ critical path",
    ]
    width = floats(root, "width")[0]
    rows: dict[float, list[float]] = {}
    for rect, text in items:
        tx, ty = floats(text, "x", "y")
        if rect is not None:
            rx, ry, rw, rh = floats(rect, "x", "y", "width", "height")
            assert (rw, rh) == (12, 12) and rect.get("rx") == "2"
            assert (tx, ty) == (rx + 16, ry + 10)
            start = rx
        else:
            start = tx
            assert text.get("class") == "critical-label"
        assert start >= svg.PAD and tx + 7 * len(text.text or "") <= width - svg.PAD
        rows.setdefault(ty, []).append(start)
    first_row = min(rows)
    assert first_row == svg.PAD + 10
    for starts in rows.values():
        assert starts[0] == svg.PAD  # every row starts at the margin
    assert sorted(rows) == [first_row + k * svg.LEGEND_ROW for k in range(len(rows))]
    greys = [r for r, _ in items if r is not None and "--lane-s:0%" in (r.get("style") or "")]
    assert [g.get("style") for g in greys] == ["--lane-h:0;--lane-s:0%"]
    hues = [r.get("style") for r, _ in items if r is not None][:8]
    assert hues == [f"--lane-h:{h}" for h in svg.PALETTE]


def test_a_wp_without_a_lane_is_named_no_lane_in_the_legend() -> None:
    root = parse(svg.graph_svg([wp("WP01", [], None), wp("WP02", [], "x")], []))
    assert [t.text for _, t in legend_items(root)] == ["no lane", "x"]


def test_the_biggest_lanes_get_colours_first_and_ties_keep_their_order() -> None:
    lanes = [f"l{i}" for i in range(10)]
    hues = svg.lane_hues(lanes, {"l9": 3, "l5": 2})
    assert hues["l9"] == svg.PALETTE[0] and hues["l5"] == svg.PALETTE[1]
    assert [hues[f"l{i}"] for i in range(6)] == [*svg.PALETTE[2:7], svg.PALETTE[1]]
    assert hues["l6"] == svg.PALETTE[7] and hues["l7"] is None and hues["l8"] is None
    # a lane missing from `sizes` counts as empty: the one WP lane outranks it
    assert svg.lane_hues(["a", "b"], {"b": 1}) == {"a": svg.PALETTE[1], "b": svg.PALETTE[0]}


def test_a_cycle_lands_in_a_column_after_everything_else() -> None:
    """finalize refuses a cycle, but a picture of one must not hang or overlap: the WPs
    in it stand in the column right after the deepest one."""
    order = ["A", "B", "C", "D"]
    layout = svg.layered_layout(order, {"B": ["A"], "C": ["D"], "D": ["C"]}, {})
    assert {n: p[0] for n, p in layout.positions.items()} == {"A": 0, "B": 1, "C": 2, "D": 2}
    only_cycle = svg.layered_layout(["C", "D"], {"C": ["D"], "D": ["C"]}, {})
    assert {n: p[0] for n, p in only_cycle.positions.items()} == {"C": 0, "D": 0}
    assert only_cycle.layers == [["C", "D"]]


def test_boxes_start_grouped_by_lane_in_the_order_lanes_first_appear() -> None:
    order = ["WP01", "WP02", "WP03", "WP04", "WP05"]
    group = {"WP01": "b", "WP02": "a", "WP03": "b", "WP04": "", "WP05": "a"}
    layout = svg.layered_layout(order, {}, group)
    assert layout.layers == [["WP01", "WP03", "WP02", "WP05", "WP04"]]


def test_sweeps_reach_the_last_column_and_pull_a_wp_beside_its_dependencies() -> None:
    """Three columns; the last one starts in the order that crosses (its WPs listed
    the other way round): the sweeps put each beside its own dependency."""
    order = ["A1", "A2", "A3", "B1", "B2", "B3", "C3", "C2", "C1"]
    deps = {"B1": ["A1"], "B2": ["A2"], "B3": ["A3"], "C1": ["B1"], "C2": ["B2"], "C3": ["B3"]}
    layout = svg.layered_layout(order, deps, {})
    slot = {n: p[1] for n, p in layout.positions.items()}
    for letter in "ABC":
        assert [slot[f"{letter}{i}"] for i in (1, 2, 3)] == [0, 1, 2], layout.layers
    # pulled by the average of two dependencies, not their sum
    order = ["P0", "P1", "P2", "P3", "Q1", "Q2"]
    deps = {"Q1": ["P2", "P3"], "Q2": ["P0", "P1"]}
    layout = svg.layered_layout(order, deps, {})
    assert layout.layers[1] == ["Q2", "Q1"]


# -- the cumulative flow chart -----------------------------------------------------

LEFT, RIGHT, TOP, BOTTOM = 40, 130, 12, 28


def polygons(root: ET.Element) -> dict[str, list[tuple[float, float]]]:
    found = {}
    for polygon in root.iter(f"{NS}polygon"):
        name = (polygon.get("class") or "").split()[-1]
        pairs = (p.split(",") for p in (polygon.get("points") or "").split())
        found[name] = [(float(x), float(y)) for x, y in pairs]
    return found


def test_bands_stack_without_gaps_and_hold_each_count_until_the_next_move() -> None:
    """Done at the bottom, then Approved, Review, In progress, Planned and Blocked,
    each band starting where the one below ends; time runs from the left axis to the
    plot's right edge, counts from the baseline up to the top when every WP is
    counted; a count holds (a flat step) until the next move, then jumps."""
    moves = [
        (T0, "WP01", "planned"),
        (T0 + 10 * S, "WP01", "claimed"),
        (T0 + 30 * S, "WP01", "done"),
        (T0 + 40 * S, "WP02", "blocked"),
    ]
    points = flow.flow_series(moves, ["WP01", "WP02", "WP03", "WP04"])
    width, height = 720, 260
    root = parse(flow.flow_svg(points, width=width, height=height))
    bands = polygons(root)
    names = [
        "band-done",
        "band-approved",
        "band-review",
        "band-in-progress",
        "band-planned",
        "band-blocked",
    ]
    assert list(bands) == names
    plot_w, plot_h = width - LEFT - RIGHT, height - TOP - BOTTOM
    base = TOP + plot_h
    per_wp = plot_h / 4
    for below, above in itertools.pairwise(names):
        upper_of_below = bands[below][: len(bands[below]) // 2]
        lower_of_above = bands[above][len(bands[above]) // 2 :]
        assert upper_of_below == list(reversed(lower_of_above))
    done_upper = bands["band-done"][: len(bands["band-done"]) // 2]
    xs = [x for x, _ in done_upper]
    assert xs[0] == LEFT and xs[-1] == LEFT + plot_w
    assert xs == sorted(xs)
    x = {k: LEFT + plot_w * k / 40 for k in (0, 10, 30, 40)}
    # Done: nothing until 30 s, one WP from then on (a step, not a slope)
    heights = [(x, round(base - y, 1)) for x, y in done_upper]
    assert heights == [
        (x[0], 0),
        (x[10], 0),
        (x[10], 0),
        (x[30], 0),
        (x[30], per_wp),
        (x[40], per_wp),
        (x[40], per_wp),
    ]
    assert per_wp == 55.0
    top_upper = bands["band-blocked"][: len(bands["band-blocked"]) // 2]
    assert {round(y, 1) for _, y in top_upper} == {float(TOP)}  # all four WPs, always
    lower_done = bands["band-done"][len(bands["band-done"]) // 2 :]
    assert {y for _, y in lower_done} == {float(base)}
    titles = [t.text for t in root.iter(f"{NS}title")]
    assert titles == [
        "Done: 1 now",
        "Approved: 0 now",
        "Review: 0 now",
        "In progress: 0 now",
        "Planned: 2 now",
        "Blocked: 1 now",
    ]


def test_a_single_moment_fills_the_plot_width() -> None:
    points = flow.flow_series([(T0, "WP01", "done")], ["WP01", "WP02"])
    bands = polygons(parse(flow.flow_svg(points)))
    upper = bands["band-done"][:2]
    assert upper == [(LEFT, TOP + 110.0), (720 - RIGHT, TOP + 110.0)]


def test_ticks_name_zero_half_and_all_wps_and_the_first_and_last_time() -> None:
    moves = [(T0 + 5 * S, "WP01", "claimed"), (T0 + 65 * S, "WP01", "done")]
    points = flow.flow_series(moves, [f"WP0{i}" for i in range(1, 6)])
    root = parse(flow.flow_svg(points, until_us=T0 + 125 * S))
    ticks = [t for t in root.iter(f"{NS}text") if t.get("class") == "tick"]
    counts = [(t.text, floats(t, "x", "y"), t.get("text-anchor")) for t in ticks[:3]]
    plot_h = 260 - TOP - BOTTOM
    assert counts == [
        ("0", (LEFT - 6, TOP + plot_h + 4), "end"),
        ("2", (LEFT - 6, round(TOP + plot_h - 2 * plot_h / 5 + 4, 1)), "end"),
        ("5", (LEFT - 6, TOP + 4), "end"),
    ]
    times = [
        (t.text, floats(t, "x", "y"), t.get("text-anchor"), t.get("data-at")) for t in ticks[3:]
    ]
    assert times == [
        ("00:00:05 UTC", (LEFT, 252.0), "start", "2026-01-01T00:00:05.000000+00:00"),
        ("00:02:05 UTC", (720 - RIGHT, 252.0), "end", "2026-01-01T00:02:05.000000+00:00"),
    ]
    axes = [floats(line, "x1", "y1", "x2", "y2") for line in root.iter(f"{NS}line")]
    assert axes == [
        (LEFT, TOP + plot_h, 720 - RIGHT, TOP + plot_h),
        (LEFT, TOP, LEFT, TOP + plot_h),
    ]
    one = parse(flow.flow_svg(flow.flow_series([(T0, "WP01", "done")], ["WP01"])))
    assert [t.text for t in one.iter(f"{NS}text") if t.get("class") == "tick"][:2] == ["0", "1"]


@pytest.mark.parametrize(
    ("span_s", "first", "last"),
    [
        (3599, "00:00:00 UTC", "00:59:59 UTC"),
        (3600, "01-01 00:00 UTC", "01-01 01:00 UTC"),
        (3 * 86400 + 7 * 3600 + 5 * 60, "01-01 00:00 UTC", "01-04 07:05 UTC"),
    ],
)
def test_times_show_seconds_within_the_hour_and_the_date_beyond(
    span_s: int, first: str, last: str
) -> None:
    points = flow.flow_series(
        [(T0, "WP01", "claimed"), (T0 + span_s * S, "WP01", "done")], ["WP01"]
    )
    root = parse(flow.flow_svg(points))
    ticks = [t.text for t in root.iter(f"{NS}text") if t.get("class") == "tick"]
    assert ticks[-2:] == [first, last]


def test_the_legend_lists_every_band_top_down_with_its_count_beside_the_plot() -> None:
    points = flow.flow_series(
        [(T0, "WP01", "in_review"), (T0 + S, "WP02", "approved")], ["WP01", "WP02", "WP03"]
    )
    root = parse(flow.flow_svg(points, width=800, height=300))
    legend = [t for t in root.iter(f"{NS}text") if t.get("class") == "legend"]
    assert [t.text for t in legend] == [
        "Blocked 0",
        "Planned 1",
        "In progress 0",
        "Review 1",
        "Approved 1",
        "Done 0",
    ]
    swatches = [r for r in root.iter(f"{NS}rect")]
    for k, (rect, text) in enumerate(zip(swatches, legend, strict=True)):
        assert floats(rect, "x", "y", "width", "height") == (
            800 - RIGHT + 12,
            TOP + 4 + 18 * k,
            12,
            12,
        )
        assert floats(text, "x", "y") == (800 - RIGHT + 30, TOP + 4 + 18 * k + 10)
    assert root.get("viewBox") == "0 0 800 300"
    assert root.get("aria-label") == (
        "Cumulative flow, now: Done 0, Approved 1, Review 1, In progress 0, Planned 1, Blocked 0"
    )


def test_no_transitions_yet_says_so_in_the_middle() -> None:
    root = parse(flow.flow_svg([], width=500, height=200))
    (text,) = root.iter(f"{NS}text")
    assert text.text == "No transitions yet" and floats(text, "x", "y") == (250, 100)
    assert root.get("aria-label") == "Cumulative flow: no transitions yet"


def test_a_long_history_is_thinned_evenly_keeping_the_last_state_of_each_slice() -> None:
    moves = [(T0 + i * S, f"WP{i % 3}", "claimed" if i % 2 else "planned") for i in range(100)]
    ids = ["WP0", "WP1", "WP2"]
    whole = flow.flow_series(moves, ids, max_points=100)
    assert len(whole) == 100  # as many points as allowed: nothing thinned
    thin = flow.flow_series(moves, ids, max_points=10)
    # slice k holds the moves at seconds 11k..11k+10 (99 s over 9 steps); the last of
    # each wins, and the final state is always the last point
    assert [p["at_us"] - T0 for p in thin] == [
        k * S for k in (10, 21, 32, 43, 54, 65, 76, 87, 98, 99)
    ]
    assert thin == [whole[i] for i in (10, 21, 32, 43, 54, 65, 76, 87, 98, 99)]
    assert flow.flow_series(moves[:1], ids, max_points=1)[0]["counts"]["Planned"] == 3
    later = [(T0 + 50 * S + i, "WP0", "claimed") for i in range(3)]
    assert len(flow.flow_series(later, ids, max_points=2)) == 2


def test_a_wp_first_seen_in_the_log_is_counted_when_it_moves() -> None:
    """A WP missing from the list of WPs (added later) joins the chart with its move."""
    points = flow.flow_series([(T0, "WP09", "claimed"), (T0 + S, "WP09", "done")], ["WP01"])
    assert points[0]["counts"]["In progress"] == 1 and points[0]["counts"]["Planned"] == 1
    assert points[1]["counts"]["In progress"] == 0 and points[1]["counts"]["Done"] == 1


def test_cycle_times_end_at_done_too_and_are_whole_seconds() -> None:
    moves = [
        (T0, "WP01", "claimed"),
        (T0 + 90 * S + 700_000, "WP01", "done"),
        (T0, "WP02", "in_progress"),
        (T0, "WP02", "approved"),
    ]
    times = flow.cycle_times(moves)
    assert times["WP01"]["seconds"] == 90
    assert times["WP02"]["seconds"] == 0


def no_stray_text(root: ET.Element) -> None:
    """Only <text>, <tspan> and <title> hold text: nothing else leaks words into the picture."""
    parent = {child: element for element in root.iter() for child in element}
    for element in root.iter():
        tag = element.tag.removeprefix(NS)
        if tag not in ("text", "tspan", "title"):
            assert not (element.text or "").strip(), (tag, element.text)
        if element in parent and parent[element].tag != f"{NS}text":
            assert not (element.tail or "").strip(), (tag, element.tail)


def test_a_box_says_whether_it_is_critical_and_its_board_state() -> None:
    nodes = [wp("WP01", [], "a", lane="in_review"), wp("WP02", ["WP01"], "a", lane="done")]
    root = parse(svg.graph_svg(nodes, ["WP01"]))
    groups = {g.get("data-wp"): g for g in root.iter(f"{NS}g") if g.get("data-wp")}
    assert groups["WP01"].get("class") == "node critical"
    assert groups["WP02"].get("class") == "node"
    assert groups["WP01"].get("data-state") == "in_review"
    assert groups["WP02"].get("data-state") == "done"
    assert [g.get("class") for g in root if g.tag == f"{NS}g"] == ["legend", "edges", "nodes"]
    no_stray_text(root)


def test_the_graph_names_its_critical_path_for_screen_readers() -> None:
    nodes = [wp("WP01", [], "a"), wp("WP02", ["WP01"], "a"), wp("WP03", ["WP02"], "a")]
    root = parse(svg.graph_svg(nodes, ["WP01", "WP02", "WP03"]))
    assert root.get("aria-label") == (
        "Dependency graph: 3 work packages, critical path WP01 → WP02 → WP03"
    )


def test_an_unknown_dependency_listed_first_hides_no_other_arrow() -> None:
    nodes = [wp("WP01", [], "a"), wp("WP02", ["WP99", "WP02", "WP01"], "a")]
    root = parse(svg.graph_svg(nodes, []))
    arrows = [
        (p.get("data-from"), p.get("data-to")) for p in root.iter(f"{NS}path") if p.get("data-from")
    ]
    assert arrows == [("WP01", "WP02")]


def test_a_box_without_a_title_shows_its_id_and_a_long_id_keeps_some_title() -> None:
    root = parse(svg.graph_svg([{"id": "WP01", "dependencies": [], "execution_lane": "a"}], []))
    assert node_texts(root, "WP01")["label"] == "WP01 "
    long_id = "WP-with-a-very-long-id"  # 22 characters: only 4 are left for the title
    root = parse(svg.graph_svg([wp(long_id, [], "a", "Parser")], []))
    assert node_texts(root, long_id)["label"] == f"{long_id} Par…"


def test_an_empty_graph_is_one_row_tall() -> None:
    root = parse(svg.graph_svg([], []))
    legend_h = svg.LEGEND_ROW + 8
    assert floats(root, "width", "height") == (
        svg.LEGEND_MIN_W,
        2 * svg.PAD + legend_h + svg.NODE_H,
    )


def test_legend_items_share_a_row_spaced_by_their_labels_and_the_boxes_follow() -> None:
    """Items stand side by side, each label's estimated width (7 pixels a character)
    plus 14 pixels apart; an item that exactly fits stays on the row; the boxes start
    8 pixels below the legend's last row."""
    nodes = [wp(f"WP{i:02d}", [], name) for i, name in enumerate(["ab", "cdef", "g"], 1)]
    root = parse(svg.graph_svg(nodes, ["WP01"]))
    items = legend_items(root)
    xs = [
        floats(rect, "x")[0] if rect is not None else floats(text, "x")[0] for rect, text in items
    ]
    widths = [
        (16 if rect is not None else 0) + 7 * len(text.text or "") + 14 for rect, text in items
    ]
    assert xs == [svg.PAD + sum(widths[:k]) for k in range(len(items))]
    assert len({text.get("y") for _, text in items}) == 1
    first_box_y = min(y for _, y, _, _ in boxes(root).values())
    assert first_box_y == svg.PAD + svg.LEGEND_ROW + 8


def test_a_legend_item_that_exactly_fits_stays_on_its_row() -> None:
    """Three columns make the picture 12 + 3 * 168 + 2 * 56 + 12 = 640 pixels wide, 616
    for the legend. Seven lanes whose items (swatch 16, name 7 a character, gap 14) add
    up to exactly 616 pixels stay on one row; one more character and the last wraps.
    The critical path's mark has no swatch, so with it 41 characters of names fit."""

    def legend_rows(names: list[str], critical: list[str]) -> int:
        nodes = [
            wp(f"WP{i:02d}", [f"WP{i - 1:02d}"] if i in (2, 3) else [], name)
            for i, name in enumerate(names, 1)
        ]
        root = parse(svg.graph_svg(nodes, critical))
        assert floats(root, "width") == (640,)
        return len({text.get("y") for _, text in legend_items(root)})

    short = ["a", "b", "c", "d", "e", "f"]
    assert 7 * 30 + 7 * (6 + 52) == 616
    assert legend_rows([*short, "g" * 52], []) == 1
    assert legend_rows([*short, "g" * 53], []) == 2
    assert 7 * 30 + 7 * (6 + 35) + 7 * len("◆ critical path") + 14 == 616
    assert legend_rows([*short, "g" * 35], ["WP01"]) == 1
    assert legend_rows([*short, "g" * 36], ["WP01"]) == 2


def test_a_lane_name_wider_than_the_picture_stays_on_the_first_row() -> None:
    root = parse(svg.graph_svg([wp("WP01", [], "x" * 80)], []))
    ((rect, text),) = legend_items(root)
    assert rect is not None and floats(rect, "x", "y") == (svg.PAD, svg.PAD)
    assert text.text == "x" * 80


def test_an_arrow_inside_a_cycle_bends_by_24_pixels() -> None:
    root = parse(svg.graph_svg([wp("A", ["B"], "a"), wp("B", ["A"], "a")], []))
    for path in (p for p in root.iter(f"{NS}path") if p.get("data-from")):
        sx, _, c1x, *_rest = (int(n) for n in re.findall(r"-?\d+", path.get("d") or ""))
        assert c1x - sx == 24


def test_a_wp_is_pulled_to_the_average_place_of_its_dependencies() -> None:
    order = ["P0", "P1", "P2", "P3", "Q1", "Q2"]
    deps = {"Q1": ["P3"], "Q2": ["P1", "P2"]}  # Q2 averages 1.5, Q1 sits at 3
    layout = svg.layered_layout(order, deps, {})
    assert layout.layers[1] == ["Q2", "Q1"]


def test_a_canceled_wp_brought_back_counts_again() -> None:
    moves = [(T0, "WP01", "canceled"), (T0 + S, "WP01", "planned")]
    points = flow.flow_series(moves, ["WP01"])
    assert [sum(p["counts"].values()) for p in points] == [0, 1]


def test_the_default_chart_keeps_at_most_300_points() -> None:
    moves = [(T0 + i * S, "WP01", "claimed" if i % 2 else "planned") for i in range(301)]
    assert len(flow.flow_series(moves, ["WP01"])) <= 300
    assert len(flow.flow_series(moves[:300], ["WP01"])) == 300


def test_a_live_chart_keeps_at_most_300_points_too() -> None:
    live = flow.Flow(["WP01"])
    live.add([(T0 + i * S, "WP01", "claimed" if i % 2 else "planned") for i in range(301)])
    assert len(live.series()) <= 300


def test_exactly_as_many_points_as_allowed_are_all_kept_however_uneven() -> None:
    moves = [(T0 + i * S, "WP01", "claimed" if i % 2 else "planned") for i in range(9)]
    moves.append((T0 + 1000 * S, "WP01", "done"))
    assert len(flow.flow_series(moves, ["WP01"], max_points=10)) == 10


def test_the_time_of_the_picture_extends_the_last_state_only_when_later() -> None:
    moves = [
        (T0, "WP01", "claimed"),
        (T0 + 10 * S, "WP02", "claimed"),
        (T0 + 20 * S, "WP01", "done"),
    ]
    points = flow.flow_series(moves, ["WP01", "WP02"])
    plain = flow.flow_svg(points)
    for until in (T0 + 20 * S, T0 + 15 * S, T0 + 5 * S, None):
        assert flow.flow_svg(points, until_us=until) == plain
    later = parse(flow.flow_svg(points, until_us=T0 + 40 * S))
    legend = [t.text for t in later.iter(f"{NS}text") if t.get("class") == "legend"]
    assert "Done 1" in legend and "In progress 1" in legend
    done = polygons(later)["band-done"]
    upper = done[: len(done) // 2]
    assert upper[-1][0] == 720 - RIGHT and upper[-1][1] == upper[-2][1] < TOP + 220


def test_a_point_naming_only_some_bands_counts_the_others_as_zero() -> None:
    points = [{"at_us": T0, "counts": {"Done": 1}}, {"at_us": T0 + S, "counts": {"Done": 2}}]
    root = parse(flow.flow_svg(points))
    legend = [t.text for t in root.iter(f"{NS}text") if t.get("class") == "legend"]
    assert legend == ["Blocked 0", "Planned 0", "In progress 0", "Review 0", "Approved 0", "Done 2"]
    assert (root.get("aria-label") or "").endswith(
        "Done 2, Approved 0, Review 0, In progress 0, Planned 0, Blocked 0"
    )
    titles = [t.text for t in root.iter(f"{NS}title")]
    assert titles[:2] == ["Done: 2 now", "Approved: 0 now"]
    for name, points_of in polygons(root).items():  # every band above Done is empty
        if name != "band-done":
            half = len(points_of) // 2
            assert points_of[:half] == list(reversed(points_of[half:])), name


def test_the_flow_chart_holds_no_stray_text_and_names_each_swatch_by_band() -> None:
    points = flow.flow_series([(T0, "WP01", "claimed")], ["WP01"])
    root = parse(flow.flow_svg(points))
    no_stray_text(root)
    swatches = [r.get("class") for r in root.iter(f"{NS}rect")]
    assert swatches == [
        "band band-blocked",
        "band band-planned",
        "band band-in-progress",
        "band band-review",
        "band band-approved",
        "band band-done",
    ]


def test_a_single_moment_names_its_one_time_at_the_right() -> None:
    root = parse(flow.flow_svg(flow.flow_series([(T0, "WP01", "done")], ["WP01"])))
    ticks = [t for t in root.iter(f"{NS}text") if t.get("class") == "tick"]
    assert [t.text for t in ticks] == ["0", "1", "00:00:00 UTC"]
    assert ticks[-1].get("x") == f"{720 - RIGHT:.1f}" and ticks[-1].get("text-anchor") == "end"


def test_the_empty_chart_places_its_text_on_whole_pixels() -> None:
    text = flow.flow_svg([], width=501, height=201)
    assert '<text x="250" y="100" text-anchor="middle" class="empty">' in text


@pytest.mark.parametrize(
    ("order", "deps"),
    [
        # the last column's sweep back up reorders the first column
        (["N3", "N1", "N4", "N0", "N2"], {"N0": ["N4", "N3"], "N2": ["N1"]}),
        # and the middle column of three
        (
            ["N3", "N6", "N4", "N0", "N5", "N1", "N2", "N7"],
            {
                "N6": ["N3"],
                "N4": ["N3"],
                "N0": ["N4"],
                "N5": ["N3"],
                "N1": ["N5", "N6"],
                "N2": ["N3"],
                "N7": ["N6", "N0"],
            },
        ),
    ],
    ids=["two-columns", "three-columns"],
)
def test_the_sweeps_back_up_remove_crossings_every_column_needs(
    order: list[str], deps: dict[str, list[str]]
) -> None:
    """Graphs whose arrows cross unless every column but the last is reordered by its
    dependents: drawn without a single crossing."""
    edges = [(d, node) for node, ds in deps.items() for d in ds]
    assert crossings(svg.layered_layout(order, deps, {}), edges) == 0
