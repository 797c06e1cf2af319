"""`make mutation`: mutmut over the pure rules (kitty/core, every rules/ package), the write
path, the security, team and cache code.

Each module listed in mutation/modules.toml is mutated in its own scratch copy
(.mutation/<module>/), with only the tests listed for it; mutmut then runs, for
each mutant, just the tests among those that call the mutated function. The run
ends with a per-module table. Mutants listed in mutation/equivalent.toml (they
cannot change behaviour) are shown in their own column and left out of the
score.

    python mutation/run.py                   # every module, then the table
    python mutation/run.py transitions moves # only modules whose path contains a word
    python mutation/run.py --table           # the table of the last run, nothing re-run
    python mutation/run.py --show            # also print the diff of every survivor
    python mutation/run.py --survivors sync  # re-test only the last run's survivors (and
                                             # equivalents a test killed) with today's tests

Exit status: 1 when the mutants of the pure rules (kitty/core and every rules/ package)
are killed below --min-core percent (default 90), when a module with a `min` in
modules.toml (the security, team and cache code: 85) scores below it, or when a module
could not be run; 0 otherwise.
Only the modules of this run (or, with --table, the ones chosen) are judged.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "mutation"
WORK = ROOT / ".mutation"
CORE = "kitty/core/"


def is_rules(module: str) -> bool:
    """The pure rules: kitty/core and every subsystem's rules/ package (held to --min-core)."""
    return module.startswith(CORE) or "/rules/" in module


# mutmut's exit codes per mutant (mutmut/stats.py); everything else is "suspicious".
KILLED = {1, 3, 36, 24, -24, 152, 255}  # a failing test, or a timeout (an endless loop)
SURVIVED = {0}
NO_TESTS = {5, 33}


@dataclass
class Score:
    module: str
    killed: int = 0
    survived: list[str] = field(default_factory=list)
    no_tests: list[str] = field(default_factory=list)
    equivalent: list[str] = field(default_factory=list)
    other: list[str] = field(default_factory=list)
    pending: int = 0  # not run yet (an interrupted run): left out of the score
    stale: list[str] = field(default_factory=list)  # listed as equivalent, yet killed

    @property
    def counted(self) -> int:
        return self.killed + len(self.survived) + len(self.no_tests) + len(self.other)

    @property
    def percent(self) -> float:
        return 100.0 * self.killed / self.counted if self.counted else 100.0


def minimums() -> dict[str, float]:
    """The score each module listed with a `min` in modules.toml must reach."""
    listed = tomllib.loads((HERE / "modules.toml").read_text())["modules"]
    return {path: float(spec["min"]) for path, spec in listed.items() if "min" in spec}


def default_tests(module: str) -> str:
    """An unlisted module's tests: tests/core for a core module, else the folder of tests/
    that mirrors the module's (tests/workflow/rules/ for kitty/workflow/rules/queue.py)."""
    folder = "tests/" + module.removeprefix("kitty/").rpartition("/")[0]
    if module.startswith(CORE) or not (ROOT / folder).is_dir():
        return "tests/core"
    return folder


def load_config() -> tuple[dict[str, list[str]], dict[str, str]]:
    """Modules and their tests; every kitty/core module is in, listed or not."""
    listed = tomllib.loads((HERE / "modules.toml").read_text())["modules"]
    equivalent = tomllib.loads((HERE / "equivalent.toml").read_text()).get("equivalent", {})
    modules = {path: list(spec["tests"]) for path, spec in listed.items()}
    pure = [*(ROOT / CORE).rglob("*.py"), *(ROOT / "kitty").glob("*/rules/*.py")]
    for path in sorted(pure):
        name = path.relative_to(ROOT).as_posix()
        if path.name != "__init__.py" and name not in modules:
            modules[name] = [default_tests(name)]  # until listed
    for name in [m for m in modules if not (ROOT / m).exists()]:
        del modules[name]
    core_first = sorted(modules, key=lambda m: (not is_rules(m), m))
    return {m: modules[m] for m in core_first}, dict(equivalent)


def workdir(module: str) -> Path:
    return WORK / module.removesuffix(".py").replace("/", ".")


def mutmut_section(module: str, tests: list[str]) -> str:
    lines = [
        "",
        "[tool.mutmut]  # written by mutation/run.py",
        'source_paths = ["kitty/"]',
        f"only_mutate = {json.dumps([module])}",
        # a fixed order, so a mutant's verdict never depends on the shuffle
        'pytest_add_cli_args = ["-p", "no:randomly", "-p", "no:cacheprovider", "-x", "-q"]',
        f"pytest_add_cli_args_test_selection = {json.dumps(tests)}",
        "",
    ]
    return "\n".join(lines)


