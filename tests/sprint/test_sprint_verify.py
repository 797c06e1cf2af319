"""The sprint and the project's verification commands (verify.*): the agents may run them
(their permission rules carry them), the prompts name them, and with none configured the
sprint says plainly, once at pre-flight and in the end summary, that nothing verifies the work."""

from __future__ import annotations

import json
from pathlib import Path

from kitty.commands.sprint_view import summary_text
from kitty.sprint.preflight import UNVERIFIED
from tests.helpers import git, kitty, ok, trust
from tests.sprint.test_sprint import calls, events, fakes, lanes_of, planned, sprint

__all__ = ["fakes"]  # the fixture, used by name

CONFIG = 'verify:\n  test: "make test"\n  lint: ["make lint", "make types"]\n'
#: The targets CONFIG names, so the test gate the sprint runs passes.
MAKEFILE = "test:\n\t@true\nlint:\n\t@true\ntypes:\n\t@true\n"


def configure(repo: Path, text: str) -> None:
    (repo / "Makefile").write_text(MAKEFILE)
    (repo / ".kittify" / "config.yaml").write_text(
        (repo / ".kittify" / "config.yaml").read_text() + text
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "verify")


def test_without_verify_commands_the_sprint_says_nothing_verifies_the_work(
    repo: Path, fakes: Path
) -> None:
    planned(repo, [{"wp_id": "WP01"}])
    done = sprint(repo, "--implementer", "claude", "--reviewer", "codex")
    assert done.returncode == 0, done.stdout + done.stderr
    stream = events(done)
    notices = [e for e in stream if e.get("code") == "unverified"]
    assert notices == [
        {"event": "notice", "code": "unverified", "message": UNVERIFIED, "schema": 1}
    ]
    first_dispatch = next(i for i, e in enumerate(stream) if e["event"] == "dispatch")
    assert stream.index(notices[0]) < first_dispatch  # pre-flight, before any agent runs
    end = stream[-1]
    assert end["event"] == "end" and end["verify"] == [] and end["unverified"] == UNVERIFIED
    assert f"\nwarning: {UNVERIFIED}\n" in summary_text(end)
    assert "`kitty init`" in UNVERIFIED


def test_configured_commands_reach_the_agents_permissions_and_prompts(
    repo: Path, fakes: Path
) -> None:
    planned(repo, [{"wp_id": "WP01"}])
    configure(repo, CONFIG)
    trust(repo)
    done = sprint(repo, "--implementer", "claude", "--reviewer", "gemini")
    assert done.returncode == 0, done.stdout + done.stderr
    stream = events(done)
    assert not [e for e in stream if e.get("code") == "unverified"]
    end = stream[-1]
    assert end["verify"] == ["make test", "make lint", "make types"] and "unverified" not in end
    assert "warning:" not in summary_text(end)
    made = calls(fakes)
    claude = next(c for c in made if c["name"] == "claude")
    tools = claude["argv"][claude["argv"].index("--allowedTools") + 1]
    assert tools.endswith(
        ",Bash(make test),Bash(make test *),Bash(make lint),Bash(make lint *),"
        "Bash(make types),Bash(make types *)"
    )
    gemini = next(c for c in made if c["name"] == "gemini")
    policies = [gemini["argv"][i + 1] for i, a in enumerate(gemini["argv"]) if a == "--policy"]
    assert len(policies) == 2 and 'commandPrefix = ["make test", "make lint", "make types"]' in (
        Path(policies[1]).read_text()
    )
    for call in (claude, gemini):
        prompt = call["stdin"]
        assert "\n    make test\n    make lint\n    make types\n" in prompt
        assert "    cd " not in prompt and "You start there" in prompt
    assert lanes_of(repo) == {"WP01": "approved"}


def test_the_dry_run_shows_the_granted_command_lines(repo: Path, fakes: Path) -> None:
    planned(repo, [{"wp_id": "WP01"}])
    configure(repo, CONFIG)
    done = sprint(repo, "--implementer", "opencode", "--reviewer", "codex", "--dry-run")
    assert done.returncode == 0, done.stdout + done.stderr
    (entry,) = events(done)[-1]["first_wave"]
    bash = json.loads(entry["env"]["OPENCODE_PERMISSION"])["bash"]
    assert bash == {
        "*": "deny", "git *": "allow", "kitty *": "allow", "make test *": "allow",
        "make lint *": "allow", "make types *": "allow",
    }  # fmt: skip


def test_untrusted_or_ungrantable_verify_commands_refuse_before_anything_starts(
    repo: Path, fakes: Path
) -> None:
    planned(repo, [{"wp_id": "WP01"}])
    configure(repo, CONFIG)
    run = kitty(repo, "sprint", "--implementer", "claude", "--reviewer", "codex")
    assert run.code == 1 and "verify.lint, verify.test" in run.err and "kitty trust" in run.err
    configure(repo, "verify:\n  test: \"pytest -k 'a, b'\"\n")  # a second `verify:` key wins
    trust(repo)
    run = kitty(repo, "sprint", "--implementer", "claude", "--reviewer", "codex")
    assert run.code != 0 and "cannot be granted to the agent CLIs" in run.err, run.err
    assert "','" in run.err and "make test" in run.err
    assert calls(fakes) == [] and lanes_of(repo) == {"WP01": "planned"}
    ok(repo, "status")
