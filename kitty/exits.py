"""How a command's failure becomes its exit code and message (without click).

Both routes to a command, the click CLI (`kitty.cli.run`) and the click-free fast
path (`kitty.fastpath`), end here, so an error prints the same bytes either way:
exit codes 0 ok, 1 refused/domain error, 2 usage, 3 unexpected bug, 75 lock busy,
130 interrupted.
"""

from __future__ import annotations

import contextlib
import errno
import os

from kitty import __version__
from kitty.errors import EnvironmentProblem, KittyError
from kitty.output import echo, error

#: OS errors caused by the machine, not by kitty: a one-line error (exit 1), not a crash.
ENVIRONMENTAL = frozenset(
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


def failed(exc: BaseException, args: list[str], as_json: bool) -> int:
    """Report `exc`, raised by the command `args`, and return the exit code; a failure
    while reporting (memory exhausted again) still ends in one plain line, exit 3."""
    try:
        return _report(exc, args, as_json)
    except BaseException:  # the last resort: never a raw traceback
        with contextlib.suppress(OSError):
            os.write(2, b"error: kitty failed and could not report why (out of memory?)\n")
        return 3


def _report(exc: BaseException, args: list[str], as_json: bool) -> int:
    if isinstance(exc, KittyError):
        return error(exc, as_json)
    if isinstance(exc, KeyboardInterrupt):
        echo("\ninterrupted", err=True)  # as click prints it: a new line after the ^C
        return 130
    if isinstance(exc, BrokenPipeError):
        return 0
    if isinstance(exc, MemoryError):
        return out_of_memory(as_json)
    if isinstance(exc, OSError) and exc.errno in ENVIRONMENTAL:
        where = f" {exc.filename}" if exc.filename else ""
        return error(
            EnvironmentProblem(
                f"cannot access{where}: {exc.strerror or exc}",
                "check the path's permissions, type (file or directory) and free space; "
                "`kitty doctor` lists what is wrong",
            ),
            as_json,
        )
    return crash(exc, args, as_json)


def out_of_memory(as_json: bool) -> int:
    """The machine ran out of memory: one line and a hint (exit 1), never a traceback;
    what was held is already released when this runs (the frames are unwound)."""
    import gc

    gc.collect()
    return error(
        EnvironmentProblem(
            "out of memory (the machine could not give kitty the memory this command needs)",
            "free memory or raise the process's limit (ulimit -v), then run the command "
            "again; `kitty doctor` reads any log a block at a time",
        ),
        as_json,
    )


def crash_log(exc: BaseException, what: str) -> str:
    """Keep a bug's traceback in a new log file, headed by kitty's version and `what` ran;
    the file's path."""
    import tempfile
    import traceback

    fd, path = tempfile.mkstemp(prefix="kitty-crash-", suffix=".log")
    with os.fdopen(fd, "w") as handle:
        handle.write(f"kitty {__version__} {what}\n")
        traceback.print_exception(exc, file=handle)
    return path


def crash(exc: BaseException, args: list[str], as_json: bool) -> int:
    """A real bug: keep the traceback in a log file and exit 3."""
    path = crash_log(exc, repr(args))
    return error(
        Bug(
            f"unexpected internal error (details in {path})",
            "please report it with that log file",
        ),
        as_json,
    )


class Bug(KittyError):
    exit_code = 3
    code = "internal"
