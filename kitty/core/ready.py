"""Ready for review means committed work (issue 41): the pure decision.

A WP enters `for_review` only when its lane holds a commit of its own since its
implement began (for a fix cycle: since the head its rejected review saw), touching
something other than kitty's bookkeeping files, and its lane worktree is clean (no
modified tracked file, no untracked file git does not ignore). An approval approves
the head that entered review, in a clean worktree. The git facts are gathered by
`kitty.mission.readiness`; this module decides on them and words the refusal, with
commands that work as printed.
"""

from __future__ import annotations

import shlex

from kitty.core.log.state import WPState
from kitty.core.record import Record

#: How many paths (or commits) a message names before "and N more".
MAX_NAMED = 8
#: Files kitty itself writes inside a mission folder.
_KITTY_FILES = frozenset({"status.events.jsonl", "status.json", "lanes.json", "meta.json"})


class LaneCommit(Record, frozen=True):
    """One commit on the lane's own line (first parent, no merges) since the base."""

    __slots__ = ("body_changed", "paths", "sha", "subject")
    sha: str
    subject: str
    paths: tuple[str, ...]
    #: Its WP files (`kitty-specs/*/tasks/*.md`) whose text below the front matter changed.
    body_changed: tuple[str, ...]

    def __init__(
        self, sha: str, subject: str, paths: tuple[str, ...], body_changed: tuple[str, ...] = ()
    ) -> None:
        object.__setattr__(self, "sha", sha)
        object.__setattr__(self, "subject", subject)
        object.__setattr__(self, "paths", paths)
        object.__setattr__(self, "body_changed", body_changed)


class LaneFacts(Record, frozen=True):
    """What git says about a WP's lane when it asks to enter (or leave) review."""

    __slots__ = ("base", "branch", "commits", "dirty", "head", "since", "worktree")
    branch: str
    worktree: str  # the lane worktree's path (it may not exist)
    head: str | None  # the lane branch's commit; None: the branch does not exist
    base: str | None  # where this cycle's work starts (see `base_of`)
    since: str  # what the base is, in words ("its implement began", "the rejection")
    commits: tuple[LaneCommit, ...]
    dirty: tuple[tuple[str, str], ...]  # (porcelain XY, path) of the worktree, if it exists

    def __init__(
        self,
        branch: str,
        worktree: str,
        head: str | None,
        base: str | None,
        since: str,
        commits: tuple[LaneCommit, ...] = (),
        dirty: tuple[tuple[str, str], ...] = (),
    ) -> None:
        object.__setattr__(self, "branch", branch)
        object.__setattr__(self, "worktree", worktree)
        object.__setattr__(self, "head", head)
        object.__setattr__(self, "base", base)
        object.__setattr__(self, "since", since)
        object.__setattr__(self, "commits", commits)
        object.__setattr__(self, "dirty", dirty)


def bookkeeping(path: str) -> bool:
    """A file kitty writes for itself: `.kittify/…`, a mission's log, status.json,
    lanes.json, meta.json and review-cycle files. A WP file (`tasks/*.md`) counts as
    bookkeeping only for a front-matter change (`LaneCommit.body_changed`)."""
    if path.startswith((".kittify/", ".kitty/")):
        return True
    parts = path.split("/")
    if len(parts) < 3 or parts[0] != "kitty-specs":
        return False
    if len(parts) == 3:
        return parts[2] in _KITTY_FILES
    return parts[2] == "tasks" and len(parts) == 5 and parts[4].startswith("review-cycle-")


def wp_file(path: str) -> bool:
    """`kitty-specs/<mission>/tasks/<file>.md`: a WP file (its front matter is kitty's)."""
    parts = path.split("/")
    return (
        len(parts) == 4
        and parts[0] == "kitty-specs"
        and parts[2] == "tasks"
        and (parts[3].endswith(".md"))
    )


def own_paths(commit: LaneCommit) -> list[str]:
    """The paths of `commit` that are the WP's own work (not kitty's bookkeeping)."""
    return [
        p
        for p in commit.paths
        if not bookkeeping(p) and (not wp_file(p) or p in commit.body_changed)
    ]


def own_commits(facts: LaneFacts) -> list[LaneCommit]:
    return [c for c in facts.commits if own_paths(c)]


def left_behind(facts: LaneFacts) -> list[tuple[str, str]]:
    """The worktree's uncommitted paths that matter (kitty's own files aside)."""
    return [(xy, p) for xy, p in facts.dirty if not bookkeeping(p)]


def body_of(text: str) -> str:
    """A WP file's text below its front matter (all of it when it has none)."""
    if not text.startswith("---"):
        return text
    end = text.find("\n---", 3)
    return text if end < 0 else text[end + 4 :]


