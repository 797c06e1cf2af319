"""Review personas: who looks at a change, and which of them a given diff needs.

The catalogue follows seed 002's roster (always-on lenses, conditional ones
picked by signals in the diff, a lite roster for small low-risk diffs) in
kitty's own words. Projects override or add personas under `review.personas`
in .kittify/config.yaml.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from kitty.errors import SpecError

ALWAYS, CONDITIONAL = "always", "conditional"
LITE = ("correctness", "project-standards")
LITE_MAX_LINES = 39
ADVERSARIAL_LINES = 50


@dataclass(frozen=True)
class Persona:
    name: str
    focus: str
    prompt: str
    when: str = ALWAYS  # always | conditional
    trigger: str = ""  # for conditional personas: what in a diff calls for them
    source: str = "builtin"
    paths: str = ""  # config personas: a regex on changed paths that calls them in

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "focus": self.focus,
            "when": self.when,
            "trigger": self.trigger or None,
            "lite": self.name in LITE,
            "source": self.source,
            "prompt": self.prompt,
        }


def _p(name: str, focus: str, prompt: str, trigger: str = "") -> Persona:
    return Persona(name, focus, prompt, CONDITIONAL if trigger else ALWAYS, trigger)


BUILTIN: tuple[Persona, ...] = (
    _p(
        "correctness",
        "logic errors, wrong results, broken edge cases",
        "Read the change as its first user would run it. Trace each changed branch with "
        "concrete inputs, including empty, one, many and malformed ones. Report code that "
        "computes the wrong thing, loses or corrupts data, or breaks a caller.",
    ),
    _p(
        "testing",
        "missing or weak tests for the changed behaviour",
        "For every behaviour the change adds or fixes, find the test that would fail "
        "without it. Report behaviour with no such test, tests that cannot fail, and "
        "assertions that check the mock instead of the result.",
    ),
    _p(
        "maintainability",
        "needless complexity, leaking types, code that will trap the next person",
        "Look for duplicated logic, abstractions with one user, functions doing three "
        "jobs, types that leak implementation details across a boundary, and dead code "
        "the change leaves behind. Prefer findings that delete code.",
    ),
    _p(
        "project-standards",
        "the project's own written rules",
        "Read the instructions files that govern the changed paths (AGENTS.md, CLAUDE.md, "
        "CONTRIBUTING, the README's conventions, in every ancestor directory) and report "
        "each place the change breaks one, quoting the rule.",
    ),
    _p(
        "agent-native",
        "what an agent using this project cannot do or see",
        "Check that every new capability is reachable from the command line with "
        "machine-readable output (--json), exact commands in messages, and no interactive "
        "prompt an agent cannot answer.",
    ),
    _p(
        "learnings-researcher",
        "known pitfalls already written down",
        "Search the project's recorded solutions (docs/solutions and similar) for problems "
        "like the ones this change touches, and report where it repeats a known mistake.",
        trigger="the repository has docs/solutions",
    ),
    _p(
        "security",
        "authorization, injection sinks, secrets",
        "Follow untrusted input from where it enters to where it is used: shell, SQL, file "
        "paths, templates, deserialisation. Check every new entry point for authentication "
        "and authorization, and look for secrets in code or logs.",
        trigger="auth, tokens, passwords, crypto, shell/SQL/eval sinks, permissions",
    ),
    _p(
        "performance",
        "queries, caching, work done per request",
        "Find work that grows with data size: queries in loops, missing indexes, unbounded "
        "reads, caches without eviction, repeated parsing. Estimate the cost at ten times "
        "today's data.",
        trigger="queries, caches, indexes, batch or bulk paths",
    ),
    _p(
        "api-contract",
        "routes, public types and wire formats",
        "Compare the public surface before and after: routes, CLI flags, JSON fields, "
        "exported types, status codes. Report every change an existing caller would notice "
        "and that is not versioned or documented.",
        trigger="routes, handlers, schemas, public API modules",
    ),
    _p(
        "frontend-quality",
        "UI state, accessibility",
        "Check loading, empty and error states, keyboard access, labels, focus handling and "
        "that the UI state cannot disagree with the data.",
        trigger="UI files (.tsx, .jsx, .vue, .svelte, .css, .html)",
    ),
    _p(
        "data-migration",
        "schema and data migrations",
        "Check that each migration runs on a full-size table, can be rolled back, keeps old "
        "code working during the deploy, and does not lose data on rename or type change.",
        trigger="migrations, ALTER/DROP TABLE, .sql files",
    ),
    _p(
        "reliability",
        "retries, timeouts, partial failure",
        "For every call that can fail or hang (network, disk, subprocess), check the "
        "timeout, the retry and its limit, what a half-finished operation leaves behind, "
        "and whether the failure is reported.",
        trigger="retries, timeouts, subprocesses, network calls, queues",
    ),
    _p(
        "adversarial",
        "ways to make the change fail on purpose",
        "Try to break the change: hostile input, concurrent callers, a crash at each step, "
        "clock skew, a full disk. Report each attack that works, with the exact steps.",
        trigger="50+ changed code lines, or auth, payments, data or external APIs",
    ),
    _p(
        "previous-comments",
        "whether earlier review comments were really fixed",
        "Read the findings of the previous round (given below) and check, finding by "
        "finding, that the code now resolves each one; report those that are not.",
        trigger="a second or later round",
    ),
    _p(
        "julik-frontend-races",
        "async races in UI code",
        "Look for stale closures, responses arriving out of order, double submits, timers "
        "and listeners that outlive their component.",
        trigger="async UI code (promises, timers, listeners in .js/.ts UI files)",
    ),
    _p(
        "swift-ios",
        "iOS lifecycle and Swift concurrency",
        "Check main-thread UI updates, retain cycles in closures, app lifecycle transitions "
        "and actor isolation.",
        trigger=".swift files",
    ),
    _p(
        "deployment-verification",
        "what to check before and after a risky deploy",
        "Write the go/no-go checks for this change: pre-deploy queries, what to watch after, "
        "and how to roll back. Report each missing safety net as a finding.",
        trigger="risky migrations (DROP, rename, NOT NULL on existing data)",
    ),
)

_SIGNALS: dict[str, tuple[str, str]] = {
    # persona: (path regex, added-line regex)
    "security": (
        r"auth|login|session|token|secret|crypt|permission|acl",
        r"\b(password|secret|token|eval\(|exec\(|subprocess|os\.system|shell=True|"
        r"innerHTML|SELECT .* FROM|pickle\.loads|yaml\.load\()",
    ),
    "performance": (r"cache|query|index", r"\b(cache|SELECT|JOIN|bulk|batch|N\+1|lru_cache)\b"),
    "api-contract": (
        r"(^|/)(api|routes?|handlers?|schemas?)(/|\.)|openapi|\.proto$",
        r"@app\.|router\.|@route",
    ),
    "frontend-quality": (r"\.(tsx|jsx|vue|svelte|css|scss|html)$", r"$^"),
    "data-migration": (r"migrations?/|alembic|\.sql$", r"\b(ALTER|DROP|CREATE) TABLE\b"),
    "reliability": (r"$^", r"\b(retry|retries|timeout|backoff|subprocess|requests\.|urlopen)\b"),
    "julik-frontend-races": (r"$^", r"$^"),  # decided from UI files + async lines below
    "swift-ios": (r"\.swift$", r"$^"),
    "deployment-verification": (r"$^", r"\b(DROP (TABLE|COLUMN)|RENAME|NOT NULL)\b"),
}
_RISKY = re.compile(r"auth|payment|billing|charge|stripe|password|migration|http|api", re.I)
_DOC = re.compile(r"\.(md|rst|txt|adoc)$|(^|/)docs?/", re.I)
_UI = re.compile(r"\.(tsx|jsx|vue|svelte|js|ts)$")
_ASYNC = re.compile(r"\b(await|Promise|setTimeout|addEventListener|useEffect)\b")


def _diff_path(header: str) -> str:
    """The changed file of `diff --git a/PATH b/PATH`: the second half, whole even when the
    path itself holds " b/". (A renamed or copied file's halves differ: its `rename to` or
    `copy to` line, which git always prints next, names it instead.)"""
    rest = header.removeprefix("diff --git a/")
    return rest[(len(rest) - 3) // 2 + 3 :]


@dataclass
class DiffFacts:
    """What the roster is chosen from: files and their added/removed lines."""

    files: list[str] = field(default_factory=list)
    added: dict[str, list[str]] = field(default_factory=dict)  # path -> added lines
    exec_lines: int = 0  # changed non-blank, non-comment lines outside docs
    uncounted: list[str] = field(default_factory=list)  # binary or unreadable files
    has_solutions: bool = False  # docs/solutions exists

    @classmethod
    def from_diff(cls, diff: str, has_solutions: bool = False) -> DiffFacts:
        facts = cls(has_solutions=has_solutions)
        path = None
        for line in diff.splitlines():
            if line.startswith("diff --git "):
                path = _diff_path(line)
                facts.files.append(path)
            elif line.startswith(("rename to ", "copy to ")) and path:
                path = facts.files[-1] = line.partition(" to ")[2]
            elif line.startswith("Binary files") and path:
                facts.uncounted.append(path)
            elif line.startswith(("+++", "---")):
                continue
            elif path and line[:1] in "+-" and line[:1]:
                text = line[1:].strip()
                if line[0] == "+":
                    facts.added.setdefault(path, []).append(text)
                if text and not text.startswith(("#", "//", "/*", "*")) and not _DOC.search(path):
                    facts.exec_lines += 1
        return facts


def signals(facts: DiffFacts) -> dict[str, str]:
    """Conditional persona -> why this diff calls for it."""
    found: dict[str, str] = {}
    for name, (path_re, line_re) in _SIGNALS.items():
        for path in facts.files:
            if re.search(path_re, path, re.I):
                found[name] = f"path {path}"
                break
            hit = next((t for t in facts.added.get(path, []) if re.search(line_re, t)), None)
            if hit is not None:
                found[name] = f"{path}: {hit[:60]}"
                break
    ui_async = [
        p
        for p in facts.files
        if _UI.search(p) and any(_ASYNC.search(t) for t in facts.added.get(p, []))
    ]
    if ui_async:
        found["julik-frontend-races"] = f"async UI code in {ui_async[0]}"
    if "deployment-verification" in found and "data-migration" not in found:
        del found["deployment-verification"]  # risky words outside a migration
    risky = [p for p in facts.files if _RISKY.search(p)]
    if facts.exec_lines >= ADVERSARIAL_LINES:
        found["adversarial"] = f"{facts.exec_lines} changed code lines"
    elif risky:
        found["adversarial"] = f"risky path {risky[0]}"
    if facts.has_solutions:
        found["learnings-researcher"] = "docs/solutions exists"
    return found


def catalogue(
    overrides: Mapping[str, Any] | None = None, display: str = ".kittify/config.yaml"
) -> dict[str, Persona]:
    """The built-in personas, with `review.personas` from the config applied."""
    out = {p.name: p for p in BUILTIN}
    for name, spec in (overrides or {}).items():
        where = f"review.personas.{name}"
        if not isinstance(spec, dict):
            raise SpecError(
                display,
                None,
                f"{where} must be a mapping",
                "for example: {focus: ..., prompt: ...}",
            )
        base = out.get(str(name))
        if base is None and not (spec.get("focus") and spec.get("prompt")):
            raise SpecError(
                display, None, f"{where}: a new persona needs focus and prompt", "add both texts"
            )
        when = spec.get("when", base.when if base else ALWAYS)
        when = "off" if when is False else when  # YAML reads a bare `off` as false
        if when not in (ALWAYS, CONDITIONAL, "off"):
            raise SpecError(display, None, f"{where}.when must be always, conditional or off", "")
        if when == "off":
            out.pop(str(name), None)
            continue
        fields = {k: str(spec[k]) for k in ("focus", "prompt", "trigger", "paths") if spec.get(k)}
        if "paths" in fields:
            try:
                re.compile(fields["paths"])
            except re.error as exc:
                raise SpecError(display, None, f"{where}.paths: bad regex ({exc})", "") from None
        out[str(name)] = replace(
            base or Persona(str(name), "", ""), when=when, source="config", **fields
        )
    return out


@dataclass
class Roster:
    personas: list[str]
    lite: bool
    reasons: dict[str, str]  # persona -> why it is on the panel


def select(
    cat: Mapping[str, Persona],
    facts: DiffFacts,
    round_no: int = 1,
    depth: str = "auto",
    fixed: Sequence[str] | None = None,
) -> Roster:
    """The panel for one round: fixed names, or the lite/full roster plus conditional ones."""
    if fixed:
        unknown = [n for n in fixed if n not in cat]
        if unknown:
            from kitty.errors import UsageError

            raise UsageError(
                f"unknown persona(s): {', '.join(unknown)}",
                "see `kitty review personas`; add new ones under review.personas",
            )
        names = list(dict.fromkeys(fixed))
        if round_no > 1 and "previous-comments" in cat and "previous-comments" not in names:
            names.append("previous-comments")
        return Roster(names, False, {n: "chosen" for n in names})
    found = signals(facts)
    for persona in cat.values():
        hit = persona.paths and next((f for f in facts.files if re.search(persona.paths, f)), None)
        if hit:
            found[persona.name] = f"path {hit}"
    if round_no > 1:
        found["previous-comments"] = f"round {round_no}"
    conditional = {n: why for n, why in found.items() if n in cat and cat[n].when == CONDITIONAL}
    small = 1 <= facts.exec_lines <= LITE_MAX_LINES
    lite = depth != "full" and small and not facts.uncounted and not conditional
    if lite:
        names = [n for n in LITE if n in cat]
        return Roster(names, True, {n: "lite roster (small, low-risk diff)" for n in names})
    always = [p.name for p in cat.values() if p.when == ALWAYS]
    reasons = {n: "always on" for n in always}
    reasons.update(conditional)
    return Roster(list(reasons), False, reasons)
