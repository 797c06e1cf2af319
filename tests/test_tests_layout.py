"""tests/ mirrors kitty/: the test of a module is found by its path.

A test file lives in the folder of tests/ that matches the kitty/ package it tests
(tests/workflow/ for kitty/workflow/, tests/ for kitty/*.py), or in one of the
end-to-end folders, which drive the `kitty` command (or the web board in a browser) across
many modules. A test file named after a kitty module (test_sync.py) sits beside
where that module lives, so a module that moves takes its tests with it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import kitty

KITTY = Path(kitty.__file__).parent
TESTS = Path(__file__).resolve().parent

#: The end-to-end folders: the `kitty` command as a user drives it (e2e), the web board
#: in Chromium (browser), random kills under load (reliability).
END_TO_END = ("e2e", "browser", "reliability")
#: Named after a module, yet about something else: tests/test_layout.py checks the
#: import layout of the whole package, not kitty/adapters/layout.py.
NOT_A_MODULE_TEST = {"test_layout.py"}


def packages(kitty_root: Path) -> set[str]:
    """Every package below kitty/, as a path relative to it ("" for kitty/ itself)."""
    found = {""}
    for init in kitty_root.rglob("__init__.py"):
        rel = init.parent.relative_to(kitty_root).as_posix()
        found.add("" if rel == "." else rel)
    return found


def modules(kitty_root: Path) -> dict[str, set[str]]:
    """Module or package name -> the folders (relative to kitty/) it stands in."""
    where: dict[str, set[str]] = {}
    for path in kitty_root.rglob("*.py"):
        rel = path.parent.relative_to(kitty_root).as_posix()
        folder = "" if rel == "." else rel
        if path.name == "__init__.py":
            if folder:
                where.setdefault(path.parent.name, set()).add(folder)
        else:
            where.setdefault(path.stem, set()).add(folder)
    return where


def misplaced(tests_root: Path, kitty_root: Path) -> list[str]:
    """What is out of place in tests_root, one sentence each."""
    problems: list[str] = []
    known = packages(kitty_root)
    named = modules(kitty_root)
    for test in sorted(tests_root.rglob("test_*.py")):
        if "node_modules" in test.parts:
            continue
        rel = test.parent.relative_to(tests_root).as_posix()
        folder = "" if rel == "." else rel
        shown = test.relative_to(tests_root).as_posix()
        top = folder.split("/")[0]
        if folder not in known and top not in END_TO_END:
            problems.append(
                f"tests/{shown}: kitty/{folder}/ is no package and {top}/ no end-to-end folder"
            )
        for d in [tests_root / p for p in _prefixes(folder)]:
            if not (d / "__init__.py").is_file():
                problems.append(f"tests/{shown}: {d.relative_to(tests_root)}/ has no __init__.py")
        stem = test.stem.removeprefix("test_")
        homes = named.get(stem, set())
        module_test = homes and top not in END_TO_END and test.name not in NOT_A_MODULE_TEST
        if module_test and folder not in homes:  # the module's folder, or the package itself
            where = ", ".join(f"tests/{h}/" if h else "tests/" for h in sorted(homes))
            problems.append(f"tests/{shown}: kitty's {stem} lives elsewhere; move it to {where}")
    return problems


def _prefixes(folder: str) -> list[str]:
    parts = folder.split("/") if folder else []
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def test_every_test_file_lives_where_kitty_has_its_package() -> None:
    assert misplaced(TESTS, KITTY) == []


def test_the_check_sees_the_whole_tree() -> None:
    tests = [p for p in TESTS.rglob("test_*.py") if "node_modules" not in p.parts]
    assert len(tests) > 100
    assert {"workflow", "teams", "core/log", "panel/rules"} <= packages(KITTY)
    assert {"auto", "sync", "workflow"} <= set(modules(KITTY))


def _tree(root: Path, files: list[str]) -> Path:
    for name in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    return root


@pytest.fixture
def fake_kitty(tmp_path: Path) -> Path:
    return _tree(
        tmp_path / "kitty",
        ["__init__.py", "hot.py", "teams/__init__.py", "teams/sync.py", "core/__init__.py"],
    )


def test_a_test_in_a_folder_kitty_does_not_have_is_named(tmp_path: Path, fake_kitty: Path) -> None:
    tests = _tree(
        tmp_path / "tests",
        ["__init__.py", "cli/__init__.py", "cli/test_board.py", "teams/__init__.py"],
    )
    assert misplaced(tests, fake_kitty) == [
        "tests/cli/test_board.py: kitty/cli/ is no package and cli/ no end-to-end folder"
    ]


def test_a_module_test_away_from_its_module_is_named(tmp_path: Path, fake_kitty: Path) -> None:
    tests = _tree(tmp_path / "tests", ["core/__init__.py", "core/test_sync.py", "test_hot.py"])
    assert misplaced(tests, fake_kitty) == [
        "tests/core/test_sync.py: kitty's sync lives elsewhere; move it to tests/teams/"
    ]


def test_a_folder_without_init_is_named(tmp_path: Path, fake_kitty: Path) -> None:
    tests = _tree(tmp_path / "tests", ["teams/test_sync.py", "e2e/__init__.py", "e2e/test_x.py"])
    assert misplaced(tests, fake_kitty) == ["tests/teams/test_sync.py: teams/ has no __init__.py"]


def test_end_to_end_folders_and_the_package_itself_are_homes(
    tmp_path: Path, fake_kitty: Path
) -> None:
    tests = _tree(
        tmp_path / "tests",
        ["e2e/__init__.py", "e2e/test_sync.py", "teams/__init__.py", "teams/test_teams.py"],
    )
    assert misplaced(tests, fake_kitty) == []
