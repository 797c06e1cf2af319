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


def test_a_duplicate_id_does_not_hide_the_problems_of_the_files_after_it() -> None:
    wps = [_wp("WP01"), _wp("WP01"), _wp("WP02", "[WP09]"), _wp("WP03", "[WP03]")]
    messages = [p.message for p in mission_problems(wps)]  # type: ignore[arg-type]
    assert messages == [
        "t/WP01-a.md:2: duplicate work_package_id WP01 (also t/WP01-a.md)",
        "t/WP02-a.md:4: unknown dependency WP09",
        "t/WP03-a.md:4: WP03 depends on itself",
    ]


def test_mission_problems_are_exact_with_lines_and_hints() -> None:
    wps = [
        _wp("WP01", subtasks="[T001]"),
        _wp("WP02", "[WP09]", "[T001, T002]"),
        _wp("WP03", "[WP03]"),
        _wp("WP01"),
    ]
    problems = mission_problems(wps)  # type: ignore[arg-type]
    assert [(p.path, p.line, p.message, p.hint) for p in problems] == [
        (
            "t/WP01-a.md",
            2,
            "t/WP01-a.md:2: duplicate work_package_id WP01 (also t/WP01-a.md)",
            "give each WP file its own id",
        ),
        (
            "t/WP02-a.md",
            4,
            "t/WP02-a.md:4: unknown dependency WP09",
            "known WPs: WP01, WP02, WP03",
        ),
        (
            "t/WP02-a.md",
            5,
            "t/WP02-a.md:5: subtask T001 is also listed by WP01",
            "subtask ids must be unique across the mission",
        ),
        (
            "t/WP03-a.md",
            4,
            "t/WP03-a.md:4: WP03 depends on itself",
            "remove it from its own dependencies",
        ),
    ]
    assert mission_problems([_wp("WP01"), _wp("WP02", "[WP01]")]) == []  # type: ignore[list-item]


def test_summarize_ids_and_cycles() -> None:
    from kitty.core.validate import format_cycle, summarize_ids

    assert summarize_ids([]) == "none"
    ids = [f"WP{i:02d}" for i in range(1, 9)]
    assert summarize_ids(ids) == ", ".join(ids)
    many = [f"WP{i:02d}" for i in range(1, 41)]
    assert summarize_ids(many) == "WP01, WP02, WP03, WP04, WP05, WP06, WP07, … WP40 (40 in all)"
    assert summarize_ids(many, limit=3) == "WP01, WP02, … WP40 (40 in all)"
    assert format_cycle(["WP02", "WP04", "WP02"]) == "WP02 → WP04 → WP02"


P = "kitty-specs/m/tasks/WP02-x.md"


@pytest.mark.parametrize(
    ("text", "message", "hint"),
    [
        (
            "--- \nno closing",
            "no YAML front matter",
            "start the file with a '---' line, the YAML keys, and a closing '---' line",
        ),
        ("----\ntitle: x\n---\n", "no YAML front matter", None),
        ("---\ntitle: x\n", "no YAML front matter", None),
        ("---\ntitle: [a\n---\n", None, "fix the YAML syntax (quote values containing ':' or '#')"),
        (
            "---\n- a\n---\n",
            "front matter is not a mapping of keys to values",
            "write the front matter as 'key: value' lines",
        ),
        (
            "---\n---\n",
            "missing 'work_package_id'",
            "add a 'work_package_id:' line to the front matter",
        ),
        (
            "---\nwork_package_id: WP02\ntitle: ''\n---\n",
            "missing 'title'",
            "add a 'title:' line to the front matter",
        ),
        (
            "---\nwork_package_id: WP2\ntitle: X\n---\n",
            "work_package_id 'WP2' is not of the form WP01",
            "use 'WP' followed by two or more digits",
        ),
        (
            "---\nwork_package_id: WP07\ntitle: X\n---\n",
            "work_package_id WP07 does not match the file name WP02-x.md",
            "rename the file to WP07-<title>.md or fix work_package_id",
        ),
        (
            "---\nwork_package_id: WP02\ntitle: X\ndependencies: {a: 1}\n---\n",
            "'dependencies' must be a list of WP ids",
            "write dependencies as a YAML list such as [WP01, WP02]",
        ),
        (
            "---\nwork_package_id: WP02\ntitle: X\ndependencies: [banana]\n---\n",
            "dependency 'banana' is not a WP id",
            "list dependencies as WP ids such as WP01",
        ),
        (
            "---\nwork_package_id: WP02\ntitle: X\nowned_files: [[a]]\n---\n",
            "'owned_files' must be a list of strings",
            "write owned_files as a YAML list, one '- item' per line",
        ),
        (
            "---\nwork_package_id: WP02\ntitle: X\nestimate: true\n---\n",
            "'estimate' must be a positive number",
            "remove it or write a number such as 2 or 0.5",
        ),
        (
            "---\nwork_package_id: WP02\ntitle: X\nestimate: '2'\n---\n",
            "'estimate' must be a positive number",
            None,
        ),
        (
            "---\nwork_package_id: WP02\ntitle: X\nestimate: 0\n---\n",
            "'estimate' must be a positive number",
            None,
        ),
    ],
)
def test_every_file_problem_has_its_message_and_hint(
    text: str, message: str | None, hint: str | None
) -> None:
    with pytest.raises(SpecError) as err:
        parse_wp(P, "WP02-x.md", text)
    if message is not None:
        assert err.value.message.split(": ", 1)[1] == message
    if hint is not None:
        assert err.value.hint == hint


