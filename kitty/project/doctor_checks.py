"""The checks `kitty doctor` runs beside the log's: symlinks on kitty's paths, untrusted
commands, the agents' CLI versions, what a killed git or `kitty sync` left behind (and
`--fix`'s removal of stale git locks). kitty.project.doctor runs them all."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from kitty.adapters import contain
from kitty.errors import KittyError, Untrusted
from kitty.mission.workspace import Mission


def render_problem(exc: KittyError) -> str:
    """A refusal as one problem line: its message, and its hint in parentheses."""
    return exc.message + (f" ({exc.hint})" if exc.hint else "")


def security_problems(mission: Mission) -> list[str]:
    """Every symlink among the files kitty reads or writes for this mission."""
    project = mission.project
    found: list[str] = []
    tops = [project.kittify, project.config_path, project.specs_dir, mission.dir]
    tops.append(project.git_common_dir / "kitty")
    for path in tops:
        problem = contain.symlink_problem(path)
        if problem and problem not in found:
            found.append(problem)
    if not found and mission.dir.is_dir():
        for folder, dirs, files in os.walk(mission.dir):
            for name in sorted(dirs + files):
                full = Path(folder, name)
                if full.is_symlink():
                    found.append(f"{full}, a symbolic link (to {os.readlink(full)})")
    problems = [
        f"security: {p}: kitty refuses to read or write through it "
        "(replace the link with a real file or directory, e.g. `git rm` it)"
        for p in found
    ]
    lock_dir = project.git_common_dir / "kitty"
    if lock_dir.exists() and not lock_dir.is_dir() and not lock_dir.is_symlink():
        problems.append(
            f"{lock_dir} is not a directory: kitty keeps its locks there (move the file aside)"
        )
    return problems


def write_link_problems(mission: Mission) -> list[str]:
    """Symlinks where kitty creates or writes files outside mission state: the lane
    worktrees (`.worktrees`), agent run logs and prompts (`.kittify/runs`, `.kittify/prompts`)
    and the instructions files `kitty init` writes (AGENTS.md & co., allowed to link to
    a file inside the work tree, as CLAUDE.md -> AGENTS.md)."""
    from kitty.errors import UnsafePath
    from kitty.project.onboarding import ALWAYS, WHEN_PRESENT

    project = mission.project
    found = []
    for path in (
        project.root / ".worktrees",
        project.kittify / "runs",
        project.kittify / "prompts",
    ):
        problem = contain.symlink_problem(path)
        if problem:
            found.append(
                f"security: {problem}: kitty refuses to create files through it "
                "(replace the link with a real directory, e.g. `git rm` it)"
            )
        elif path.name == "prompts":  # a prompt file linked elsewhere is refused too
            found += _linked_entries(path)
    for name in (ALWAYS, *WHEN_PRESENT):
        try:
            contain.check_link_inside(project.root / name, project.root, (project.git_common_dir,))
        except UnsafePath as exc:
            found.append(f"security: {render_problem(exc)}")
    return found


def _linked_entries(folder: Path) -> list[str]:
    """The symbolic links inside a real `folder` (a prompt file linked elsewhere)."""
    found = []
    for top, dirs, files in os.walk(folder):  # never follows a linked directory
        for name in sorted([*dirs, *files]):
            path = Path(top, name)
            if path.is_symlink():
                found.append(
                    f"security: {path}, a symbolic link (to {os.readlink(path)}): kitty "
                    "refuses to write through it (delete the link, e.g. `git rm` it)"
                )
    return found


def stale_status_problems(mission: Mission) -> list[str]:
    """status.json older than the log (a plain `git pull` brings the log, never the
    derived file): its event count, last event or a WP's lane differ from the replay."""
    try:
        doc = json.loads(contain.read_bytes(mission.status_path))
    except FileNotFoundError:
        return []  # derived: written by the next write
    except (OSError, ValueError, KittyError):
        doc = None
    shown = f"{mission.display}/status.json"
    fix = f"`kitty rebuild --mission {mission.slug}` (or `kitty doctor --fix`)"
    if not isinstance(doc, dict):
        return [f"{shown}: not a JSON object: {fix} rewrites it from the log"]
    board = mission.board
    listed = doc.get("work_packages")
    wps: dict[str, Any] = listed if isinstance(listed, dict) else {}
    moved = [
        f"{wp_id} {_lane_of(wps.get(wp_id))} there, {st.lane} in the log"
        for wp_id, st in sorted(board.wps.items())
        if _lane_of(wps.get(wp_id)) != st.lane
    ]
    count = doc.get("event_count")
    if not moved and count == board.event_count and doc.get("last_event_id") == board.last_event_id:
        return []
    detail = "; ".join(moved[:5]) + (f"; {len(moved) - 5} more" if len(moved) > 5 else "")
    return [
        f"{shown}: stale (it shows {count} events, the log has {board.event_count}"
        + (f"; {detail}" if detail else "")
        + f"): {fix} rewrites it from the log"
    ]


