"""Work package files: every problem names its line."""

from __future__ import annotations

import pytest

from kitty.core.model import kebab, parse_dependencies, wp_number
from kitty.core.validate import mission_problems
from kitty.core.wpfile import parse_wp
from kitty.errors import SpecError

GOOD = """---
work_package_id: WP02
title: Module B
dependencies:
- WP1
subtasks: [T003]
owned_files:
- src/b.py
estimate: 2
unknown_key: {kept: true}
---
# body
"""


def test_parse_good_file_keeps_unknown_keys() -> None:
    wp = parse_wp("t/WP02-module-b.md", "WP02-module-b.md", GOOD)
    assert wp.wp_id == "WP02" and wp.title == "Module B"
    assert wp.dependencies == ("WP01",)
    assert wp.subtasks == ("T003",) and wp.owned_files == ("src/b.py",)
    assert wp.estimate == 2.0 and wp.stem == "WP02-module-b"
    assert wp.meta["unknown_key"] == {"kept": True}
    assert wp.line_of("dependencies") == 4


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("no front matter\n", 1, "no YAML front matter"),
        ("---\ntitle: [unclosed\n---\n", 2, "unreadable YAML"),
        ("---\n- a\n- b\n---\n", 2, "not a mapping"),
        ("---\ntitle: X\n---\n", 1, "missing 'work_package_id'"),
        ("---\nwork_package_id: WP02\n---\n", 1, "missing 'title'"),
        ("---\nwork_package_id: WP07\ntitle: X\n---\n", 2, "does not match the file name"),
        ("---\nwork_package_id: WP2\ntitle: X\n---\n", 2, "not of the form WP01"),
        ("---\nwork_package_id: WP02\ntitle: X\ndependencies: {a: 1}\n---\n", 4, "dependencies"),
        ("---\nwork_package_id: WP02\ntitle: X\ndependencies: [banana]\n---\n", 4, "not a WP id"),
        ("---\nwork_package_id: WP02\ntitle: X\nsubtasks: {a: 1}\n---\n", 4, "'subtasks'"),
        ("---\nwork_package_id: WP02\ntitle: X\nestimate: -1\n---\n", 4, "estimate"),
    ],
)
def test_errors_name_file_and_line(text: str, line: int, fragment: str) -> None:
    with pytest.raises(SpecError) as err:
        parse_wp("kitty-specs/m/tasks/WP02-x.md", "WP02-x.md", text)
    assert err.value.line == line
    assert fragment in err.value.message
    assert err.value.message.startswith(f"kitty-specs/m/tasks/WP02-x.md:{line}: ")
    assert err.value.hint


def test_legacy_dependency_strings() -> None:
    assert parse_dependencies("WP01, WP02") == ["WP01", "WP02"]
    assert parse_dependencies("[]") == []
    assert parse_dependencies(None) == []
    assert parse_dependencies({"a": 1}) is None
    assert [wp_number(x) for x in ("WP3", "wp03", "3", "WP", "x3")] == [3, 3, 3, None, None]
    assert kebab("Module A: the API!") == "module-a-the-api"


def _wp(wp_id: str, deps: str = "[]", subtasks: str = "[]") -> object:
    text = (
        f"---\nwork_package_id: {wp_id}\ntitle: T\ndependencies: {deps}\n"
        f"subtasks: {subtasks}\n---\n"
    )
    return parse_wp(f"t/{wp_id}-a.md", f"{wp_id}-a.md", text)


def test_mission_problems() -> None:
    wps = [
        _wp("WP01", subtasks="[T001]"),
        _wp("WP02", "[WP09]", "[T001]"),
        _wp("WP03", "[WP03]"),
        _wp("WP01"),
    ]
    messages = [p.message for p in mission_problems(wps)]  # type: ignore[arg-type]
    assert any("unknown dependency WP09" in m for m in messages)
    assert any("subtask T001 is also listed by WP01" in m for m in messages)
    assert any("WP03 depends on itself" in m for m in messages)
    assert any("duplicate work_package_id WP01" in m for m in messages)
