"""A YAML bomb (nested aliases) in front matter or config is refused, naming the file (27.4)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from kitty.core.wpfile import MAX_YAML_NODES, parse_wp
from kitty.errors import SpecError
from tests.helpers import kitty, make_mission

P = "kitty-specs/m/tasks/WP01-x.md"


def bomb(levels: int = 9) -> str:
    """Each level holds nine copies of the one above: 9**levels strings once expanded."""
    lines = ['a0: &a0 ["lol"]']
    for n in range(1, levels + 1):
        lines.append(f"a{n}: &a{n} [" + ", ".join([f"*a{n - 1}"] * 9) + "]")
    return "\n".join(lines)


def test_nested_aliases_are_refused_with_the_file_and_line() -> None:
    text = f"---\nwork_package_id: WP01\ntitle: x\n{bomb()}\n---\n# body\n"
    with pytest.raises(SpecError) as err:
        parse_wp(P, "WP01-x.md", text)
    assert err.value.path == P
    assert "aliases" in err.value.message and str(MAX_YAML_NODES) in err.value.message


def test_a_recursive_alias_is_refused() -> None:
    text = "---\nwork_package_id: WP01\ntitle: x\nloop: &l [*l]\n---\n"
    with pytest.raises(SpecError, match="aliases"):
        parse_wp(P, "WP01-x.md", text)


def test_a_few_plain_aliases_still_load() -> None:
    text = "---\nwork_package_id: WP01\ntitle: x\nbase: &b [T1, T2]\nsubtasks: *b\n---\n"
    assert parse_wp(P, "WP01-x.md", text).subtasks == ("T1", "T2")


def test_status_on_a_bombed_wp_is_a_one_line_error(repo: Path) -> None:
    mission = make_mission(repo, wps=[{"wp_id": "WP01", "title": "A"}])
    path = mission / "tasks" / "WP01-a.md"
    path.write_text(path.read_text().replace("title: A\n", f"title: A\n{bomb()}\n", 1))
    # status reports an unreadable WP file as a warning (as for any YAML error); doctor fails.
    for args, code in ((("status",), 0), (("status", "--json"), 0), (("doctor",), 1)):
        run = kitty(repo, *args)
        assert run.code == code, (args, run.out, run.err)
        assert "WP01-a.md:8: aliases expand" in run.out + run.err, (args, run.out, run.err)
        assert "Traceback" not in run.err


def test_a_bombed_config_is_refused(repo: Path) -> None:
    make_mission(repo, wps=[{"wp_id": "WP01", "title": "A"}])
    (repo / ".kittify" / "config.yaml").write_text(f"agents:\n  available: [claude]\n{bomb()}\n")
    run = kitty(repo, "status")
    assert run.code == 1, run.err
    assert ".kittify/config.yaml" in run.err and "aliases" in run.err


HINT = f"front matter needs no aliases: write the values out (at most {MAX_YAML_NODES})"


def test_the_refusals_say_what_is_wrong_on_which_line() -> None:
    text = f"---\nwork_package_id: WP01\ntitle: x\n{bomb()}\n---\n# body\n"
    with pytest.raises(SpecError) as err:
        parse_wp(P, "WP01-x.md", text)
    # line 8 holds a4, the first level whose expansion goes over the bound
    assert (err.value.path, err.value.line, err.value.hint) == (P, 8, HINT)
    assert err.value.message == (
        f"{P}:8: aliases expand to more than {MAX_YAML_NODES} values (a YAML bomb?)"
    )
    with pytest.raises(SpecError) as err:
        parse_wp(P, "WP01-x.md", "---\nwork_package_id: WP01\ntitle: x\nloop: &l [*l]\n---\n")
    assert (err.value.line, err.value.hint) == (4, HINT)
    assert err.value.message == f"{P}:4: aliases refer to themselves (a recursive YAML structure)"


def _expanding_to(values: int) -> str:
    """Front matter whose aliases expand to exactly `values` YAML values (every mapping,
    list, key and scalar counts once per use): 11 + 99 + 998 * 100 + pad."""
    pad = values - (11 + 99 + 998 * 100)
    assert pad >= 0
    return (
        "---\nwork_package_id: WP01\ntitle: x\n"
        f"base: &b [{', '.join(['v'] * 99)}]\n"
        f"copies: [{', '.join(['*b'] * 998)}]\n"
        f"pad: [{', '.join(['p'] * pad)}]\n---\n"
    )


def test_aliases_expanding_to_exactly_the_bound_load_and_one_more_is_refused() -> None:
    wp = parse_wp(P, "WP01-x.md", _expanding_to(MAX_YAML_NODES))
    assert len(wp.meta["copies"]) == 998 and wp.meta["copies"][0] == ["v"] * 99
    with pytest.raises(SpecError) as err:
        parse_wp(P, "WP01-x.md", _expanding_to(MAX_YAML_NODES + 1))
    assert err.value.line == 6 and "aliases expand to more than" in err.value.message


def test_the_same_anchor_used_in_many_places_loads() -> None:
    # Every use counts; a shared value is not mistaken for a loop.
    text = (
        "---\nwork_package_id: WP01\ntitle: x\nids: &ids [T1, T2]\n"
        "subtasks: *ids\nmore: {a: *ids, b: [*ids, *ids]}\n---\n"
    )
    wp = parse_wp(P, "WP01-x.md", text)
    assert wp.subtasks == ("T1", "T2")
    assert wp.meta["more"] == {"a": ["T1", "T2"], "b": [["T1", "T2"], ["T1", "T2"]]}


def test_refusing_a_deeply_nested_bomb_costs_no_more_than_reading_it() -> None:
    # Each level holds the 99,001-value list `a` and the next level: walking `a` again at
    # every level would be 60 * 99,001 steps (seconds of CPU per command); every value
    # is walked once, then its size is known.
    nested = "[*a, " * 60 + "x" + "]" * 60
    text = (
        "---\nwork_package_id: WP01\ntitle: x\n"
        f"b: &b [{', '.join(['v'] * 99)}]\n"
        f"a: &a [{', '.join(['*b'] * 990)}]\n"
        f"deep: {nested}\n---\n"
    )
    start = time.process_time()
    with pytest.raises(SpecError, match="aliases expand to more than"):
        parse_wp(P, "WP01-x.md", text)
    assert time.process_time() - start < 1.0