def _lane_of(entry: Any) -> Any:
    return entry.get("lane") if isinstance(entry, dict) else None


def trust_warnings(mission: Mission) -> list[str]:
    """What `kitty sprint` and `kitty review run` would refuse for the config's untrusted
    commands, with its hint (a warning: reading the mission does not need them)."""
    from kitty.adapters import trust

    try:
        trust.require(mission.project.root, mission.config.raw)
    except Untrusted as exc:
        return [
            f"{render_problem(exc)}; `kitty sprint` and `kitty review run` refuse them until then"
        ]
    except KittyError:
        return []  # an unreadable config or trust file is reported as a problem elsewhere
    return []


def agent_versions(mission: Mission) -> list[dict[str, Any]]:
    """The configured agents' CLI versions against the ranges kitty was tested with
    (`warning` says when one is outside it or cannot be read)."""
    from kitty.agents.clis import backend_for, configured
    from kitty.agents.versions import check_all as check_versions

    try:
        raw = mission.config.raw
    except KittyError:
        return []  # an unreadable config is reported as a problem by `diagnose`
    backends = []
    for name in configured(raw):
        try:
            backends.append(backend_for(name, raw))
        except KittyError:
            continue  # an unknown agent name: `kitty agent config list` reports it
    return [v.as_dict() for v in check_versions(backends)]


def git_leftover_problems(mission: Mission) -> list[str]:
    """What a killed git (or `kitty sync`) left in the repository: a sync marker whose
    process is gone, a merge in progress, and git lock files no live git process owns."""
    from kitty.adapters import gitlocks
    from kitty.teams.sync import MARKER, _pid_alive
    from kitty.workflow.commits import deferred as deferredcommit

    project = mission.project
    common = project.git_common_dir
    problems = []
    places = [project.root, common, project.worktree]
    marker = common / MARKER
    killed_sync = False
    try:
        state = json.loads(marker.read_text(encoding="utf-8"))
        pid = state.get("pid") if isinstance(state, dict) else None
        killed_sync = not _pid_alive(pid)
    except (OSError, ValueError):
        pass
    if killed_sync:
        left = [project.rel(p) for p in gitlocks.lock_files(common)]
        if (common / "MERGE_HEAD").exists():
            left.append(f"{project.rel(common / 'MERGE_HEAD')} (its merge)")
        problems.append(
            f"{project.rel(marker)}: a `kitty sync` was killed here"
            + (f" and left {', '.join(left)}" if left else "")
            + " (run `kitty sync`: it removes what the killed sync left, undoes its merge "
            "and keeps every log line)"
        )
    elif (common / "MERGE_HEAD").exists():
        problems.append(
            f"{project.rel(common / 'MERGE_HEAD')}: a merge is in progress (finish it with "
            "`git commit`, or `git merge --abort`; kitty sync refuses to run until then)"
        )
    problems += deferredcommit.leftover_problems(project)
    problems += killed_git_problems(mission)
    problems += unfinished_merge_problems(mission)
    for path in gitlocks.stale_locks(common, places):
        problems.append(
            f"{project.rel(path)}: stale git lock (no git process runs in this repository; "
            f"left by a killed git command): `kitty doctor --fix` removes it"
        )
    return problems


