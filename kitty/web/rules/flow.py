"""The cumulative flow chart (and the cycle times) kitty draws as SVG, for the web board
and the static HTML export. Pure, like kitty.web.rules.svg (the dependency graph), which
re-exports these names; `esc` is shared by both pictures.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from kitty.core.clock import format_at

#: The board's columns, bottom band first in the flow chart (done at the bottom: a burn-up).
FLOW_BANDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Done", ("done",)),
    ("Approved", ("approved",)),
    ("Review", ("for_review", "in_review")),
    ("In progress", ("claimed", "in_progress")),
    ("Planned", ("planned",)),
    ("Blocked", ("blocked",)),
)
BAND_OF = {lane: name for name, lanes in FLOW_BANDS for lane in lanes}


def esc(text: Any) -> str:
    return escape(str(text), quote=True)


def flow_series(
    transitions: Sequence[tuple[int, str, str]], ids: Sequence[str], max_points: int = 300
) -> list[dict[str, Any]]:
    """WPs per board column over time, from `(at_us, wp_id, to_lane)` in log order.

    One point per transition, thinned to at most `max_points` (the last state in
    each time slice wins, and the final state is always kept). WPs in `ids` that
    have no transition yet count as planned; canceled WPs leave the chart.
    """
    flow = Flow(ids)
    flow.add(transitions)
    return flow.series(max_points)


#: Points a Flow keeps (then halved): far more than `series` draws.
MAX_KEPT = 20_000


class Flow:
    """`flow_series`, kept: a live board adds each new transition once."""

    def __init__(self, ids: Sequence[str]) -> None:
        self.lane_of: dict[str, str] = dict.fromkeys(ids, "planned")
        self.counts = dict.fromkeys((name for name, _ in FLOW_BANDS), 0)
        self.counts["Planned"] = len(self.lane_of)
        self.points: list[dict[str, Any]] = []

    def add(self, transitions: Sequence[tuple[int, str, str]]) -> None:
        """Transitions in log order, each no older than those added before."""
        lane_of, counts, points = self.lane_of, self.counts, self.points
        for at_us, wp_id, to_lane in transitions:
            old = lane_of.get(wp_id)
            if old is not None and old in BAND_OF:
                counts[BAND_OF[old]] -= 1
            lane_of[wp_id] = to_lane
            if to_lane in BAND_OF:
                counts[BAND_OF[to_lane]] += 1
            point = {"at_us": at_us, "counts": dict(counts)}
            if points and points[-1]["at_us"] == at_us:
                points[-1] = point
            else:
                points.append(point)
                if len(points) > MAX_KEPT:
                    # A huge log: every other point goes (the first and the newest stay),
                    # so memory is bounded; the chart draws at most a few hundred anyway.
                    points[:] = [points[0], *points[2:-1:2], points[-1]]

    def series(self, max_points: int = 300) -> list[dict[str, Any]]:
        points = self.points
        if len(points) <= max_points:
            return list(points)
        start, end = points[0]["at_us"], points[-1]["at_us"]
        span = max(1, end - start)
        thinned: dict[int, dict[str, Any]] = {}
        for point in points:
            thinned[(point["at_us"] - start) * (max_points - 1) // span] = point
        return [thinned[k] for k in sorted(thinned)]


def cycle_times(
    transitions: Sequence[tuple[int, str, str]],
) -> dict[str, dict[str, int | None]]:
    """Per WP: when work started (first claim), when it was first approved or done,
    and the cycle time between them in seconds (None while unfinished)."""
    started: dict[str, int] = {}
    finished: dict[str, int] = {}
    for at_us, wp_id, to_lane in transitions:
        if to_lane in ("claimed", "in_progress"):
            started.setdefault(wp_id, at_us)
        elif to_lane in ("approved", "done") and wp_id in started:
            finished.setdefault(wp_id, at_us)
    result: dict[str, dict[str, int | None]] = {}
    for wp_id, start in started.items():
        end = finished.get(wp_id)
        result[wp_id] = {
            "started_us": start,
            "finished_us": end,
            "seconds": None if end is None else max(0, (end - start) // 1_000_000),
        }
    return result


def _fmt_time(at_us: int, span_us: int) -> str:
    seconds = at_us / 1_000_000
    fmt = "%H:%M:%S" if span_us < 3_600_000_000 else "%m-%d %H:%M"
    return time.strftime(fmt, time.gmtime(seconds))


@dataclass(frozen=True)
class _Frame:
    """The flow chart's plot area: time left to right, WPs bottom to top."""

    left: int
    top: int
    plot_w: int
    plot_h: int
    start: int
    end: int
    total: int

    @property
    def span(self) -> int:
        return max(1, self.end - self.start)

    def px(self, at_us: int) -> float:
        if self.end > self.start:
            return self.left + (at_us - self.start) * self.plot_w / self.span
        return self.left + self.plot_w

    def py(self, value: float) -> float:
        return self.top + self.plot_h - value * self.plot_h / self.total


