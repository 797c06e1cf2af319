"""Run by the oracle venv's Python (Spec Kitty 3.2.7 installed): read JSON jobs on
stdin, fold each log with Spec Kitty's own reader and reducer, print the results."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from specify_cli.status.reducer import reduce
from specify_cli.status.store import StoreError, read_event_stream


def fold(feature_dir: Path) -> dict[str, Any]:
    try:
        stream = read_event_stream(feature_dir)
    except StoreError as exc:
        return {"error": str(exc)}
    snapshot = reduce(stream.transitions, stream.annotations)
    wps = snapshot.work_packages
    return {
        "lanes": {wp: state["lane"] for wp, state in wps.items()},
        "agents": {wp: state.get("agent") for wp, state in wps.items()},
        "summary": snapshot.summary,
    }


def main() -> None:
    work = Path(sys.argv[1])
    jobs = json.load(sys.stdin)
    results = []
    for job in jobs:
        if "dir" in job:
            results.append(fold(Path(job["dir"])))
            continue
        feature_dir = work / "kitty-specs" / "001-oracle"  # one folder, rewritten per job
        feature_dir.mkdir(parents=True, exist_ok=True)
        (feature_dir / "status.events.jsonl").write_text(job["log"], encoding="utf-8")
        results.append(fold(feature_dir))
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
