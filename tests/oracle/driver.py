"""Run by the oracle venv's Python (Spec Kitty 3.2.7 installed): read JSON jobs on
stdin, fold each log with Spec Kitty's own reader and reducer, print the results."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

from specify_cli.status.progress import compute_weighted_progress
from specify_cli.status.reducer import reduce
from specify_cli.status.store import (
    StoreError,
    read_event_stream,
    read_event_stream_from_text,
)


def fold(feature_dir: Path, text: str | None = None) -> dict[str, Any]:
    """Spec Kitty's read of the mission's log (or of `text`, as if it were that log)."""
    try:
        if text is None:
            stream = read_event_stream(feature_dir)
        else:
            stream = read_event_stream_from_text(feature_dir, text)
    except StoreError as exc:
        return {"error": str(exc)}
    snapshot = reduce(stream.transitions, stream.annotations)
    lanes = reduce(stream.transitions)
    wps = snapshot.work_packages
    return {
        "lanes": {wp: state["lane"] for wp, state in wps.items()},
        "agents": {wp: state.get("agent") for wp, state in wps.items()},
        "shell_pids": {wp: state.get("shell_pid") for wp, state in wps.items()},
        "summary": snapshot.summary,
        # as `agent tasks status --json` computes its progress_percentage: it reduces
        # the transitions alone (`read_events` leaves the annotations out)
        "progress_percentage": round(float(compute_weighted_progress(lanes).percentage), 1),
    }


def answer(job: dict[str, Any], work: Path) -> dict[str, Any]:
    if "dir" in job:
        return fold(Path(job["dir"]))
    feature_dir = work / "kitty-specs" / "001-oracle"
    feature_dir.mkdir(parents=True, exist_ok=True)
    return fold(feature_dir, job["log"])


def main() -> None:
    logging.disable(logging.CRITICAL)  # e.g. "No meta.json found" for every job
    work = Path(sys.argv[1])
    if sys.argv[2:] == ["--serve"]:  # one job per line in, one result per line out
        for line in sys.stdin:
            print(json.dumps(answer(json.loads(line), work)), flush=True)
        return
    json.dump([answer(job, work) for job in json.load(sys.stdin)], sys.stdout)


if __name__ == "__main__":
    main()
