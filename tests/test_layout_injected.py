"""The layout checks of tests/test_layout.py catch what they promise: each wrong import or
effect below, put into a copy of kitty/ (never the real tree), makes its check fail, and
the untouched copy passes them all."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests import test_layout as layout

Check = Callable[[Path], list[str]]


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tree") / "kitty"
    shutil.copytree(layout.ROOT, root, ignore=shutil.ignore_patterns("__pycache__", "data"))
    return root


@pytest.fixture
def tree(pristine: Path, tmp_path: Path) -> Path:
    root = tmp_path / "kitty"
    shutil.copytree(pristine, root)
    return root


def _append(root: Path, module: str, text: str) -> None:
    path = root / module
    path.write_text(path.read_text(encoding="utf-8") + "\n" + text + "\n", encoding="utf-8")


CHECKS: dict[str, Check] = {
    "unplaced": layout.unplaced,
    "upward": layout.upward_imports,
    "leaves": layout.leaves_leaning,
    "impure": layout.impure_rules,
    "circle": layout.import_circle,
}


def test_the_copy_passes_every_check(pristine: Path) -> None:
    assert len(layout.found_modules(pristine)) == len(layout.found_modules())
    for name, check in CHECKS.items():
        assert check(pristine) == [], name


@pytest.mark.parametrize(
    ("module", "text", "check", "seen"),
    [
        # a package imports a top-level module above it
        ("agents/run.py", "from kitty.hot import status", "upward", "kitty.hot.status"),
        ("agents/run.py", "from kitty import hot", "upward", "kitty.hot"),
        ("core/lanes.py", "from kitty import workflow", "impure", "kitty.workflow"),
        ("mission/feedback.py", "import kitty.fastpath", "upward", "kitty.fastpath"),
        ("workflow/board.py", "from kitty.entry import main", "upward", "kitty.entry.main"),
        ("adapters/files.py", "from kitty.sim import main", "upward", "kitty.sim.main"),
        ("core/lanes.py", "from kitty.exits import failed", "impure", "kitty.exits.failed"),
        ("mcp/server.py", "from kitty.cli import main", "upward", "kitty.cli.main"),
        # a leaf leans on the rest
        ("output.py", "from kitty.mission.workspace import Mission", "upward", "mission"),
        ("adapters/files.py", "from kitty.output import echo", "upward", "kitty.output"),
        ("errors.py", "from kitty.output import echo", "leaves", "kitty.output.echo"),
        ("__init__.py", "from kitty.core import lanes", "leaves", "kitty.core.lanes"),
        # a pure rule reads a file, a temp dir, the terminal, or runs something
        ("core/lanes.py", "from pathlib import Path", "impure", "pathlib"),
        ("core/lanes.py", "HOST = open('/etc/hostname').read()", "impure", "open()"),
        ("core/lanes.py", "import io", "impure", "io"),
        ("core/lanes.py", "import tempfile", "impure", "tempfile"),
        ("core/lanes.py", "import sys", "impure", "sys"),
        ("core/log/state.py", "import glob", "impure", "glob"),
        ("workflow/rules/dag.py", "print('hello')", "impure", "print()"),
        ("panel/rules/rounds.py", "from importlib import import_module", "impure", "importlib"),
        ("web/rules/svg.py", "import os.path", "impure", "os"),
        ("core/lanes.py", "from kitty.adapters import files", "impure", "kitty.adapters"),
        # two modules import each other when they run
        ("core/lanes.py", "import kitty.core.transitions", "circle", "kitty.core.lanes"),
    ],
)
def test_an_injected_import_fails_its_check(
    tree: Path, module: str, text: str, check: str, seen: str
) -> None:
    _append(tree, module, text)
    found = CHECKS[check](tree)
    assert any(seen in line for line in found), found


def test_a_new_top_level_module_must_be_placed(tree: Path) -> None:
    (tree / "newthing.py").write_text('"""Somewhere."""\n', encoding="utf-8")
    assert layout.unplaced(tree) == [
        "kitty.newthing: not in ORDER or LEAVES (tests/test_layout.py)"
    ]


def test_a_package_in_the_order_that_is_gone_is_named(tree: Path) -> None:
    (tree / "sim.py").unlink()
    assert layout.unplaced(tree) == ["kitty.sim: in ORDER, but no such module"]


def test_a_tree_with_no_modules_fails(tmp_path: Path) -> None:
    empty = tmp_path / "kitty"
    empty.mkdir()
    assert layout.found_modules(empty) == []
    assert layout.unplaced(empty)  # every package of the order is missing
    with pytest.raises(AssertionError):
        layout.assert_whole_tree(empty)
