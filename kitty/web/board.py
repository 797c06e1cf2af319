"""The web board's data: everything the page shows about one mission, as one JSON object.

Built from the same reads as `kitty status` (the log, the WP files, lanes.json,
review-cycle files, run logs) plus the pictures drawn by `kitty.web.rules.svg`.
Reads only: nothing here writes a file.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from importlib import resources
from pathlib import Path
from typing import Any

from kitty import SCHEMA
from kitty.adapters import layout
from kitty.core.clock import format_at
from kitty.core.log.events import Annotation, Transition
from kitty.core.printable import utf8
from kitty.core.schedule import lane_map
from kitty.errors import KittyError
from kitty.mission.workspace import Mission
from kitty.web.rules import svg
from kitty.web.timeline import Moves, NotInOrder, Timeline, events_in_order, timeline_entry
from kitty.workflow.board import status_view
from kitty.workflow.rules.render import COLUMNS


def ordered_events(mission: Mission) -> list[Transition | Annotation]:
    """Transitions and annotations in replay order: each event id's first line (of any
    kind, as replay keeps it), sorted by time (`core.log.read.replay_order`)."""
    from kitty.core.log.read import replay_order

    return replay_order(mission.log.events)[0]


def run_logs(project: layout.Project) -> dict[str, list[str]]:
    """WP id -> its agent run logs (`.kittify/runs/<run>/<WP>-<role>-<cycle>.log`)."""
    found: dict[str, list[tuple[float, str]]] = {}
    runs = project.kittify / "runs"
    try:
        run_dirs = list(os.scandir(runs))
    except OSError:
        return {}
    for run_dir in run_dirs:
        if not run_dir.is_dir():
            continue
        try:
            entries = list(os.scandir(run_dir.path))
        except OSError:
            continue
        for entry in entries:
            if entry.name.endswith(".log") and "-" in entry.name:
                wp_id = entry.name.split("-", 1)[0]
                rel = project.rel(Path(entry.path))
                found.setdefault(wp_id, []).append((entry.stat().st_mtime, rel))
    return {wp: [p for _, p in sorted(items)] for wp, items in found.items()}


def _reviews(mission: Mission, wp_id: str) -> list[dict[str, Any]]:
    state = mission.board.wps.get(wp_id)
    if state is None or not state.reviews:
        return []
    from kitty.workflow.reviews import show

    try:
        return list(show(mission, wp_id)["reviews"])
    except (KittyError, OSError, ValueError):
        return []


def board_model(mission: Mission, now_us: int | None = None) -> dict[str, Any]:
    """The whole page's data for `mission` (see the README's web board section)."""
    return _Builder(mission).model(now_us)


class _Builder:
    """What board_model computes, in parts a live board can redo for a few WPs."""

    def __init__(self, mission: Mission, stateless_graph: bool = False) -> None:
        self.mission = mission
        self.stateless_graph = stateless_graph
        self.ids = mission.all_ids()
        self.wp_lane = (
            lane_map(mission.lanes_doc, mission.wps, self.ids) if mission.lanes_doc else {}
        )
        self.lane_ids = {
            str(lane.get("lane_id")) for lane in (mission.lanes_doc or {}).get("lanes", [])
        }
        self.dependents: dict[str, list[str]] = {i: [] for i in self.ids}
        for wp_id in self.ids:
            wp = mission.wps.get(wp_id)
            for dep in wp.dependencies if wp else ():
                if dep in self.dependents:
                    self.dependents[dep].append(wp_id)
        self.logs = run_logs(mission.project)
        self.worktrees: dict[str, tuple[str, bool, str]] = {}
        self._history(mission)

    def _history(self, mission: Mission) -> None:
        """The timelines, cycle times and flow of the whole log: read a block at a time
        when it is in time order (memory bounded by the board), else replayed whole."""
        for streamed in (True, False):
            self.timeline, self.moves = Timeline(self.ids), Moves()
            self.flow_counts = svg.Flow(self.ids)
            if not streamed or "log" in mission.__dict__:
                self.add_events(ordered_events(mission))
                return
            try:
                for events in events_in_order(mission.events_path):
                    self.add_events(events)
                return
            except NotInOrder:
                continue

    def add_events(self, events: list[Transition | Annotation]) -> None:
        """Events in replay order, each newer than every event added before."""
        moved = []
        for ev in events:
            if isinstance(ev, Transition):
                moved.append((ev.at_us, ev.wp_id, ev.to_lane))
                self.moves.add(ev.at_us, ev.wp_id, ev.to_lane)
            entry = timeline_entry(ev)
            if entry is not None:
                self.timeline.add(ev.wp_id, entry)
        self.flow_counts.add(moved)

    def worktree(self, lane_id: str) -> tuple[str, bool, str]:
        from kitty.mission.worktrees import lane_branch, lane_path

        found = self.worktrees.get(lane_id)
        if found is None:
            path = lane_path(self.mission, lane_id)
            found = (
                self.mission.project.rel(path),
                path.is_dir(),
                lane_branch(self.mission, lane_id),
            )
            self.worktrees[lane_id] = found
        return found

    def decorate(self, wp: dict[str, Any], cycles: dict[str, dict[str, int | None]]) -> None:
        """Add to a status_view WP what only the web board shows."""
        mission = self.mission
        wp_id = wp["id"]
        lane_id = self.wp_lane.get(wp_id)
        wp["execution_lane"] = lane_id
        if lane_id in self.lane_ids:
            wp["worktree"], wp["worktree_exists"], wp["branch"] = self.worktree(lane_id)
        else:
            wp["worktree"] = "." if wp_id in mission.wps else None
            wp["worktree_exists"] = wp_id in mission.wps
            wp["branch"] = None
        wp["dependents"] = self.dependents.get(wp_id, [])
        wp["timeline"] = self.timeline.entries(wp_id)
        wp["reviews"] = _reviews(mission, wp_id)
        wp["run_logs"] = self.logs.get(wp_id, [])
        cycle = cycles.get(wp_id)
        wp["cycle_time_s"] = cycle["seconds"] if cycle else None
        wp["started_at"] = format_at(cycle["started_us"] or 0) if cycle else None
        finished = cycle["finished_us"] if cycle else None
        wp["finished_at"] = format_at(finished) if finished else None
        state = mission.board.wps.get(wp_id)
        claim = state.runtime_claim if state else None
        wp["claim"] = dict(claim) if claim else None
        wp["path"] = mission.wps[wp_id].path if wp_id in mission.wps else None
        wp["owned_files"] = list(mission.wps[wp_id].owned_files) if wp_id in mission.wps else []

    def model(self, now_us: int | None) -> dict[str, Any]:
        mission = self.mission
        view = status_view(mission, now_us)
        cycles = svg.cycle_times(self.moves)
        for wp in view["work_packages"]:
            self.decorate(wp, cycles)
        graph = svg.graph_svg(
            [
                {
                    "id": wp["id"],
                    "title": wp["title"],
                    "dependencies": wp["dependencies"],
                    "execution_lane": wp["execution_lane"],
                }
                | ({} if self.stateless_graph else {"lane": wp["lane"]})
                for wp in view["work_packages"]
            ],
            view["critical_path"] if len(view["critical_path"]) > 1 else [],
        )
        return {
            "schema": SCHEMA,
            "mission": view["mission"],
            "missions": layout.list_missions(mission.project),
            "columns": [{"title": title, "lanes": list(lanes)} for title, lanes in COLUMNS]
            + [
                {"title": "Blocked", "lanes": ["blocked"]},
                {"title": "Canceled", "lanes": ["canceled"]},
            ],
            "work_packages": view["work_packages"],
            "summary": view["summary"],
            "progress": view["progress"],
            "critical_path": view["critical_path"],
            "warnings": view["warnings"],
            "event_count": mission.board.event_count,
            "generated_at": format_at(now_us) if now_us else None,
            "graph_svg": graph,
            "flow_svg": self.flow(now_us),
        }

    def flow(self, now_us: int | None) -> str:
        return svg.flow_svg(self.flow_counts.series(), until_us=now_us)


class LiveModel:
    """board_model of one mission, kept current by folding the lines appended to its
    log, with the snapshot cache's rule (`snapshots.fold_tail`): whole lines, no
    repeated event id, every event newer than the board. A WP changed by the new
    events (and the WPs that wait for it) is rebuilt; every other WP keeps its view.
    `grow` returns what changed, so a live page is sent a diff, not the board.
    Anything else (a WP file, lanes.json, a rewritten log) needs a new LiveModel."""

    def __init__(self, mission: Mission, now_us: int) -> None:
        from kitty.adapters.eventlog import open_log
        from kitty.core.log.read import parse_log

        fd = open_log(mission.events_path)
        data = b""
        if fd is not None:
            with os.fdopen(fd, "rb") as handle:
                data = handle.read()
        parsed = parse_log(data)
        mission.__dict__["log"] = parsed  # the board is then the replay of these bytes
        self.mission = mission
        self.offset: int | None = len(data) if not parsed.unterminated else None
        self.lines = data.count(b"\n")
        self.ids = {ev.event_id for ev in parsed.events if ev.event_id}
        # The graph's nodes carry no board state: a move does not redraw it (the page
        # paints each node's state from its WP).
        self.builder = _Builder(mission, stateless_graph=True)
        self.model = self.builder.model(now_us)
        self.index = {wp["id"]: i for i, wp in enumerate(self.model["work_packages"])}

    def grow(self, now_us: int) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
        """Fold what was appended to the log since; the new model's changed top-level
        values and changed WPs, or None when only a rebuild can tell."""
        from kitty.core.log.snapshot import wp_view
        from kitty.core.log.stream import fold_tail
        from kitty.teams.liveness import mark_stalled
        from kitty.workflow.board import global_fields

        mission = self.mission
        tail = self.appended()
        if tail is None or self.offset is None:
            return None
        if not tail:
            return {}, []
        board = mission.board
        grown = fold_tail(board, self.ids, tail, self.lines + 1)
        if grown is None:
            return None
        fresh, warnings = grown
        self.offset += len(tail)
        self.lines += tail.count(b"\n")
        mission.log_state.warnings.extend(warnings)
        self.builder.add_events(fresh)
        touched = {ev.wp_id for ev in fresh}
        for wp_id in list(touched):
            touched.update(self.builder.dependents.get(wp_id, ()))  # `waits_for` changes
        old = self.model
        wps = list(old["work_packages"])
        changed: list[dict[str, Any]] = []
        cycles = svg.cycle_times(self.builder.moves)
        max_cycles = mission.config.max_cycles
        fresh_views: dict[str, dict[str, Any]] = {}
        for wp_id in touched:
            at = self.index.get(wp_id)
            if at is None:
                return None  # an event for a WP without a file: let a rebuild show it
            view = wp_view(wp_id, mission.wps.get(wp_id), board.wps.get(wp_id), board, max_cycles)
            view["critical"] = wps[at]["critical"]
            self.builder.decorate(view, cycles)
            fresh_views[wp_id] = view
        views = [fresh_views.get(wp["id"], wp) for wp in wps]
        values: list[dict[str, Any]] = [{"id": wp["id"]} for wp in views]
        global_fields(mission, values, now_us)
        mark_stalled(values, board, now_us, int(mission.config.stall_minutes * 60 * 1_000_000))
        for at, (wp, extra) in enumerate(zip(views, values, strict=True)):
            # extra: the global fields and Spec Kitty's row keys, as status_view sets them
            if wp["id"] in fresh_views or any(wp.get(k) != v for k, v in extra.items()):
                wp = {**wp, **extra}
            if wp is not wps[at] and wp != wps[at]:
                wps[at] = wp
                changed.append(wp)
        top = {k: v for k, v in self.top(now_us).items() if v != old.get(k)}
        self.model = {**old, **top, "work_packages": wps}
        return top, changed

    def appended(self) -> bytes | None:
        """The bytes appended to the log since the last fold; None when the log was cut
        (or is gone, or ended in a partial line): only a rebuild can tell."""
        from kitty.adapters.eventlog import open_log

        if self.offset is None:
            return None
        fd = open_log(self.mission.events_path)
        if fd is None:
            return None
        with os.fdopen(fd, "rb") as handle:
            if os.fstat(handle.fileno()).st_size < self.offset:
                return None
            handle.seek(self.offset)
            return handle.read()

    def top(self, now_us: int) -> dict[str, Any]:
        """The model's top-level values a fold can change."""
        from kitty.core.log.snapshot import progress, summary

        board, ids = self.mission.board, self.builder.ids
        return {
            "summary": summary(board, ids),
            "progress": progress(board, ids),
            "warnings": self.mission.warnings(),
            "event_count": board.event_count,
            "generated_at": format_at(now_us),
            "flow_svg": self.builder.flow(now_us),
        }


