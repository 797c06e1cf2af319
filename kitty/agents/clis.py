"""Agent CLI backends: the exact command line each headless agent is dispatched with.

The prompt goes on stdin where the CLI reads it there (an argument, never through a
shell, otherwise). The command lines of the CLIs in `TESTED` are the ones their
current releases accept, run against the real binaries by tests/agents; the ones in
`NOT_VERIFIED` follow the dispatch table of the implement-review skill.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kitty.agents import grants
from kitty.core.log.state import as_dict
from kitty.errors import AgentError

MANUAL = "manual"


@dataclass(frozen=True)
class Invocation:
    argv: list[str]
    cwd: str
    stdin: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)  # set over kitty's own env


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
    #: The project's verify.* command lines the agent may run too (kitty.agents.grants).
    commands: tuple[str, ...] = ()
    model: str | None = None  # the model this role runs on (None: the CLI's default)


def model_flag(flag: str, d: Dispatch) -> list[str]:
    """The CLI's own model option, when a model was chosen for this run."""
    return [flag, d.model] if d.model else []


#: What a claude implementer or reviewer may do without asking (`claude -p` denies every
#: other tool call): read files, edit and write files in its worktree only (`claude_tools`
#: scopes Edit and Write to it), and run `git` and `kitty`. Narrower than
#: `--permission-mode bypassPermissions`, which claude refuses when run as root anyway.
CLAUDE_TOOLS = "Read,Edit,Write,Glob,Grep,Bash(git *),Bash(kitty *)"


def claude_tools(workspace: str) -> str:
    """CLAUDE_TOOLS with Edit and Write scoped to `workspace` and below, for implementer
    and reviewer alike (the review feedback file is inside the worktree too): claude's
    path rules take `//` for an absolute path (one `/` is relative to its settings file)."""
    scope = "//" + workspace.lstrip("/").rstrip("/") + "/**"
    return CLAUDE_TOOLS.replace("Edit,Write", f"Edit({scope}),Write({scope})")


#: The same for qwen (its default approval mode denies the rest headless). Its own tool
#: names: headless, qwen drops the shell and write_file tools from what the model is
#: offered unless a rule names them so (its Claude-style aliases Bash/Write do not).
QWEN_TOOLS = (
    "read_file,list_directory,glob,grep_search,edit,write_file,"
    "run_shell_command(git *),run_shell_command(kitty *)"
)
#: gemini's policy (its policy engine, given with --policy): edits and `git`/`kitty`
#: commands allowed; in its default approval mode it allows the read-only tools and,
#: headless, denies anything that would ask.
GEMINI_POLICY = Path(__file__).resolve().parent.parent / "data" / "gemini-policy.toml"
#: opencode's permission config (OPENCODE_PERMISSION, merged over its config files):
#: the last matching rule wins, so everything is denied first, then read, edit and
#: `git`/`kitty` commands allowed. Paths outside the worktree are opencode's own
#: `external_directory` permission, which only the first "deny" covers.
OPENCODE_PERMISSION: dict[str, Any] = {
    "*": "deny",
    **dict.fromkeys(("read", "list", "glob", "grep", "edit"), "allow"),
    "bash": {"*": "deny", "git *": "allow", "kitty *": "allow"},
}


def opencode_permission(commands: tuple[str, ...] = ()) -> dict[str, Any]:
    """OPENCODE_PERMISSION with the verify commands' bash rules added."""
    bash = {**OPENCODE_PERMISSION["bash"], **grants.opencode_rules(commands)}
    return {**OPENCODE_PERMISSION, "bash": bash}


def _claude(d: Dispatch) -> Invocation:
    # claude has no directory flag: the worktree is its cwd. The prompt goes on stdin
    # (an argument is capped at 128 KiB by the kernel, and one starting with "-" would
    # be read as an option).
    return Invocation(
        [
            "claude",
            "-p",
            "--output-format",
            "json",
            "--allowedTools",
            ",".join([claude_tools(d.workspace), *grants.claude_rules(d.commands)]),
            *model_flag("--model", d),
        ],
        d.workspace,
        stdin=d.prompt,
    )


def _codex(d: Dispatch) -> Invocation:
    # danger-full-access: `workspace-write` keeps .git read-only, so the agent could not
    # commit; codex exec never asks for approval. allow_login_shell=false: its commands
    # run in `bash -c`, not `bash -lc`, whose /etc/profile resets PATH on Debian and
    # loses the `kitty` the prompt tells it to run.
    argv = [
        "codex", "exec", "--sandbox", "danger-full-access", "-c", "allow_login_shell=false",
        "-C", d.workspace, "--json", *model_flag("--model", d),
    ]  # fmt: skip
    if d.role == "review":  # the skill's reviewer line: see the repo, keep the verdict text
        argv += ["--add-dir", d.repo]
        if d.extra.get("result_file"):
            argv += ["-o", d.extra["result_file"]]
    return Invocation([*argv, "-"], d.workspace, stdin=d.prompt)


