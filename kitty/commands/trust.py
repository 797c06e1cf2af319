"""trust: allow (exactly) the commands this repository's config defines."""

from __future__ import annotations

import json
from typing import Any

import click

from kitty.commands.base import cwd, json_option
from kitty.output import emit


def _describe(view: dict[str, object]) -> list[str]:
    commands = view["commands"]
    assert isinstance(commands, dict)
    return [f"  {key}: {json.dumps(value, ensure_ascii=False)}" for key, value in commands.items()]


@click.command("trust")
@click.option("--show", is_flag=True, help="Print the commands and whether they are trusted.")
@click.option("--revoke", is_flag=True, help="Forget this repository's trust.")
@json_option
@click.pass_context
def trust(ctx: click.Context, show: bool, revoke: bool, as_json: bool) -> int:
    """Trust the commands this repository's .kittify/config.yaml makes kitty run.

    A repository's config can define the command lines kitty runs
    (agents.commands.<name>, even for a built-in name such as claude, and
    review.test_command). kitty runs none of them until you have read them
    and trusted exactly these values here. The trust is a sha256 of the
    values, kept outside the repository in $XDG_CONFIG_HOME/kitty/trust.json
    (else ~/.config/kitty/trust.json); any change to the commands voids it.

    \b
    Examples:
      kitty trust --show     # what would be trusted, and whether it is
      kitty trust            # trust exactly these commands
      kitty trust --revoke   # trust them no more
    """
    from kitty.adapters import config as config_adapter
    from kitty.adapters import trust as trust_adapter
    from kitty.adapters.layout import find_project
    from kitty.errors import UsageError

    if show and revoke:
        raise UsageError("--show and --revoke do not go together", "kitty trust --show")
    project = find_project(cwd(ctx))
    raw = config_adapter.load(project.config_path).raw
    if revoke:
        removed = trust_adapter.revoke(project.root)
        view = {
            **trust_adapter.status(project.root, raw),
            "action": "revoked" if removed else "none",
        }
        text = (
            f"revoked the trust of {view['repo']}"
            if removed
            else f"{view['repo']} was not trusted; nothing to revoke"
        )
    elif show:
        view = {**trust_adapter.status(project.root, raw), "action": "show"}
        text = _show_text(view)
    else:
        view = trust_adapter.record(project.root, raw)
        text = _trusted_text(view)
    emit(view, text, as_json)
    return 0


def _show_text(view: dict[str, Any]) -> str:
    """`kitty trust --show`: the commands and whether they are trusted."""
    if not view["needed"]:
        return f"{view['config']} defines no commands; nothing needs trust"
    state = (
        "trusted"
        if view["trusted"]
        else "CHANGED since trusted (run `kitty trust` to trust these)"
        if view["changed"]
        else "NOT trusted (run `kitty trust` to trust these)"
    )
    return "\n".join([f"{view['config']} defines these commands ({state}):", *_describe(view)])


def _trusted_text(view: dict[str, Any]) -> str:
    """`kitty trust`: what it trusted, and where the trust is kept."""
    if view["action"] == "none":
        return f"{view['config']} defines no commands; nothing needs trust"
    return "\n".join(
        [
            f"trusted {len(view['commands'])} command(s) of {view['config']} "
            f"(sha256 {str(view['sha256'])[:12]}, in {view['trust_file']}):",
            *_describe(view),
        ]
    )


COMMANDS = [trust]
