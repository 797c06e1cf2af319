"""Lane grouping by owned files, lane graph, cycles, critical path."""

from __future__ import annotations

import json

import pytest

from kitty.core.model import WorkPackage
from kitty.core.overlap import overlap_rule
from kitty.core.schedule import chain_weights
from kitty.errors import DependencyCycle
from kitty.workflow.rules.dag import (
    build_graph,
    compute_lanes,
    critical_path,
    find_cycle,
    lane_name,
)


@pytest.mark.parametrize(
    ("a", "b", "rule"),
    [
        ("src/a.py", "src/a.py", "equal"),
        ("./src/a.py", "src/a.py/", "equal"),
        ("src/demo", "src/demo/a.py", "contains"),
        ("src/demo/a.py", "src/demo", "contains"),
        ("src/*.py", "src/a.py", "glob_matches_path"),
        ("src/**", "src/x/y/z.md", "glob_matches_path"),
        ("**/test_*.py", "tests/unit/test_a.py", "glob_matches_path"),
        ("src/*", "src/pkg/mod.py", "glob_matches_path"),  # src/pkg may be a directory
        ("src/*.py", "src/a*.py", "globs_intersect"),
        ("src/**/*.py", "src/x/*", "globs_intersect"),
        ("docs/**", "docs/*.md", "globs_intersect"),
        # two globs in one segment: only their literal ends can rule out a common path
        ("src/x*.py", "src/x*y.py", "globs_intersect"),  # xy.py
        ("src/x*q*.py", "src/x*z.py", "globs_intersect"),  # xqz.py
        ("src/*.py", "src/*_test.py", "globs_intersect"),
        ("src\\demo", "src/demo/a.py", "contains"),  # a Windows separator
    ],
)
def test_overlapping_entries(a: str, b: str, rule: str) -> None:
    assert overlap_rule(a, b) == rule
    assert overlap_rule(b, a) == rule


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("src/a.py", "src/b.py"),
        ("src/demo", "src/demo2/a.py"),
        ("src/*.py", "src/*.md"),
        ("src/*.py", "docs/a.py"),
        ("a/b/c.py", "a/b"[::-1]),
        ("src/a*.py", "src/b*.py"),
        ("tests/*.py", "tests/unit/x.md"),
        ("", "src/a.py"),
        ("", "**"),  # a blank entry owns nothing, not even what a glob covers
        ("./", "*"),
    ],
)
def test_disjoint_entries(a: str, b: str) -> None:
    assert overlap_rule(a, b) is None


def wp(
    wp_id: str,
    deps: tuple[str, ...] = (),
    owned: tuple[str, ...] = (),
    estimate: float | None = None,
    mode: str | None = None,
) -> WorkPackage:
    return WorkPackage(
        wp_id,
        f"title {wp_id}",
        deps,
        (),
        owned,
        f"t/{wp_id}.md",
        wp_id,
        estimate=estimate,
        execution_mode=mode,
    )


def mission(*wps: WorkPackage) -> dict[str, WorkPackage]:
    return {w.wp_id: w for w in wps}


def test_lanes_merge_overlaps_and_link_dependencies() -> None:
    wps = mission(
        wp("WP01", owned=("src/a.py",)),
        wp("WP02", ("WP01",), owned=("src/b.py",)),
        wp("WP03", owned=("src/c/**",)),
        wp("WP04", ("WP02", "WP03"), owned=("src/c/x.py",)),
        wp("WP05"),
        wp("WP06", mode="planning_artifact"),
    )
    plan = compute_lanes(wps)
    by_id = {lane["lane_id"]: lane for lane in plan.lanes}
    assert by_id["lane-a"]["wp_ids"] == ["WP01"]
    assert by_id["lane-b"]["wp_ids"] == ["WP02"]
    assert by_id["lane-c"]["wp_ids"] == ["WP03", "WP04"]
    assert by_id["lane-c"]["depends_on_lanes"] == ["lane-b"]
    assert by_id["lane-c"]["parallel_group"] == 2
    assert by_id["lane-d"]["wp_ids"] == ["WP05"] and by_id["lane-d"]["write_scope"] == []
    assert plan.planning_artifact_wps == ["WP06"]
    order = [(lane["parallel_group"], lane["lane_id"]) for lane in plan.lanes]
    assert order == sorted(order)
    assert plan.collapse_report == [
        {"wps": ["WP03", "WP04"], "rule": "glob_matches_path", "paths": ["src/c/**", "src/c/x.py"]}
    ]


def test_lanes_are_deterministic() -> None:
    wps = [
        wp(
            f"WP{i:02d}",
            tuple(f"WP{j:02d}" for j in range(1, i) if (i * j) % 5 == 1),
            (f"src/m{i // 5}.py",),
        )
        for i in range(1, 20)
    ]
    first = json.dumps(compute_lanes(mission(*wps)).lanes)
    second = json.dumps(compute_lanes(mission(*reversed(wps))).lanes)
    assert first == second


def test_lane_cycle_through_a_third_lane_is_an_error() -> None:
    # WP01 and WP03 share a file (one lane); WP03 -> WP02 -> WP01: the lane waits on itself.
    wps = mission(
        wp("WP01", owned=("x.py",)),
        wp("WP02", ("WP01",), owned=("y.py",)),
        wp("WP03", ("WP02",), owned=("x.py",)),
    )
    with pytest.raises(DependencyCycle) as err:
        compute_lanes(wps)
    assert "lane-a → lane-b → lane-a" in err.value.message
    assert "WP01+WP03" in err.value.message
    assert err.value.hint


