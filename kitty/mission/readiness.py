"""The git facts of "ready for review" (kitty.core.ready decides on them).

Plain `git` processes through `kitty.adapters.git` (no GitPython: this runs on a
move): the lane branch's head, its own commits since the cycle's base and the files
they touch, and the lane worktree's porcelain status. A move to for_review costs
three or four git processes; no other move runs any.
"""

from __future__ import annotations

import shlex
from typing import Any

from kitty.adapters.git import Git
from kitty.core import lanes
from kitty.core.log.state import WPState
from kitty.core.ready import (
    LaneCommit,
    LaneFacts,
    approval_problems,
    base_of,
    body_of,
    forced_command,
    left_behind,
    named,
    own_commits,
    ready_refusal,
    wp_file,
)
from kitty.errors import GuardRefused, NotInitialized
from kitty.mission.workspace import Mission
from kitty.mission.worktrees import lane_branch, lane_of, lane_path, mission_branch, target_branch

_TIMEOUT = 60.0


def _out(git: Git, *args: str) -> str | None:
    code, out, _ = git.status("-c", "core.quotePath=false", *args, timeout=_TIMEOUT)
    return out if code == 0 else None


def dirty_paths(git: Git) -> list[tuple[str, str]]:
    """(XY, path) of every modified, staged, deleted or untracked (not ignored) path."""
    out = _out(git, "status", "--porcelain=v1", "-z", "--untracked-files=all") or ""
    found, entries, index = [], out.split("\0"), 0
    while index < len(entries):
        entry = entries[index]
        index += 1
        if len(entry) < 4:
            continue
        if entry[0] in "RC":
            index += 1  # the rename's source follows
        found.append((entry[:2], entry[3:]))
    return found


def _commits(git: Git, base: str, head: str) -> list[LaneCommit]:
    out = _out(
        git, "log", "--no-merges", "--first-parent", "--format=%x1e%H%x1f%s", "--name-only",
        f"{base}..{head}",
    )  # fmt: skip
    commits = []
    for chunk in (out or "").split("\x1e"):
        lines = chunk.strip("\n").split("\n")
        if not lines[0] or "\x1f" not in lines[0]:
            continue
        sha, subject = lines[0].split("\x1f", 1)
        commits.append(LaneCommit(sha, subject, tuple(p for p in lines[1:] if p)))
    return commits


def _with_bodies(git: Git, commits: list[LaneCommit]) -> list[LaneCommit]:
    """Commits that touch WP files get the ones whose body changed (asked only when no
    commit is the WP's own without them: a front-matter edit is kitty's bookkeeping)."""
    done = []
    for commit in commits:
        changed = []
        for path in (p for p in commit.paths if wp_file(p)):
            before = git.blob(f"{commit.sha}^", path).decode("utf-8", "replace")
            after = git.blob(commit.sha, path).decode("utf-8", "replace")
            if body_of(before) != body_of(after):
                changed.append(path)
        done.append(LaneCommit(commit.sha, commit.subject, commit.paths, tuple(changed)))
    return done


def lane_facts(mission: Mission, wp_id: str, st: WPState | None) -> LaneFacts | None:
    """The facts for `wp_id`'s lane; None for a WP without a lane (a planning WP worked
    in the primary checkout, or a mission without lanes.json): nothing to check."""
    try:
        lane = lane_of(mission, wp_id)
    except NotInitialized:
        return None
    if lane is None:
        return None
    lane_id = str(lane["lane_id"])
    branch, path = lane_branch(mission, lane_id), lane_path(mission, lane_id)
    git = Git(mission.project.root)
    head = git.rev(f"refs/heads/{branch}")
    base, since = base_of(st)
    commits: list[LaneCommit] = []
    if head is not None:
        if base is None or not git.ok("merge-base", "--is-ancestor", base, head):
            base, since = _fork_point(mission, git, branch), "the lane began"
        if base is not None:
            commits = _commits(git, base, head)
        if commits and not own_commits(
            LaneFacts(branch, str(path), head, base, since, tuple(commits))
        ):
            commits = _with_bodies(git, commits)
    dirty = dirty_paths(Git(path)) if path.is_dir() else []
    return LaneFacts(branch, str(path), head, base, since, tuple(commits), tuple(dirty))


