"""The shape of the code, as ARCHITECTURE.md states it: which package may import which,
pure rules that touch nothing outside, and the size limits that keep modules readable."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import kitty

ROOT = Path(kitty.__file__).parent

# Lowest first: a package may import itself and the packages before it, never one after.
ORDER = (
    "core",
    "grammar",
    "adapters",
    "mission",
    "agents",
    "teams",
    "workflow",
    "panel",
    "sprint",
    "web",
    "project",
    "mcp",
    "commands",
    "cli",
)
LEAVES = {"kitty", "kitty.errors", "kitty.output", "kitty.exits"}

MODULE_LINES = 400
CLASS_LINES = 200
FUNCTION_LINES = 60
PACKAGE_MODULES = 20


def _modules() -> Iterator[tuple[str, Path, ast.Module]]:
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
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
            if node.module.startswith("kitty"):
                for alias in node.names:
                    yield node.lineno, f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("kitty"):
                    yield node.lineno, alias.name


def _package(name: str) -> str | None:
    parts = name.split(".")
    if len(parts) < 2:
        return None
    return parts[1] if parts[1] in ORDER else None


def _is_leaf(target: str) -> bool:
    return target in LEAVES or target.rsplit(".", 1)[0] in LEAVES


def test_packages_import_downwards_only() -> None:
    wrong = []
    for name, path, tree in _modules():
        mine = _package(name)
        if mine is None:
            continue
        for line, target in _imports(tree):
            theirs = _package(target)
            if theirs and ORDER.index(theirs) > ORDER.index(mine):
                wrong.append(f"{path.relative_to(ROOT.parent)}:{line} imports {target}")
    assert not wrong, "imports against ARCHITECTURE.md's order:\n" + "\n".join(wrong)


def test_rules_are_pure() -> None:
    """kitty/core and every `rules` package import only the stdlib, pyyaml/networkx, the
    core, other rules and the leaves: no files, processes, sockets or environment."""
    banned = {"subprocess", "os", "socket", "threading", "git", "click", "shutil"}
    wrong = []
    for name, path, tree in _modules():
        if not (name.startswith("kitty.core") or ".rules" in name):
            continue
        for line, target in _imports(tree):
            if not (target.startswith("kitty.core") or ".rules." in target or _is_leaf(target)):
                wrong.append(f"{path.relative_to(ROOT.parent)}:{line} imports {target}")
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                hits = [a.name for a in node.names if a.name.split(".")[0] in banned]
            elif isinstance(node, ast.ImportFrom) and node.module:
                hits = [node.module] if node.module.split(".")[0] in banned else []
            else:
                continue
            wrong += [f"{path.relative_to(ROOT.parent)}:{node.lineno} imports {h}" for h in hits]
    assert not wrong, "pure rules reach outside:\n" + "\n".join(wrong)


def _span(node: ast.AST) -> int:
    end = getattr(node, "end_lineno", None) or node.lineno  # type: ignore[attr-defined]
    return int(end) - int(node.lineno) + 1  # type: ignore[attr-defined]


def test_sizes_stay_within_the_limits() -> None:
    wrong = []
    for _name, path, tree in _modules():
        rel = path.relative_to(ROOT.parent)
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MODULE_LINES:
            wrong.append(f"{rel}: {lines} lines (limit {MODULE_LINES})")
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and _span(node) > CLASS_LINES:
                wrong.append(f"{rel}:{node.lineno} class {node.name}: {_span(node)} lines")
            is_function = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            if is_function and _span(node) > FUNCTION_LINES:
                wrong.append(f"{rel}:{node.lineno} {node.name}: {_span(node)} lines")
    for folder in [ROOT, *(p for p in ROOT.rglob("*") if p.is_dir())]:
        count = len([p for p in folder.glob("*.py") if p.name != "__init__.py"])
        if count > PACKAGE_MODULES:
            wrong.append(f"{folder.relative_to(ROOT.parent)}/: {count} modules")
    assert not wrong, "over the limits in ARCHITECTURE.md:\n" + "\n".join(wrong)


def test_no_import_circles() -> None:
    """No modules that import each other when they run (lazy imports included; imports
    for type checkers only are not run)."""
    graph: dict[str, set[str]] = {}
    known = {name for name, _, _ in _modules()}
    for name, _, tree in _modules():
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
    assert not circle, " -> ".join(circle)
