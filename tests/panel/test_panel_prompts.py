"""The review panel's reviewer prompt names the project's verification commands exactly (or
says nothing verifies the work), and its diff line runs under gemini (--no-ext-diff)."""

from __future__ import annotations

from pathlib import Path

from kitty.panel.prompts import reviewer_prompt
from kitty.panel.rules.data import Entry
from kitty.panel.rules.personas import Persona


def prompt(verify: list[str]) -> str:
    scope = {"base": "b1", "head_sha": "h2", "workspace": "/ws", "files": ["a.py"]}
    return reviewer_prompt(
        ("WP01", "m"), Persona("correctness", "bugs", "Find bugs."),
        Entry("r1", "gemini", "correctness", "full", []), {**scope, "verify": verify}, 1,
        Path("/out.json"), None,
    )  # fmt: skip


def test_the_panel_reviewer_prompt_names_the_verify_commands() -> None:
    text = prompt(["python -m pytest -q", "ruff check ."])
    assert "Run `git diff --no-ext-diff b1..h2` and read the changed files:\n- a.py\n" in text
    assert (
        "the only ones besides `git` and `kitty` you may run; a failure is a finding:\n"
        "    python -m pytest -q\n    ruff check .\n"
    ) in text
    assert "Nothing verifies the work: no verify.* commands are configured." in prompt([])
