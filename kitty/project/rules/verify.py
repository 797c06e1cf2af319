"""The verification commands `kitty init` proposes for a project it recognises.

Pure: from a listing of the repository's top level (names, a folder with a trailing
`/`) and the text of the files that say how it is tested, the `verify.*` commands to
propose, each with why. A Makefile with a `test:` target is the project's own way to run
its tests, so it alone is proposed for `verify.test`; otherwise every recognised
toolchain's test command is (in a fixed order).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from typing import Any

from kitty.core.record import Record

#: The files whose text the rule reads (the effects read these, and only these).
READ = (
    "pyproject.toml",
    "setup.cfg",
    "tox.ini",
    "package.json",
    "Makefile",
    "makefile",
    "GNUmakefile",
)
MAKEFILES = ("GNUmakefile", "makefile", "Makefile")  # make's own order
_MAKE_TEST = re.compile(r"^test\s*:(?!=)", re.M)
_NPM_DEFAULT = "no test specified"  # `npm init`'s placeholder script fails by design


class Proposal(Record, frozen=True):
    name: str  # verify.<name>
    line: str  # the command line
    why: str  # what in the repository it comes from

    def __init__(self, name: str, line: str, why: str) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "line", line)
        object.__setattr__(self, "why", why)


def _pytest(names: Collection[str], texts: Mapping[str, str]) -> str | None:
    pyproject = texts.get("pyproject.toml", "")
    if re.search(r"^\[tool\.pytest(\.ini_options)?\]", pyproject, re.M):
        return "pyproject.toml [tool.pytest.ini_options]"
    if "pytest.ini" in names:
        return "pytest.ini"
    if re.search(r"^\[tool:pytest\]", texts.get("setup.cfg", ""), re.M):
        return "setup.cfg [tool:pytest]"
    if re.search(r"^\[pytest\]", texts.get("tox.ini", ""), re.M):
        return "tox.ini [pytest]"
    python = {"pyproject.toml", "setup.py", "setup.cfg"} & set(names)
    if python and "tests/" in names:
        return f"{sorted(python)[0]} and tests/"
    return None


def _ruff(names: Collection[str], texts: Mapping[str, str]) -> str | None:
    if re.search(r"^\[tool\.ruff[\].]", texts.get("pyproject.toml", ""), re.M):
        return "pyproject.toml [tool.ruff]"
    return next((n for n in ("ruff.toml", ".ruff.toml") if n in names), None)


def _npm(texts: Mapping[str, str]) -> str | None:
    try:
        package: Any = json.loads(texts.get("package.json") or "null")
    except ValueError:
        return None
    scripts = package.get("scripts") if isinstance(package, dict) else None
    test = scripts.get("test") if isinstance(scripts, dict) else None
    if isinstance(test, str) and test.strip() and _NPM_DEFAULT not in test:
        return "package.json scripts.test"
    return None


def _make(texts: Mapping[str, str]) -> str | None:
    return next((f"{n} test:" for n in MAKEFILES if _MAKE_TEST.search(texts.get(n, ""))), None)


def propose(names: Collection[str], texts: Mapping[str, str]) -> list[Proposal]:
    """The commands to propose, `verify.test` first; empty when nothing is recognised."""
    make = _make(texts)
    tests: list[Proposal] = []
    if make:
        tests.append(Proposal("test", "make test", make))
    else:
        found = [
            ("python -m pytest -q", _pytest(names, texts)),
            ("npm test", _npm(texts)),
            ("cargo test", "Cargo.toml" if "Cargo.toml" in names else None),
            ("go test ./...", "go.mod" if "go.mod" in names else None),
        ]
        tests += [Proposal("test", line, why) for line, why in found if why]
    ruff = _ruff(names, texts)
    return tests + ([Proposal("lint", "ruff check .", ruff)] if ruff else [])


def as_config(proposals: list[Proposal]) -> dict[str, str | list[str]]:
    """The `verify:` mapping: one command a string, several a list (run in order)."""
    grouped: dict[str, list[str]] = {}
    for p in proposals:
        grouped.setdefault(p.name, []).append(p.line)
    return {name: lines[0] if len(lines) == 1 else lines for name, lines in grouped.items()}