def killed_git_problems(mission: Mission) -> list[str]:
    """What a killed kitty auto-commit, git commit or git merge left in the index and the
    work tree (kitty.adapters.gitrepair); `kitty doctor --fix` repairs each."""
    from kitty.adapters import gitlocks, gitrepair
    from kitty.adapters.git import Git

    project = mission.project
    git = Git(project.root)
    problems = []
    if gitrepair.dead_committer(project.git_common_dir):
        left = [project.rel(p) for p in gitlocks.lock_files(project.git_common_dir)]
        problems.append(
            f"{project.rel(project.git_common_dir / 'kitty' / gitrepair.OWNER)}: a kitty "
            "auto-commit was killed here"
            + (f" and left {', '.join(left)}" if left else "")
            + " (the next kitty write removes it, or `kitty doctor --fix`)"
        )
    behind = gitrepair.index_behind(git)
    if behind:
        problems.append(
            f"the git index holds {', '.join(behind)} one commit behind HEAD (a git commit "
            "was killed before writing the index; every commit of it finds nothing to "
            "commit): `kitty doctor --fix` resets them in the index to HEAD"
        )
    for upstream in gitrepair.upstreams(git):
        for path in gitrepair.merge_leftovers(git, upstream):
            problems.append(
                f"{path}: untracked, and exactly the version the upstream commit "
                f"{upstream[:10]} adds (left by a killed merge; every merge refuses to "
                "overwrite it): `kitty doctor --fix` removes it"
            )
    return problems


def unfinished_merge_problems(mission: Mission) -> list[str]:
    """A `kitty merge` whose state file is left and whose process is gone (killed, or
    stopped at a conflict): the commands that finish or undo it."""
    from kitty.adapters.gitrepair import pid_alive
    from kitty.workflow.merging.merge import state_path

    path = state_path(mission)
    try:
        pid = json.loads(path.read_text(encoding="utf-8")).get("pid")
    except (OSError, ValueError, AttributeError):
        return []
    if pid_alive(pid):
        return []
    slug = mission.slug
    return [
        f"{mission.project.rel(path)}: a `kitty merge` of {slug} is unfinished (its process "
        f"{pid} is gone: killed, or stopped at a conflict): `kitty merge --resume --mission "
        f"{slug}` finishes it, `kitty merge --abort --mission {slug}` undoes it"
    ]


def remove_stale_git_locks(mission: Mission) -> list[str]:
    """`kitty doctor --fix`: delete the git lock files no live git process can own (none
    runs in this repository, older than gitlocks.STALE_AFTER seconds, or left by a kitty
    auto-commit known killed), reset kitty's files in an index a killed commit left
    behind HEAD, and delete the untracked files a killed merge left."""
    from kitty.adapters import gitlocks, gitrepair
    from kitty.adapters.git import Git

    project = mission.project
    git = Git(project.root)
    places = [project.root, project.git_common_dir, project.worktree]
    actions = gitrepair.clear_dead_committer(git, project.git_common_dir, places) or []
    removed = gitlocks.remove(gitlocks.stale_locks(project.git_common_dir, places))
    actions += [
        f"removed {project.rel(p)}, a stale git lock (no git process was running)" for p in removed
    ]
    for path in gitrepair.reset_index(git, gitrepair.index_behind(git)):
        actions.append(f"reset {path} in the git index to HEAD (a killed commit left it behind)")
    for upstream in gitrepair.upstreams(git):
        for path in gitrepair.remove_files(project.root, gitrepair.merge_leftovers(git, upstream)):
            actions.append(f"removed {path}, left untracked by a killed merge of {upstream[:10]}")
    return actions
