"""A real process that writes to a kitty mission in a loop (used by the reliability suite).

`python worker.py cycle REPO WP AGENT COUNT` moves WP planned → claimed → in_progress →
planned … COUNT times, in this one process (no start-up cost per move), and prints one
JSON line per attempt, flushed at once, so a parent that kills it with SIGKILL knows
exactly which events were reported as recorded.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys

from kitty.cli import cli, run

CYCLE = ("claimed", "in_progress", "planned")


def call(repo: str, *args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run(cli, ["-C", repo, *args])
    return code, out.getvalue(), err.getvalue()


def main() -> int:
    mode, repo, wp, agent, count = sys.argv[1:6]
    if mode != "cycle":
        return 2
    for index in range(int(count)):
        code, out, err = call(repo, "move", wp, CYCLE[index % 3], "--agent", agent, "--json")
        if code == 0:
            print(json.dumps({"ok": json.loads(out)["event_ids"]}), flush=True)
        else:
            print(json.dumps({"code": code, "err": err.strip()}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
