"""`verify.*`: the project's verification commands, read from the config's data."""

from __future__ import annotations

import pytest

from kitty.adapters import trust
from kitty.core.verify import VerifyCommand, verify_commands
from kitty.errors import SpecError


def test_none_configured_is_empty() -> None:
    assert verify_commands({}) == ()
    assert verify_commands({"verify": None}) == ()


def test_strings_and_lists_in_the_configs_order() -> None:
    raw = {"verify": {"test": "python -m pytest -q 'a b'", "lint": ["ruff check .", "mypy"]}}
    assert verify_commands(raw) == (
        VerifyCommand("test", "python -m pytest -q 'a b'", ("python", "-m", "pytest", "-q", "a b")),
        VerifyCommand("lint", "ruff check .", ("ruff", "check", ".")),
        VerifyCommand("lint", "mypy", ("mypy",)),
    )


@pytest.mark.parametrize(
    ("section", "words"),
    [
        (["pytest"], "verify must be a mapping"),
        ({"test": 3}, "verify.test must be a command line"),
        ({"test": "  "}, "verify.test must be a command line"),
        ({"test": []}, "verify.test is an empty list"),
        ({"test": "pytest 'open"}, "verify.test: cannot split"),
        ({"lint": ["ruff", None]}, "verify.lint must be a command line"),
    ],
)
def test_a_bad_value_names_the_key(section: object, words: str) -> None:
    with pytest.raises(SpecError) as caught:
        verify_commands({"verify": section})
    assert words in str(caught.value)
    assert ".kittify/config.yaml" in str(caught.value)


def test_trust_covers_every_verify_command() -> None:
    raw = {"verify": {"test": "pytest", "lint": ["ruff check ."]}}
    assert trust.repo_commands(raw) == {"verify.lint": ["ruff check ."], "verify.test": "pytest"}
    changed = {"verify": {"test": "pytest -x", "lint": ["ruff check ."]}}
    assert trust.digest(trust.repo_commands(raw)) != trust.digest(trust.repo_commands(changed))
    assert trust.repo_commands({"verify": "pytest"}) == {"verify": "pytest"}
