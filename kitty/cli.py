"""The `kitty` command line: thin click commands over the services.

Each command parses options, makes one service call and emits the result.
Services are imported inside the commands so `kitty --help` stays fast.
"""

from __future__ import annotations

import errno
import os
import sys
import tempfile
import traceback
from typing import Any, NoReturn

import click

from kitty import __version__
from kitty.errors import EnvironmentProblem, KittyError, UsageError
from kitty.output import error


def run(group: click.Group, args: list[str], prog_name: str = "kitty") -> int:
    """Invoke the CLI and map every outcome to an exit code (the only place that does)."""
    as_json = "--json" in args
    try:
        result = group.main(args=args, prog_name=prog_name, standalone_mode=False)
        return result if isinstance(result, int) else 0
    except KittyError as exc:
        return error(exc, as_json)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except (click.exceptions.Abort, KeyboardInterrupt):
        click.echo("interrupted", err=True)
        return 130
    except click.ClickException as exc:
        if as_json:
            return error(UsageError(exc.format_message(), "see --help"), True)
        exc.show()
        return 2 if isinstance(exc, click.UsageError) else exc.exit_code
    except BrokenPipeError:
        return 0
    except OSError as exc:
        if exc.errno not in _ENVIRONMENTAL:
            return _crash(args, as_json)
        where = f" {exc.filename}" if exc.filename else ""
        return error(
            EnvironmentProblem(
                f"cannot access{where}: {exc.strerror or exc}",
                "check the path's permissions, type (file or directory) and free space; "
                "`kitty doctor` lists what is wrong",
            ),
            as_json,
        )
    except Exception:
        return _crash(args, as_json)


#: OS errors caused by the machine, not by kitty: a one-line error (exit 1), not a crash.
_ENVIRONMENTAL = frozenset(
    getattr(errno, name)
    for name in (
        "EACCES",
        "EPERM",
        "EROFS",
        "ENOSPC",
        "EDQUOT",
        "ELOOP",
        "EISDIR",
        "ENOTDIR",
        "ENAMETOOLONG",
        "EMFILE",
        "ENFILE",
        "EIO",
    )
    if hasattr(errno, name)
)


def _crash(args: list[str], as_json: bool) -> int:
    """A real bug: keep the traceback in a log file and exit 3."""
    fd, path = tempfile.mkstemp(prefix="kitty-crash-", suffix=".log")
    with os.fdopen(fd, "w") as handle:
        handle.write(f"kitty {__version__} {args!r}\n")
        traceback.print_exc(file=handle)
    return error(
        _Bug(
            f"unexpected internal error (details in {path})",
            "please report it with that log file",
        ),
        as_json,
    )


class _Bug(KittyError):
    exit_code = 3
    code = "internal"


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


@click.group(cls=KittyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kitty", message="%(prog)s (kitty-kanban) %(version)s")
@click.option(
    "-C",
    "directory",
    metavar="PATH",
    type=click.Path(exists=True, file_okay=False),
    help="Run as if kitty was started in PATH.",
)
def cli(directory: str | None) -> None:
    """kitty: a git-native kanban tracker for a mission's work packages.

    \b
    Quick start:
      kitty init --agents claude,codex
      kitty mission create checkout-flow
      kitty wp add --title "Cart API" --owns 'src/cart/**' --subtasks 2
      kitty finalize
      kitty next --agent claude
      kitty status
    """


from kitty.commands import register  # noqa: E402  (after `cli` exists)

register(cli)


def main() -> NoReturn:
    sys.exit(run(cli, sys.argv[1:]))


__all__ = ["cli", "main", "run"]
