"""Sprint pre-flight: the checks that refuse a sprint before anything is claimed or started.

Bad options, an agent command from the repository's config the user has not trusted,
an agent CLI that is not on PATH, an implementer nobody else can review. The agent
CLIs' versions are read here too (a warning, never a refusal).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kitty.adapters import trust
from kitty.agents import grants
from kitty.agents.clis import BUILTIN, MANUAL, Backend
from kitty.core.limits import check_agent
from kitty.errors import UsageError
from kitty.mission.workspace import Mission
from kitty.sprint.rules import plan as sprintplan

if TYPE_CHECKING:
    from kitty.sprint.rules.plan import Options


def check_options(opts: Options) -> None:
    """Refuse options no sprint can run with (before the mission is read)."""
    if not opts.implementers:
        raise UsageError("a sprint needs at least one implementer", "--implementer claude")
    if not opts.reviewers:
        raise UsageError("a sprint needs at least one reviewer", "--reviewer codex")
    if opts.parallel < 1:
        raise UsageError("--parallel must be at least 1", "for example --parallel 3")
    if opts.arbiter not in ("escalate", "approve"):
        raise UsageError(f"unknown arbiter policy {opts.arbiter!r}", "escalate or approve")
    for flag, names in (("--implementer", opts.implementers), ("--reviewer", opts.reviewers)):
        for name in names:
            check_agent(name, flag)


def require_trust(mission: Mission, names: list[str], panel: bool) -> None:
    """Commands from the repository's config run only when the user trusts them."""
    defined = trust.repo_commands(mission.config.raw)
    keys = sorted({f"agents.commands.{n}" for n in names} & set(defined))
    if "agents.commands" in defined:  # not a mapping: covers every name
        keys.append("agents.commands")
    if panel and "review.test_command" in trust.repo_commands(mission.config.raw):
        keys.append("review.test_command")  # the panel's `kitty review run` runs it
    # verify.*: the agents may run them (kitty.agents.grants); one no CLI can hold refuses
    keys += [k for k in defined if k == "verify" or k.startswith("verify.")]
    if keys:
        trust.require(mission.project.root, mission.config.raw, keys)
    grants.configured(mission.config.raw)


#: What a sprint says, once at pre-flight and in its end summary, when the project
#: configures no verification commands: the work was never verified, not "passed".
UNVERIFIED = (
    "nothing verifies the work: .kittify/config.yaml configures no verify.* commands, so "
    "no agent may run the project's tests or linters; add them (for example "
    'verify: {test: "python -m pytest -q"}), or run `kitty init` to have them proposed'
)


def verification(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The sprint's verification commands (the agents may run them) and, with none, the
    notice that nothing verifies the work."""
    lines = list(grants.configured(raw))
    return {"verify": lines, **({} if lines else {"unverified": UNVERIFIED})}


def lone_reviewer(opts: Options, backends: Mapping[str, Backend]) -> str | None:
    """Why some implementer's WPs could never be reviewed (its only reviewer is itself),
    with how to name a second reviewer; None when all can."""
    builtin = [name for name, backend in backends.items() if backend.kind in BUILTIN]
    return sprintplan.no_second_reviewer(opts.implementers, opts.reviewers, builtin)


def preflight(opts: Options, backends: Mapping[str, Backend]) -> list[Any]:
    """Refuse before anything starts when an agent CLI cannot be run, or when some
    implementer's work could never be reviewed (its only reviewer is itself). Returns
    the agent CLIs' versions."""
    alone = lone_reviewer(opts, backends)
    if alone and not opts.review_panel:
        head, _, how = alone.partition(". ")
        raise UsageError(head, how)
    missing = [
        (name, backend.executable() or name)
        for name, backend in backends.items()
        if backend.kind != MANUAL and not backend.available()
    ]
    if missing:
        names = ", ".join(name for name, _ in missing)
        raise UsageError(
            "; ".join(f"{exe}: not found on PATH (agent {name})" for name, exe in missing),
            f"install it or put it on PATH; or drop {names} from --implementer/--reviewer; "
            "or define agents.commands.<name> in .kittify/config.yaml "
            "(`kitty agent config list` shows what is found)",
        )
    from kitty.agents.versions import check_all as check_versions

    # Each CLI's version against the range kitty was tested with: a warning, never
    # a refusal (a newer CLI usually still accepts the command line).
    return check_versions([b for b in backends.values() if b.kind not in (MANUAL, "command")])
