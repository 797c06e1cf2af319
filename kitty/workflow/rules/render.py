"""Human views rendered from the JSON data: a pure function of data, width and colour."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Any

from kitty.core.printable import TABLE, needs_escaping, printable

COLUMNS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Planned", ("planned",)),
    ("In progress", ("claimed", "in_progress")),
    ("Review", ("for_review", "in_review")),
    ("Approved", ("approved",)),
    ("Done", ("done",)),
)
#: Cards shown per board column before the rest collapse into `… N more` (see --all).
MAX_CARDS = 10
CRITICAL_MARK = "◆"  # a WP on the critical path (the heaviest chain of dependencies)
_COLOURS = {"Planned": "37", "In progress": "33", "Review": "35", "Approved": "36", "Done": "32"}


def _lane(wp: dict[str, Any]) -> str:
    """Unfinalized WPs (no lane yet) are shown with the planned ones."""
    return str(wp.get("lane") or "planned")


def paint(text: str, code: str, colour: bool) -> str:
    """`text` in colour `code`. Painted text has its control characters escaped first, so
    the only escape sequences in a painted line are kitty's own (see core.printable)."""
    return f"\x1b[{code}m{printable(text)}\x1b[0m" if colour and code else text


def char_width(char: str) -> int:
    """Columns a character takes on a terminal: 0 for combining marks and zero-width
    characters, 2 for East Asian wide/fullwidth ones (CJK, most emoji), else 1. A control
    character takes the columns of the escape it is shown as (`\\x1b`: 4, see printable)."""
    escape = TABLE.get(ord(char))
    if escape is not None:
        return len(escape)
    if char < "\u0300":  # ASCII and Latin-1 (tab and newline: 1, as in ASCII text)
        return 1
    if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def width_of(text: str) -> int:
    """Display width of `text` in terminal columns."""
    if text.isascii() and not needs_escaping(text):
        return len(text)
    return sum(char_width(c) for c in text)


def clip(text: str, width: int) -> str:
    """`text` cut to `width` columns, with `…` when something was cut."""
    if width_of(text) <= width:
        return text
    out, used = [], 0
    for char in text:
        w = char_width(char)
        if used + w > width - 1:
            break
        out.append(char)
        used += w
    return "".join(out).rstrip() + "…" if width > 0 else ""


def pad(text: str, width: int) -> str:
    """`text` padded with spaces to `width` columns (ljust that counts wide characters)."""
    return text + " " * max(0, width - width_of(text))


def wrap(text: str, width: int, max_lines: int | None = None, indent: str = "") -> list[str]:
    """Word-wrap `text` to `width` display columns (continuation lines start with `indent`),
    in at most `max_lines` lines, the last clipped with `…` when text remains. Words wider
    than a line are broken; wide characters count twice."""
    lines: list[str] = []
    words = text.split()
    current = ""
    while words:
        prefix = indent if lines else ""
        room = width - width_of(prefix)
        word = words[0]
        candidate = f"{current} {word}" if current else word
        if width_of(candidate) <= room:
            current = candidate
            words.pop(0)
            continue
        if not current:  # a single word wider than the line: break it
            cut = clip(word, room + 1)[:-1] or word[:1]
            current, words[0] = cut, word[len(cut) :]
        if max_lines is not None and len(lines) + 1 == max_lines:
            rest = " ".join([current, *words])
            lines.append(prefix + clip(rest, room))
            return lines
        lines.append(prefix + current)
        current = ""
    if current or not lines:
        lines.append((indent if lines else "") + current)
    return lines


def pack(items: list[str], width: int, max_lines: int) -> list[str]:
    """Items (e.g. `has feedback`) side by side in lines of `width` columns, never split
    inside an item; an item wider than a line, or past `max_lines`, is clipped with `…`."""
    lines: list[str] = []
    for item in items:
        if lines and width_of(f"{lines[-1]} {item}") <= width:
            lines[-1] = f"{lines[-1]} {item}"
        elif len(lines) < max_lines:
            lines.append(clip(item, width))
        else:
            lines[-1] = clip(f"{lines[-1]} {item}", width)
    return lines


def bar(fraction: float, width: int) -> str:
    filled = round(max(0.0, min(1.0, fraction)) * width)
    return "█" * filled + "░" * (width - filled)


GATE_FLAGS = {"passed": "tests ok", "flaky": "tests flaky", "failed": "TESTS FAILED"}


def _flags(wp: dict[str, Any]) -> list[str]:
    """The marks a card and a list row both show first: unfinalized, stalled, conflict, cycle."""
    flags = []
    if wp.get("lane") is None:
        flags.append("unfinalized")
    if wp.get("stalled"):
        flags.append("STALLED")
    if wp.get("conflicts"):
        flags.append("CONFLICT")
    cycle = wp.get("cycle") if "cycle" in wp else _cycles(wp)
    if cycle:
        flags.append(f"cycle {cycle}")
    gate = wp.get("gate")
    if gate:  # the test gate's latest result (kitty verify, the sprint, the merge queue)
        flags.append(GATE_FLAGS.get(gate.get("result"), "tests ?"))
    return flags


