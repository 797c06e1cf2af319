"""The running sprint on the web board: what `kitty sprint` keeps in
`.kittify/runs/live-<mission>.json` (`kitty.sprint.live`), read defensively (the
file is the sprint's, a crashed sprint leaves it behind): each running agent with
its WP, role, model and elapsed time, the last outcome line per WP, what was spent
so far, and whether the sprint is still alive. Reads only.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

#: A live file larger than this is not the sprint's: ignored.
MAX_BYTES = 1 << 20


def running_sprint(kittify: Path, slug: str) -> dict[str, Any] | None:
    """The sprint on `slug` as the board shows it, or None when none ran here."""
    from kitty.teams.liveness import pid_alive

    path = kittify / "runs" / f"live-{slug}.json"
    try:
        if path.is_symlink() or path.stat().st_size > MAX_BYTES:
            return None
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(state, dict) or not isinstance(state.get("running"), dict):
        return None
    now = time.time()
    pid = state.get("pid")
    alive = state.get("ended") is None and isinstance(pid, int) and pid_alive(pid)
    running = [
        {**job, "elapsed_s": round(now - float(job.get("started_at") or now), 1)}
        for job in state["running"].values()
        if isinstance(job, dict)
    ] if alive else []  # fmt: skip
    found = state.get("last")
    last: dict[str, Any] = found if isinstance(found, dict) else {}
    return {
        "run": state.get("run"),
        "alive": alive,
        "ended": state.get("ended"),
        "stopped": state.get("stopped"),
        "running": sorted(running, key=lambda job: str(job.get("wp_id"))),
        "last": {str(k): str(v) for k, v in sorted(last.items())},
        "spent": state.get("spent") if isinstance(state.get("spent"), dict) else {},
        "now": now,
    }