def _fork_point(mission: Mission, git: Git, branch: str) -> str | None:
    """Where the lane left the mission branch (or the target): the base of a WP whose
    implement recorded none."""
    for ref in (mission_branch(mission), target_branch(mission)):
        code, out, _ = git.status("merge-base", ref, branch, timeout=_TIMEOUT)
        if code == 0 and out.strip():
            return out.strip()
    return None


def for_review_gate(
    mission: Mission, wp_id: str, actor: str, force: bool, note: str | None
) -> tuple[dict[str, Any], GuardRefused | None]:
    """What the for_review event records: the lane's head (and base), and for a forced
    move what it was not ready for; and the refusal when `wp_id` is not ready (raised
    once the move's own guards passed; `--force --note` is the way out)."""
    st = mission.board.wps.get(wp_id)
    facts = lane_facts(mission, wp_id, st)
    if facts is None:
        return {}, None
    wp = mission.wp(wp_id)
    refusal = None
    if st is None or st.lane != lanes.IN_REVIEW:  # back from review: the head is recorded
        refusal = ready_refusal(wp_id, mission.slug, actor, wp.title if wp else "", facts)
    if refusal is not None and not (force and (note or "").strip()):
        return {}, GuardRefused(*refusal)
    meta: dict[str, Any] = {}
    if facts.head:
        meta["lane_head"] = facts.head
    if facts.base:
        meta["lane_base"] = facts.base
    if refusal is not None:
        meta["review_ready"] = "forced: " + refusal[0]
    return meta, None


def approval_gate(
    mission: Mission, wp_id: str, actor: str, force: bool
) -> tuple[dict[str, Any], GuardRefused | None]:
    """Refuse an unforced approval of a lane that moved since it entered review, or
    whose worktree has files left (accept would refuse them); return what the approval
    records: the commit it approves."""
    st = mission.board.wps.get(wp_id)
    facts = lane_facts(mission, wp_id, st)
    if facts is None or facts.head is None:
        return {}, None
    reviewed = st.scalars.get("review_commit") if st else None
    if not isinstance(reviewed, str) or st is None or st.lane not in lanes.IN_FLIGHT:
        reviewed = None
    problems = approval_problems(wp_id, reviewed, facts)
    if problems and not force:
        again = forced_command(wp_id, mission.slug, actor, "the lane changed during the review")
        hint = f"send it back for another review: {again}"
        if left_behind(facts):
            hint = (
                f"files that are not part of the reviewed commit stay out of the lane "
                f"(`git -C {shlex.quote(facts.worktree)} status` lists them): remove them, "
                f"or {hint}"
            )
        message = f"{wp_id} cannot be approved: " + "; ".join(problems)
        return {}, GuardRefused(
            message + ": the approval would not be of the reviewed commit", hint
        )
    return {"approved_commit": facts.head}, None


def unreviewed_lanes(mission: Mission) -> list[str]:
    """Lanes whose branch moved past the commit their last approved WP was approved at:
    merging them would give the target work nobody reviewed. One problem per lane,
    naming the WP, the approved commit and the commits after it (`kitty merge` refuses
    them). WPs approved before kitty recorded approved commits are not checked."""
    git = Git(mission.project.root)
    who = mission.actor(None)
    problems = []
    for lane in (mission.lanes_doc or {}).get("lanes", []):
        approved = [
            (w, sha)
            for w in lane.get("wp_ids", [])
            if (st := mission.board.wps.get(w)) is not None
            and st.lane in lanes.SATISFIED
            and isinstance(sha := st.scalars.get("approved_commit"), str)
            and sha
        ]
        branch = lane_branch(mission, str(lane["lane_id"]))
        head = git.rev(f"refs/heads/{branch}")
        if not approved or head is None or head in {sha for _, sha in approved}:
            continue
        wp_id, sha = approved[-1]
        after = [c.sha[:7] + " " + c.subject for c in _commits(git, sha, head)]
        problems.append(
            f"{wp_id} was approved at {sha[:7]}, but {branch} is now at {head[:7]}"
            + (f" ({named(after, 3)})" if after else "")
            + ": review it again: "
            + forced_command(wp_id, mission.slug, who, "commits after approval")
        )
    return problems
