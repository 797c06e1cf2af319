"""Personas: the catalogue, roster selection by diff signals, config overrides."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kitty.errors import SpecError, UsageError
from kitty.panel.rules.personas import (
    BUILTIN,
    LITE,
    DiffFacts,
    Roster,
    _p,
    catalogue,
    select,
    signals,
)
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


# -- the catalogue, exactly --------------------------------------------------------------------
def test_a_builtin_persona_is_conditional_exactly_when_it_has_a_trigger() -> None:
    """Each built-in persona keeps its name, focus and prompt (the text a reviewer is given),
    and joins every panel unless the catalogue names what in a diff calls for it."""
    rebuilt = tuple(
        _p(p.name, p.focus, p.prompt, *([p.trigger] if p.trigger else [])) for p in BUILTIN
    )
    assert rebuilt == BUILTIN
    assert {p.name for p in BUILTIN if p.when == "always"} == {
        "correctness", "testing", "maintainability", "project-standards", "agent-native"
    }  # fmt: skip
    assert all((p.when == "conditional") == bool(p.trigger) for p in BUILTIN)


def test_a_persona_as_json_is_what_kitty_review_personas_prints() -> None:
    """`kitty review personas --json`: name, focus, when, trigger (null when always on),
    whether it is on the lite roster, where it comes from, and its prompt."""
    cat = catalogue()
    assert cat["correctness"].to_json() == {
        "name": "correctness",
        "focus": "logic errors, wrong results, broken edge cases",
        "when": "always",
        "trigger": None,
        "lite": True,
        "source": "builtin",
        "prompt": cat["correctness"].prompt,
    }
    assert cat["swift-ios"].to_json() == {
        "name": "swift-ios",
        "focus": "iOS lifecycle and Swift concurrency",
        "when": "conditional",
        "trigger": ".swift files",
        "lite": False,
        "source": "builtin",
        "prompt": "Check main-thread UI updates, retain cycles in closures, app lifecycle "
        "transitions and actor isolation.",
    }


def test_config_overrides_change_only_what_they_name() -> None:
    """An override keeps what it does not name (a conditional persona stays conditional),
    may change when/focus/trigger, and a switched-off persona that does not exist is no
    error; YAML's bare `off` (read as false) switches off."""
    cat = catalogue(
        {
            "security": {"prompt": "Also check rate limits."},
            "testing": {"when": "conditional", "focus": "tests", "trigger": "test files"},
            "extra": {"focus": "f", "prompt": "p", "when": "off"},
            "maintainability": {"when": False},
        }
    )
    assert (cat["security"].when, cat["security"].focus) == ("conditional", BUILTIN[6].focus)
    testing = cat["testing"]
    assert (testing.when, testing.focus, testing.trigger, testing.source) == (
        "conditional",
        "tests",
        "test files",
        "config",
    )
    assert "extra" not in cat and "maintainability" not in cat


def spec_error(overrides: dict[str, Any], **kw: Any) -> tuple[str, str, str]:
    with pytest.raises(SpecError) as caught:
        catalogue(overrides, **kw)
    return str(caught.value), caught.value.hint, caught.value.path


def test_a_bad_persona_override_names_the_config_file_and_the_key() -> None:
    """Each refused override names .kittify/config.yaml (or the file given), the key under
    review.personas, what is wrong and, where there is one, the fix."""
    assert spec_error({"x": "text"}) == (
        ".kittify/config.yaml: review.personas.x must be a mapping",
        "for example: {focus: ..., prompt: ...}",
        ".kittify/config.yaml",
    )
    assert (
        spec_error({"x": "text"}, display="c.yaml")[0]
        == "c.yaml: review.personas.x must be a mapping"
    )
    assert spec_error({"newbie": {"focus": "x"}}) == (
        ".kittify/config.yaml: review.personas.newbie: a new persona needs focus and prompt",
        "add both texts",
        ".kittify/config.yaml",
    )
    assert spec_error({"security": {"when": "sometimes"}}) == (
        ".kittify/config.yaml: review.personas.security.when must be always, conditional or off",
        "",
        ".kittify/config.yaml",
    )
    message, hint, path = spec_error({"security": {"paths": "("}})
    assert message.startswith(".kittify/config.yaml: review.personas.security.paths: bad regex (")
    assert (hint, path) == ("", ".kittify/config.yaml")


