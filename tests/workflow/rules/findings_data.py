"""The finding most review tests start from: a loop that skips its last item (every field
but the severity, which each test picks)."""

from __future__ import annotations

from typing import Any

OFF_BY_ONE: dict[str, Any] = {
    "kind": "correctness",
    "location": "src/a.py:10",
    "signature": "off-by-one",
    "title": "Loop skips the last item",
    "detail": "range(n - 1) drops index n-1",
}
