"""When can two `owned_files` entries be written by both WPs? (the lane-merge rule)

Every entry is a repo-relative path or glob (`*`, `?`, `[..]` within one path
segment, `**` across segments). An entry also covers everything below it, because
a literal path may name a directory: `src/demo` covers `src/demo/a.py`.

Two entries overlap when some path could be covered by both:
  * `equal`            the same entry (after normalising `./` and trailing `/`);
  * `contains`         one literal path is a directory holding the other;
  * `glob_matches_path` a glob covers the other entry, which is a literal path;
  * `globs_intersect`  two globs could match one common path.
For two globs in one segment the check is conservative: they may intersect unless
their literal prefixes or suffixes contradict (`*.py` vs `*.md` do not). Erring
towards "overlap" only ever merges lanes, never lets two WPs race on a file.
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from functools import lru_cache

_WILD = re.compile(r"[*?\[]")


def normalise(entry: str) -> str:
    parts = [p for p in entry.strip().replace("\\", "/").split("/") if p not in ("", ".")]
    return "/".join(parts)


def is_glob(entry: str) -> bool:
    return bool(_WILD.search(entry))


def _segment_intersects(a: str, b: str) -> bool:
    wild_a, wild_b = is_glob(a), is_glob(b)
    if not wild_a and not wild_b:
        return a == b
    if not wild_a:
        return fnmatchcase(a, b)
    if not wild_b:
        return fnmatchcase(b, a)
    prefix_a, prefix_b = _WILD.split(a, 1)[0], _WILD.split(b, 1)[0]
    if not (prefix_a.startswith(prefix_b) or prefix_b.startswith(prefix_a)):
        return False
    suffix_a = re.split(r"[*?\]]", a)[-1]
    suffix_b = re.split(r"[*?\]]", b)[-1]
    return suffix_a.endswith(suffix_b) or suffix_b.endswith(suffix_a)


@lru_cache(maxsize=4096)
def _paths_intersect(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    if not a and not b:
        return True
    if a and a[0] == "**":
        return _paths_intersect(a[1:], b) or (bool(b) and _paths_intersect(a, b[1:]))
    if b and b[0] == "**":
        return _paths_intersect(a, b[1:]) or (bool(a) and _paths_intersect(a[1:], b))
    if not a or not b:
        return False
    return _segment_intersects(a[0], b[0]) and _paths_intersect(a[1:], b[1:])


def overlap_rule(a: str, b: str) -> str | None:
    """The name of the rule by which `a` and `b` overlap, or None when they cannot."""
    na, nb = normalise(a), normalise(b)
    if not na or not nb:
        return None
    if na == nb:
        return "equal"
    # Trailing "**": an entry also covers everything beneath it.
    if not _paths_intersect((*na.split("/"), "**"), (*nb.split("/"), "**")):
        return None
    glob_a, glob_b = is_glob(na), is_glob(nb)
    if not glob_a and not glob_b:
        return "contains"
    if glob_a and glob_b:
        return "globs_intersect"
    return "glob_matches_path"


def _literal_prefix(entry: str) -> tuple[str, ...]:
    prefix = []
    for segment in normalise(entry).split("/"):
        if not segment or is_glob(segment):
            break
        prefix.append(segment)
    return tuple(prefix)


def candidate_pairs(owned: dict[str, tuple[str, ...]], order: list[str]) -> list[tuple[int, int]]:
    """Index pairs (i < j) of WPs that *might* overlap, without comparing every pair.

    Two entries can only cover a common path if the literal prefix (the segments
    before the first glob) of one is a prefix of the other's, so each entry is
    compared only with entries filed under its own prefix or an ancestor of it.
    """
    by_prefix: dict[tuple[str, ...], set[int]] = {}
    entries: list[tuple[int, tuple[str, ...]]] = []
    for index, wp in enumerate(order):
        for entry in owned[wp]:
            if normalise(entry):
                prefix = _literal_prefix(entry)
                by_prefix.setdefault(prefix, set()).add(index)
                entries.append((index, prefix))
    pairs: set[tuple[int, int]] = set()
    for index, prefix in entries:
        for depth in range(len(prefix) + 1):
            for other in by_prefix.get(prefix[:depth], ()):
                if other != index:
                    pairs.add((min(index, other), max(index, other)))
    return sorted(pairs)


def group_by_overlap(
    owned: dict[str, tuple[str, ...]], order: list[str]
) -> tuple[list[list[str]], list[dict[str, object]]]:
    """Union-find of WPs whose entries overlap. Returns (groups, collapse report).

    `order` fixes the iteration order, so the result is deterministic; groups are
    listed by their first member in that order.
    """
    parent = list(range(len(order)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    report: list[dict[str, object]] = []
    for i, j in candidate_pairs(owned, order):
        a, b = order[i], order[j]
        hit = next(
            (
                (pa, pb, rule)
                for pa in owned[a]
                for pb in owned[b]
                if (rule := overlap_rule(pa, pb))
            ),
            None,
        )
        if hit:
            report.append({"wps": [a, b], "rule": hit[2], "paths": [hit[0], hit[1]]})
            root_i, root_j = find(i), find(j)
            parent[max(root_i, root_j)] = min(root_i, root_j)
    groups: dict[int, list[str]] = {}
    for index, wp in enumerate(order):
        groups.setdefault(find(index), []).append(wp)
    return list(groups.values()), report