# -- the roster, exactly -----------------------------------------------------------------------
ALWAYS_ON = ["correctness", "testing", "maintainability", "project-standards", "agent-native"]


def test_a_fixed_panel_is_chosen_as_given_and_never_lite() -> None:
    """review.panel / --panel: the personas as given (duplicates once), each 'chosen';
    previous-comments joins from round 2 unless already named; unknown names are refused
    with where to look."""
    roster = select(
        catalogue(), DiffFacts(), 2, fixed=["security", "previous-comments", "security"]
    )
    assert roster == Roster(
        ["security", "previous-comments"],
        False,
        {"security": "chosen", "previous-comments": "chosen"},
    )
    with pytest.raises(UsageError) as caught:
        select(catalogue(), DiffFacts(), fixed=["nope", "nada"])
    assert (caught.value.message, caught.value.hint) == (
        "unknown persona(s): nope, nada",
        "see `kitty review personas`; add new ones under review.personas",
    )


def test_the_lite_roster_is_for_1_to_39_code_lines_only() -> None:
    """1 and 39 changed code lines get the lite roster, named as such; 0 (docs only) and
    40 get the full always-on roster."""
    lite = Roster(list(LITE), True, dict.fromkeys(LITE, "lite roster (small, low-risk diff)"))
    full = Roster(ALWAYS_ON, False, dict.fromkeys(ALWAYS_ON, "always on"))
    for lines, want in ((1, lite), (39, lite), (40, full), (0, full)):
        facts = DiffFacts(files=["src/util.py"], exec_lines=lines)
        assert select(catalogue(), facts) == want, lines


def test_the_full_roster_gives_each_conditional_persona_its_reason() -> None:
    """The full roster: the always-on personas, then each conditional one with what in the
    diff called for it (a config persona's path, the round)."""
    new = {"focus": "f", "prompt": "p", "when": "conditional"}
    cat = catalogue({"i18n": {**new, "paths": "locale/"}, "docs": {**new, "paths": "^docs/"}})
    facts = DiffFacts(files=["src/util.py", "locale/de.po"], exec_lines=3)
    roster = select(cat, facts, round_no=3)
    assert roster == Roster(
        [*ALWAYS_ON, "i18n", "previous-comments"],
        False,
        {**dict.fromkeys(ALWAYS_ON, "always on"), "i18n": "path locale/de.po",
         "previous-comments": "round 3"},
    )  # fmt: skip


def test_a_signal_for_a_switched_off_or_always_on_persona_changes_nothing() -> None:
    """A diff that calls for security when security is switched off, or made always on,
    never breaks the roster: security is on the panel only as always on."""
    facts = DiffFacts.from_diff(diff("src/auth.py", "x = 1"))
    off = select(catalogue({"security": {"when": "off"}}), facts)
    assert "security" not in off.personas and off.reasons["adversarial"] == "risky path src/auth.py"
    always = select(catalogue({"security": {"when": "always"}}), facts)
    assert always.reasons["security"] == "always on"


# -- signals, exactly --------------------------------------------------------------------------
def test_signals_name_the_path_or_the_added_line_that_called_each_persona() -> None:
    """Each conditional persona's reason quotes the first path or added line that called it
    (a line cut at 60 characters); paths match whatever their case."""
    long = "token = " + "t" * 80
    facts = DiffFacts(
        files=["deleted.txt", "src/Cache.py", "src/io.py"],
        added={"src/io.py": ["x = 1", long, "retry(3)"]},
    )
    assert signals(facts) == {
        "performance": "path src/Cache.py",
        "security": f"src/io.py: {long[:60]}",
        "reliability": "src/io.py: retry(3)",
    }


def test_async_ui_code_calls_the_races_persona() -> None:
    """julik-frontend-races: only UI files whose added lines are async (a removed UI file
    has none); the first such file is named."""
    facts = DiffFacts(
        files=["src/a.py", "ui/plain.tsx", "ui/page.tsx", "ui/more.ts"],
        added={"src/a.py": ["await x()"], "ui/plain.tsx": ["let a = 1"],
               "ui/page.tsx": ["await load()"], "ui/more.ts": ["useEffect(f)"]},
    )  # fmt: skip
    assert signals(facts)["julik-frontend-races"] == "async UI code in ui/page.tsx"
    only_py = DiffFacts(files=["src/a.py"], added={"src/a.py": ["await x()"]})
    assert "julik-frontend-races" not in signals(only_py)
    deleted_ui = DiffFacts(files=["ui/gone.tsx"])  # a removed UI file: no added lines
    assert "julik-frontend-races" not in signals(deleted_ui)


