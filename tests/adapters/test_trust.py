"""The trust gate: a cloned repository's config cannot make kitty run its commands."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from tests.helpers import git, kitty, ok, trust
from tests.sprint.test_sprint import SIX, events, fakes, lanes_of, planned, sprint

__all__ = ["fakes"]  # the fixture, imported for the tests below

CONFIG = ".kittify/config.yaml"


def marker_command(marker: Path) -> str:
    """A repo-defined agent command that leaves `marker` behind when it runs."""
    code = "import pathlib, sys; pathlib.Path(sys.argv[1]).write_text('ran')"
    return json.dumps(["{python}", "-c", code, str(marker)])


def configure(repo: Path, name: str, marker: Path) -> None:
    (repo / CONFIG).write_text(f"agents:\n  commands:\n    {name}: {marker_command(marker)}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "repo-defined agent command")


def trust_file() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "kitty" / "trust.json"


def assert_refused_before_anything(
    repo: Path, done: subprocess.CompletedProcess[str], marker: Path, key: str
) -> None:
    assert done.returncode == 1, done.stdout + done.stderr
    assert not marker.exists()
    [answer] = [json.loads(line) for line in done.stdout.splitlines()]  # no sprint event at all
    error = answer["error"]
    assert error["code"] == "untrusted"
    assert CONFIG in error["message"] and key in error["message"]
    assert "kitty trust" in error["hint"]
    assert lanes_of(repo) == {"WP01": "planned"}
    assert not (repo / ".kittify" / "runs").exists()


def test_untrusted_command_is_refused_with_nothing_started(repo: Path, tmp_path: Path) -> None:
    planned(repo, SIX[:1])
    marker = tmp_path / "ran"
    configure(repo, "mine", marker)
    done = sprint(repo, "--implementer", "mine", "--reviewer", "codex", "--retries", "0")
    assert_refused_before_anything(repo, done, marker, "agents.commands.mine")
    plain = kitty(repo, "sprint", "--implementer", "mine", "--reviewer", "codex")
    assert plain.code == 1
    first = plain.err.splitlines()[0]
    assert first.startswith("error: .kittify/config.yaml defines commands kitty would run")
    assert first.endswith("not trusted: agents.commands.mine")
    assert "kitty trust --show" in plain.err and "`kitty trust`" in plain.err
    assert not marker.exists() and not trust_file().exists()
    # A dry run executes nothing, so it may show the commands for review.
    plan = ok(repo, "sprint", "--implementer", "mine", "--reviewer", "codex", "--dry-run")
    assert str(marker) in plan.out and not marker.exists()


def test_trusted_command_runs(repo: Path, tmp_path: Path, fakes: Path) -> None:
    planned(repo, SIX[:1])
    marker = tmp_path / "ran"
    configure(repo, "mine", marker)
    shown = ok(repo, "trust", "--show", "--json").json()
    assert shown["commands"] == {"agents.commands.mine": json.loads(marker_command(marker))}
    assert not shown["trusted"] and not shown["changed"] and not trust_file().exists()
    assert "NOT trusted" in ok(repo, "trust", "--show").out
    recorded = ok(repo, "trust", "--json").json()
    assert recorded["trusted"] and recorded["action"] == "trusted"
    assert ok(repo, "trust", "--show", "--json").json()["trusted"]
    done = sprint(repo, "--implementer", "mine", "--reviewer", "codex", "--retries", "0")
    assert marker.read_text() == "ran"
    assert events(done)[0]["event"] == "start"


def test_a_changed_command_voids_the_trust(repo: Path, tmp_path: Path) -> None:
    planned(repo, SIX[:1])
    configure(repo, "mine", tmp_path / "first")
    trust(repo)
    marker = tmp_path / "second"
    configure(repo, "mine", marker)  # e.g. a `git pull` changed the command
    shown = ok(repo, "trust", "--show", "--json").json()
    assert not shown["trusted"] and shown["changed"]
    done = sprint(repo, "--implementer", "mine", "--reviewer", "codex", "--retries", "0")
    assert_refused_before_anything(repo, done, marker, "agents.commands.mine")
    assert "changed since you trusted them" in done.stdout
    # Adding another command (even one not used) also voids it: trust covers the whole set.
    trust(repo)
    with (repo / CONFIG).open("a") as handle:
        handle.write("    other: [echo]\n")
    assert not ok(repo, "trust", "--show", "--json").json()["trusted"]
    trust(repo)
    ok(repo, "trust", "--revoke")
    assert not ok(repo, "trust", "--show", "--json").json()["trusted"]


def test_overriding_a_builtin_agent_name_is_gated(repo: Path, tmp_path: Path, fakes: Path) -> None:
    planned(repo, SIX[:1])
    marker = tmp_path / "ran"
    configure(repo, "claude", marker)  # shadows the built-in claude backend
    done = sprint(repo, "--implementer", "claude", "--reviewer", "codex", "--retries", "0")
    assert_refused_before_anything(repo, done, marker, "agents.commands.claude")
    assert fakes.read_text() == ""  # neither the real (fake) claude nor codex ran
    # Built-in backends need no trust, even when the config defines other commands.
    done = sprint(repo, "--implementer", "codex", "--reviewer", "gemini", "--retries", "0")
    assert events(done)[0]["event"] == "start" and not marker.exists()
    assert fakes.read_text() != ""


def test_the_trust_file_is_outside_the_repo_and_the_repo_cannot_write_it(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    planned(repo, SIX[:1])
    marker = tmp_path / "ran"
    configure(repo, "mine", marker)
    trust(repo)
    path = trust_file()
    assert path.is_file() and not path.resolve().is_relative_to(repo.resolve())
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    data = json.loads(path.read_text())
    entry = data["repos"][str(repo.resolve())]
    assert entry["keys"] == ["agents.commands.mine"] and len(entry["sha256"]) == 64

    # A clone elsewhere, shipping a trust file with the right digest inside itself,
    # is not trusted: only the user's file counts, keyed by the clone's own path.
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    for inside in (clone / ".config" / "kitty", clone / ".kittify"):
        inside.mkdir(parents=True, exist_ok=True)
        (inside / "trust.json").write_text(
            json.dumps({"schema": 1, "repos": {str(clone.resolve()): entry}})
        )
    assert not ok(clone, "trust", "--show", "--json").json()["trusted"]
    refused = kitty(clone, "sprint", "--implementer", "mine", "--reviewer", "codex")
    assert refused.code == 1 and "agents.commands.mine" in refused.err

    # Even a user whose config dir lies inside the repository gets no trust from it.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(clone / ".config"))
    assert not ok(clone, "trust", "--show", "--json").json()["trusted"]
    inside = kitty(clone, "trust")
    assert inside.code == 1 and "inside the repository" in inside.err
    assert not marker.exists()


def test_nothing_to_trust_without_commands(repo: Path) -> None:
    planned(repo, SIX[:1])
    out = ok(repo, "trust").out
    assert "defines no commands" in out and not trust_file().exists()
    assert ok(repo, "trust", "--show", "--json").json()["needed"] is False
    assert kitty(repo, "trust", "--show", "--revoke").code == 2


def test_review_test_command_from_the_config_is_gated(
    repo: Path, tmp_path: Path, fakes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.panel import test_review_panel as rp

    monkeypatch.delenv("KITTY_REVIEW_CONCURRENCY", raising=False)
    counter = tmp_path / "test-runs"
    test = rp.counting_test(counter, passes_after=1)
    rp.ready_for_review(repo, f"review:\n  test_command: {json.dumps(test)}\n")
    script = {"review": {"1": {"security": [rp.p1()]}}}
    args = ("--panel", "security", "--agents", "codex")
    code, result = rp.panel(repo, tmp_path, script, *args)
    assert code == 1 and result["error"]["code"] == "untrusted"
    assert "review.test_command" in result["error"]["message"]
    assert not counter.exists() and fakes.read_text() == ""  # no reviewer, no fix, no test
    assert rp.status(repo)["lane"] == "for_review"
    trust(repo)
    code, result = rp.panel(repo, tmp_path, script, *args)
    assert (code, result["loop_verdict"]) == (0, "CONVERGED") and counter.read_text() == "xx"


def test_doctor_warns_about_untrusted_commands_without_failing(repo: Path, tmp_path: Path) -> None:
    planned(repo, SIX[:1])

    def trust_warnings() -> list[str]:
        done = kitty(repo, "doctor", "--json")
        assert done.code == 0, done.out + done.err
        return [w for w in done.json()["warnings"] if "kitty trust" in w]

    assert trust_warnings() == []  # nothing defined, nothing to trust
    configure(repo, "mine", tmp_path / "first")
    [warning] = trust_warnings()
    assert warning.startswith(f"{CONFIG} defines commands kitty would run, not trusted")
    assert "agents.commands.mine" in warning and "`kitty trust --show`" in warning
    plain = kitty(repo, "doctor")
    assert plain.code == 0 and f"warning: {warning}" in plain.err
    trust(repo)
    assert trust_warnings() == []
    configure(repo, "mine", tmp_path / "second")
    [changed] = trust_warnings()
    assert "changed since you trusted them" in changed
    assert not (tmp_path / "first").exists() and not (tmp_path / "second").exists()