def base_of(st: WPState | None) -> tuple[str | None, str]:
    """Where this cycle's work starts: after a rejection, the head its review saw;
    otherwise the lane's head when the implement began (`base_commit`); None when
    neither was recorded (the caller falls back to where the lane left the mission
    branch)."""
    if st is None:
        return None, "the lane began"
    reviewed = st.scalars.get("review_commit")
    rejected = bool(st.reviews) and st.reviews[-1].verdict == "changes_requested"
    if rejected and isinstance(reviewed, str) and reviewed:
        return reviewed, "the rejection"
    base = st.scalars.get("base_commit")
    if isinstance(base, str) and base:
        return base, "its implement began"
    return None, "the lane began"


def named(items: list[str], limit: int = MAX_NAMED) -> str:
    """`a, b, c` or `a, b and 3 more`."""
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def _left_text(left: list[tuple[str, str]]) -> str:
    return named([f"{p} ({'untracked' if xy == '??' else 'uncommitted'})" for xy, p in left])


def commit_command(worktree: str, wp_id: str, title: str) -> str:
    wt = shlex.quote(worktree)
    message = shlex.quote(f"{wp_id}: {title}" if title else f"{wp_id}: implementation")
    return f"git -C {wt} add -A && git -C {wt} commit -m {message}"


def move_command(wp_id: str, mission: str, actor: str, lane: str = "for_review") -> str:
    return (
        f"kitty agent tasks move-task {wp_id} --mission {shlex.quote(mission)} --to {lane} "
        f"--agent {shlex.quote(actor)}"
    )


def forced_command(wp_id: str, mission: str, actor: str, note: str) -> str:
    return f"{move_command(wp_id, mission, actor)} --force --note {shlex.quote(note)}"


def ready_problems(wp_id: str, facts: LaneFacts) -> list[str]:
    """What keeps `wp_id` out of review, in words (empty: ready)."""
    problems = []
    if facts.head is None:
        problems.append(
            f"its lane branch {facts.branch} does not exist: nothing of {wp_id} is committed"
        )
    elif not own_commits(facts):
        short = f" ({facts.base[:7]})" if facts.base else ""
        only = [p for c in facts.commits for p in c.paths]
        detail = f"; the commits since change only kitty's files: {named(only)}" if only else ""
        problems.append(
            f"{facts.branch} has no commit of {wp_id}'s own since {facts.since}{short}{detail}"
        )
    left = left_behind(facts)
    if left:
        problems.append(f"its lane worktree {facts.worktree} has work left: {_left_text(left)}")
    return problems


def ready_refusal(
    wp_id: str, mission: str, actor: str, title: str, facts: LaneFacts
) -> tuple[str, str] | None:
    """(message, hint) refusing `wp_id`'s move to for_review, or None when it is ready."""
    problems = ready_problems(wp_id, facts)
    if not problems:
        return None
    message = f"{wp_id} is not ready for review: " + "; ".join(problems)
    steps = []
    if left_behind(facts):
        steps.append(
            f"commit what belongs to {wp_id}: {commit_command(facts.worktree, wp_id, title)}"
        )
    elif facts.head is None or not own_commits(facts):
        steps.append(f"write {wp_id}'s work in {facts.worktree} and commit it there")
    steps.append(f"then: {move_command(wp_id, mission, actor)}")
    note = f"{wp_id} needs no commit of its own"
    steps.append(f"if it truly changes nothing: {forced_command(wp_id, mission, actor, note)}")
    return message, "; ".join(steps)


def approval_problems(wp_id: str, reviewed: str | None, facts: LaneFacts) -> list[str]:
    """Why approving now would approve something other than what was reviewed: the lane
    moved since it entered review at `reviewed`, or its worktree has files left."""
    problems = []
    if reviewed and facts.head and facts.head != reviewed:
        problems.append(
            f"{facts.branch} moved since {wp_id} entered review at {reviewed[:7]} "
            f"(now {facts.head[:7]})"
        )
    left = left_behind(facts)
    if left:
        problems.append(f"its lane worktree {facts.worktree} has work left: {_left_text(left)}")
    return problems


def run_failure(facts: LaneFacts) -> str | None:
    """Why an implement run that ended failed its WP although the agent may have said
    it was done (the sprint's outcome: "ended without a commit; files left: …"), or
    None when the lane holds a commit of the WP's own and nothing is left behind."""
    left = left_behind(facts)
    files = f"; files left: {_left_text(left)}" if left else ""
    if facts.head is None or not own_commits(facts):
        return "ended without a commit" + files
    if left:
        return f"ended with files left uncommitted: {_left_text(left)}"
    return None


def retry_header(wp_id: str, title: str, why: str, worktree: str) -> str:
    """The top of a re-run's prompt after a run that `why` (run_failure's words)."""
    return (
        f"# Fix {wp_id} – {title}: your last run failed\n\n"
        f"Your run {why}.\n"
        f"kitty refuses a work package at for_review until its lane holds a commit of its "
        f"own and its lane worktree is clean. Do the work in {worktree}, commit it there "
        f"(`kitty safe-commit FILE... -m MESSAGE`, or "
        f"`{commit_command(worktree, wp_id, title)}` for everything left), then move it "
        "to for_review as the prompt below says.\n\n"
    )