def test_risky_words_outside_a_migration_do_not_call_deployment_verification() -> None:
    """NOT NULL or RENAME in ordinary code is not a risky deploy; in a migration it is."""
    code = DiffFacts(files=["src/a.py"], added={"src/a.py": ["name NOT NULL"]})
    assert "deployment-verification" not in signals(code)
    migration = DiffFacts(
        files=["db/migrations/1.sql"], added={"db/migrations/1.sql": ["x NOT NULL"]}
    )
    assert signals(migration)["deployment-verification"] == "db/migrations/1.sql: x NOT NULL"


def test_adversarial_from_fifty_code_lines_or_else_the_first_risky_path() -> None:
    """50 changed code lines call the adversarial persona (naming the count); below that,
    the first risky path does; docs/solutions calls the learnings researcher."""
    assert signals(DiffFacts(exec_lines=50))["adversarial"] == "50 changed code lines"
    assert "adversarial" not in signals(DiffFacts(exec_lines=49))
    risky = DiffFacts(files=["src/payment.py", "src/api.py"], exec_lines=2)
    assert signals(risky)["adversarial"] == "risky path src/payment.py"
    assert signals(DiffFacts(has_solutions=True)) == {
        "learnings-researcher": "docs/solutions exists"
    }


# -- reading a diff ----------------------------------------------------------------------------
def test_from_diff_counts_only_changed_code_lines() -> None:
    """exec_lines counts added and removed code lines: never blank lines, comments (#, //,
    /*, *) or lines in docs; binary files are listed as uncounted."""
    code = ["x = 1", "", "# note", "// note", "/* note", "* note", "y = 2"]
    text = (
        diff("src/a.py", *code)
        + "-z = 0\n"
        + diff("docs/guide.md", "Some prose.")
        + "diff --git a/logo.png b/logo.png\nBinary files a/logo.png and b/logo.png differ\n"
    )
    facts = DiffFacts.from_diff(text, has_solutions=True)
    assert facts == DiffFacts(
        files=["src/a.py", "docs/guide.md", "logo.png"],
        added={"src/a.py": code, "docs/guide.md": ["Some prose."]},
        exec_lines=3,
        uncounted=["logo.png"],
        has_solutions=True,
    )


def test_a_changed_path_holding_b_slash_or_renamed_is_named_whole() -> None:
    """The roster reads each changed file's path from the diff as git prints it: a path with
    ' b/' in it (a folder named 'plan b') and the new name of a renamed or copied file are
    named whole, so path signals and config `paths` see the real file."""
    text = (
        "diff --git a/plan b/notes.py b/plan b/notes.py\nindex 1..2 100644\n"
        "--- a/plan b/notes.py\n+++ b/plan b/notes.py\n@@ -1 +1,2 @@\n x\n+y = 1\n"
        "diff --git a/plan b/old.py b/plan b/a to b.py\nsimilarity index 90%\n"
        "rename from plan b/old.py\nrename to plan b/a to b.py\n@@ -1 +1 @@\n-a\n+b = 2\n"
        "diff --git a/x.py b/lib/copy_of_x.py\nsimilarity index 100%\n"
        "copy from x.py\ncopy to lib/copy_of_x.py\n"
        "diff --git a/odd.py b/odd.py\nnew file mode 100644\n"
    )
    facts = DiffFacts.from_diff(text)
    assert facts.files == ["plan b/notes.py", "plan b/a to b.py", "lib/copy_of_x.py", "odd.py"]
    assert facts.added == {"plan b/notes.py": ["y = 1"], "plan b/a to b.py": ["b = 2"]}
    cat = catalogue(
        {"plans": {"focus": "f", "prompt": "p", "when": "conditional", "paths": "^plan b/"}}
    )
    assert select(cat, facts).reasons["plans"] == "path plan b/notes.py"