def prepare(module: str, tests: list[str]) -> Path:
    work = workdir(module)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("kitty", "tests"):
        shutil.copytree(ROOT / name, work / name, ignore=ignore)
    pyproject = (ROOT / "pyproject.toml").read_text()
    if "[tool.mutmut]" in pyproject:
        raise SystemExit("pyproject.toml must not have a [tool.mutmut] section (run.py writes one)")
    (work / "pyproject.toml").write_text(pyproject + mutmut_section(module, tests))
    return work


def mutmut() -> str:
    found = Path(sys.executable).with_name("mutmut")
    if found.exists():
        return str(found)
    which = shutil.which("mutmut")
    if which is None:
        raise SystemExit(
            "mutmut is not installed: `make mutation` installs it (the mutation extra)"
        )
    return which


def run_module(module: str, tests: list[str]) -> bool:
    work = prepare(module, tests)
    log = work / "mutmut.log"
    print(
        f"mutating {module} with {' '.join(tests)} (log: {log.relative_to(ROOT)})",
        flush=True,
    )
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    with log.open("w") as handle:
        done = subprocess.run(
            [mutmut(), "run", "--max-children", "1"],
            check=False,
            cwd=work,
            stdout=handle,
            stderr=subprocess.STDOUT,
            env=env,
        )
    meta = work / "mutants" / (module + ".meta")
    if not meta.exists():
        print(f"  mutmut failed (exit {done.returncode}); see {log}", file=sys.stderr)
        return False
    return True


def rerun_survivors(module: str, tests: list[str], equivalent: dict[str, str]) -> bool:
    """Run the last run's survivors (not the equivalent ones) again, with today's tests,
    test list and the rest of today's code. Refused when the module itself changed since
    that run: its mutants (and their names) would no longer be the ones on record."""
    work = workdir(module)
    last = score(module, equivalent)
    if last is None:
        print(f"  {module} has no run on record: run it whole first", file=sys.stderr)
        return False
    if (work / module).read_bytes() != (ROOT / module).read_bytes():
        print(f"  {module} changed since its last run: run it whole", file=sys.stderr)
        return False
    # and the mutants listed as equivalent that a test killed: a stale entry, or a kill
    # that was only recorded (a restored verdict): today's tests decide
    unsettled = last.survived + last.no_tests + last.other + last.stale
    names = [n.split(" ", 1)[0] for n in unsettled]
    if not names:
        return True
    shutil.rmtree(work / "tests")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "tests", work / "tests", ignore=ignore)
    # today's code around the module too (the tests may rely on it); the module itself
    # is the same bytes, and left untouched so mutmut keeps its mutants
    for source in (ROOT / "kitty").rglob("*.py"):
        name = source.relative_to(ROOT)
        if name.as_posix() != module and "__pycache__" not in name.parts:
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, work / name)
    pyproject = (ROOT / "pyproject.toml").read_text()
    (work / "pyproject.toml").write_text(pyproject + mutmut_section(module, tests))
    meta = work / "mutants" / (module + ".meta")
    before = json.loads(meta.read_text())["exit_code_by_key"]
    log = work / "mutmut-survivors.log"
    print(f"re-testing {len(names)} survivors of {module} (log: {log.relative_to(ROOT)})")
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    with log.open("w") as handle:
        done = subprocess.run(
            [mutmut(), "run", "--max-children", "1", *names],
            check=False,
            cwd=work,
            stdout=handle,
            stderr=subprocess.STDOUT,
            env=env,
        )
    keep_verdicts(meta, before, set(names))
    if done.returncode != 0:
        print(f"  mutmut failed (exit {done.returncode}); see {log}", file=sys.stderr)
    return done.returncode == 0


def keep_verdicts(meta: Path, before: dict[str, int | None], retested: set[str]) -> None:
    """mutmut forgets the verdicts of the mutants a named run did not test: put back what
    the last whole run found for every mutant that was not re-tested."""
    state = json.loads(meta.read_text())
    codes = state["exit_code_by_key"]
    for name, code in before.items():
        if name in codes and name not in retested and code is not None:
            codes[name] = code
    meta.write_text(json.dumps(state, indent=4))


def score(module: str, equivalent: dict[str, str]) -> Score | None:
    meta = workdir(module) / "mutants" / (module + ".meta")
    if not meta.exists():
        return None
    codes: dict[str, int | None] = json.loads(meta.read_text())["exit_code_by_key"]
    result = Score(module)
    for name, code in sorted(codes.items()):
        if name in equivalent and code in KILLED:
            result.killed += 1  # a test kills it: the entry is stale (renumbered) or wrong
            result.stale.append(name)
        elif name in equivalent:
            result.equivalent.append(name)
        elif code is None:
            result.pending += 1
        elif code in KILLED:
            result.killed += 1
        elif code in SURVIVED:
            result.survived.append(name)
        elif code in NO_TESTS:
            result.no_tests.append(name)
        else:
            result.other.append(f"{name} (exit {code})")
    return result