def test_yaml_error_points_at_the_construct_and_names_the_problem() -> None:
    with pytest.raises(SpecError) as err:
        parse_wp(P, "WP02-x.md", "---\nwork_package_id: WP02\ntitle: [a\nsubtasks: []\n---\n")
    assert err.value.line == 3
    assert err.value.message.startswith(f"{P}:3: unreadable YAML: ")
    assert "expected ',' or ']'" in err.value.message


def test_parsed_fields_and_normalisation() -> None:
    text = (
        "---\nwork_package_id: WP02\ntitle: 7\ndependencies: 'wp1, WP0003, 1'\n"
        "subtasks: T001\nowned_files: [src/a.py, 3]\nestimate: 0.5\n"
        "execution_mode: planning_artifact\nnotes: |\n  title: not a key\n---\nline one\nline two"
    )
    wp = parse_wp(P, "WP02-x.md", text)
    assert wp.title == "7"
    assert wp.dependencies == ("WP01", "WP0003")  # WP1 and 1 are the same WP: once
    assert wp.subtasks == ("T001",) and wp.owned_files == ("src/a.py", "3")
    assert wp.estimate == 0.5 and wp.execution_mode == "planning_artifact"
    assert wp.stem == "WP02-x" and wp.path == P
    assert wp.body == "line one\nline two"
    assert wp.key_lines == {
        "work_package_id": 2,
        "title": 3,
        "dependencies": 4,
        "subtasks": 5,
        "owned_files": 6,
        "estimate": 7,
        "execution_mode": 8,
        "notes": 9,
    }
    plain = parse_wp(P, "WP02-x.md", "---\nwork_package_id: WP02\ntitle: X\n---\n")
    assert (plain.dependencies, plain.subtasks, plain.estimate, plain.execution_mode) == (
        (),
        (),
        None,
        None,
    )


def test_front_matter_is_written_so_it_reads_back_unchanged() -> None:
    from kitty.core.wpfile import dump_front_matter, load_front_matter, one_line

    front = {
        "title": " padded ",
        "b": "line\nbreak",
        "c": "plain",
        "a": "Café",
        "n": 3,
        "l": ["x", "y"],
        "long": "x" * 200,
        "sep": "a\u2028b",
    }
    text = dump_front_matter(front)
    assert text.startswith('---\ntitle: " padded "\nb: "line\\nbreak"\nc: plain\na: Café\nn: 3\n')
    assert "\nl:\n- x\n- y\n" in text and f"\nlong: {'x' * 200}\n" in text  # never folded
    assert text.endswith("---\n")
    meta, body, _ = load_front_matter("t.md", text + "body\n")
    assert meta == front and body == "body\n"
    assert dump_front_matter({"b": 1, "a": 2}, sort_keys=True) == "---\na: 2\nb: 1\n---\n"
    assert dump_front_matter({"b": 1, "a": 2}) == "---\nb: 1\na: 2\n---\n"
    assert one_line("a\nb\r\nc\u2028d\x85e\u2029f   g ") == "a b c d e f g"


def test_dependencies_after_a_canonical_one_and_errors_in_flow_style_front_matter() -> None:
    wp = parse_wp(
        P, "WP02-x.md", "---\nwork_package_id: WP02\ntitle: X\ndependencies: [WP03, 4]\n---\n"
    )
    assert wp.dependencies == ("WP03", "WP04")
    for flow, key in (
        ("{work_package_id: WP02, title: X, dependencies: [banana]}", "dependency 'banana'"),
        ("{work_package_id: WP02, title: X, dependencies: {a: 1}}", "'dependencies'"),
        ("{work_package_id: WP02, title: X, subtasks: {a: 1}}", "'subtasks'"),
    ):
        with pytest.raises(SpecError) as err:
            parse_wp(P, "WP02-x.md", f"---\n{flow}\n---\n")
        assert err.value.line == 1 and key in err.value.message  # no key line: the file's first
