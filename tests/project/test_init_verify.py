"""`kitty init` proposes the project's verification commands (verify.*) when it recognises
the project, writes them only when none are configured (keeping every other key), and
says so, in words and in --json."""

from __future__ import annotations

import shlex
from pathlib import Path

import yaml

from kitty.core.verify import verify_commands
from tests.helpers import ok

PYPROJECT = (
    '[project]\nname = "shop"\n\n[tool.pytest.ini_options]\n\n[tool.ruff]\nline-length = 99\n'
)


def config(repo: Path) -> dict[str, object]:
    data = yaml.safe_load((repo / ".kittify" / "config.yaml").read_text())
    assert isinstance(data, dict)
    return data


def test_init_proposes_writes_and_says_the_verify_commands(repo: Path) -> None:
    (repo / "pyproject.toml").write_text(PYPROJECT)
    (repo / ".kittify").mkdir(exist_ok=True)
    (repo / ".kittify" / "config.yaml").write_text(
        "review:\n  max_cycles: 5\nagents:\n  available: [claude]\n"
    )
    done = ok(repo, "init", "--json").json()
    assert done["verify"] == {
        "proposed": [
            {"name": "test", "line": "python -m pytest -q",
             "why": "pyproject.toml [tool.pytest.ini_options]"},
            {"name": "lint", "line": "ruff check .", "why": "pyproject.toml [tool.ruff]"},
        ],
        "written": True,
        "commands": ["python -m pytest -q", "ruff check ."],
    }  # fmt: skip
    written = config(repo)
    assert written["verify"] == {"test": "python -m pytest -q", "lint": "ruff check ."}
    assert written["review"] == {"max_cycles": 5}  # nothing else is lost
    assert written["agents"] == {"available": ["claude"], "auto_commit": False}
    lines = [c.line for c in verify_commands(written)]
    assert lines == ["python -m pytest -q", "ruff check ."]
    # again: configured now, nothing proposed or changed
    again = ok(repo, "init", "--json").json()
    assert again["verify"] == {"proposed": [], "written": False, "commands": lines}
    assert ".kittify/config.yaml" not in again["changed"]


def test_init_text_names_the_commands_and_the_trust_step_that_works_as_printed(
    repo: Path,
) -> None:
    (repo / "Makefile").write_text("test:\n\ttrue\n")
    text = ok(repo, "init").out
    assert "verify: proposed and written to .kittify/config.yaml (edit them there):\n" in text
    assert "  verify.test: make test   (from Makefile test:)\n" in text
    assert "review them with `kitty trust --show`, then `kitty trust`" in text
    for printed in ("kitty trust --show", "kitty trust"):
        ran = ok(repo, *shlex.split(printed)[1:]).out
        assert "make test" in ran
    assert "verify: make test (from .kittify/config.yaml)" in ok(repo, "init").out


def test_init_keeps_the_projects_own_verify_and_proposes_nothing(repo: Path) -> None:
    (repo / "Cargo.toml").write_text("[package]\nname = 'x'\n")
    (repo / ".kittify").mkdir(exist_ok=True)
    (repo / ".kittify" / "config.yaml").write_text('verify:\n  test: "cargo nextest run"\n')
    done = ok(repo, "init", "--json").json()
    assert done["verify"] == {"proposed": [], "written": False, "commands": ["cargo nextest run"]}
    assert config(repo)["verify"] == {"test": "cargo nextest run"}


def test_init_says_plainly_when_nothing_verifies_the_work(repo: Path) -> None:
    done = ok(repo, "init", "--json").json()
    assert done["verify"] == {"proposed": [], "written": False, "commands": []}
    assert "verify" not in config(repo)
    text = ok(repo, "init").out
    assert "verify: none configured, and none recognised: nothing verifies the agents' work" in text


def test_a_symlinked_build_file_is_not_read(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.mk"
    outside.write_text("test:\n\ttrue\n")
    (repo / "Makefile").symlink_to(outside)
    assert ok(repo, "init", "--json").json()["verify"]["proposed"] == []
