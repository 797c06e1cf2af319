"""A YAML bomb (nested aliases) in front matter or config is refused, naming the file (27.4)."""

from __future__ import annotations

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
