"""The files a review verdict leaves: tasks/<stem>/review-cycle-N.md (with its findings
beside it), and the --review-feedback-file it is copied from, read safely."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from kitty import SCHEMA
from kitty.adapters.config import DEFAULT_MAX_FEEDBACK_BYTES
from kitty.adapters.eventlog import now_us
from kitty.adapters.files import atomic_write, read_user_file
from kitty.core.clock import format_at
from kitty.core.record import Record
from kitty.core.wpfile import dump_front_matter
from kitty.errors import UsageError
from kitty.mission.workspace import Mission


class ReviewDoc(Record):
    """What a review verdict stores as tasks/<stem>/review-cycle-N.md (and its findings)."""

    body: str
    affected_files: list[str]
    findings: list[dict[str, Any]] | None
    reviewers: list[str]
    #: A review panel's agents (`reviewer_agent`); the actor who ran it is `recorded_by`.
    panel_agents: list[str]

    def __init__(
        self,
        body: str,
        affected_files: list[str] | None = None,
        findings: list[dict[str, Any]] | None = None,
        reviewers: list[str] | None = None,
        panel_agents: list[str] | None = None,
    ) -> None:
        self.body = body
        self.affected_files = [] if affected_files is None else affected_files
        self.findings = findings
        self.reviewers = [] if reviewers is None else reviewers
        self.panel_agents = [] if panel_agents is None else panel_agents


_CYCLE_FILE = re.compile(r"^review-cycle-(\d+)\.md$")


def read_feedback(
    path: Path | None,
    root: Path | None = None,
    max_bytes: int = DEFAULT_MAX_FEEDBACK_BYTES,
    force: bool = False,
) -> str | None:
    """The text of --review-feedback-file, which is copied into the repository.

    Only a regular file of at most `max_bytes` (devices, FIFOs and directories are
    refused without blocking), inside the repository `root` or the system temp
    directory unless `force`: `/dev/zero` or `~/.ssh/id_rsa` never end up in a commit.
    """
    if path is None:
        return None
    import tempfile

    allowed = None if force else [Path(tempfile.gettempdir()), *([root] if root else [])]
    data = read_user_file(path, "review feedback", max_bytes, allowed)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(
            f"review feedback {path} is not UTF-8 text", "re-save it as UTF-8"
        ) from None
    if not text.strip():
        raise UsageError(
            f"review feedback file {path} is empty", "write what must change into the file"
        )
    return text


def next_cycle_number(folder: Path) -> int:
    if not folder.is_dir():
        return 1
    numbers = [int(m.group(1)) for p in folder.iterdir() if (m := _CYCLE_FILE.match(p.name))]
    return max(numbers, default=0) + 1


def write_review_cycle(
    mission: Mission, wp_id: str, reviewer: str | None, verdict: str, doc: ReviewDoc
) -> tuple[list[Path], str, int]:
    """Store a verdict as tasks/<stem>/review-cycle-N.md; return (paths, review_ref, N).

    The front matter keeps exactly the keys other tools read (FORMAT.md); structured
    findings, when there are any, go beside it in review-cycle-N.findings.json.
    """
    wp = mission.wp(wp_id)
    stem = wp.stem if wp else wp_id
    folder = mission.dir / "tasks" / stem
    number = next_cycle_number(folder)
    front: dict[str, Any] = {
        "affected_files": sorted(set(doc.affected_files)),
        "cycle_number": number,
        "mission_slug": mission.slug,
        "reviewed_at": format_at(now_us()).replace("+00:00", "Z"),
        "reviewer_agent": reviewer or "unknown",
        "verdict": verdict,
        "wp_id": wp_id,
    }
    if doc.panel_agents:  # the findings came from the panel's agents, not from its runner
        front["reviewer_agent"] = ", ".join(doc.panel_agents)
        front["recorded_by"] = reviewer or "unknown"
    path = folder / f"review-cycle-{number}.md"
    text = dump_front_matter(front, sort_keys=True) + "\n"
    atomic_write(path, text + doc.body.rstrip("\n") + "\n")
    paths = [path]
    if doc.findings is not None:
        sidecar = folder / f"review-cycle-{number}.findings.json"
        atomic_write(
            sidecar,
            json.dumps(
                {"schema": SCHEMA, "reviewers": doc.reviewers, "findings": doc.findings},
                indent=2,
                sort_keys=True,
            )
            + "\n",
        )
        paths.append(sidecar)
    return paths, f"review-cycle://{mission.slug}/{stem}/{path.name}", number
