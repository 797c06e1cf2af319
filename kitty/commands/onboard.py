"""prime (the agent guide), completion (shell scripts)."""

from __future__ import annotations

import click

from kitty.commands.base import json_option
from kitty.output import emit


@click.command()
@json_option
def prime(as_json: bool) -> int:
    """Print the agent guide: the loop, the commands, the JSON contract, exit codes.

    Meant for an agent's context at the start of a session (peers call this
    "priming"); `kitty init` points AGENTS.md at it.

    \b
    Examples:
      kitty prime
      kitty prime --json
    """
    from kitty.project.onboarding import guide

    text = guide()
    emit({"guide": text}, text, as_json)
    return 0


@click.command()
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion(shell: str) -> int:
    """Print the shell completion script for SHELL (bash, zsh or fish).

    Commands, options, mission slugs, WP ids, lanes and agent names complete.

    \b
    Examples:
      eval "$(kitty completion bash)"      # in ~/.bashrc
      eval "$(kitty completion zsh)"       # in ~/.zshrc
      kitty completion fish > ~/.config/fish/completions/kitty.fish
    """
    from kitty.commands.completion import script

    root = click.get_current_context().find_root().command
    click.echo(script(shell, root), nl=False)
    return 0


COMMANDS = [prime, completion]
