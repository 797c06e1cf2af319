from __future__ import annotations

from collections.abc import Iterator

import pytest

from kitty.core import overlap


@pytest.fixture(autouse=True)
def fresh_overlap_cache() -> Iterator[None]:
    """Each test computes overlaps itself, not from an earlier test's lru_cache.

    Without this, a bug in the overlap rules could hide behind answers cached by
    another test (mutation testing showed exactly that: mutants of
    `_segment_intersects` survived only because the cache answered for it).
    """
    clear = getattr(overlap._paths_intersect, "cache_clear", None)
    if clear is not None:
        clear()
    yield