def _cycles(wp: dict[str, Any]) -> str | None:
    """A view without `cycle` (older callers): its rejections of the cap."""
    return f"{wp['review_cycles']}/{wp.get('max_cycles', 3)}" if wp.get("review_cycles") else None


def card(wp: dict[str, Any], width: int) -> list[str]:
    """Id + title on up to two lines, then agent / cycle / waits."""
    mark = CRITICAL_MARK if wp.get("critical") else ""
    title = " ".join(str(wp["title"]).split())
    indent = " " * (width_of(f"{mark}{wp['id']} ") if width >= 24 else 1)
    head = wrap(f"{mark}{wp['id']} {title}", width, 2, indent)
    lane = wp.get("lane")
    details = [part for flag in _flags(wp) for part in flag.split(", ")]  # a narrow column
    if wp.get("review_status") == "has_feedback":
        details.append("has feedback")
    elif wp.get("review_status") == "acknowledged":
        details.append("feedback ack")
    if wp.get("arbiter"):
        details.append("arbiter")
    if wp.get("self_review"):
        details.append("self-rev!")
    if lane in ("claimed", "in_review"):
        details.append("claimed" if lane == "claimed" else "reviewing")
    if wp.get("holder") and lane not in ("planned", "done", None):
        details.append(f"@{wp['holder']}")
    lease = wp.get("lease")
    if lease and lease.get("machine"):
        details.append(
            f"on {lease['machine']}" + (" lease expired" if lease.get("expired") else "")
        )
    lines = list(head)
    lines += [" " + line for line in pack(details, width - 1, 3)]
    halt = wp.get("review_halt")
    if halt:  # a review panel stopped: the round and why, on lines of their own
        text = f"HALT r{wp.get('review_round')} {halt.get('reason')}"
        lines += [" " + line for line in wrap(text, width - 1, 2, " ")]
    elif wp.get("review_round") and lane not in ("done", None):
        lines.append(clip(f" panel round {wp['review_round']}", width))
    waits = wp.get("waits_for") or []
    if waits:
        full = " waits: " + ",".join(waits)
        short = f" waits: {waits[0]} +{len(waits) - 1}"
        lines.append(clip(full if len(full) <= width or len(waits) == 1 else short, width))
    return lines


