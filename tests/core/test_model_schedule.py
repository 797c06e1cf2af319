"""WP ids, file names, slugs, dependency lists; chain weights, lane maps, the critical path."""

from __future__ import annotations

import pytest

from kitty.core.log.snapshot import progress, sort_ids, summary, waits_for
from kitty.core.log.state import Board, WPState
from kitty.core.model import (
    WorkPackage,
    format_wp_id,
    kebab,
    parse_dependencies,
    wp_id_from_filename,
    wp_number,
)
from kitty.core.schedule import chain_weights, critical_path, lane_map, sort_key_ids


def wp(
    wp_id: str, *deps: str, estimate: float | None = None, owned: tuple[str, ...] = ()
) -> WorkPackage:
    return WorkPackage(wp_id, wp_id, deps, (), owned, f"t/{wp_id}.md", wp_id, estimate=estimate)


@pytest.mark.parametrize(
    ("text", "number"),
    [("WP3", 3), ("wp03", 3), ("3", 3), (" WP10 ", 10), ("WP", None), ("WP3a", None), ("x3", None)],
)
def test_wp_number(text: str, number: int | None) -> None:
    assert wp_number(text) == number


def test_ids_files_and_slugs() -> None:
    assert format_wp_id(3) == "WP03" and format_wp_id(123) == "WP123"
    assert wp_id_from_filename("WP03-cart-api.md") == "WP03"
    assert wp_id_from_filename("WP03.md") == "WP03"
    assert wp_id_from_filename("WP03_x.md") == "WP03"
    assert wp_id_from_filename("WP03x.md") is None
    assert wp_id_from_filename("notes.md") is None
    assert wp_id_from_filename("WP03-a.txt") is None
    assert kebab("Module A: the API!") == "module-a-the-api"
    assert kebab("  --Hello--  ") == "hello"
    assert kebab("alpha beta gamma", limit=12) == "alpha-beta"
    assert kebab("abcdefghijklmnop", limit=5) == "abcde"
    assert kebab("x" * 60) == "x" * 48
    assert kebab("alpha beta", limit=10) == "alpha-beta"  # exactly the limit: kept whole


def test_a_wp_built_without_its_file_text_has_none() -> None:
    """A WP made in code (not read from a file) has an empty body and no front matter:
    each its own, so filling one in never shows up in another."""
    one, two = wp("WP01"), wp("WP02")
    assert (one.body, one.meta, one.key_lines) == ("", {}, {})
    one.meta["x"] = 1
    assert two.meta == {}


def test_parse_dependencies_accepts_every_legacy_form() -> None:
    assert parse_dependencies(None) == []
    assert parse_dependencies("[]") == []
    assert parse_dependencies("") == []
    assert parse_dependencies("WP01, 'WP02' ,\"WP03\"") == ["WP01", "WP02", "WP03"]
    assert parse_dependencies("[WP01]") == ["WP01"]
    # only the brackets and quotes go: an id keeps every letter at its ends
    assert parse_dependencies("[WP01, FIX]") == ["WP01", "FIX"]
    assert parse_dependencies("'XRAY', \"WP02\"") == ["XRAY", "WP02"]
    assert parse_dependencies(["WP01 ", 2]) == ["WP01", "2"]
    assert parse_dependencies([["WP01"]]) is None
    assert parse_dependencies({"WP01": 1}) is None
    assert wp("WP01").line_of("title") == 1


def test_chain_weights_with_estimates_and_cycles() -> None:
    wps = {
        w.wp_id: w
        for w in (
            wp("WP01", estimate=2),
            wp("WP02", "WP01", estimate=0.5),
            wp("WP03", "WP01", "WP09"),  # WP09 unknown: ignored
            wp("WP04", "WP02", estimate=3),
        )
    }
    assert chain_weights(wps) == {"WP01": 5.5, "WP02": 3.5, "WP03": 1.0, "WP04": 3.0}
    ring = {w.wp_id: w for w in (wp("WP01", "WP02", estimate=4), wp("WP02", "WP01"), wp("WP03"))}
    assert chain_weights(ring) == {"WP01": 4.0, "WP02": 1.0, "WP03": 1.0}
    assert critical_path(wps) == ["WP01", "WP02", "WP04"]
    assert critical_path({}) == []


