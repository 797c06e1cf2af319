"""The project's verification commands (`verify.*`) as each agent CLI's own permission rules.

kitty's built-in CLIs may edit files and run `git` and `kitty`; a project that configures
`verify.test: "python -m pytest -q"` lets them run that command too (with more words after
it: one test file, `-x`), and nothing else. Each CLI words it its own way:

- claude: `Bash(python -m pytest -q)` (the bare command) and `Bash(python -m pytest -q *)`
  (a space, then anything: never `python -m pytest -qx`);
- qwen: `run_shell_command(python -m pytest -q)` (the command, or it and more words);
- gemini: a policy rule with `commandPrefix = ["python -m pytest -q"]` (a whole-word prefix),
  in a policy file of its own beside kitty's;
- opencode: the bash rule `"python -m pytest -q *": "allow"` (the trailing ` *` is optional);
- codex runs in its own sandbox and may already run anything.

Every one of them checks each command of `a && b` or `a; b` on its own, so an allowed
command never carries another one along. A command line these syntaxes cannot hold (a
comma splits qwen's list; `*` and `?` are wildcards; parentheses close claude's and qwen's
rule) is refused with the key that holds it, never widened or dropped.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kitty.errors import AgentError

#: What no CLI's rule syntax can hold literally.
UNSAFE = frozenset(",*?()\n\r\\")


def check(lines: Sequence[str]) -> tuple[str, ...]:
    """The command lines, each stripped; refused when some CLI's syntax cannot hold one."""
    out = []
    for line in lines:
        text = " ".join(line.split())
        bad = sorted(set(text) & UNSAFE)
        if bad:
            shown = " ".join(repr(c) for c in bad)
            raise AgentError(
                f"verify command {line!r} cannot be granted to the agent CLIs: it holds {shown}",
                'wrap it in a script or a make target (verify.test: "make test") and '
                "configure that",
            )
        out.append(text)
    return tuple(dict.fromkeys(out))


def claude_rules(lines: Sequence[str]) -> list[str]:
    return [rule for line in check(lines) for rule in (f"Bash({line})", f"Bash({line} *)")]


def qwen_rules(lines: Sequence[str]) -> list[str]:
    return [f"run_shell_command({line})" for line in check(lines)]


def opencode_rules(lines: Sequence[str]) -> dict[str, str]:
    return {f"{line} *": "allow" for line in check(lines)}


def gemini_policy(lines: Sequence[str]) -> str:
    """A gemini policy file that allows exactly these commands (TOML; JSON strings are
    valid TOML basic strings for this text, which holds no control characters)."""
    prefixes = ", ".join(json.dumps(line) for line in check(lines))
    return (
        "# kitty: the project's verify.* commands (.kittify/config.yaml), for gemini\n\n"
        "[[rule]]\n"
        'toolName = "run_shell_command"\n'
        f"commandPrefix = [{prefixes}]\n"
        'decision = "allow"\n'
        "priority = 900\n"
    )


def gemini_policy_file(lines: Sequence[str], folder: Path) -> Path:
    """Write the policy into `folder` (kitty's git-ignored prompts folder), named by its
    content so parallel dispatches share one file and never see a half-written one."""
    from kitty.adapters.files import atomic_write

    text = gemini_policy(lines)
    path = folder / f"gemini-verify-{hashlib.sha256(text.encode()).hexdigest()[:12]}.toml"
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write(path, text)
    return path


def configured(raw: Mapping[str, Any]) -> tuple[str, ...]:
    """The project's verify.* command lines as the agents may run them (and the prompts
    print them): every one checked, runs of spaces made one."""
    from kitty.core.verify import verify_commands

    return check([c.line for c in verify_commands(raw)])
