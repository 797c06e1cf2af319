"""`status.json`'s text assembled from one encoded part per WP.

The bytes are exactly `dump_json(materialize(board, ...))` (2-space indent, sorted
keys, UTF-8); built from parts so that a write re-encodes only the WPs its events
touched (`kitty.adapters.statusparts` keeps the parts between commands). A WP's
entry is a function of its own folded state alone (`snapshot.wp_entry`): the fold
changes only the WP each event names.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kitty.core.log.snapshot import wp_entry
from kitty.core.log.state import WPState

#: The key of the WPs in `status.json`; every other key sorts before it.
WPS_KEY = "work_packages"


def part(st: WPState) -> str:
    """One WP's `"id": {...}` as it appears in the whole file (nested two levels)."""
    body = json.dumps(wp_entry(st), indent=2, sort_keys=True, ensure_ascii=False)
    return f"    {json.dumps(st.wp_id, ensure_ascii=False)}: " + body.replace("\n", "\n    ")


def assemble(header: Mapping[str, Any], parts: Mapping[str, str]) -> str:
    """The whole file: `header` (every key but `work_packages`) and the WPs' parts."""
    if not header or any(key >= WPS_KEY for key in header):
        raise ValueError("the header must sort before work_packages")
    head = json.dumps(dict(header), indent=2, sort_keys=True, ensure_ascii=False)
    if not parts:
        return head[:-2] + f',\n  "{WPS_KEY}": {{}}\n}}\n'
    body = ",\n".join(parts[wp_id] for wp_id in sorted(parts))
    return head[:-2] + f',\n  "{WPS_KEY}": {{\n{body}\n  }}\n}}\n'