# -- the page ----------------------------------------------------------------------------

_PLACEHOLDER = re.compile(r"__KITTY_(CSP|TITLE|DATA)__")


def _template() -> str:
    return resources.files("kitty").joinpath("data/board.html").read_text(encoding="utf-8")


def _script_hash(page: str) -> str:
    """The CSP hash of the page's one executable inline script."""
    start = page.index("<script>\n") + len("<script>")
    end = page.index("</script>", start)
    digest = hashlib.sha256(utf8(page[start:end])).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def content_security_policy(live: bool) -> str:
    """Only kitty's own script runs; the page loads nothing and (offline) calls nothing."""
    connect = "'self'" if live else "'none'"
    return (
        f"default-src 'none'; script-src {_script_hash(_template())}; "
        f"style-src 'unsafe-inline'; img-src data:; connect-src {connect}; "
        "base-uri 'none'; form-action 'none'"
    )


def page_json(model: dict[str, Any]) -> str:
    """JSON safe inside a <script> element and an SSE `data:` line (one line, no `<`)."""
    text = json.dumps(model, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def render_page(model: dict[str, Any], live: bool) -> str:
    """One self-contained HTML document: inline CSS, JS, SVG and data; nothing fetched."""
    values = {
        "CSP": content_security_policy(live),
        "TITLE": svg.esc(f"{model['mission']['title']} · kitty board"),
        "DATA": page_json(dict(model, live=live)),
    }
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], _template())
