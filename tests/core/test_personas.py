"""Personas: the catalogue, roster selection by diff signals, config overrides."""

from __future__ import annotations

from pathlib import Path

import pytest

from kitty.errors import SpecError, UsageError
from kitty.panel.rules.personas import BUILTIN, LITE, DiffFacts, catalogue, select
from tests.helpers import make_mission, ok


def diff(path: str, *added: str) -> str:
    body = "\n".join(f"+{line}" for line in added)
    return f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -0,0 +1 @@\n{body}\n"


def test_catalogue_has_every_persona_of_the_spec_with_kittys_own_words() -> None:
    names = {p.name for p in BUILTIN}
    assert names == {
        "correctness", "testing", "maintainability", "project-standards", "agent-native",
        "learnings-researcher", "security", "performance", "api-contract", "frontend-quality",
        "data-migration", "reliability", "adversarial", "previous-comments",
        "julik-frontend-races", "swift-ios", "deployment-verification",
    }  # fmt: skip
    assert all(p.focus and len(p.prompt) > 60 for p in BUILTIN)


def test_small_low_risk_diff_gets_the_lite_roster() -> None:
    facts = DiffFacts.from_diff(diff("src/util.py", *[f"x{i} = {i}" for i in range(10)]))
    roster = select(catalogue(), facts)
    assert roster.lite and roster.personas == list(LITE)
    assert not select(catalogue(), facts, depth="full").lite


def test_signals_call_conditional_personas_and_disable_lite() -> None:
    facts = DiffFacts.from_diff(
        diff(
            "src/auth/login.py", "token = request.args['token']", "subprocess.run(cmd, shell=True)"
        )
        + diff("db/migrations/0002.sql", "ALTER TABLE users DROP COLUMN email;")
    )
    roster = select(catalogue(), facts, round_no=2)
    assert not roster.lite
    for name in ("security", "data-migration", "deployment-verification", "adversarial",
                 "reliability", "previous-comments", "correctness", "testing"):  # fmt: skip
        assert name in roster.personas, (name, roster.reasons)
    assert "swift-ios" not in roster.personas and "frontend-quality" not in roster.personas
    assert roster.reasons["data-migration"] == "path db/migrations/0002.sql"


def test_fifty_code_lines_call_the_adversarial_persona() -> None:
    facts = DiffFacts.from_diff(diff("src/core.py", *[f"y{i} = {i}" for i in range(55)]))
    assert facts.exec_lines == 55
    assert "adversarial" in select(catalogue(), facts).personas


def test_config_overrides_add_change_and_switch_off() -> None:
    cat = catalogue(
        {
            "security": {"prompt": "Also check rate limits."},
            "agent-native": {"when": "off"},
            "localisation": {
                "focus": "strings",
                "prompt": "Check translations.",
                "when": "conditional",
                "paths": "(^|/)ui/",
            },
        }
    )
    assert (
        cat["security"].prompt == "Also check rate limits." and cat["security"].source == "config"
    )
    assert "agent-native" not in cat
    facts = DiffFacts.from_diff(diff("web/ui/page.py", *[f"z{i} = {i}" for i in range(60)]))
    assert "localisation" in select(cat, facts).personas
    with pytest.raises(SpecError):
        catalogue({"newbie": {"focus": "x"}})
    with pytest.raises(SpecError):
        catalogue({"security": {"when": "sometimes"}})


def test_fixed_panel_is_checked_and_gains_previous_comments_later() -> None:
    facts = DiffFacts()
    assert select(catalogue(), facts, 1, fixed=["security"]).personas == ["security"]
    assert select(catalogue(), facts, 2, fixed=["security"]).personas == [
        "security",
        "previous-comments",
    ]
    with pytest.raises(UsageError):
        select(catalogue(), facts, fixed=["nope"])


def test_review_personas_command_reads_the_project_config(repo: Path) -> None:
    make_mission(
        repo,
        finalize=False,
        config="review:\n  personas:\n    testing: {when: off}\n    i18n: {focus: strings, "
        "prompt: check them}\n",
    )
    data = ok(repo, "review", "personas", "--json").json()
    names = [p["name"] for p in data["personas"]]
    assert "testing" not in names and "i18n" in names
    i18n = next(p for p in data["personas"] if p["name"] == "i18n")
    assert (i18n["source"], i18n["when"]) == ("config", "always")
    text = ok(repo, "review", "personas").out
    assert "correctness" in text and "lite" in text
