"""Small results derived from a mission's files, kept in its snapshot cache directory
keyed by their exact inputs (compared whole, never hashed): a miss recomputes.

For what is costly to compute and cheap to compare, such as the execution lanes of
10,000 WPs grouped by file overlap when there is no lanes.json (`kitty next` after
every move). Disposable like the rest of the cache: `KITTY_NO_CACHE=1` turns it off.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from kitty.adapters import contain, snapshots

T = TypeVar("T")


def cached(cache_dir: Path | None, store: str, key: Any, compute: Callable[[], T]) -> T:
    """`compute()`, or what it returned before for an equal `key` (and the same code)."""
    if cache_dir is None or not snapshots.enabled() or contain.symlink_problem(cache_dir):
        return compute()
    path = cache_dir / store
    kept = snapshots.read_pickle(path)
    code = snapshots.code_key()
    if (
        isinstance(kept, dict)
        and kept.get("code") == code
        and "value" in kept
        and kept.get("key") == key
    ):
        value: T = kept["value"]
        return value
    value = compute()
    snapshots.write_pickle(path, {"code": code, "key": key, "value": value})
    return value
