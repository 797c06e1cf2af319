"""Did a lane change while someone reviewed it? (reviewers are read-only: seed 002)

A review records the lane worktree's fingerprint (HEAD and the state of its files)
when it starts; an approval from that review, and each panel round, compares it
with the lane as it is then. `lane_guard` is what a move checks of its lane: the
fingerprint, and the "ready for review" guard of issue 41 (kitty.mission.readiness).
Plain `git` processes: this runs on a move, where GitPython is not imported.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kitty.adapters.git import Git
from kitty.core import lanes
from kitty.core.move import MoveRequest
from kitty.errors import GuardRefused
from kitty.mission.workspace import Mission


def _git(path: Path, *args: str) -> str | None:
    code, out, _ = Git(path).status(*args, timeout=60)
    return out if code == 0 else None


def fingerprint(path: Path) -> str | None:
    """`<HEAD sha>+<hash of git status>` of the worktree at `path`, None when unreadable."""
    if not path.is_dir():
        return None
    head = _git(path, "rev-parse", "HEAD")
    status = _git(path, "status", "--porcelain", "--untracked-files=all")
    if head is None or status is None:
        return None
    import hashlib

    return f"{head.strip()}+{hashlib.sha1(status.encode()).hexdigest()[:12]}"


def changes(path: Path, before: str) -> str | None:
    """What changed in the worktree since `before` (a fingerprint), or None if nothing."""
    now = fingerprint(path)
    if now is None or now == before:
        return None
    old_head = before.split("+", 1)[0]
    new_head = now.split("+", 1)[0]
    parts = []
    if old_head != new_head:
        commits = (_git(path, "log", "--oneline", f"{old_head}..{new_head}") or "").split("\n")
        files = (_git(path, "diff", "--name-only", old_head, new_head) or "").split()
        parts.append(
            f"HEAD moved {old_head[:7]} -> {new_head[:7]} ("
            + "; ".join(c for c in commits if c)[:200]
            + ")"
            + (f", files: {', '.join(files[:10])}" if files else "")
        )
    dirty = [line[3:] for line in (_git(path, "status", "--porcelain") or "").splitlines()]
    if dirty:
        parts.append("uncommitted: " + ", ".join(dirty[:10]))
    return "; ".join(parts) or "the worktree's files changed"


def lane_guard(
    mission: Mission, wp_id: str, target: str | None, req: MoveRequest
) -> tuple[dict[str, Any], GuardRefused | None]:
    """What a move checks of the WP's lane, and what its event records of it (issue 41):
    entering review needs a commit of the WP's own and a clean lane worktree (the head
    is recorded); an approval approves the head that entered review, unchanged during
    the review (the commit is recorded). Git runs only on these two moves. Returns what
    the event records and the refusal the move raises once its own guards passed."""
    if target not in (lanes.FOR_REVIEW, lanes.APPROVED):
        return {}, None
    from kitty.mission import readiness

    actor = req.actor or "NAME"
    if target == lanes.FOR_REVIEW:
        return readiness.for_review_gate(mission, wp_id, actor, req.force, req.note)
    return readiness.approval_gate(mission, wp_id, actor, req.force)


def reviewer_change(mission: Mission, wp_id: str) -> dict[str, Any] | None:
    """What changed in the lane since its reviewer's review started (None: nothing)."""
    from kitty.mission.worktrees import existing_workspace

    st = mission.board.wps.get(wp_id)
    if st is None or st.lane != lanes.IN_REVIEW:
        return None
    recorded = str(st.scalars.get("review_head") or "")
    fingerprint, _, reviewer = recorded.rpartition("@")
    if not fingerprint or reviewer != st.reviewer:
        return None
    path = existing_workspace(mission, wp_id).path
    changed = changes(path, fingerprint)
    if not changed:
        return None
    head = (_git(path, "rev-parse", "HEAD") or "").strip() or None
    return {"reviewer": reviewer, "changes": changed, "commit": head, "review_head": recorded}


def reviewed_lane(
    mission: Mission, wp_id: str, to_lane: str | None, force: bool, extra: dict[str, Any] | None
) -> tuple[dict[str, Any] | None, list[str]]:
    """A verdict on a lane its reviewer changed (issue 22.6): an approval is refused
    (`reviewer_failed`, remembered for `next`); forced, or a rejection, it is recorded as
    such, naming the reviewer's commit. Returns the event's policy metadata and warnings."""
    if to_lane not in (lanes.APPROVED, lanes.PLANNED, lanes.IN_PROGRESS):
        return extra, []
    change = reviewer_change(mission, wp_id)
    if change is None:
        return extra, []
    reviewer, changed = change["reviewer"], change["changes"]
    if to_lane == lanes.APPROVED and not force:
        _remember(mission, wp_id, change)
        from kitty.errors import GuardRefused

        raise GuardRefused(
            f"reviewer_failed: {wp_id}'s lane changed during {reviewer}'s review ({changed}): "
            "an approval would approve code nobody reviewed",
            "reviewers are read-only; send it back with the findings "
            "(--to planned --review-feedback-file FILE), or another agent reviews the new "
            f"head: kitty agent action review {wp_id} --mission {mission.slug} --agent NAME "
            '--takeover --note "the lane changed during the review"',
        )
    record = {k: change[k] for k in ("reviewer", "changes", "commit")}
    warnings = []
    if to_lane == lanes.APPROVED:
        warnings.append(
            f"{wp_id}'s lane changed during {reviewer}'s review ({changed}): this forced "
            "approval approves code nobody reviewed, and is recorded as such "
            "(policy_metadata.reviewer_changed_lane)"
        )
    return dict(extra or {}, reviewer_changed_lane=record), warnings


def _remember(mission: Mission, wp_id: str, change: dict[str, Any]) -> None:
    # `<review_head>|<what changed>`: `next` tells the reviewer, and lets the others take
    # the review over at once (kitty.core.decide.context.lane_changed)
    from kitty.core.decide.context import LANE_CHANGED as CHANGED_KEY

    value = f"{change['review_head']}|{change['changes']}"
    st = mission.board.wps.get(wp_id)
    if st is not None and st.scalars.get(CHANGED_KEY) == value:
        return  # refused before for the same change

    def build(_board: Any) -> list[dict[str, Any]]:
        return [mission.annotation(wp_id, change["reviewer"], {CHANGED_KEY: value})]

    mission.record(build)
