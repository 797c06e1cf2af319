"""Trust in the commands a repository's `.kittify/config.yaml` defines.

A cloned repository can define the argv templates kitty runs (`agents.commands.<name>`,
which may even shadow a built-in agent such as `claude`, `review.test_command`, and the
verification commands `verify.<name>`).
kitty runs none of them until the user has trusted exactly those values with
`kitty trust`: a sha256 of their canonical JSON, keyed by the repository's absolute
path, kept OUTSIDE the repository in `$XDG_CONFIG_HOME/kitty/trust.json` (else
`~/.config/kitty/trust.json`, mode 0600). Any change to the values voids the trust.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kitty.errors import EnvironmentProblem, Untrusted

CONFIG = ".kittify/config.yaml"
SCHEMA = 1


def trust_file() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or ""
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".config"
    return root / "kitty" / "trust.json"


def repo_commands(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Every command value the repository's config defines, by dotted key (values as written)."""
    found: dict[str, Any] = {}
    agents = raw.get("agents")
    if isinstance(agents, Mapping):
        commands = agents.get("commands")
        if isinstance(commands, Mapping):
            for name, value in commands.items():
                found[f"agents.commands.{name}"] = value
        elif commands is not None:
            found["agents.commands"] = commands
    review = raw.get("review")
    if isinstance(review, Mapping) and review.get("test_command") is not None:
        found["review.test_command"] = review["test_command"]
    verify = raw.get("verify")
    if isinstance(verify, Mapping):
        for name, value in verify.items():
            found[f"verify.{name}"] = value
    elif verify is not None:
        found["verify"] = verify
    return dict(sorted(found.items()))


def digest(commands: Mapping[str, Any]) -> str:
    canonical = json.dumps(
        commands, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _key(root: Path) -> str:
    return str(root.resolve())


def _inside(path: Path, root: Path) -> bool:
    return path.resolve().is_relative_to(root.resolve())


def load() -> dict[str, Any]:
    path = trust_file()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"schema": SCHEMA, "repos": {}}
    except (OSError, ValueError) as exc:
        raise EnvironmentProblem(
            f"{path}: unreadable trust file ({exc})",
            f"move {path} aside and run `kitty trust` again in each repository you trust",
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("repos"), dict):
        raise EnvironmentProblem(
            f"{path}: not a kitty trust file",
            f"move {path} aside and run `kitty trust` again in each repository you trust",
        )
    return data


def _unwritable(path: Path, exc: OSError) -> EnvironmentProblem:
    return EnvironmentProblem(
        f"cannot write {path}: {exc.strerror or exc}",
        f"make {path.parent} a folder you can write to, with free space,"
        " or set XDG_CONFIG_HOME to one; your trust is unchanged",
    )


def _save(data: dict[str, Any]) -> None:
    path = trust_file()  # its folder exists: _update made it
    try:
        fd, tmp = tempfile.mkstemp(prefix=".trust.", suffix=".tmp", dir=path.parent)  # 0600
    except OSError as exc:
        raise _unwritable(path, exc) from None
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(data, indent=2, sort_keys=True) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise _unwritable(path, exc) from None


def _update(change: Any) -> None:
    from filelock import FileLock, Timeout

    path = trust_file()
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise _unwritable(path, exc) from None
    lock = FileLock(str(path.with_name("trust.json.lock")), timeout=20)
    try:
        held = lock.acquire()
    except Timeout:
        raise EnvironmentProblem(
            f"{path} is being updated by another kitty command (waited {lock.timeout:g} s)",
            "try again once the other `kitty trust` (or `kitty demo`) has finished",
        ) from None
    with held:
        data = load()
        repos = data["repos"]
        change(repos)
        # Forget repositories that no longer exist (e.g. finished `kitty demo` runs).
        data["repos"] = {k: v for k, v in repos.items() if Path(k).is_dir()}
        data["schema"] = SCHEMA
        _save(data)


def status(root: Path, raw: Mapping[str, Any]) -> dict[str, Any]:
    """What the config defines, its digest, and whether the user trusts exactly that."""
    commands = repo_commands(raw)
    sha = digest(commands)
    path = trust_file()
    entry = load()["repos"].get(_key(root)) if not _inside(path, root) else None
    recorded = entry.get("sha256") if isinstance(entry, dict) else None
    return {
        "repo": _key(root),
        "config": CONFIG,
        "trust_file": str(path),
        "commands": commands,
        "sha256": sha,
        "trusted": bool(commands) and recorded == sha,
        "changed": recorded is not None and recorded != sha,
        "needed": bool(commands),
    }


def record(root: Path, raw: Mapping[str, Any]) -> dict[str, Any]:
    """Trust the config's current command values for this repository."""
    path = trust_file()
    if _inside(path, root):
        raise EnvironmentProblem(
            f"the trust file {path} is inside the repository {_key(root)}",
            "set XDG_CONFIG_HOME (or HOME) to a directory outside the repository",
        )
    view = status(root, raw)
    if not view["needed"]:
        return {**view, "action": "none"}
    entry = {
        "sha256": view["sha256"],
        "keys": list(view["commands"]),
        "trusted_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    _update(lambda repos: repos.__setitem__(view["repo"], entry))
    return {**view, "trusted": True, "changed": False, "action": "trusted"}


def revoke(root: Path) -> bool:
    """Forget this repository's trust; True when there was one."""
    had: list[bool] = []

    def change(repos: dict[str, Any]) -> None:
        had.append(repos.pop(_key(root), None) is not None)

    if not trust_file().exists():
        return False
    _update(change)
    return had[0]


def require(root: Path, raw: Mapping[str, Any], used: list[str] | None = None) -> None:
    """Refuse (Untrusted) unless the user trusts exactly the config's command values.

    `used` names the keys about to run (for the message); all keys are always checked,
    since trust covers the whole set.
    """
    view = status(root, raw)
    if not view["needed"] or view["trusted"]:
        return
    keys = used or list(view["commands"])
    why = "changed since you trusted them" if view["changed"] else "not trusted"
    raise Untrusted(
        f"{CONFIG} defines commands kitty would run, {why}: {', '.join(keys)}",
        "review them with `kitty trust --show`, then run `kitty trust`",
    )