def table(scores: list[Score]) -> str:
    head = f"{'module':<30} {'mutants':>7} {'killed':>7} {'survived':>8} {'no test':>7}"
    head += f" {'equiv.':>6} {'score':>7}"
    rows = [head, "-" * len(head)]

    def row(name: str, items: list[Score]) -> str:
        killed = sum(s.killed for s in items)
        counted = sum(s.counted for s in items)
        total = counted + sum(len(s.equivalent) for s in items)
        pct = 100.0 * killed / counted if counted else 100.0
        return (
            f"{name:<30} {total:>7} {killed:>7} {sum(len(s.survived) for s in items):>8}"
            f" {sum(len(s.no_tests) + len(s.other) for s in items):>7}"
            f" {sum(len(s.equivalent) for s in items):>6} {pct:>6.1f}%"
        )

    for s in scores:
        rows.append(row(s.module.removeprefix("kitty/"), [s]))
    rows.append("-" * len(head))
    core = [s for s in scores if is_rules(s.module)]
    if core:
        rows.append(row("pure rules (all)", core))
    rows.append(row("all mutated modules", scores))
    return "\n".join(rows)


def show(names: list[str], module: str) -> None:
    for name in names:
        done = subprocess.run(
            [mutmut(), "show", name],
            check=False,
            cwd=workdir(module),
            capture_output=True,
            text=True,
        )
        print(done.stdout.rstrip() or f"{name}: {done.stderr.strip()}")
        print()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("only", nargs="*", help="run only modules whose path contains one of these")
    parser.add_argument("--table", action="store_true", help="print the last run's table only")
    parser.add_argument("--show", action="store_true", help="print the diff of each survivor")
    parser.add_argument(
        "--survivors",
        action="store_true",
        help="re-test only the last run's survivors, with today's tests",
    )
    parser.add_argument("--min-core", type=float, default=90.0, help="required kitty/core score")
    args = parser.parse_args(argv)

    modules, equivalent = load_config()
    chosen = [m for m in modules if not args.only or any(word in m for word in args.only)]
    if not chosen:
        parser.error(f"no module in mutation/modules.toml matches {args.only}")
    failed = []
    if args.survivors and not args.table:
        for module in chosen:
            if not rerun_survivors(module, modules[module], equivalent):
                failed.append(module)
    elif not args.table:
        for module in chosen:
            if not run_module(module, modules[module]):
                failed.append(module)

    scores = [s for m in chosen if (s := score(m, equivalent)) is not None]
    missing = [m for m in chosen if score(m, equivalent) is None]
    print()
    print(table(scores))
    for s in scores:
        lost = s.survived + s.no_tests + s.other
        if s.pending:
            print(f"\n{s.module}: {s.pending} mutants not run yet (interrupted?)")
        if s.stale:
            print(
                f"\n{s.module}: listed in equivalent.toml but killed by a test (counted as"
                f" killed; the entry is stale or wrong): {', '.join(s.stale)}"
            )
        if lost and args.show:
            print(f"\nnot killed in {s.module}:\n")
            show(s.survived + s.no_tests, s.module)
        elif lost:
            names = ", ".join(n.rsplit(".", 1)[-1] for n in lost[:8])
            more = f" and {len(lost) - 8} more" if len(lost) > 8 else ""
            print(f"\nnot killed in {s.module}: {names}{more}")
    if any(s.survived or s.no_tests for s in scores) and not args.show:
        print("\n(--show prints each surviving mutant's diff)")
    if missing:
        print("\nnot run yet: " + ", ".join(missing))
    core = [s for s in scores if is_rules(s.module)]
    killed = sum(s.killed for s in core)
    counted = sum(s.counted for s in core)
    if failed:
        print("\nmutmut failed for: " + ", ".join(failed), file=sys.stderr)
        return 1
    below = False
    if counted and 100.0 * killed / counted < args.min_core:
        print(f"\nkitty/core: {100.0 * killed / counted:.1f}% killed, below {args.min_core}%")
        below = True
    required = minimums()
    for s in scores:
        if s.module in required and s.counted and s.percent < required[s.module]:
            print(f"\n{s.module}: {s.percent:.1f}% killed, below {required[s.module]:g}%")
            below = True
    return 1 if below else 0


if __name__ == "__main__":
    sys.exit(main())
