"""Agent onboarding: `kitty init` writes a marked kitty section into AGENTS.md (and
CLAUDE.md / GEMINI.md when present) without touching anything else; `kitty prime`."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import click
import pytest

from kitty.cli import cli
from kitty.errors import SpecError
from kitty.project.rules.onboarding import BEGIN, END, splice
from tests.helpers import kitty, ok


def test_splice_appends_replaces_and_is_idempotent() -> None:
    assert splice("", "S", "A.md") == f"{BEGIN}\nS\n{END}\n"
    once = splice("# Title\nkeep me\n", "S1", "A.md")
    assert once == f"# Title\nkeep me\n\n{BEGIN}\nS1\n{END}\n"
    assert splice(once, "S1", "A.md") == once
    edited = once.replace("keep me", "keep me too") + "\nafter\n"
    twice = splice(edited, "S2", "A.md")
    assert twice == f"# Title\nkeep me too\n\n{BEGIN}\nS2\n{END}\n\nafter\n"
    crlf = "a\r\nb\r\n"
    assert splice(crlf, "S", "A.md").startswith("a\r\nb\r\n\n")


def test_the_block_follows_the_users_text_after_exactly_one_blank_line() -> None:
    """Appended to a file without a kitty block: the user's text is kept byte for byte and
    one blank line separates it from the block, whatever the file ended with."""
    new = f"{BEGIN}\nS\n{END}\n"
    assert splice("# Title\nkeep me", "S", "A.md") == f"# Title\nkeep me\n\n{new}"
    assert splice("# Title\nkeep me\n", "S", "A.md") == f"# Title\nkeep me\n\n{new}"
    assert splice("# Title\nkeep me\n\n", "S", "A.md") == f"# Title\nkeep me\n\n{new}"
    assert splice("# Title\n\n\n", "S", "A.md") == f"# Title\n\n\n{new}"


@pytest.mark.parametrize(
    "text, line",
    [
        (f"x\n{BEGIN}\nno end\n", 2),
        (f"x\n{END}\n", 2),
        (f"{BEGIN}\n{END}\n{BEGIN}\n{END}\n", 3),
        (f"{END}\n{BEGIN}\n", 1),
    ],
)
def test_unbalanced_markers_are_refused_naming_the_line_and_the_repair(
    text: str, line: int
) -> None:
    with pytest.raises(SpecError) as caught:
        splice(text, "S", "AGENTS.md")
    assert caught.value.line == line
    assert (
        caught.value.message == f"AGENTS.md:{line}: the kitty section's marker lines are unbalanced"
    )
    assert caught.value.hint == (
        "keep exactly one `<!-- kitty:begin …` line followed by one `<!-- kitty:end -->` line "
        "(or delete both), then run `kitty init` again"
    )


def test_init_writes_agents_md_idempotently(repo: Path) -> None:
    (repo / "CLAUDE.md").write_text("# Claude\n\nHouse rules.\n")
    result = ok(repo, "init", "--agents", "claude", "--json").json()
    assert {"AGENTS.md", "CLAUDE.md"} <= set(result["changed"])
    assert not (repo / "GEMINI.md").exists()
    agents = (repo / "AGENTS.md").read_text()
    assert agents.startswith(BEGIN) and "kitty next --agent NAME --claim --json" in agents
    claude = (repo / "CLAUDE.md").read_text()
    assert claude.startswith("# Claude\n\nHouse rules.\n\n" + BEGIN)
    assert oct((repo / "AGENTS.md").stat().st_mode & 0o777) == oct(0o644)
    again = ok(repo, "init", "--json").json()
    assert again["changed"] == []
    assert (repo / "CLAUDE.md").read_text() == claude


def test_init_follows_a_symlinked_claude_md(repo: Path) -> None:
    (repo / "AGENTS.md").write_text("# Agents\n")
    os.symlink("AGENTS.md", repo / "CLAUDE.md")
    ok(repo, "init")
    assert (repo / "CLAUDE.md").is_symlink()
    assert (repo / "AGENTS.md").read_text().count(BEGIN) == 1


def test_init_refuses_broken_markers_and_writes_nothing(repo: Path) -> None:
    (repo / "AGENTS.md").write_text(f"# Agents\n{BEGIN}\nhalf a block\n")
    (repo / "GEMINI.md").write_text("# Gemini\n")
    run = kitty(repo, "init", "--json")
    assert run.code == 1
    err = run.json()["error"]
    assert err["message"].startswith("AGENTS.md:2: the kitty section's marker lines")
    assert (repo / "GEMINI.md").read_text() == "# Gemini\n"


def test_init_without_agent_files(repo: Path) -> None:
    result = ok(repo, "init", "--no-agent-files", "--json").json()
    assert "AGENTS.md" not in result["changed"] and not (repo / "AGENTS.md").exists()


def test_prime_is_short_and_its_commands_parse(repo: Path) -> None:
    text = ok(repo, "prime").out
    assert len(text.splitlines()) < 80
    for word in ("kitty next", "--json", "Exit codes", '"error"', "75"):
        assert word in text
    assert ok(repo, "prime", "--json").json()["guide"] == text
    commands = [  # the indented command lines
        line.split("#")[0].strip()
        for line in text.splitlines()
        if line.startswith("    ") and line.strip().startswith("kitty ")
    ]
    assert len(commands) >= 8
    for line in commands:
        args = shlex.split(line)[1:]
        command: click.Command = cli
        while isinstance(command, click.Group):
            name, found, args = command.resolve_command(click.Context(command), args)
            assert found is not None, line
            command = found
        command.make_context(str(name), list(args))  # raises on an unknown option
