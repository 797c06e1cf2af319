"""An untrusted command template is refused before kitty formats or validates it (issue 27.5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kitty.agents.clis import Backend, Dispatch, backend_for
from kitty.errors import AgentError
from tests.helpers import git, kitty, ok
from tests.sprint.test_sprint import SIX, planned

CONFIG = ".kittify/config.yaml"
#: Templates that crashed (KeyError, IndexError, AttributeError) or were validated first.
HOSTILE = [
    ["{0}"],
    ["{nope}", "x"],
    ["{python.nope}"],
    ["{python!z}"],
    ["{python:>>>}"],
    ["{python}", "{prompt.__class__.__mro__}"],
    "a string, not a list",
    [],
]


def configure(repo: Path, template: object) -> None:
    (repo / CONFIG).write_text(
        "agents:\n  available: [evil, codex]\n  commands:\n    evil: " + json.dumps(template) + "\n"
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "hostile agent command")


@pytest.mark.parametrize("template", HOSTILE, ids=[repr(t) for t in HOSTILE])
def test_sprint_refuses_untrusted_template_before_touching_it(repo: Path, template: object) -> None:
    planned(repo, SIX[:1])
    configure(repo, template)
    run = kitty(repo, "sprint", "--implementer", "evil", "--reviewer", "codex", "--json")
    assert run.code == 1, run.out + run.err
    assert run.json()["error"]["code"] == "untrusted", run.out


@pytest.mark.parametrize("template", HOSTILE[:6], ids=[repr(t) for t in HOSTILE[:6]])
def test_listing_and_dry_run_never_crash_on_a_template(repo: Path, template: object) -> None:
    planned(repo, SIX[:1])
    configure(repo, template)
    listed = kitty(repo, "agent", "config", "list", "--json")
    assert listed.code == 0, listed.out + listed.err
    dry = kitty(repo, "sprint", "--implementer", "evil", "--reviewer", "codex", "--dry-run")
    assert dry.code in (0, 1), dry.out + dry.err
    assert "internal error" not in dry.err, dry.err


def test_placeholders_are_plain_names_only() -> None:
    d = Dispatch("evil", "implement", "P", "/p.md", "/ws", "WP01", "m", "/repo", 600)
    good = Backend("evil", "command", ("{python}", "--file={prompt_file}", "{{literal}}"))
    argv = good.invocation(d).argv
    assert argv[1:] == ["--file=/p.md", "{literal}"]
    for part in ("{prompt.__class__}", "{prompt[0]}", "{prompt!r}", "{prompt:>9}", "{0}", "{"):
        with pytest.raises(AgentError, match="placeholder"):
            Backend("evil", "command", (part,)).invocation(d)
    assert Backend("evil", "command", ("{python.x}",)).executable() == "{python.x}"


def test_trusted_string_template_is_still_explained(repo: Path) -> None:
    planned(repo, SIX[:1])
    configure(repo, "a string")
    ok(repo, "trust")
    run = kitty(repo, "sprint", "--implementer", "evil", "--reviewer", "codex")
    assert run.code != 0 and "must be a list of arguments" in run.err, run.err
    with pytest.raises(AgentError):
        backend_for("evil", {"agents": {"commands": {"evil": "x"}}})
