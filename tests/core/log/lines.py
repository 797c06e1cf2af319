"""Log lines written by hand for the tests of the fold (tests/core/log): a transition, an
annotation, and one WP's history linked move by move, as kitty's writer links them."""

from __future__ import annotations

import json
from typing import Any

#: one instant a second, from 00:00:01: T0.format(1) (one digit) and T.format(12)
T0 = "2026-01-01T00:00:0{}+00:00"
T = "2026-01-01T00:00:{:02d}+00:00"


def tr(wp: str, frm: str, to: str, at: str, eid: str, **kw: Any) -> str:
    data = {
        "event_id": eid,
        "wp_id": wp,
        "from_lane": frm,
        "to_lane": to,
        "at": at,
        "actor": kw.pop("actor", "claude"),
        "force": kw.pop("force", False),
    }
    data.update(kw)
    return json.dumps(data, sort_keys=True)


def ann(wp: str, at: str, eid: str, delta: dict[str, Any]) -> str:
    return json.dumps(
        {
            "event_id": eid,
            "wp_id": wp,
            "at": at,
            "kind": "annotation",
            "delta": delta,
            "actor": "user",
        }
    )


def chain(wp: str, *steps: tuple[Any, ...]) -> list[str]:
    """One WP's moves, step n at T.format(n), each linked (kitty_after) to the step before
    it and the first to none. A step is (from, to, event id) or (from, to, event id,
    fields): the fields go into the line as written, a `kitty_after` among them included."""
    lines: list[str] = []
    before = None
    for n, (frm, to, eid, *rest) in enumerate(steps, 1):
        fields = dict(rest[0]) if rest else {}
        fields.setdefault("kitty_after", before)
        lines.append(tr(wp, frm, to, T.format(n), eid, **fields))
        before = eid
    return lines
