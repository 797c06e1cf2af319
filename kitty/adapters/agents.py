"""Agent CLI backends: the exact command line each headless agent is dispatched with.

The prompt is always passed as an argument list (or on stdin), never through a
shell. Command lines follow the dispatch table of the implement-review skill.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kitty.core.state import as_dict
from kitty.errors import AgentError

MANUAL = "manual"


@dataclass(frozen=True)
class Invocation:
    argv: list[str]
    cwd: str
    stdin: str | None = None


@dataclass(frozen=True)
class Dispatch:
    """What a backend needs to build its command line."""

    agent: str
    role: str  # implement | review
    prompt: str
    prompt_file: str
    workspace: str
    wp_id: str
    mission: str
    repo: str
    timeout: int = 600
    extra: Mapping[str, str] = field(default_factory=dict)


def _claude(d: Dispatch) -> Invocation:
    return Invocation(
        ["claude", "-p", d.prompt, "--output-format", "json", "-C", d.workspace], d.workspace
    )


def _codex(d: Dispatch) -> Invocation:
    argv = ["codex", "exec", "--sandbox", "danger-full-access", "-C", d.workspace]
    if d.role == "review":  # the skill's reviewer line: see the repo, keep the verdict text
        argv += ["--add-dir", d.repo]
        if d.extra.get("result_file"):
            argv += ["-o", d.extra["result_file"]]
    return Invocation([*argv, "-"], d.workspace, stdin=d.prompt)


def _gemini(d: Dispatch) -> Invocation:
    return Invocation(
        ["gemini", "-p", d.prompt, "--yolo", "--output-format", "json", "-C", d.workspace],
        d.workspace,
    )


def _llxprt(d: Dispatch) -> Invocation:
    return Invocation(["llxprt", "-p", d.prompt, "--approval-mode=yolo"], d.workspace)


def _opencode(d: Dispatch) -> Invocation:
    return Invocation(
        ["opencode", "run", d.prompt, "--format", "json", "-C", d.workspace], d.workspace
    )


def _qwen(d: Dispatch) -> Invocation:
    return Invocation(
        ["qwen", "-p", d.prompt, "--yolo", "--output-format", "json", "-C", d.workspace],
        d.workspace,
    )


def _kilocode(d: Dispatch) -> Invocation:
    return Invocation(["kilocode", "-a", "--yolo", "-j", d.prompt, "-C", d.workspace], d.workspace)


def _auggie(d: Dispatch) -> Invocation:
    return Invocation(["auggie", "--acp", d.prompt, "-C", d.workspace], d.workspace)


def _cursor(d: Dispatch) -> Invocation:
    return Invocation(
        [
            "timeout",
            str(d.timeout),
            "cursor",
            "agent",
            "-p",
            "--force",
            "--output-format",
            "json",
            d.prompt,
            "-C",
            d.workspace,
        ],
        d.workspace,
    )


BUILTIN = {
    "claude": _claude,
    "codex": _codex,
    "gemini": _gemini,
    "llxprt": _llxprt,
    "opencode": _opencode,
    "qwen": _qwen,
    "kilocode": _kilocode,
    "auggie": _auggie,
    "cursor": _cursor,
}
TIER = {"cursor": 2}


def _template(template: list[str], d: Dispatch) -> Invocation:
    values = {
        "prompt": d.prompt,
        "prompt_file": d.prompt_file,
        "workspace": d.workspace,
        "wp": d.wp_id,
        "mission": d.mission,
        "role": d.role,
        "agent": d.agent,
        "repo": d.repo,
        "python": sys.executable,
        "timeout": str(d.timeout),
        **d.extra,
    }
    return Invocation([_substitute(str(part), values, d.agent) for part in template], d.workspace)


def _substitute(part: str, values: Mapping[str, str], agent: str) -> str:
    """`part` with each `{name}` replaced by its value and `{{`/`}}` by a brace.

    Never str.format: a repository's template gets no attribute or index access
    (`{prompt.__class__}`), conversion or format spec, only the plain names listed.
    """
    from string import Formatter

    out = []
    try:
        for literal, name, spec, conversion in Formatter().parse(part):
            out.append(literal)
            if name is None:
                continue
            if spec or conversion or name not in values:
                raise ValueError(f"unknown placeholder {{{name}}}")
            out.append(values[name])
    except ValueError as exc:
        raise AgentError(
            f"agents.commands.{agent}: bad placeholder in {part!r} ({exc})",
            "placeholders: {" + "}, {".join(sorted(values)) + "} (plain names only)",
        ) from None
    return "".join(out)


@dataclass(frozen=True)
class Backend:
    name: str  # the agent name as configured
    kind: str  # a builtin name, "command" or "manual"
    template: tuple[str, ...] = ()

    @property
    def tier(self) -> int:
        return 3 if self.kind == MANUAL else TIER.get(self.kind, 1)

    def invocation(self, d: Dispatch) -> Invocation:
        if self.kind == "command":
            return _template(list(self.template), d)
        if self.kind == MANUAL:
            raise AgentError("a manual agent has no command", "a human runs it")
        return BUILTIN[self.kind](d)

    def executable(self) -> str | None:
        if self.kind == MANUAL:
            return None
        if self.kind == "command":
            # The literal `{python}` only: never str.format on a repository's template.
            return self.template[0].replace("{python}", sys.executable) if self.template else None
        return "timeout" if self.kind == "cursor" else self.kind

    def available(self) -> bool:
        exe = self.executable()
        if self.kind == MANUAL:
            return True
        if exe is None:
            return False
        return shutil.which(exe) is not None and (
            self.kind != "cursor" or shutil.which("cursor") is not None
        )


def backend_for(name: str, raw_config: Mapping[str, Any]) -> Backend:
    """The backend of an agent name: a configured command, `manual`, or a builtin CLI."""
    agents = as_dict(raw_config.get("agents"))
    commands = as_dict(agents.get("commands"))
    manual_list = agents.get("manual")
    manual: list[Any] = manual_list if isinstance(manual_list, list) else []
    if name in commands:
        template = commands[name]
        if isinstance(template, str):
            raise AgentError(
                f"agents.commands.{name} must be a list of arguments, not a string",
                'write it as ["mytool", "--prompt-file", "{prompt_file}"]',
            )
        if not isinstance(template, list) or not template:
            raise AgentError(f"agents.commands.{name} is empty", "give the argv as a list")
        return Backend(name, "command", tuple(str(p) for p in template))
    if name == MANUAL or name in manual:
        return Backend(name, MANUAL)
    base = name.split(":", 1)[0]
    if base in BUILTIN:
        return Backend(name, base)
    raise AgentError(
        f"unknown agent {name!r}",
        "use one of " + ", ".join(sorted(BUILTIN)) + ", 'manual', or define "
        f"agents.commands.{name} in .kittify/config.yaml",
    )


def configured(raw_config: Mapping[str, Any]) -> list[str]:
    agents = as_dict(raw_config.get("agents"))
    names = [str(a) for a in agents.get("available") or []]
    commands = as_dict(agents.get("commands"))
    return list(dict.fromkeys([*names, *map(str, commands)]))
