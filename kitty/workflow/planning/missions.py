"""Create missions, and finalize a mission's plan (`kitty wp add` is kitty.workflow.planning.add,
re-exported here)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kitty.adapters import config as config_adapter
from kitty.adapters import contain, eventlog, layout
from kitty.adapters.files import atomic_write, dump_json, read_text
from kitty.core import placeholders
from kitty.core.clock import format_at, ulid
from kitty.core.limits import check_text
from kitty.core.log.snapshot import sort_ids
from kitty.core.log.state import Board
from kitty.core.model import kebab
from kitty.core.wpfile import split_front_matter
from kitty.errors import (
    AlreadyExists,
    DependencyCycle,
    EnvironmentProblem,
    NotFound,
    SpecError,
    SpecErrors,
    UsageError,
)
from kitty.mission.workspace import Mission
from kitty.workflow.commits.auto import autocommit
from kitty.workflow.planning.add import Content, add_wp, read_body

__all__ = ["Content", "add_wp", "create_mission", "finalize", "list_view", "read_body", "validate"]


def list_view(cwd: Path) -> dict[str, Any]:
    """Every mission with its title, id, target branch and WP count; which one is the
    default here (`KITTY_MISSION`, the lane worktree/branch you stand in, or the only one)."""
    from kitty.adapters import specs
    from kitty.errors import KittyError

    project = layout.find_project(cwd)
    slugs = layout.list_missions(project)
    rows: list[dict[str, Any]] = []
    warnings: list[str] = []
    for slug in slugs:
        folder = project.specs_dir / slug
        try:
            meta = specs.load_meta(folder, f"{layout.SPECS}/{slug}")
        except KittyError as exc:
            warnings.append(exc.message)
            meta = {}
        rows.append(
            {
                "slug": slug,
                "title": meta.get("friendly_name") or slug,
                "mission_id": meta.get("mission_id") or None,
                "target_branch": meta.get("target_branch"),
                "work_packages": len(list(specs.wp_files(folder / "tasks"))),
            }
        )
    try:
        default: str | None = layout.resolve_mission(project, None)
    except KittyError:
        default = None
    return {"missions": rows, "default": default, "warnings": warnings}


def check_target_branch(project: layout.Project, branch: str) -> None:
    """Refuse a target branch that `kitty merge` could not merge into: an invalid name, or
    no local branch of that name (the current branch before its first commit is named
    apart, with the command that gives it one)."""
    from kitty.adapters.git import Git

    git = Git(project.root)
    if branch.startswith("-") or not git.ok("check-ref-format", "--branch", branch):
        raise UsageError(
            f"--target-branch {branch}: not a valid branch name",
            "name an existing branch; `git branch` lists them",
        )
    if branch == layout.current_branch(project):
        return
    if not git.ok("show-ref", "--verify", "--quiet", f"refs/heads/{branch}"):
        raise UsageError(
            f"--target-branch {branch}: no branch of that name in this repository",
            f"create it first (`git branch {branch}`), or name an existing branch "
            "(`git branch` lists them)",
        )


def check_born(project: layout.Project, commit: bool) -> None:
    """The checked-out branch must have a commit (lane worktrees branch from it): make an
    empty one when `commit`, else refuse, printing the command that makes it."""
    from kitty.adapters.git import INITIAL_COMMIT, initial_commit, unborn_branch

    if commit:
        initial_commit(project)
        return
    branch = unborn_branch(project)
    if branch is not None:
        raise EnvironmentProblem(
            f"branch {branch} has no commit yet: a mission's lane worktrees branch from it",
            f"run `{INITIAL_COMMIT}` (or pass --initial-commit), then run this again",
        )


def create_mission(
    cwd: Path,
    name: str,
    title: str | None,
    target_branch: str | None,
    initial_commit: bool = False,
) -> dict[str, Any]:
    project = layout.find_project(cwd)
    base = kebab(name)
    if not base:
        raise UsageError(
            f"mission name {name!r} has no letters or digits",
            "for example: kitty mission create checkout-flow",
        )
    if title is not None:
        check_text(title, "--title", config_adapter.load(project.config_path).max_text_bytes)
    if target_branch is not None:
        check_target_branch(project, target_branch)
    if target_branch is None or target_branch == layout.current_branch(project):
        check_born(project, initial_commit)
    now = eventlog.now_us()
    mission_id = ulid(now // 1000, eventlog.random_bytes())
    slug = f"{base}-{mission_id[:8]}"
    layout.check_name("mission", slug)
    folder = project.specs_dir / slug
    meta = {
        "created_at": format_at(now),
        "friendly_name": title or name,
        "mission_id": mission_id,
        "mission_slug": slug,
        "mission_type": "software-dev",
        "slug": slug,
        "target_branch": target_branch or layout.current_branch(project) or "main",
        "vcs": "git",
    }
    with eventlog.locked(project.lock_path("missions"), "mission creation"):
        contain.check(folder / "tasks")
        if folder.exists():
            raise AlreadyExists(
                f"mission directory {project.rel(folder)} already exists",
                "pick another name, or use the existing mission with --mission",
            )
        try:
            (folder / "tasks").mkdir(parents=True)
        except OSError as exc:
            raise EnvironmentProblem(
                f"cannot create {project.rel(folder)}: {exc.strerror or exc}",
                "the repository must be writable by you",
            ) from None
        atomic_write(folder / "meta.json", dump_json(meta))
    return {"mission": slug, "path": str(folder), "meta": meta}


def placeholder_problems(mission: Mission) -> list[SpecError]:
    """Every line of template text `kitty wp add` left untouched, with its file and line."""
    found: list[SpecError] = []
    for wp_id in sort_ids(mission.specset.wps):
        wp = mission.specset.wps[wp_id]
        if not placeholders.find(wp.body, 1):
            continue  # the usual case: no second read of the file
        text = read_text(mission.project.root / wp.path, wp.path) or ""
        parts = split_front_matter(text)
        if parts is None:
            continue
        for line, what in placeholders.find(parts[1], parts[2]):
            found.append(
                SpecError(
                    wp.path,
                    line,
                    f"placeholder text from `kitty wp add` left as written: {what!r}",
                    "write the WP's objective and subtasks there (an agent gets this text as "
                    "its brief), or pass --allow-placeholders",
                )
            )
    return found


def validate(mission: Mission, extra: list[SpecError] | None = None) -> Any:
    """Check every WP file; raise SpecErrors / DependencyCycle; return the lane plan."""
    from kitty.core.validate import format_cycle, mission_problems
    from kitty.workflow.rules import dag

    specset = mission.specset
    if not specset.all_wps and not specset.errors:
        raise NotFound(
            f"{mission.display}/tasks has no WP files",
            f"add one: kitty wp add --mission {mission.slug} --title T",
        )
    problems = list(specset.errors) + mission_problems(specset.all_wps) + (extra or [])
    if problems:
        raise SpecErrors(problems)
    cycle = dag.find_cycle(dag.build_graph(specset.wps))
    if cycle:
        first = specset.wps[cycle[0]]
        raise DependencyCycle(
            f"{first.path}:{first.line_of('dependencies')}: dependency cycle {format_cycle(cycle)}",
            "remove one of these dependencies so the WPs can be ordered",
        )
    return dag.compute_lanes(specset.wps)


def lanes_document(mission: Mission, plan: Any, computed_at: str) -> dict[str, Any]:
    return {
        "version": 1,
        "mission_slug": mission.slug,
        "mission_id": mission.mission_id,
        "mission_branch": f"kitty/mission-{mission.slug}",
        "target_branch": mission.meta.get("target_branch") or "main",
        "lanes": plan.lanes,
        "computed_at": computed_at,
        "computed_from": "dependency_graph+ownership",
        "planning_artifact_wps": plan.planning_artifact_wps,
    }


def finalize(mission: Mission, allow_placeholders: bool = False) -> dict[str, Any]:
    """Validate, write lanes.json and bootstrap new WPs to planned. Template placeholders are
    problems, or (allow_placeholders) warnings."""
    unwritten = placeholder_problems(mission)
    plan = validate(mission, [] if allow_placeholders else unwritten)
    bootstrapped: list[str] = []
    lanes_changed = False

    def build(board: Board) -> list[dict[str, Any]]:
        nonlocal lanes_changed
        existing = mission.lanes_doc or {}
        doc = lanes_document(mission, plan, str(existing.get("computed_at") or ""))
        stable = {k: v for k, v in existing.items() if k not in ("planning_commit_sha",)}
        if stable != doc:
            doc["computed_at"] = format_at(eventlog.now_us())
            atomic_write(mission.dir / "lanes.json", dump_json_ordered(doc))
            lanes_changed = True
        records = []
        # The board under the lock, not mission.all_ids(): one read of the log.
        for wp_id in sort_ids(set(mission.wp_names) | set(board.wps)):
            if wp_id in mission.wps and board.lane(wp_id) is None:
                bootstrapped.append(wp_id)
                records.append(
                    mission.transition(
                        wp_id, "genesis", "planned", "finalize", reason="canonical bootstrap"
                    )
                )
        return records

    mission.record(build)
    autocommit(mission, f"finalize {mission.slug}")
    orphans = [i for i in mission.board.wps if i not in mission.wps]
    return {
        "mission": mission.slug,
        "work_packages": len(mission.wps),
        "bootstrapped": bootstrapped,
        "lanes_changed": lanes_changed,
        "lanes": plan.lanes,
        "planning_artifact_wps": plan.planning_artifact_wps,
        "collapse_report": plan.collapse_report,
        "orphans": orphans,
        "warnings": [p.message for p in unwritten],
    }


def dump_json_ordered(doc: dict[str, Any]) -> str:
    """lanes.json keeps the key order of FORMAT.md (not sorted), like Spec Kitty writes it."""
    import json

    return json.dumps(doc, indent=2) + "\n"
