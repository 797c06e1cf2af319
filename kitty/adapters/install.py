"""Which `kitty` is this, and which one does PATH find?

The distribution is `kitty-kanban`; it installs two scripts, `kitty` (the command agents are
told to type) and the alias `kitty-kanban`. `kitty` is also the terminal emulator's binary, so
whichever comes first on PATH wins. These helpers find this installation's scripts folder
(put first on agents' PATH by the sprint) and tell `kitty doctor` when PATH finds another one.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import sysconfig
from pathlib import Path

DISTRIBUTION = "kitty-kanban"
COMMAND = "kitty"
ALIAS = "kitty-kanban"
#: What a console script of kitty-kanban imports (kitty.cli before the fast entry point).
_MARKS = (b"kitty.entry", b"kitty.cli")


def is_kitty_script(path: Path) -> bool:
    """True for a console script of kitty-kanban (a `#!` text file importing kitty.entry)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return head.startswith(b"#!") and any(mark in head for mark in _MARKS)


def script_interpreter(path: Path) -> str | None:
    """The interpreter named on a script's `#!` line (pip writes an absolute path)."""
    try:
        with path.open("rb") as handle:
            first = handle.readline(4096).decode("utf-8", "replace")
    except OSError:
        return None
    if not first.startswith("#!"):
        return None
    parts = first[2:].strip().split()
    return parts[0] if parts else None


def _candidates() -> list[Path]:
    found: list[Path] = []
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.name in (COMMAND, ALIAS) and argv0.parent != Path():
        found.append(argv0.absolute().parent)
    found.append(Path(sys.executable).parent)
    found.append(Path(sysconfig.get_path("scripts")))
    with contextlib.suppress(KeyError):  # a Python built without user site support
        found.append(Path(sysconfig.get_path("scripts", f"{os.name}_user")))
    return found


def own_bin_dir() -> Path | None:
    """The folder holding this installation's `kitty` script, if one can be found.

    Tried in order: the folder of the script that started this process (`kitty` or the
    alias), the interpreter's folder (a venv), then the install schemes' scripts folders
    (a `pip install --user` puts scripts in ~/.local/bin, not next to /usr/bin/python3).
    """
    for folder in _candidates():
        script = folder / COMMAND
        if not is_kitty_script(script):
            continue
        interpreter = script_interpreter(script)
        if interpreter is None or _same_file(Path(interpreter), Path(sys.executable)):
            return folder
    return None


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or os.path.samefile(a, b)
    except OSError:
        return False


def path_with_own_bin_first(path: str) -> str:
    """PATH with this installation's scripts folder moved to the front (always, so an
    earlier `kitty`, e.g. the terminal emulator's, cannot shadow it)."""
    here = own_bin_dir()
    if here is None:  # no console script found (e.g. `python -m kitty` from a checkout)
        fallback = os.path.dirname(sys.executable)
        entries = path.split(os.pathsep) if path else []
        return path if fallback in entries else os.pathsep.join([fallback, *entries])
    entries = [p for p in path.split(os.pathsep) if p and Path(p).absolute() != here]
    return os.pathsep.join([str(here), *entries])


def path_warnings(path: str | None = None) -> list[str]:
    """Why the `kitty` that PATH finds may not be this program (empty when it is)."""
    search = os.environ.get("PATH", "") if path is None else path
    found = shutil.which(COMMAND, path=search)
    here = own_bin_dir()
    fix = (
        f'put {here} first on PATH (export PATH="{here}:$PATH"), or type the alias `{ALIAS}`'
        if here
        else f"reinstall with `pip install {DISTRIBUTION}` and put its scripts folder on PATH"
    )
    if found is None:
        return [f"no `{COMMAND}` on PATH: agents told to run `{COMMAND} …` will fail; {fix}"]
    target = Path(found)
    if not is_kitty_script(target):
        return [
            f"the `{COMMAND}` first on PATH is {found}, which is not {DISTRIBUTION} "
            f"(perhaps the kitty terminal emulator); {fix}"
        ]
    interpreter = script_interpreter(target)
    if here is not None and target.absolute().parent != here:
        return [
            f"the `{COMMAND}` first on PATH is {found} (another installation, Python "
            f"{interpreter or '?'}), not this one in {here}; {fix}"
        ]
    return []
