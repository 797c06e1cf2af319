"""The `kitty` executable: the hot commands first, then the full click CLI.

`kitty status`, `kitty next` (also `--claim`), `kitty move`, `kitty agent tasks
move-task` and `kitty agent tasks mark-status` in their plain spellings run without
importing click (kitty/fastpath.py); everything else goes to `kitty.cli`.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn


def main() -> NoReturn:
    from kitty import fastpath

    code = fastpath.run(sys.argv[1:], freeze=True)  # this process exits after the command
    if code is None:
        from kitty.adapters import snapshots
        from kitty.cli import main as full

        snapshots.FREEZE = True
        full()
    sys.exit(code)
