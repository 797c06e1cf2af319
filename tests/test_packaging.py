"""The distribution: `python -m build` is clean, the sdist carries the whole test suite, and the
wheel installed into a fresh venv gives a working `kitty` and `kitty-kanban`.

No network: the build runs without isolation (setuptools and build come from the test extra)
and the fresh venv gets the runtime dependencies through a .pth file naming this
interpreter's site-packages, so only the wheel itself is installed.
"""

from __future__ import annotations

import email
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

import kitty
from tests.helpers import init_repo, once_per_run

ROOT = Path(__file__).resolve().parent.parent
SOURCES = (
    "kitty",
    "tests",
    "benchmarks",
    "pyproject.toml",
    "README.md",
    "LICENSE",
    "MANIFEST.in",
    "CHANGELOG.md",
    "ARCHITECTURE.md",
    "Makefile",
)
# node_modules: the real agent CLIs tests/agents installs (over 1 GB; not in the sdist)
_IGNORE = shutil.ignore_patterns(
    "__pycache__", "*.pyc", "*.egg-info", ".pytest_cache", "node_modules"
)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # else setuptools logs "byte-compiling is disabled"
    env.pop("PYTHONPATH", None)
    return env


def _build(src: Path) -> None:
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=_IGNORE)
        else:
            shutil.copy2(path, src / name)
    done = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(src / "dist"), str(src)],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (src / "build.log").write_text(done.stdout + done.stderr)


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The sdist and wheel (and the build's output), built once per run and only read."""
    src = once_per_run(tmp_path_factory, "dist", _build)
    return src / "dist", (src / "build.log").read_text()


def test_build_prints_no_warning(dist: tuple[Path, str]) -> None:
    _, log = dist
    noisy = [line for line in log.splitlines() if "warn" in line.lower() or "!!" in line]
    assert noisy == [], "\n".join(noisy)


def test_sdist_carries_the_whole_test_suite_and_the_license(dist: tuple[Path, str]) -> None:
    out, _ = dist
    (sdist,) = out.glob("kitty_kanban-*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {n.split("/", 1)[1] for n in archive.getnames() if "/" in n}
    wanted = {
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "tests").rglob("*")
        # node_modules: the agent CLIs `make test` installs for tests/agents
        if p.is_file() and "__pycache__" not in p.parts and "node_modules" not in p.parts
    }
    assert wanted - names == set()
    assert {"LICENSE", "README.md", "CHANGELOG.md", "Makefile", "benchmarks/bench.py"} <= names


def test_wheel_metadata(dist: tuple[Path, str]) -> None:
    out, _ = dist
    (wheel,) = out.glob("kitty_kanban-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        meta_name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        meta = email.message_from_bytes(archive.read(meta_name))
        entry_points = archive.read(meta_name.replace("METADATA", "entry_points.txt")).decode()
        names = archive.namelist()
    assert meta["Name"] == "kitty-kanban"
    assert meta["License-Expression"] == "MIT"
    assert any(n.endswith("licenses/LICENSE") for n in names)
    assert "kitty/data/findings.schema.json" in names
    assert any(
        c.startswith("Programming Language :: Python :: 3.11")
        for c in meta.get_all("Classifier") or []
    )
    assert meta.get_all("Project-URL")
    assert "kitty = kitty.entry:main" in entry_points
    assert "kitty-kanban = kitty.entry:main" in entry_points


def test_wheel_runs_from_a_fresh_venv(dist: tuple[Path, str], tmp_path: Path) -> None:
    out, _ = dist
    (wheel,) = out.glob("kitty_kanban-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [
            *(sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet"),
            *("--no-index", "--no-deps", "--disable-pip-version-check", str(wheel)),
        ],
        check=True,
        env=_env(),
        timeout=300,
    )
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # The runtime dependencies (click, pyyaml, ...) from this interpreter; kitty from the wheel.
    Path(site, "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = dict(_env(), PATH=f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    for script in ("kitty", "kitty-kanban"):
        done = subprocess.run(
            [str(venv / "bin" / script), "--version"],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == f"kitty (kitty-kanban) {kitty.__version__}"
    kitty_bin = str(venv / "bin" / "kitty")

    def run(*args: str) -> str:
        done = subprocess.run(
            [kitty_bin, *args], capture_output=True, text=True, env=env, cwd=tmp_path
        )
        assert done.returncode == 0, (args, done.stderr)
        return done.stdout

    # the data files (agent guide, AGENTS.md section, findings schema) ship in the wheel
    assert "kitty next --agent NAME --claim --json" in run("prime")
    assert "_KITTY_COMPLETE" in run("completion", "bash")
    assert '"findings_schema"' in run("review", "schema", "--json")
    repo = init_repo(tmp_path / "repo")
    run("-C", str(repo), "init", "--agents", "claude")
    assert "kitty prime" in (repo / "AGENTS.md").read_text()
    if importlib.util.find_spec("mcp") is not None:  # the [mcp] extra, from the test extra
        from tests.mcp.test_mcp import session

        (tools,) = session(repo, [], command=[kitty_bin])
        assert "next" in tools and "implement" in tools
    where = subprocess.run(
        [str(python), "-c", "import kitty; print(kitty.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,  # not the checkout, whose kitty/ would shadow the installed one
        env=_env(),
    ).stdout
    assert where.startswith(str(venv)), where
