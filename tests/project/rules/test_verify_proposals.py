"""What `kitty init` proposes for `verify.*`, decided on data (project/rules/verify.py)."""

from __future__ import annotations

import json

import pytest

from kitty.project.rules.verify import Proposal, as_config, propose

PYTEST = '[project]\nname = "x"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n'


def lines(names: set[str], texts: dict[str, str]) -> list[tuple[str, str]]:
    return [(p.name, p.line) for p in propose(names, texts)]


@pytest.mark.parametrize(
    ("names", "texts", "expected"),
    [
        ({"pyproject.toml"}, {"pyproject.toml": PYTEST}, [("test", "python -m pytest -q")]),
        ({"pyproject.toml", "tests/"}, {"pyproject.toml": "[project]\n"},
         [("test", "python -m pytest -q")]),
        ({"setup.py", "tests/"}, {}, [("test", "python -m pytest -q")]),
        ({"pytest.ini"}, {}, [("test", "python -m pytest -q")]),
        ({"setup.cfg"}, {"setup.cfg": "[tool:pytest]\n"}, [("test", "python -m pytest -q")]),
        ({"tox.ini"}, {"tox.ini": "[pytest]\n"}, [("test", "python -m pytest -q")]),
        ({"pyproject.toml"}, {"pyproject.toml": "[tool.ruff]\nline-length = 99\n"},
         [("lint", "ruff check .")]),
        ({"pyproject.toml"}, {"pyproject.toml": "[tool.ruff.lint]\nselect = []\n"},
         [("lint", "ruff check .")]),
        ({"ruff.toml"}, {}, [("lint", "ruff check .")]),
        ({"package.json"}, {"package.json": json.dumps({"scripts": {"test": "vitest"}})},
         [("test", "npm test")]),
        ({"Cargo.toml"}, {}, [("test", "cargo test")]),
        ({"go.mod"}, {}, [("test", "go test ./...")]),
        ({"Makefile"}, {"Makefile": "all:\n\ttrue\ntest: all\n\tpytest\n"},
         [("test", "make test")]),
        ({"GNUmakefile"}, {"GNUmakefile": "test :\n\tgo test\n"}, [("test", "make test")]),
    ],
)  # fmt: skip
def test_each_recognised_project_gets_its_command(
    names: set[str], texts: dict[str, str], expected: list[tuple[str, str]]
) -> None:
    assert lines(names, texts) == expected


@pytest.mark.parametrize(
    ("names", "texts"),
    [
        (set(), {}),
        ({"README.md", "src/"}, {}),
        ({"pyproject.toml"}, {"pyproject.toml": "[project]\nname = 'x'\n"}),  # no tests at all
        ({"tests/"}, {}),  # a tests folder, but nothing says it is Python
        # npm init's placeholder fails by design; not JSON; no scripts
        ({"package.json"}, {"package.json": '{"scripts": {"test": "echo \\"Error: no test '
                                            'specified\\" && exit 1"}}'}),
        ({"package.json"}, {"package.json": "{not json"}),
        ({"package.json"}, {"package.json": '{"scripts": ["test"]}'}),
        ({"Makefile"}, {"Makefile": "test-all:\n\ttrue\nTEST := 1\ntest:=2\n"}),
    ],
)  # fmt: skip
def test_nothing_is_proposed_for_what_is_not_recognised(
    names: set[str], texts: dict[str, str]
) -> None:
    assert propose(names, texts) == []


def test_a_makefile_test_target_is_the_projects_own_way_and_wins() -> None:
    names = {"pyproject.toml", "tests/", "Makefile", "Cargo.toml"}
    texts = {"pyproject.toml": PYTEST + "[tool.ruff]\n", "Makefile": "test:\n\tpytest\n"}
    assert lines(names, texts) == [("test", "make test"), ("lint", "ruff check .")]
    assert propose(names, texts)[0].why == "Makefile test:"


def test_several_toolchains_give_a_list_run_in_order() -> None:
    names = {"pyproject.toml", "package.json", "go.mod"}
    texts = {"pyproject.toml": PYTEST, "package.json": '{"scripts": {"test": "jest"}}'}
    found = propose(names, texts)
    assert as_config(found) == {"test": ["python -m pytest -q", "npm test", "go test ./..."]}
    assert [p.why for p in found] == [
        "pyproject.toml [tool.pytest.ini_options]", "package.json scripts.test", "go.mod",
    ]  # fmt: skip
    assert as_config([Proposal("test", "cargo test", "Cargo.toml")]) == {"test": "cargo test"}
    assert as_config([]) == {}
