"""Counters the reliability suite fills and its conftest prints."""

from __future__ import annotations

from collections import Counter

FIGURES: Counter[str] = Counter()
ORDER = ("processes", "events", "kills", "fuzz cases", "tracebacks", "half-writes")
