"""Human views rendered from the JSON data: a pure function of data, width and colour."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any

COLUMNS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Planned", ("planned",)),
    ("In progress", ("claimed", "in_progress")),
    ("Review", ("for_review", "in_review")),
    ("Approved", ("approved",)),
    ("Done", ("done",)),
)
CRITICAL_MARK = "◆"  # a WP on the critical path (the heaviest chain of dependencies)
_COLOURS = {"Planned": "37", "In progress": "33", "Review": "35", "Approved": "36", "Done": "32"}


def _lane(wp: dict[str, Any]) -> str:
    """Unfinalized WPs (no lane yet) are shown with the planned ones."""
    return str(wp.get("lane") or "planned")


def paint(text: str, code: str, colour: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if colour and code else text


def clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


def bar(fraction: float, width: int) -> str:
    filled = round(max(0.0, min(1.0, fraction)) * width)
    return "█" * filled + "░" * (width - filled)


def card(wp: dict[str, Any], width: int) -> list[str]:
    """Two or three lines: id + title, then agent / cycle / waits."""
    mark = CRITICAL_MARK if wp.get("critical") else ""
    head = clip(f"{mark}{wp['id']} {wp['title']}", width)
    details = []
    lane = wp.get("lane")
    if lane is None:
        details.append("unfinalized")
    if wp.get("stalled"):
        details.append("STALLED")
    if wp.get("conflicts"):
        details.append("CONFLICT")
    if wp.get("review_cycles"):
        details.append(f"cycle {wp['review_cycles']}/{wp.get('max_cycles', 3)}")
    if wp.get("arbiter"):
        details.append("arbiter")
    if wp.get("self_review"):
        details.append("self-rev!")
    if lane in ("claimed", "in_review"):
        details.append("claimed" if lane == "claimed" else "reviewing")
    if wp.get("agent") and lane not in ("planned", "done", None):
        details.append(f"@{wp['agent']}")
    lease = wp.get("lease")
    if lease and lease.get("machine"):
        details.append(
            f"on {lease['machine']}" + (" lease expired" if lease.get("expired") else "")
        )
    lines = [head]
    if details:
        lines.append(clip(" " + " ".join(details), width))
    waits = wp.get("waits_for") or []
    if waits:
        full = " waits: " + ",".join(waits)
        short = f" waits: {waits[0]} +{len(waits) - 1}"
        lines.append(clip(full if len(full) <= width or len(waits) == 1 else short, width))
    return lines


def board_text(view: dict[str, Any], width: int = 80, colour: bool = False) -> str:
    mission = view["mission"]
    wps: Sequence[dict[str, Any]] = view["work_packages"]
    progress = view["progress"]
    out = [
        paint(clip(f"{mission['slug']} · {mission['title']} · {len(wps)} WPs", width), "1", colour)
    ]
    bar_width = max(10, min(30, width - 50))
    out.append(
        f"Progress {bar(progress['done_percentage'] / 100, bar_width)} "
        f"{progress['done_percentage']:.0f}% done · {progress['weighted_percentage']:.0f}% weighted"
    )
    col = max(10, (width - (len(COLUMNS) - 1)) // len(COLUMNS))
    columns: list[list[str]] = []
    for _title, lane_set in COLUMNS:
        cards = [wp for wp in wps if _lane(wp) in lane_set]
        lines: list[str] = []
        for wp in cards:
            lines.extend(card(wp, col))
        columns.append(lines)
    header = " ".join(
        paint(
            clip(f"{t} ({len([w for w in wps if _lane(w) in s])})", col).ljust(col),
            _COLOURS[t],
            colour,
        )
        for t, s in COLUMNS
    )
    out.append(header.rstrip())
    out.append(" ".join("─" * col for _ in COLUMNS))
    depth = max((len(c) for c in columns), default=0)
    for row in range(depth):
        cells = [(c[row] if row < len(c) else "").ljust(col) for c in columns]
        out.append(" ".join(cells).rstrip())
    if depth == 0:
        out.append("(no work packages yet: kitty wp add --title ...)")
    parked = []
    if len(view.get("critical_path") or []) > 1:
        legend = f"{CRITICAL_MARK} critical path: " + " → ".join(view["critical_path"])
        out.extend(textwrap.wrap(legend, width, subsequent_indent="  "))
    for lane, label in (("blocked", "Blocked"), ("canceled", "Canceled")):
        items = [w for w in wps if w.get("lane") == lane]
        if items:
            parts = [
                w["id"] + (f" ({clip(w['reason'], 40)})" if w.get("reason") else "") for w in items
            ]
            parked.append(f"{label}: " + ", ".join(parts))
    for wp in wps:
        if wp.get("arbiter"):
            arb = wp["arbiter"]
            parked.append(f"Arbiter override {wp['id']} → {arb.get('to_lane')}: {arb.get('note')}")
        if wp.get("self_review"):
            sr = wp["self_review"]
            parked.append(
                f"Self-review fallback {wp['id']}: {sr.get('approved_by')} approved "
                f"after {sr.get('intended_reviewer')} failed"
            )
    for wp in wps:
        lease = wp.get("lease")
        if lease:
            parked.append(
                f"Lease {wp['id']}: {lease.get('holder')} on {lease.get('machine')} "
                f"until {lease.get('expires_at')}" + (" (expired)" if lease.get("expired") else "")
            )
    for conflict in view.get("conflicts", []):
        parked.append(f"Conflict {conflict['wp_id']}: {conflict['message']}")
        parked.append(f"  resolve: {conflict['commands'][0]}")
    for line in parked:
        for piece in textwrap.wrap(line, width, subsequent_indent="  "):
            out.append(paint(piece, "31", colour))
    return "\n".join(out) + "\n"