def _gemini(d: Dispatch) -> Invocation:
    # No directory flag: the worktree is the cwd. --skip-trust trusts it for this session
    # only (in an untrusted folder gemini drops the approval mode back to "default",
    # which nobody answers headless). The prompt on stdin runs it headless; stream-json
    # says which tool call its policy refused (its `json` result counts failures only).
    argv = ["gemini", "--skip-trust", "--approval-mode", "default", "--policy", str(GEMINI_POLICY)]
    if d.commands:  # the verify commands: a policy file of their own, beside the prompt
        folder = Path(d.prompt_file).parent
        argv += ["--policy", str(grants.gemini_policy_file(d.commands, folder))]
    argv += ["--output-format", "stream-json", *model_flag("--model", d)]
    return Invocation(argv, d.workspace, stdin=d.prompt)


def _llxprt(d: Dispatch) -> Invocation:
    return Invocation(["llxprt", "-p", d.prompt, "--approval-mode=yolo"], d.workspace)


def _opencode(d: Dispatch) -> Invocation:
    # `run` reads the message from stdin; its permissions come from OPENCODE_PERMISSION
    # (no --auto: nothing is left to "ask", every rule allows or denies).
    return Invocation(
        ["opencode", "run", "--dir", d.workspace, "--format", "json", *model_flag("--model", d)],
        d.workspace,
        stdin=d.prompt,
        env={"OPENCODE_PERMISSION": json.dumps(opencode_permission(d.commands))},
    )


def _qwen(d: Dispatch) -> Invocation:
    # No directory flag: the worktree is the cwd; the prompt on stdin (-p is deprecated).
    # Its default approval mode denies, headless, every tool call the list does not allow.
    return Invocation(
        ["qwen", "--approval-mode", "default", "--allowed-tools",
         ",".join([QWEN_TOOLS, *grants.qwen_rules(d.commands)]),
         "--output-format", "json", *model_flag("--model", d)],
        d.workspace,
        stdin=d.prompt,
    )  # fmt: skip


def _kilocode(d: Dispatch) -> Invocation:
    return Invocation(["kilocode", "-a", "--yolo", "-j", d.prompt, "-C", d.workspace], d.workspace)


def _auggie(d: Dispatch) -> Invocation:
    # --print is auggie's one-shot mode (--acp is its stdio protocol for editors).
    return Invocation(
        [
            "auggie",
            "--print",
            "--output-format",
            "json",
            "--workspace-root",
            d.workspace,
            "--instruction-file",
            d.prompt_file,
        ],
        d.workspace,
    )


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

#: The built-ins whose command line tests/agents runs against the real CLI installed from
#: the npm registry (tests/agents/package.json pins the versions): kitty was tested with
#: versions from the first up to (not including) the second.
TESTED: dict[str, tuple[str, str]] = {
    "claude": ("2.1.332", "2.2"),
    "codex": ("0.171.0", "0.172"),
    "gemini": ("0.61.0", "0.62"),
    "qwen": ("0.24.4", "0.25"),
    "opencode": ("1.18.33", "1.19"),
    "auggie": ("0.36.0", "0.37"),
}
#: The built-ins kitty could not install or run here, and where their command line
#: comes from (`kitty sprint --help` and the README list them as not verified).
NOT_VERIFIED: dict[str, str] = {
    "llxprt": "the implement-review skill's dispatch table; no npm package of that name "
    "could be installed",
    "kilocode": "the implement-review skill's dispatch table; @kilocode/cli 7.8.1 fetches "
    "its platform binary in a postinstall step, which fails from the npm registry",
    "cursor": "the implement-review skill's dispatch table; cursor's agent CLI is not "
    "published on the npm registry",
}


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
        "model": d.model or "",
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


def model_for(raw_config: Mapping[str, Any], agent: str, role: str) -> str | None:
    """`agents.models.<agent>.<role>` in the config (role `implement`/`implementer` or
    `review`/`reviewer`), or None."""
    models = as_dict(as_dict(raw_config.get("agents")).get("models"))
    by_role = as_dict(models.get(agent))
    for key in (role, "implementer" if role == "implement" else "reviewer"):
        value = by_role.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None