def test_critical_path_ties_go_to_the_lowest_id() -> None:
    wps = {w.wp_id: w for w in (wp("WP10"), wp("WP9"), wp("WP11", "WP9"), wp("WP12", "WP10"))}
    assert critical_path(wps) == ["WP9", "WP11"]
    fork = {w.wp_id: w for w in (wp("WP01"), wp("WP03", "WP01"), wp("WP02", "WP01"))}
    assert critical_path(fork) == ["WP01", "WP02"]
    assert sort_key_ids(["WP10", "x", "WP9", "a"]) == ["WP9", "WP10", "a", "x"]
    assert sort_ids(["WP10", "x", "WP9", "a"]) == ["WP9", "WP10", "a", "x"]


def test_lane_map_from_lanes_json_or_computed() -> None:
    wps = {
        w.wp_id: w for w in (wp("WP01", owned=("a.py",)), wp("WP02", owned=("a.py",)), wp("WP03"))
    }
    doc = {"lanes": [{"lane_id": "lane-a", "wp_ids": ["WP01", "WP02"]}, "junk"]}
    assert lane_map(doc, wps, ["WP01", "WP02", "WP03"]) == {
        "WP01": "lane-a",
        "WP02": "lane-a",
        "WP03": "solo-WP03",
    }
    assert lane_map(None, wps, ["WP01", "WP02", "WP03", "WP04"]) == {
        "WP01": "group-WP01",
        "WP02": "group-WP01",
        "WP03": "group-WP03",
        "WP04": "solo-WP04",
    }


def test_summary_progress_and_waits() -> None:
    board = Board(
        wps={
            "WP01": WPState("WP01", lane="done"),
            "WP02": WPState("WP02", lane="in_review"),
            "WP03": WPState("WP03", lane="canceled"),
            "WP04": WPState("WP04", lane="approved"),
            "WP05": WPState("WP05"),
        }
    )
    ids = ["WP01", "WP02", "WP03", "WP04", "WP05"]
    counts = summary(board, ids)
    assert counts["done"] == 1 and counts["in_review"] == 1 and counts["canceled"] == 1
    assert sum(counts.values()) == 4  # the unfinalized WP05 is in no lane
    # canceled WPs do not count; done 1/4, weighted (1 + 0.7 + 0.8 + 0) / 4
    assert progress(board, ids) == {"done_percentage": 25.0, "weighted_percentage": 62.5}
    assert progress(board, ["WP03"]) == {"done_percentage": 0.0, "weighted_percentage": 0.0}
    assert progress(Board(), []) == {"done_percentage": 0.0, "weighted_percentage": 0.0}
    assert waits_for(wp("WP06", "WP01", "WP02", "WP04", "WP05"), board) == ["WP02", "WP05"]
    assert waits_for(None, board) == []


def test_critical_path_ends_in_a_cycle_and_lane_map_tolerates_partial_docs() -> None:
    ring = {w.wp_id: w for w in (wp("WP01", "WP02"), wp("WP02", "WP01"), wp("WP03", "WP01"))}
    assert critical_path(ring) == ["WP01"]  # a cycle (refused by finalize) ends the walk
    wps = {w.wp_id: w for w in (wp("WP01"), wp("WP02"))}
    assert lane_map({"mission": "m"}, wps, ["WP01", "WP02"]) == {
        "WP01": "solo-WP01",
        "WP02": "solo-WP02",
    }
    assert lane_map(
        {"lanes": [{"lane_id": "lane-a"}, {"lane_id": "lane-b", "wp_ids": ["WP02"]}]},
        wps,
        ["WP01", "WP02"],
    ) == {
        "WP01": "solo-WP01",
        "WP02": "lane-b",
    }


def test_progress_rounds_to_one_decimal_and_views_keep_subtask_marks() -> None:
    from kitty.core.log.snapshot import wp_view

    board = Board(
        wps={
            "WP01": WPState("WP01", lane="done"),
            "WP02": WPState("WP02", lane="planned"),
            "WP03": WPState("WP03", lane="claimed", subtasks={"T1": "done"}),
        }
    )
    assert progress(board, ["WP01", "WP02", "WP03"]) == {
        "done_percentage": 33.3,
        "weighted_percentage": 35.0,
    }
    spec = WorkPackage("WP03", "x", (), ("T1", "T2"), (), "t", "WP03")
    view = wp_view("WP03", spec, board.wps["WP03"], board, 3)
    assert view["subtasks"] == {"T1": "done", "T2": "planned"}
