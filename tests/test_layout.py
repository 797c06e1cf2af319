"""The shape of the code, as ARCHITECTURE.md states it: which package may import which,
pure rules that touch nothing outside, leaves that lean on nothing, and the size limits
that keep modules readable.

Each check is a function of the tree's root that returns what it found wrong, so the
tests below can also run it on a copy of the tree with a wrong import put in and see it
fail (tests/test_layout_injected.py)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import kitty

ROOT = Path(kitty.__file__).parent

# Lowest first: a package or top-level module may import itself and the ones before it,
# never one after. Every top-level module and package of kitty/ is here or in LEAVES.
ORDER = (
    "core",
    "grammar",
    "adapters",
    "output",
    "exits",
    "mission",
    "agents",
    "sim",
    "teams",
    "workflow",
    "panel",
    "sprint",
    "web",
    "project",
    "mcp",
    "hot",
    "commands",
    "fastpath",
    "cli",
    "entry",
    "__main__",
)
# Importable from anywhere, pure rules included; a leaf imports no other part of kitty.
LEAVES = {"kitty", "kitty.errors"}

# Modules of the stdlib (and beyond) that reach outside: files, processes, sockets, the
# environment, the terminal, threads. Pure rules import none of them.
EFFECT_MODULES = {
    "asyncio",
    "builtins",
    "click",
    "concurrent",
    "ctypes",
    "fcntl",
    "git",
    "glob",
    "http",
    "importlib",
    "io",
    "mmap",
    "multiprocessing",
    "os",
    "pathlib",
    "select",
    "selectors",
    "shutil",
    "signal",
    "socket",
    "sqlite3",
    "subprocess",
    "sys",
    "tempfile",
    "threading",
    "urllib",
}
# Builtins that read, write or run something outside the data they are given.
EFFECT_CALLS = {"open", "input", "print", "exec", "eval", "compile", "__import__", "breakpoint"}
# (module file, effect): why a pure module may use it anyway.
PURE_EXCEPTIONS = {
    ("workflow/rules/formats.py", "importlib"): (
        "reads kitty's own findings schema (kitty/data/findings.schema.json) through "
        "importlib.resources: package data, the same bytes on every machine"
    ),
}

MODULE_LINES = 400
CLASS_LINES = 200
FUNCTION_LINES = 60
PACKAGE_MODULES = 20


def _modules(root: Path = ROOT) -> Iterator[tuple[str, Path, ast.Module]]:
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        yield name, path, ast.parse(path.read_text(encoding="utf-8"))


def _type_only(tree: ast.Module) -> set[int]:
    """ids of the import nodes under `if TYPE_CHECKING:` (never run)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            found |= {id(sub) for part in node.body for sub in ast.walk(part)}
    return found


def _imports(tree: ast.Module, run_only: bool = False) -> Iterator[tuple[int, str]]:
    skip = _type_only(tree) if run_only else set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] == "kitty":
                for alias in node.names:
                    yield node.lineno, f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "kitty":
                    yield node.lineno, alias.name


def _package(name: str) -> str | None:
    parts = name.split(".")
    if len(parts) < 2:
        return None
    return parts[1] if parts[1] in ORDER else None


def _is_leaf(target: str) -> bool:
    """`kitty.errors.X`, `kitty.SCHEMA`: yes; `kitty.hot` (from `from kitty import hot`): no."""
    if _package(target) is not None:
        return False
    return target in LEAVES or target.rsplit(".", 1)[0] in LEAVES


def _is_pure(name: str) -> bool:
    return name.startswith("kitty.core") or ".rules" in name


def found_modules(root: Path = ROOT) -> list[str]:
    return [name for name, _, _ in _modules(root)]


def unplaced(root: Path = ROOT) -> list[str]:
    """Top-level modules and packages of kitty/ that are neither in ORDER nor leaves."""
    wrong = []
    for name in found_modules(root):
        parts = name.split(".")
        if len(parts) >= 2 and parts[1] not in ORDER and ".".join(parts[:2]) not in LEAVES:
            wrong.append(f"{name}: not in ORDER or LEAVES (tests/test_layout.py)")
    for package in ORDER:
        if not any(name.split(".")[1:2] == [package] for name in found_modules(root)):
            wrong.append(f"kitty.{package}: in ORDER, but no such module")
    return sorted(set(wrong))


def upward_imports(root: Path = ROOT) -> list[str]:
    wrong = []
    for name, path, tree in _modules(root):
        mine = _package(name)
        if mine is None:
            continue
        for line, target in _imports(tree):
            theirs = _package(target)
            if theirs and ORDER.index(theirs) > ORDER.index(mine):
                wrong.append(f"{path.relative_to(root.parent)}:{line} imports {target}")
    return wrong


