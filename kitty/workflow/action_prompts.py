"""The prompts of `kitty agent action implement|review`: what each says beyond the WP
(the review feedback, the dependencies' commits, the lane's changes), written to
.kittify/prompts/<mission>/<WP>-<role>.md, and the answer that names them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kitty.adapters.files import atomic_write
from kitty.core.decide.context import lane_changed
from kitty.core.decide.steps import cycle_label
from kitty.core.log.state import WPState
from kitty.core.transitions import cycles_since_arbiter
from kitty.mission.workspace import Mission
from kitty.mission.worktrees import LaneWorkspace, existing_workspace, mission_branch
from kitty.workflow.commits.auto import autocommit
from kitty.workflow.rules.prompts import (
    DependencyInfo,
    PromptContext,
    implement_prompt,
    review_prompt,
)


def prompt_path(mission: Mission, wp_id: str, role: str) -> Path:
    return mission.project.kittify / "prompts" / mission.slug / f"{wp_id}-{role}.md"


def prompt_setting(mission: Mission, in_workspace: bool) -> dict[str, Any]:
    """What every prompt says about its setting: the verify.* commands to run (as the
    agents' permissions allow them, kitty.agents.grants), and whether the agent starts
    in its workspace (then there is no `cd` line)."""
    from kitty.core.verify import verify_commands

    lines = [" ".join(c.line.split()) for c in verify_commands(mission.config.raw)]
    return {"verify": tuple(dict.fromkeys(lines)), "in_workspace": in_workspace}


def review_files(ws: LaneWorkspace, wp_id: str) -> dict[str, Any]:
    """The files a reviewer writes its feedback and findings to: in the lane worktree,
    in a folder git ignores (kitty.mission.feedback), prepared here."""
    from kitty.mission import feedback

    if not ws.path.is_dir():
        return {}
    feedback.prepare(ws.path)
    return {
        "feedback_file": str(feedback.feedback_file(ws.path, wp_id)),
        "findings_file": str(feedback.findings_file(ws.path, wp_id)),
    }


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


def lane_changes(
    mission: Mission, ws: LaneWorkspace, base: Any, head: str | None = None
) -> tuple[list[str], list[str], str]:
    """The commits (subjects), changed files and `git diff --stat` of the lane branch
    (up to `head`, the reviewed commit, when given) since `base`."""
    commits: list[str] = []
    changed: list[str] = []
    stat = ""
    if ws.branch and base:
        from kitty.adapters.git import Git

        git = Git(mission.project.root, gitpython=True)
        tip = head if head and git.rev(head) else ws.branch
        if git.branch_exists(ws.branch):
            commits = git.log_subjects(str(base), tip)
            changed = git.changed_between(str(base), tip)
            stat = git.status("diff", "--stat", f"{base}..{tip}")[1]
    return commits, changed, stat