def flow_svg(
    points: Sequence[Mapping[str, Any]],
    until_us: int | None = None,
    width: int = 720,
    height: int = 260,
) -> str:
    """The cumulative flow diagram as stacked areas, Done at the bottom (the burn-up).

    The last state is drawn up to `until_us` (the time of the picture) when later.
    """
    left, right, top, bottom = 40, 130, 12, 28
    names = [name for name, _ in FLOW_BANDS]
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="kitty-flow" role="img" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
    )
    if not points:
        return (
            head + 'aria-label="Cumulative flow: no transitions yet">'
            f'<text x="{width // 2}" y="{height // 2}" text-anchor="middle" class="empty">'
            "No transitions yet</text></svg>"
        )
    if until_us is not None and until_us > int(points[-1]["at_us"]):
        points = [*points, {"at_us": until_us, "counts": points[-1]["counts"]}]
    total: int = max(max(int(sum(p["counts"].values())) for p in points), 1)
    frame = _Frame(
        left,
        top,
        width - left - right,
        height - top - bottom,
        int(points[0]["at_us"]),
        int(points[-1]["at_us"]),
        total,
    )
    final = points[-1]["counts"]
    desc = ", ".join(f"{n} {final.get(n, 0)}" for n in names)
    out = [head + f'aria-label="Cumulative flow, now: {esc(desc)}">']
    out += _bands(frame, points, names)
    out += _axes(frame, height)
    # Legend with the current count per band (text, not colour alone).
    y = top + 4
    for name in reversed(names):
        cls = "band-" + name.lower().replace(" ", "-")
        out.append(
            f'<rect class="band {cls}" x="{width - right + 12}" y="{y}" width="12" height="12"/>'
            f'<text class="legend" x="{width - right + 30}" y="{y + 10}">'
            f"{esc(name)} {final.get(name, 0)}</text>"
        )
        y += 18
    out.append("</svg>")
    return "".join(out)


def _bands(frame: _Frame, points: Sequence[Mapping[str, Any]], names: list[str]) -> list[str]:
    """One stacked area per band. Steps: a count holds until the next transition."""
    xs: list[float] = []
    stacks: list[list[float]] = []
    for i, point in enumerate(points):
        acc = 0.0
        level = []
        for name in names:
            acc += point["counts"].get(name, 0)
            level.append(acc)
        if i:
            xs.append(frame.px(int(point["at_us"])))
            stacks.append(stacks[-1])
        xs.append(frame.px(int(point["at_us"])))
        stacks.append(level)
    if frame.end == frame.start:
        xs = [frame.left, frame.left + frame.plot_w]
        stacks = [stacks[-1], stacks[-1]]
    final = points[-1]["counts"]
    out = []
    for band, name in enumerate(names):
        upper = [f"{x:.1f},{frame.py(s[band]):.1f}" for x, s in zip(xs, stacks, strict=True)]
        lower = [
            f"{x:.1f},{frame.py(s[band - 1] if band else 0):.1f}"
            for x, s in zip(reversed(xs), reversed(stacks), strict=True)
        ]
        cls = "band-" + name.lower().replace(" ", "-")
        out.append(
            f'<polygon class="band {cls}" points="{" ".join(upper + lower)}">'
            f"<title>{esc(name)}: {final.get(name, 0)} now</title></polygon>"
        )
    return out


def _axes(frame: _Frame, height: int) -> list[str]:
    """The axes, the count ticks (0, half, all) and the first and last time."""
    left, top, plot_w, plot_h = frame.left, frame.top, frame.plot_w, frame.plot_h
    out = [
        f'<line class="axis" x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" '
        f'y2="{top + plot_h}"/><line class="axis" x1="{left}" y1="{top}" x2="{left}" '
        f'y2="{top + plot_h}"/>'
    ]
    for value in sorted({0, frame.total // 2, frame.total}):
        out.append(
            f'<text class="tick" x="{left - 6}" y="{frame.py(value) + 4:.1f}" '
            f'text-anchor="end">{value}</text>'
        )
    # A single moment fills the plot: its one time stands at the right, as "now" does.
    times = ((frame.start, "start"), (frame.end, "end")) if frame.end > frame.start else ()
    for at_us, anchor in times or ((frame.end, "end"),):
        out.append(
            f'<text class="tick" x="{frame.px(at_us):.1f}" y="{height - 8}" '
            f'text-anchor="{anchor}" data-at="{format_at(at_us)}">'
            f"{_fmt_time(at_us, frame.span)} UTC</text>"
        )
    return out
