"""The `kitty` command line: thin click commands over the services.

Each command parses options, makes one service call and emits the result.
Services are imported inside the commands so `kitty --help` stays fast.
"""

from __future__ import annotations

import sys
from typing import Any, NoReturn

import click

from kitty import __version__
from kitty.errors import UsageError
from kitty.exits import failed
from kitty.output import error


def run(group: click.Group, args: list[str], prog_name: str = "kitty") -> int:
    """Invoke the CLI and map every outcome to an exit code (click's own here, the rest
    in `kitty.exits`, which the click-free fast path shares)."""
    as_json = "--json" in args
    try:
        from kitty.core.limits import check_arguments

        check_arguments(args)  # text UTF-8 cannot hold: refused before anything runs
        result = group.main(args=args, prog_name=prog_name, standalone_mode=False)
        return result if isinstance(result, int) else 0
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.exceptions.Abort:
        click.echo("interrupted", err=True)
        return 130
    except click.ClickException as exc:
        if as_json:
            return error(UsageError(exc.format_message(), "see --help"), True)
        exc.show()
        return 2 if isinstance(exc, click.UsageError) else exc.exit_code
    except (Exception, KeyboardInterrupt) as exc:
        return failed(exc, args, as_json)


class KittyGroup(click.Group):
    """Root group whose `main` routes through `run`, also under click's CliRunner."""

    def main(
        self,
        args: Any = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(
                args,
                prog_name,
                complete_var,
                standalone_mode=False,
                windows_expand_args=windows_expand_args,
                **extra,
            )
        argv = list(sys.argv[1:] if args is None else args)
        sys.exit(run(self, argv, prog_name or "kitty"))


@click.group(
    cls=KittyGroup,
    invoke_without_command=True,  # `kitty` alone prints this help and exits 0
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, prog_name="kitty", message="%(prog)s (kitty-kanban) %(version)s")
@click.option(
    "-C",
    "directory",
    metavar="PATH",
    type=click.Path(exists=True, file_okay=False),
    help="Run as if kitty was started in PATH.",
)
@click.pass_context
def cli(ctx: click.Context, directory: str | None) -> None:
    """kitty: a git-native kanban tracker for a mission's work packages.

    \b
    Quick start (`kitty demo` first shows a whole sprint in a temp repository):
      kitty init --agents claude,codex
      kitty mission create checkout-flow
      kitty wp add --title "Cart API" --owns 'src/cart/**' \\
          --objective "Add items to a cart" --subtask "POST /cart/items"
      kitty finalize
      kitty next --agent claude
      kitty status
    """
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())


from kitty.commands import register  # noqa: E402  (after `cli` exists)

register(cli)


def main() -> NoReturn:
    sys.exit(run(cli, sys.argv[1:]))


__all__ = ["cli", "main", "run"]
