"""The prompts of `kitty agent action implement|review`: what each says beyond the WP
(the review feedback, the dependencies' commits, the lane's changes), written to
.kittify/prompts/<mission>/<WP>-<role>.md, and the answer that names them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kitty.adapters.files import atomic_write
from kitty.core.decide import cycle_label
from kitty.core.decide_context import lane_changed
from kitty.core.log.state import WPState
from kitty.core.transitions import cycles_since_arbiter
from kitty.mission.workspace import Mission
from kitty.mission.worktrees import LaneWorkspace, existing_workspace, mission_branch
from kitty.workflow.autocommit import autocommit
from kitty.workflow.rules.prompts import (
    DependencyInfo,
    PromptContext,
    implement_prompt,
    review_prompt,
)


def prompt_path(mission: Mission, wp_id: str, role: str) -> Path:
    return mission.project.kittify / "prompts" / mission.slug / f"{wp_id}-{role}.md"


def dependency_infos(mission: Mission, wp_id: str) -> list[DependencyInfo]:
    from kitty.adapters.git import Git

    git = Git(mission.project.root, gitpython=True)
    infos = []
    for dep in mission.wps[wp_id].dependencies:
        dep_wp = mission.wps.get(dep)
        ws = existing_workspace(mission, dep)
        delivered: list[str] = []
        if (
            ws.branch
            and git.branch_exists(ws.branch)
            and git.branch_exists(mission_branch(mission))
        ):
            delivered = git.log_subjects(mission_branch(mission), ws.branch)
        infos.append(
            DependencyInfo(dep, dep_wp.title if dep_wp else dep, mission.board.lane(dep), delivered)
        )
    return infos


def last_feedback(mission: Mission, st: WPState | None) -> tuple[str | None, str | None]:
    """The latest changes_requested feedback text and its reference."""
    if st is None:
        return None, None
    for review in reversed(st.reviews):
        if review.verdict != "changes_requested":
            continue
        path = Path(review.feedback_path) if review.feedback_path else None
        if review.reference and review.reference.startswith("review-cycle://"):
            stem_file = review.reference.split("/", 3)[-1]
            path = mission.dir / "tasks" / stem_file
        text = mission.read_inside(path) if path else None
        if text is not None:
            body = (
                text.split("---", 2)[2]
                if text.startswith("---") and text.count("---") >= 2
                else text
            )
            return body.strip(), review.reference
        return "(the feedback file is missing)", review.reference
    return None, None


def deliver(
    mission: Mission,
    wp_id: str,
    role: str,
    who: str,
    ws: LaneWorkspace,
    st: WPState,
    prompt: dict[str, Any],
    **extra: Any,
) -> dict[str, Any]:
    """Write the role's prompt (`prompt`: what it says beyond the WP and its workspace),
    auto-commit kitty's files, and describe the workspace."""
    ctx = PromptContext(
        mission.slug,
        who,
        mission.wps[wp_id],
        str(ws.path),
        ws.branch,
        cycles_since_arbiter(st),
        mission.config.max_cycles,
        **prompt,
        cycles_total=st.review_cycles,
        lane_changed=lane_changed(st) if role == "review" else None,
    )
    text = implement_prompt(ctx) if role == "implement" else review_prompt(ctx)
    path = prompt_path(mission, wp_id, role)
    atomic_write(path, text)
    lane = "in_progress" if role == "implement" else "in_review"
    autocommit(mission, f"{wp_id} {lane} ({who})")
    return {
        "mission": mission.slug,
        "wp_id": wp_id,
        "agent": who,
        "lane": ws.lane_id,
        "branch": ws.branch,
        "workspace": str(ws.path),
        "prompt": str(path),
        "cycle": cycle_label(st, mission.config.max_cycles),
        **extra,
    }


def lane_changes(mission: Mission, ws: LaneWorkspace, base: Any) -> tuple[list[str], list[str]]:
    """The commits (subjects) and changed files of the lane branch since `base`."""
    commits: list[str] = []
    changed: list[str] = []
    if ws.branch and base:
        from kitty.adapters.git import Git

        git = Git(mission.project.root, gitpython=True)
        if git.branch_exists(ws.branch):
            commits = git.log_subjects(str(base), ws.branch)
            changed = git.changed_between(str(base), ws.branch)
    return commits, changed
