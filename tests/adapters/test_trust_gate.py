"""The trust gate's promises, from the user's side, in-process (so `make mutation` can
kill the mutants of kitty/adapters/trust.py; tests/adapters/test_trust.py covers the commands).

A repository's commands run only while the user trusts exactly their current values:
every key that makes kitty run a command voids the trust when it changes.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from kitty.adapters import trust
from kitty.errors import EnvironmentProblem, Untrusted

BASE: dict[str, Any] = {
    "agents": {"commands": {"mine": ["my-agent", "{prompt}"]}},
    "review": {"test_command": ["pytest", "-q"]},
}

# What a user is told when the trust file cannot be written.
HINT = (
    "make {folder} a folder you can write to, with free space,"
    " or set XDG_CONFIG_HOME to one; your trust is unchanged"
)

# Every way a config can change a command kitty would run.
CHANGES: dict[str, dict[str, Any]] = {
    "an agent's argv": {**BASE, "agents": {"commands": {"mine": ["evil", "{prompt}"]}}},
    "a new agent": {
        **BASE,
        "agents": {"commands": {"mine": ["my-agent", "{prompt}"], "claude": ["sh", "-c", "x"]}},
    },
    "an agent removed and another added": {**BASE, "agents": {"commands": {"other": ["x"]}}},
    "commands that are not a mapping": {**BASE, "agents": {"commands": ["sh", "-c", "x"]}},
    "the review test command": {**BASE, "review": {"test_command": ["sh", "-c", "rm -rf ~"]}},
    "a test command as a string": {**BASE, "review": {"test_command": "pytest -q"}},
    "the review test command removed": {"agents": BASE["agents"]},
    "a nested option of an agent": {
        **BASE,
        "agents": {"commands": {"mine": {"argv": ["my-agent"], "env": {"A": "1"}}}},
    },
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_every_change_to_a_command_voids_the_trust(project: Path, change: str) -> None:
    trust.record(project, BASE)
    trust.require(project, BASE)  # trusted as recorded
    changed = CHANGES[change]
    with pytest.raises(Untrusted) as caught:
        trust.require(project, changed)
    assert "changed since you trusted them" in str(caught.value)
    assert "kitty trust --show" in caught.value.hint
    view = trust.status(project, changed)
    assert (view["trusted"], view["changed"], view["needed"]) == (False, True, True)
    trust.require(project, BASE)  # going back to the trusted values is trusted again


def test_keys_that_run_nothing_do_not_touch_the_trust(project: Path) -> None:
    trust.record(project, BASE)
    calm = {**BASE, "agents": {**BASE["agents"], "default": "mine"}, "other": {"x": 1}}
    calm["review"] = {**BASE["review"], "max_rounds": 3}
    trust.require(project, calm)


def test_a_nested_change_inside_a_command_value_voids_the_trust(project: Path) -> None:
    first = {"agents": {"commands": {"mine": {"env": {"B": "2", "A": "1"}, "argv": ["x"]}}}}
    same = {"agents": {"commands": {"mine": {"argv": ["x"], "env": {"A": "1", "B": "2"}}}}}
    trust.record(project, first)
    trust.require(project, same)  # the same values written in another order
    with pytest.raises(Untrusted):
        trust.require(project, {"agents": {"commands": {"mine": {"argv": ["x"], "env": {}}}}})


def test_a_never_trusted_repository_is_refused_naming_the_keys(project: Path) -> None:
    with pytest.raises(Untrusted) as caught:
        trust.require(project, BASE)
    message = str(caught.value)
    assert message == (
        ".kittify/config.yaml defines commands kitty would run, not trusted: "
        "agents.commands.mine, review.test_command"
    )
    with pytest.raises(Untrusted, match=r"not trusted: agents\.commands\.mine$"):
        trust.require(project, BASE, used=["agents.commands.mine"])
    view = trust.status(project, BASE)
    assert (view["trusted"], view["changed"], view["needed"]) == (False, False, True)
    assert view["commands"] == {
        "agents.commands.mine": ["my-agent", "{prompt}"],
        "review.test_command": ["pytest", "-q"],
    }
    assert list(view["commands"]) == sorted(view["commands"])


def test_a_config_without_commands_needs_no_trust_and_writes_nothing(project: Path) -> None:
    for raw in ({}, {"agents": {"default": "claude"}}, {"review": {"test_command": None}}):
        trust.require(project, raw)
        assert trust.record(project, raw)["action"] == "none"
        view = trust.status(project, raw)
        assert (view["trusted"], view["needed"], view["commands"]) == (False, False, {})
    assert not trust.trust_file().exists()


def test_trust_is_per_repository(project: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    trust.record(project, BASE)
    with pytest.raises(Untrusted, match="not trusted"):
        trust.require(other, BASE)


def test_the_trust_file_lives_in_the_users_config_folder(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    assert trust.trust_file() == config / "kitty" / "trust.json"
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/dir")  # ignored, as the XDG spec says
    assert trust.trust_file() == Path.home() / ".config" / "kitty" / "trust.json"
    monkeypatch.setenv("XDG_CONFIG_HOME", "")
    assert trust.trust_file() == Path.home() / ".config" / "kitty" / "trust.json"
    monkeypatch.delenv("XDG_CONFIG_HOME")
    assert trust.trust_file() == Path.home() / ".config" / "kitty" / "trust.json"


def test_only_the_user_can_read_or_write_the_trust_file(project: Path) -> None:
    done = trust.record(project, BASE)
    assert (done["action"], done["trusted"], done["changed"]) == ("trusted", True, False)
    path = trust.trust_file()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    data = json.loads(path.read_text())
    assert data["schema"] == trust.SCHEMA
    entry = data["repos"][str(project.resolve())]
    assert entry["sha256"] == trust.digest(trust.repo_commands(BASE))
    assert entry["keys"] == ["agents.commands.mine", "review.test_command"]
    assert (
        len(entry["trusted_at"]) == len("2026-01-01T00:00:00Z") and entry["trusted_at"][-1] == "Z"
    )
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(".trust.")] == []


def test_a_trust_file_inside_the_repository_is_never_believed(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(project / ".config"))
    with pytest.raises(EnvironmentProblem, match="is inside the repository"):
        trust.record(project, BASE)
    # a file the repository wrote itself, claiming trust, is ignored
    forged = {
        "schema": 1,
        "repos": {str(project.resolve()): {"sha256": trust.digest(trust.repo_commands(BASE))}},
    }
    trust.trust_file().parent.mkdir(parents=True)
    trust.trust_file().write_text(json.dumps(forged))
    with pytest.raises(Untrusted):
        trust.require(project, BASE)
    assert trust.status(project, BASE)["trusted"] is False


def test_revoke_forgets_the_trust(project: Path) -> None:
    assert trust.revoke(project) is False  # no trust file at all
    trust.record(project, BASE)
    assert trust.revoke(project) is True
    with pytest.raises(Untrusted, match="not trusted"):
        trust.require(project, BASE)
    assert trust.revoke(project) is False


def test_repositories_that_are_gone_are_forgotten(project: Path, tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    trust.record(gone, BASE)
    gone.rmdir()
    trust.record(project, BASE)
    assert list(json.loads(trust.trust_file().read_text())["repos"]) == [str(project.resolve())]


@pytest.mark.parametrize("text", ["{not json", "[]", '{"repos": []}', '{"schema": 1}'])
def test_a_damaged_trust_file_is_an_error_with_a_way_out(project: Path, text: str) -> None:
    path = trust.trust_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    with pytest.raises(EnvironmentProblem) as caught:
        trust.require(project, BASE)
    assert str(path) in str(caught.value)
    assert f"move {path} aside" in caught.value.hint
    assert path.read_text() == text


def test_an_unwritable_config_folder_is_an_error_not_a_traceback(project: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root writes anywhere")
    folder = trust.trust_file().parent
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o500)
    try:
        with pytest.raises(EnvironmentProblem, match="cannot write"):
            trust.record(project, BASE)
    finally:
        folder.chmod(0o700)


def test_a_trust_recorded_by_any_kitty_version_stays_valid(project: Path) -> None:
    """The digest is the sha256 of the canonical JSON (sorted keys, no spaces, UTF-8 as is,
    other values as text): pinned, so an upgrade never silently voids or forges a trust."""
    import datetime as dt
    import hashlib

    commands = {
        "agents.commands.mine": ["agent-é", "{prompt}"],
        "z": {"b": 1, "a": dt.date(2026, 1, 2)},
    }
    canonical = '{"agents.commands.mine":["agent-é","{prompt}"],"z":{"a":"2026-01-02","b":1}}'
    assert trust.digest(commands) == hashlib.sha256(canonical.encode()).hexdigest()


def test_a_non_mapping_commands_value_is_gated_as_one_key(project: Path) -> None:
    first = {"agents": {"commands": "sh -c one"}}
    assert trust.status(project, first)["commands"] == {"agents.commands": "sh -c one"}
    trust.record(project, first)
    trust.require(project, first)
    with pytest.raises(Untrusted):
        trust.require(project, {"agents": {"commands": "sh -c two"}})


def test_the_messages_say_exactly_what_to_do(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trust.record(project, BASE)
    with pytest.raises(Untrusted) as caught:
        trust.require(project, CHANGES["an agent's argv"], used=["agents.commands.mine"])
    assert str(caught.value) == (
        ".kittify/config.yaml defines commands kitty would run, changed since you trusted them: "
        "agents.commands.mine"
    )
    assert caught.value.hint == "review them with `kitty trust --show`, then run `kitty trust`"
    view = trust.status(project, BASE)
    assert (view["repo"], view["config"], view["trust_file"]) == (
        str(project.resolve()),
        ".kittify/config.yaml",
        str(trust.trust_file()),
    )
    monkeypatch.setenv("XDG_CONFIG_HOME", str(project / ".config"))
    with pytest.raises(EnvironmentProblem) as inside:
        trust.record(project, BASE)
    assert str(inside.value) == (
        f"the trust file {trust.trust_file()} is inside the repository {project.resolve()}"
    )
    assert inside.value.hint == (
        "set XDG_CONFIG_HOME (or HOME) to a directory outside the repository"
    )


def test_trusting_a_changed_config_reports_it_trusted_and_unchanged(project: Path) -> None:
    trust.record(project, BASE)
    changed = CHANGES["a new agent"]
    assert trust.status(project, changed)["changed"] is True
    done = trust.record(project, changed)
    assert (done["action"], done["trusted"], done["changed"]) == ("trusted", True, False)
    trust.require(project, changed)


def test_the_trust_file_is_private_readable_and_stamped_in_utc(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time
    from datetime import UTC, datetime

    monkeypatch.setenv("TZ", "Asia/Kathmandu")  # +05:45: a local stamp would be hours off
    time.tzset()
    try:
        before = datetime.now(UTC).replace(microsecond=0)
        trust.record(project, BASE)
        after = datetime.now(UTC)
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    path = trust.trust_file()
    folder = path.parent
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    # the lock lives beside the file, nothing else is left there
    assert sorted(p.name for p in folder.iterdir()) == ["trust.json", "trust.json.lock"]
    data = json.loads(path.read_text())
    assert sorted(data) == ["repos", "schema"]
    # a stable, reviewable format: sorted keys, two-space indent, final newline
    assert path.read_text() == json.dumps(data, indent=2, sort_keys=True) + "\n"
    stamp = datetime.strptime(
        data["repos"][str(project.resolve())]["trusted_at"], "%Y-%m-%dT%H:%M:%SZ"
    ).replace(tzinfo=UTC)
    assert before <= stamp <= after


def test_an_old_trust_file_without_schema_gets_one(project: Path) -> None:
    path = trust.trust_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"repos": {}}')
    trust.record(project, BASE)
    assert json.loads(path.read_text())["schema"] == trust.SCHEMA


def test_a_full_disk_keeps_the_old_trust_and_leaves_no_temp_file(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    trust.record(project, BASE)
    path = trust.trust_file()
    before = path.read_text()
    written: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:  # where the new content is written, before the rename
        written.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    def full(*args: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(EnvironmentProblem) as caught:
        trust.record(project, CHANGES["a new agent"])
    assert str(caught.value) == f"cannot write {path}: No space left on device"
    assert caught.value.hint == HINT.format(folder=trust.trust_file().parent)
    assert path.read_text() == before
    # written next to trust.json (so the rename is atomic), and removed after the failure
    assert [Path(w).parent for w in written] == [path.parent]
    assert sorted(p.name for p in path.parent.iterdir()) == ["trust.json", "trust.json.lock"]


def test_a_temp_file_that_cannot_be_created_is_an_error(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno
    import tempfile

    def denied(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", denied)
    with pytest.raises(EnvironmentProblem) as caught:
        trust.record(project, BASE)
    assert str(caught.value) == f"cannot write {trust.trust_file()}: Permission denied"
    assert caught.value.hint == HINT.format(folder=trust.trust_file().parent)


def test_the_config_folder_is_private_even_when_it_and_its_parents_are_new(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "new" / "config"))
    trust.record(project, BASE)
    path = trust.trust_file()
    assert path.parent == tmp_path / "new" / "config" / "kitty"
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    trust.require(project, BASE)


def test_a_config_folder_that_cannot_be_made_is_an_error_with_a_way_out(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    def read_only(self: Path, *args: object, **kwargs: object) -> None:
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "mounted"))
    monkeypatch.setattr(Path, "mkdir", read_only)
    with pytest.raises(EnvironmentProblem) as caught:
        trust.record(project, BASE)
    assert str(caught.value) == f"cannot write {trust.trust_file()}: Read-only file system"
    assert caught.value.hint == HINT.format(folder=trust.trust_file().parent)


def test_non_ascii_paths_and_commands_round_trip_whatever_the_locale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import locale

    root = tmp_path / "projét-日本"
    root.mkdir()
    config = {"agents": {"commands": {"mine": ["agënt", "--say", "héllo ✓"]}}}
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cönfig"))
    before = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")  # a 7-bit locale: the file is UTF-8 all the same
    path = trust.trust_file()
    try:
        trust.record(root, config)
        trust.require(root, config)
        # the same file as an editor or `jq` saves it: UTF-8 as is, not \u escapes
        data = json.loads(path.read_bytes().decode("utf-8"))
        assert str(root.resolve()) in data["repos"]
        path.write_bytes(json.dumps(data, ensure_ascii=False).encode("utf-8"))
        trust.require(root, config)
        assert trust.status(root, config)["trusted"]
    finally:
        locale.setlocale(locale.LC_CTYPE, before)


def test_a_temp_file_removed_before_the_rename_is_still_a_clear_error(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    trust.record(project, BASE)
    path = trust.trust_file()
    before = path.read_text()

    def swept(src: str, dst: object) -> None:  # another program cleaned the folder meanwhile
        os.unlink(src)
        raise FileNotFoundError(errno.ENOENT, "No such file or directory")

    monkeypatch.setattr(os, "replace", swept)
    with pytest.raises(EnvironmentProblem) as caught:
        trust.record(project, CHANGES["a new agent"])
    assert str(caught.value) == f"cannot write {path}: No such file or directory"
    assert caught.value.hint == HINT.format(folder=path.parent)
    assert path.read_text() == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["trust.json", "trust.json.lock"]


def test_a_held_lock_is_waited_for_twenty_seconds_then_a_clear_error(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import fcntl
    import time

    trust.record(project, BASE)
    path = trust.trust_file()
    before = path.read_text()
    clock = [1000.0]  # a virtual clock: the wait takes no real time

    def now() -> float:
        return clock[0]

    def sleep(seconds: float) -> None:
        clock[0] += max(seconds, 0.001)
        assert clock[0] < 1100, "still waiting after 100 s"

    held = os.open(path.with_name("trust.json.lock"), os.O_RDWR)
    try:
        fcntl.flock(held, fcntl.LOCK_EX)  # another kitty command is updating the trust
        with monkeypatch.context() as patch, pytest.raises(EnvironmentProblem) as caught:
            patch.setattr(time, "perf_counter", now)
            patch.setattr(time, "monotonic", now)
            patch.setattr(time, "sleep", sleep)
            trust.record(project, CHANGES["a new agent"])
        waited = clock[0] - 1000.0
    finally:
        os.close(held)
    assert 20 <= waited < 20.5
    assert str(caught.value) == (f"{path} is being updated by another kitty command (waited 20 s)")
    assert caught.value.hint == (
        "try again once the other `kitty trust` (or `kitty demo`) has finished"
    )
    assert path.read_text() == before
    trust.record(project, CHANGES["a new agent"])  # the lock was let go: the next one works
    trust.require(project, CHANGES["a new agent"])
