"""Run the kitty CLI as a writer that is forced to overlap with the other writers.

Usage: python overlapping_writer.py BARRIER_DIR COUNT HOLD_SECONDS lock|no-lock -- KITTY ARGS...

Two things are wrapped in this process only (nothing in kitty itself knows about
them):

* ``eventlog.locked``: on its first call the process registers in BARRIER_DIR and
  waits until COUNT writers have registered, so every writer reaches the lock at
  the same moment (a start barrier, not a sleep at start-up);
* ``eventlog.append``: sleeps HOLD_SECONDS before appending, which widens the
  read → validate → append window inside the critical section.

With the lock the writers serialize, each re-reads the log and sees the others'
events, and the concurrency tests pass (a little slower). Without the lock they
all read the same old log inside the same window, so claims double and the
derived status.json loses the other writers' moves: every test fails. `no-lock`
skips kitty's lock in this process, which shows exactly that (the harness's own
test uses it).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

BARRIER_TIMEOUT = 60.0


def main() -> int:
    barrier = Path(sys.argv[1])
    count = int(sys.argv[2])
    hold = float(sys.argv[3])
    use_lock = sys.argv[4] == "lock"
    assert sys.argv[5] == "--", sys.argv
    args = sys.argv[6:]

    from kitty.adapters import eventlog
    from kitty.cli import cli, run

    real_locked = eventlog.locked
    real_append = eventlog.append
    arrived = False

    @contextmanager
    def locked(*a: object, **kw: object) -> Iterator[None]:
        nonlocal arrived
        if not arrived:
            arrived = True
            (barrier / str(os.getpid())).touch()
            deadline = time.monotonic() + BARRIER_TIMEOUT
            while len(list(barrier.iterdir())) < count:
                if time.monotonic() > deadline:
                    print("overlapping_writer: barrier timed out", file=sys.stderr)
                    raise SystemExit(99)
                time.sleep(0.005)
        if use_lock:
            with real_locked(*a, **kw):  # type: ignore[arg-type]
                yield
        else:
            yield

    def append(*a: object, **kw: object) -> None:
        time.sleep(hold)
        real_append(*a, **kw)  # type: ignore[arg-type]

    eventlog.locked = locked  # type: ignore[assignment]
    eventlog.append = append  # type: ignore[assignment]
    return run(cli, args)


if __name__ == "__main__":
    sys.exit(main())
