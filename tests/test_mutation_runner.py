"""`make mutation`'s scoring (mutation/run.py): how each mutant's recorded exit code and the
equivalent list make the score, and which mutants `--survivors` re-tests."""

from __future__ import annotations

import importlib.util
import json
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


def runner() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mutation_run", ROOT / "mutation" / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["mutation_run"] = module
    spec.loader.exec_module(module)
    return module


def test_an_equivalent_entry_a_test_kills_counts_as_killed_and_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = runner()
    monkeypatch.setattr(run, "WORK", tmp_path)
    module = "kitty/core/x.py"
    meta = tmp_path / "kitty.core.x" / "mutants" / (module + ".meta")
    meta.parent.mkdir(parents=True)
    codes = {"m_1": 1, "m_2": 0, "m_3": 0, "m_4": 1, "m_5": 33, "m_6": None, "m_7": -11}
    meta.write_text(json.dumps({"exit_code_by_key": codes}))
    score = run.score(module, {"m_3": "why", "m_4": "an old number"})
    assert score.killed == 2  # m_1, and m_4 whatever its entry says
    assert (score.survived, score.equivalent, score.stale) == (["m_2"], ["m_3"], ["m_4"])
    assert (score.no_tests, score.other, score.pending) == (["m_5"], ["m_7 (exit -11)"], 1)
    assert score.counted == 5 and round(score.percent) == 40
    table = run.table([score])
    assert "core/x.py" in table and "40.0%" in table


def test_an_unlisted_pure_module_is_mutated_with_the_tests_beside_it() -> None:
    """tests/ mirrors kitty/: a rules module nobody listed takes the tests of its folder
    (tests/workflow/rules/ for kitty/workflow/rules/queue.py), a core module tests/core."""
    modules, _ = runner().load_config()
    listed = set(tomllib.loads((ROOT / "mutation" / "modules.toml").read_text())["modules"])
    unlisted = {m: t for m, t in modules.items() if m not in listed}
    assert "kitty/workflow/rules/queue.py" in unlisted
    for module, tests in unlisted.items():
        folder = "tests/" + module.removeprefix("kitty/").rpartition("/")[0]
        want = "tests/core" if module.startswith("kitty/core/") else folder
        assert tests == [want], module
        assert (ROOT / want).is_dir()