def board_text(
    view: dict[str, Any], width: int = 80, colour: bool = False, max_cards: int | None = MAX_CARDS
) -> str:
    """The kanban board in `width` display columns; a column with more than `max_cards`
    cards shows the first ones and `… N more` (None: every card)."""
    mission = view["mission"]
    wps: Sequence[dict[str, Any]] = view["work_packages"]
    progress = view["progress"]
    out = [
        paint(clip(f"{mission['slug']} · {mission['title']} · {len(wps)} WPs", width), "1", colour)
    ]
    bar_width = max(10, min(30, width - 50))
    out.append(
        clip(
            f"Progress {bar(progress['done_percentage'] / 100, bar_width)} "
            f"{progress['done_percentage']:.0f}% done · "
            f"{progress['weighted_percentage']:.0f}% weighted",
            width,
        )
    )
    col = max(6, (width - (len(COLUMNS) - 1)) // len(COLUMNS))
    columns = [_column(wps, lane_set, col, max_cards) for _title, lane_set in COLUMNS]
    header = " ".join(
        paint(
            pad(clip(f"{t} ({len([w for w in wps if _lane(w) in s])})", col), col),
            _COLOURS[t],
            colour,
        )
        for t, s in COLUMNS
    )
    out.append(header.rstrip())
    out.append(" ".join("─" * col for _ in COLUMNS))
    depth = max((len(c) for c in columns), default=0)
    for row in range(depth):
        cells = [pad(c[row] if row < len(c) else "", col) for c in columns]
        out.append(printable(" ".join(cells).rstrip()))  # data, never painted
    if depth == 0:
        out.append("(no work packages yet: kitty wp add --title ...)")
    if len(view.get("critical_path") or []) > 1:
        legend = f"{CRITICAL_MARK} critical path: " + " → ".join(view["critical_path"])
        out.extend(printable(line) for line in wrap(legend, width, indent="  "))
    for line in _parked(view, wps):
        lead = line[: len(line) - len(line.lstrip(" "))]  # a `resolve:` line keeps its indent
        out.extend(
            paint(lead + piece, "31", colour)
            for piece in wrap(line, width - len(lead), indent="  ")
        )
    return "\n".join(out) + "\n"


def _column(
    wps: Sequence[dict[str, Any]], lane_set: tuple[str, ...], col: int, max_cards: int | None
) -> list[str]:
    """One board column's lines: its cards, the ones past `max_cards` as `… N more`."""
    cards = [wp for wp in wps if _lane(wp) in lane_set]
    shown = cards if max_cards is None or len(cards) <= max_cards else cards[: max_cards - 1]
    lines: list[str] = []
    for wp in shown:
        lines.extend(card(wp, col))
    if len(shown) < len(cards):
        lines.append(clip(f"… {len(cards) - len(shown)} more", col))
    return lines


def _parked(view: dict[str, Any], wps: Sequence[dict[str, Any]]) -> list[str]:
    """What the board shows under its columns, in red: blocked and canceled WPs, arbiter
    overrides and self-review fallbacks, leases, conflicts with their resolving command."""
    parked = []
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
    return parked


def list_text(view: dict[str, Any]) -> str:
    """`kitty status --list`: one line per WP with its full title, never clipped."""
    wps: Sequence[dict[str, Any]] = view["work_packages"]
    if not wps:
        return "(no work packages yet: kitty wp add --title ...)\n"
    id_width = max(width_of(CRITICAL_MARK + w["id"]) for w in wps)
    lane_width = max(len(_lane(w)) for w in wps)
    agents = [f"@{w['holder']}" if w.get("holder") else "-" for w in wps]
    agent_width = max(width_of(a) for a in agents)
    out = []
    for wp, agent in zip(wps, agents, strict=True):
        mark = CRITICAL_MARK if wp.get("critical") else ""
        extras = _flags(wp)
        if wp.get("waits_for"):
            extras.append("waits: " + ",".join(wp["waits_for"]))
        if wp.get("reason"):
            extras.append(str(wp["reason"]))
        tail = f"  [{'; '.join(extras)}]" if extras else ""
        out.append(
            f"{pad(mark + wp['id'], id_width)}  {_lane(wp).ljust(lane_width)}  "
            f"{pad(agent, agent_width)}  {' '.join(str(wp['title']).split())}{tail}"
        )
    return "\n".join(out) + "\n"


def next_text(d: dict[str, Any]) -> str:
    """`kitty next` for a person: the action, why, progress, conflicts, blockers, commands."""
    head = d["action"].upper() + (f" {d['wp_id']}" if d["wp_id"] else "")
    if d["cycle"]:
        head += f" (cycle {d['cycle']})"
    if d["claimed"]:
        head += " [claimed]"
    p = d["progress"]
    lines = [
        head,
        f"why: {d['reason']}",
        f"progress: {p['approved_or_done']}/{p['total']} approved or done, "
        f"{p['done_percentage']:.0f}% done, {p['weighted_percentage']:.0f}% weighted",
    ]
    gate = d.get("gate")
    if gate:
        where = " in the merge queue" if gate.get("where") == "merge queue" else ""
        lines.append(f"tests: {gate['result']} at {str(gate['commit'])[:10]}{where}")
    for c in d.get("conflicts", []):
        lines.append(f"conflict: {c['message']} (line {c['line']}, {c['at']})")
        lines += [f"  resolve: {cmd}" for cmd in c["commands"]]
    if d["blocked_by"]:
        lines.append("blocked by:")
        lines += [f"  - {b}" for b in d["blocked_by"]]
    if d["commands"]:
        lines.append("run:")
        lines += [f"  {c}" for c in d["commands"]]
    if d.get("choices"):
        lines.append("choose one (fill in each <...> first):")
        for number, choice in enumerate(d["choices"], 1):
            lines.append(f"  {number}. {choice['label']}")
            lines += [f"       {c}" for c in choice["commands"]]
            lines += [f"       {key}: {what}" for key, what in choice["fill"].items()]
    return "\n".join(lines)


def move_text(result: dict[str, Any]) -> str:
    """A move (`kitty move`, `kitty agent tasks move-task`) for a person."""
    text = (
        f"{result['wp_id']}: {result['from_lane']} → {result['to_lane']}"
        + (f" (by {result['actor']})" if result["actor"] else "")
        + (" [forced]" if result["force"] else "")
    )
    if result["review_ref"]:
        cycle = result.get("cycle") or result["review_cycles"]
        text += f"\nfeedback stored: {result['review_ref']} (cycle {cycle})"
    if result["arbiter"]:
        text += f"\narbiter decision recorded: {result['arbiter']['decision']}"
    return text


def mark_text(result: dict[str, Any]) -> str:
    """`kitty agent tasks mark-status` for a person: each WP's marked subtasks."""
    return "; ".join(
        f"{wp}: {', '.join(tasks)} → {result['status']}" for wp, tasks in result["marked"].items()
    )
