"""The running sprint as the web board shows it: a small JSON file the sprint rewrites
(atomically) at each of its events, `.kittify/runs/live-<mission>.json`: each running
agent (WP, role, agent, model, start), the last outcome line per WP, what was spent
so far, and whether the sprint ended. The board (`kitty.web.sprint_view`) reads it
and sends it over its event stream; replacing the file changes the runs folder, which
the board watches. Never tracked (`.kittify/runs` is the sprint's own).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any


def live_path(runs_dir: Path, slug: str) -> Path:
    return runs_dir / f"live-{slug}.json"


class LiveFile:
    """What the board shows of one sprint, kept up to date from its events."""

    def __init__(self, path: Path, slug: str, run: str) -> None:
        self.path = path
        self.state: dict[str, Any] = {
            "mission": slug, "run": run, "pid": os.getpid(), "started_at": time.time(),
            "running": {}, "last": {}, "spent": {}, "ended": None,
        }  # fmt: skip

    def update(self, event: dict[str, Any], spent: dict[str, Any]) -> None:
        kind = event.get("event")
        running, last = self.state["running"], self.state["last"]
        if kind == "dispatch":
            running[event["wp_id"]] = {
                "wp_id": event["wp_id"], "role": event["role"], "agent": event["agent"],
                "model": event.get("model"), "started_at": time.time(), "pid": event.get("pid"),
            }  # fmt: skip
        elif kind == "finished":
            running.pop(event["wp_id"], None)
            last[event["wp_id"]] = (
                f"{event['role']} by {event['agent']}: {event['how']} → {event['lane']}"
            )
        elif kind in ("blocked", "halt", "backoff"):
            words = event.get("reason") or event.get("message") or ""
            last[event["wp_id"]] = f"{kind}: {str(words).splitlines()[0] if words else ''}"
        elif kind == "budget":
            self.state["stopped"] = event["message"]
        elif kind == "end":
            running.clear()
            self.state["ended"] = event.get("reason")
        elif kind not in ("start", "retry"):
            return
        self.state["spent"] = spent
        self.write()

    def write(self) -> None:
        """Replace the file in one step (a reader never sees half of it); a failure to
        write is the board's loss, never the sprint's."""
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(self.state, sort_keys=True), encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError:
            tmp.unlink(missing_ok=True)