def leaves_leaning(root: Path = ROOT) -> list[str]:
    """Leaves that import a part of kitty other than a leaf."""
    wrong = []
    for name, path, tree in _modules(root):
        if name not in LEAVES:
            continue
        for line, target in _imports(tree):
            if not _is_leaf(target):
                wrong.append(f"{path.relative_to(root.parent)}:{line} imports {target}")
    return wrong


def _effects(tree: ast.Module) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in EFFECT_MODULES:
                    yield node.lineno, alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] in EFFECT_MODULES:
                yield node.lineno, node.module.split(".")[0]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in EFFECT_CALLS:
                yield node.lineno, f"{node.func.id}()"
        elif isinstance(node, ast.Name) and node.id in {"__builtins__", "__loader__"}:
            yield node.lineno, node.id


def impure_rules(root: Path = ROOT) -> list[str]:
    """kitty/core and every `rules` package import only the stdlib's data modules,
    pyyaml/networkx, the core, other rules and the leaves: no files, processes, sockets,
    terminal or environment."""
    wrong = []
    for name, path, tree in _modules(root):
        if not _is_pure(name):
            continue
        rel = path.relative_to(root.parent)
        for line, target in _imports(tree):
            if not (target.startswith("kitty.core") or ".rules." in target or _is_leaf(target)):
                wrong.append(f"{rel}:{line} imports {target}")
        inside = path.relative_to(root).as_posix()
        for line, effect in _effects(tree):
            if (inside, effect) not in PURE_EXCEPTIONS:
                wrong.append(f"{rel}:{line} uses {effect}")
    return wrong


def _span(node: ast.AST) -> int:
    end = getattr(node, "end_lineno", None) or node.lineno  # type: ignore[attr-defined]
    return int(end) - int(node.lineno) + 1  # type: ignore[attr-defined]


def oversized(root: Path = ROOT) -> list[str]:
    wrong = []
    for _name, path, tree in _modules(root):
        rel = path.relative_to(root.parent)
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MODULE_LINES:
            wrong.append(f"{rel}: {lines} lines (limit {MODULE_LINES})")
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and _span(node) > CLASS_LINES:
                wrong.append(f"{rel}:{node.lineno} class {node.name}: {_span(node)} lines")
            is_function = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            if is_function and _span(node) > FUNCTION_LINES:
                wrong.append(f"{rel}:{node.lineno} {node.name}: {_span(node)} lines")
    for folder in [root, *(p for p in root.rglob("*") if p.is_dir())]:
        count = len([p for p in folder.glob("*.py") if p.name != "__init__.py"])
        if count > PACKAGE_MODULES:
            wrong.append(f"{folder.relative_to(root.parent)}/: {count} modules")
    return wrong


def import_circle(root: Path = ROOT) -> list[str]:
    """One circle of modules that import each other when they run (lazy imports included;
    imports for type checkers only are not run), or []."""
    graph: dict[str, set[str]] = {}
    known = set(found_modules(root))
    for name, _, tree in _modules(root):
        deps = set()
        for _, target in _imports(tree, run_only=True):
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name and target != "kitty":
                deps.add(target)
        graph[name] = deps
    state: dict[str, int] = {}
    circle: list[str] = []

    def visit(node: str, trail: list[str]) -> bool:
        state[node] = 1
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                circle.extend([*trail[trail.index(dep) :], dep] if dep in trail else [node, dep])
                return True
            if dep not in state and visit(dep, [*trail, dep]):
                return True
        state[node] = 2
        return False

    for node in sorted(graph):
        if node not in state and visit(node, [node]):
            break
    return circle


def assert_whole_tree(root: Path = ROOT) -> None:
    """The checks read modules, and the ones every shape has: they cannot pass on nothing."""
    names = set(found_modules(root))
    assert len(names) > 100, f"{len(names)} modules found under {root}"
    assert {"kitty", "kitty.errors", "kitty.core.log.state", "kitty.hot"} <= names


def test_the_checks_read_the_whole_tree() -> None:
    assert_whole_tree()


def test_every_module_has_a_place_in_the_order() -> None:
    wrong = unplaced()
    assert not wrong, "modules outside ARCHITECTURE.md's order:\n" + "\n".join(wrong)


def test_packages_import_downwards_only() -> None:
    wrong = upward_imports()
    assert not wrong, "imports against ARCHITECTURE.md's order:\n" + "\n".join(wrong)


def test_leaves_import_no_other_part_of_kitty() -> None:
    wrong = leaves_leaning()
    assert not wrong, "leaves that lean on kitty:\n" + "\n".join(wrong)


def test_rules_are_pure() -> None:
    wrong = impure_rules()
    assert not wrong, "pure rules reach outside:\n" + "\n".join(wrong)


def test_sizes_stay_within_the_limits() -> None:
    wrong = oversized()
    assert not wrong, "over the limits in ARCHITECTURE.md:\n" + "\n".join(wrong)


def test_no_import_circles() -> None:
    circle = import_circle()
    assert not circle, " -> ".join(circle)