def test_dependency_cycle_is_named_from_the_smallest_id() -> None:
    wps = mission(wp("WP01"), wp("WP02", ("WP04",)), wp("WP04", ("WP02",)))
    assert find_cycle(build_graph(wps)) == ["WP02", "WP04", "WP02"]
    assert find_cycle(build_graph(mission(wp("WP01"), wp("WP02", ("WP01",))))) is None


def test_critical_path_and_chain_weights_agree() -> None:
    wps = mission(
        wp("WP01"),
        wp("WP02", ("WP01",)),
        wp("WP03", ("WP02",)),
        wp("WP04", estimate=5),
        wp("WP05", ("WP01",)),
    )
    assert critical_path(wps) == ["WP04"]
    weights = chain_weights(wps)
    assert weights == {"WP01": 3, "WP02": 2, "WP03": 1, "WP04": 5, "WP05": 1}
    del wps["WP04"]
    assert critical_path(wps) == ["WP01", "WP02", "WP03"]


def test_lane_names() -> None:
    assert [lane_name(i) for i in (0, 1, 25, 26, 27)] == [
        "lane-a",
        "lane-b",
        "lane-z",
        "lane-aa",
        "lane-ab",
    ]


def test_candidate_pairs_never_miss_an_overlap() -> None:
    import random

    from kitty.core.overlap import candidate_pairs

    rng = random.Random(3)
    segments = ["src", "tests", "a", "b", "*", "**", "*.py", "x.py", "docs"]
    owned = {
        f"WP{i:02d}": tuple(
            "/".join(rng.choice(segments) for _ in range(rng.randint(1, 3)))
            for _ in range(rng.randint(0, 3))
        )
        for i in range(40)
    }
    order = sorted(owned)
    brute = {
        (i, j)
        for i in range(len(order))
        for j in range(i + 1, len(order))
        if any(overlap_rule(a, b) for a in owned[order[i]] for b in owned[order[j]])
    }
    assert brute <= set(candidate_pairs(owned, order))


def test_wps_in_other_directories_are_never_compared_and_near_misses_stay_apart() -> None:
    from kitty.core.overlap import candidate_pairs, group_by_overlap

    owned = {
        "WP01": ("src/api/*.py",),
        "WP02": ("docs/api/*.md",),
        "WP03": ("src/api/*.md",),
        "WP04": ("src/api",),
    }
    order = sorted(owned)
    # only entries filed under the same literal directory (or an ancestor) are compared
    assert candidate_pairs(owned, order) == [(0, 2), (0, 3), (2, 3)]
    groups, report = group_by_overlap(owned, order)
    assert groups == [["WP01", "WP03", "WP04"], ["WP02"]]
    # WP01 and WP03 share src/api but never a file: no report row of their own
    assert [row["wps"] for row in report] == [["WP01", "WP04"], ["WP03", "WP04"]]
    apart, none = group_by_overlap({"WP01": ("src/*.py",), "WP02": ("src/*.md",)}, order[:2])
    assert (apart, none) == ([["WP01"], ["WP02"]], [])


def test_ids_sort_by_number_then_name() -> None:
    wps = mission(wp("setup"), wp("WP10"), wp("WP9"), wp("WP2"))
    assert list(build_graph(wps).nodes) == ["WP2", "WP9", "WP10", "setup"]
    plan = compute_lanes(wps)
    assert plan.wp_lane == {"WP2": "lane-a", "WP9": "lane-b", "WP10": "lane-c", "setup": "lane-d"}
    # the cycle message starts at the numerically smallest id, not the first in text order
    ring = mission(wp("WP10", ("WP9",)), wp("WP9", ("WP10",)))
    assert find_cycle(build_graph(ring)) == ["WP9", "WP10", "WP9"]
    # entered from WP1, the walk is WP9 → WP5 → WP3 → WP9: the smallest id comes last
    entered = mission(
        wp("WP1"), wp("WP9", ("WP1", "WP3")), wp("WP5", ("WP9",)), wp("WP3", ("WP5",))
    )
    assert find_cycle(build_graph(entered)) == ["WP3", "WP9", "WP5", "WP3"]


def test_lane_cycle_message_names_lanes_members_and_dependencies() -> None:
    wps = mission(
        wp("WP01", owned=("x.py",)),
        wp("WP02", ("WP01",), owned=("y.py",)),
        wp("WP03", ("WP02",), owned=("x.py",)),
        wp("WP04", ("WP02",), owned=("x.py",)),
    )
    with pytest.raises(DependencyCycle) as err:
        compute_lanes(wps)
    assert err.value.message == (
        "execution lanes depend on each other in a cycle: lane-a → lane-b → lane-a "
        "(lane-a=WP01+WP03+WP04; lane-b=WP02; dependencies WP02→WP01; WP03→WP02, WP04→WP02)"
    )
    assert err.value.hint == (
        "WPs sharing owned files are merged into one lane; split the shared files or "
        "change the dependencies so the merged lane does not wait on itself"
    )


def test_lanes_carry_the_union_of_predicted_surfaces() -> None:
    a = wp("WP01", owned=("src/a.py",))
    b = wp("WP02", owned=("src/a.py",))
    a.meta["predicted_surfaces"] = ["api", "db"]
    b.meta["predicted_surfaces"] = ["db", "cli"]
    c = wp("WP03")
    c.meta["predicted_surfaces"] = "not a list"
    lanes = compute_lanes(mission(a, b, c)).lanes
    assert [lane["predicted_surfaces"] for lane in lanes] == [["api", "cli", "db"], []]
