"""`kitty init`'s proposal of the project's verification commands (`verify.*`): read the
repository's top level, ask the pure rule (project/rules/verify.py) what it recognises,
and what `init` says about it. The config write itself is adapters.config.update (only
when the config has no `verify` key yet)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kitty.project.rules.verify import READ, Proposal, as_config, propose

#: A file larger than this is not a build file kitty reads to recognise a project.
MAX_BYTES = 1 << 20


def listing(root: Path) -> tuple[set[str], dict[str, str]]:
    """The top-level names (a folder with a trailing `/`) and the text of the files the
    rule reads (regular files only, never through a symlink, undecodable bytes replaced)."""
    names: set[str] = set()
    texts: dict[str, str] = {}
    for entry in root.iterdir():
        if entry.name == ".git":
            continue
        is_dir = entry.is_dir() and not entry.is_symlink()
        names.add(entry.name + "/" if is_dir else entry.name)
        readable = entry.name in READ and entry.is_file() and not entry.is_symlink()
        if readable and entry.stat().st_size <= MAX_BYTES:
            texts[entry.name] = entry.read_bytes().decode("utf-8", errors="replace")
    return names, texts


def proposals(root: Path, raw: dict[str, Any]) -> list[Proposal]:
    """What `init` proposes; nothing when the config already has a `verify` key."""
    if "verify" in raw:
        return []
    return propose(*listing(root))


def report(found: list[Proposal], raw_after: dict[str, Any]) -> dict[str, Any]:
    """`init`'s `verify` answer: what it proposed and wrote, or what is configured."""
    from kitty.core.verify import verify_commands

    configured = [c.line for c in verify_commands(raw_after)]
    return {
        "proposed": [{"name": p.name, "line": p.line, "why": p.why} for p in found],
        "written": bool(found) and raw_after.get("verify") == as_config(found),
        "commands": configured,
    }


def describe(view: dict[str, Any]) -> str:
    """The lines `kitty init` prints about verification."""
    if view["proposed"] and view["written"]:
        lines = ["verify: proposed and written to .kittify/config.yaml (edit them there):"]
        lines += [
            f"  verify.{p['name']}: {p['line']}   (from {p['why']})" for p in view["proposed"]
        ]
        lines.append(
            "  agents may run exactly these; review them with `kitty trust --show`, "
            "then `kitty trust`"
        )
        return "\n".join(lines)
    if view["commands"]:
        return "verify: " + "; ".join(view["commands"]) + " (from .kittify/config.yaml)"
    return (
        "verify: none configured, and none recognised: nothing verifies the agents' work;\n"
        '  add e.g. verify: {test: "python -m pytest -q"} to .kittify/config.yaml'
    )
