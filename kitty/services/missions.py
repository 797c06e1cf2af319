"""Create missions and work packages, and finalize a mission's plan."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kitty.adapters import config as config_adapter
from kitty.adapters import contain, eventlog, layout
from kitty.adapters.files import atomic_write, dump_json, read_text
from kitty.core import placeholders
from kitty.core.clock import format_at, ulid
from kitty.core.limits import check_text
from kitty.core.model import WorkPackage, format_wp_id, kebab, wp_id_from_filename, wp_number
from kitty.core.snapshot import sort_ids
from kitty.core.state import Board
from kitty.core.wpfile import dump_front_matter, one_line, parse_wp, split_front_matter
from kitty.errors import (
    AlreadyExists,
    DependencyCycle,
    EnvironmentProblem,
    NotFound,
    SpecError,
    SpecErrors,
    UsageError,
)
from kitty.services.autocommit import autocommit
from kitty.services.workspace import Mission

_SUBTASK = re.compile(r"\bT(\d{3,})\b")


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
    from kitty.services.project import INITIAL_COMMIT, initial_commit, unborn_branch

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


def _render_wp(
    wp_id: str,
    title: str,
    deps: list[str],
    subtasks: list[str],
    owned: list[str],
    content: Content | None = None,
) -> str:
    content = content or Content()
    front = {
        "work_package_id": wp_id,
        "title": title,
        "dependencies": deps,
        "subtasks": subtasks,
        "owned_files": owned,
        "execution_mode": "code_change",
    }
    heading = f"# Work Package Prompt: {wp_id} – {one_line(title)}\n\n"
    if content.body is not None:
        return dump_front_matter(front) + "\n" + heading + content.body.rstrip("\n") + "\n"
    texts = list(content.subtasks)
    body_tasks = (
        "\n".join(
            placeholders.subtask_line(t, texts[i] if i < len(texts) else None)
            for i, t in enumerate(subtasks)
        )
        or "- (none)"
    )
    objective = (content.objective or "").strip() or placeholders.OBJECTIVE
    return (
        dump_front_matter(front) + "\n" + heading + f"## Objectives\n\n{objective}\n\n"
        f"## Subtasks\n\n{body_tasks}\n\n"
        "## Definition of done\n\n- All subtasks done, tests written and passing.\n\n"
        "## Activity Log\n"
    )


@dataclass(frozen=True)
class Content:
    """What the planner wrote for a new WP: an objective and subtask texts, or a whole body
    (the Markdown under the heading). Whatever is left out gets the template's placeholder."""

    objective: str | None = None
    subtasks: tuple[str, ...] = ()
    body: str | None = None

    def check(self) -> None:
        if self.body is not None and (self.objective is not None or self.subtasks):
            raise UsageError(
                "--body-file holds the whole body: it cannot be combined with --objective "
                "or --subtask",
                "write the objective and subtasks into the body file, or drop --body-file",
            )
        for label, text in [("objective", self.objective), ("body", self.body)]:
            if text is not None and not text.strip():
                raise UsageError(
                    f"the {label} is empty", f"write the WP's {label}, or leave it out"
                )
        for text in self.subtasks:
            if not text.strip() or any(c in text for c in "\n\r\x85\u2028\u2029"):
                raise UsageError(
                    f"subtask text {text!r} must be one non-empty line",
                    'for example --subtask "POST /cart/items with validation"',
                )


MAX_BODY_BYTES = 1 << 20


def read_body(name: str) -> str:
    """The text of --body-file NAME ('-': standard input): UTF-8, at most 1 MiB."""
    import sys

    try:
        if name == "-":
            data = sys.stdin.buffer.read(MAX_BODY_BYTES + 1)
        else:
            with open(name, "rb") as handle:
                data = handle.read(MAX_BODY_BYTES + 1)
    except OSError as exc:
        raise UsageError(
            f"--body-file {name}: cannot read it: {exc.strerror or exc}",
            "name a readable Markdown file, or '-' for standard input",
        ) from None
    if len(data) > MAX_BODY_BYTES:
        raise UsageError(f"--body-file {name}: larger than 1 MiB", "a WP body is a short brief")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"--body-file {name}: not UTF-8 text (byte {exc.start})", "save it as UTF-8"
        ) from None


def add_wp(
    mission: Mission,
    title: str,
    depends_on: list[str],
    owns: list[str],
    subtask_count: int,
    content: Content | None = None,
    then: Callable[[dict[str, Any], WorkPackage], Callable[[], None]] | None = None,
) -> dict[str, Any]:
    """Write the next WP file. `then`, called under the same lock with the result and the new
    WP before anything is written, may refuse (raise) or return what to write after it."""
    content = content or Content()
    content.check()
    subtask_count = max(subtask_count, len(content.subtasks))
    if not title.strip():
        raise UsageError("a work package needs a title", 'pass --title "What it delivers"')
    if subtask_count < 0:
        raise UsageError("--subtasks must be 0 or more", "for example --subtasks 3")
    title = title.strip()
    check_text(title, "--title", mission.config.max_text_bytes)
    try:
        title.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(
            "the title is not valid text (undecodable bytes)", "pass the title as UTF-8"
        ) from None
    deps = [mission.resolve_wp(d) for part in depends_on for d in part.split(",") if d.strip()]
    tasks_dir = mission.dir / "tasks"
    # Numbers are allocated under the mission lock: parallel `wp add`s get distinct ids.
    with eventlog.locked(mission.project.lock_path(mission.slug), f"mission {mission.slug}"):
        contain.check(tasks_dir)
        files = [p for p in tasks_dir.iterdir() if p.is_file()] if tasks_dir.is_dir() else []
        numbers = [wp_number(i) or 0 for p in files if (i := wp_id_from_filename(p.name))]
        wp_id = format_wp_id(max(numbers, default=0) + 1)
        highest = 0
        for path in files:
            if wp_id_from_filename(path.name):
                text = read_text(path, f"{mission.display}/tasks/{path.name}") or ""
                highest = max([highest, *(int(n) for n in _SUBTASK.findall(text))])
        subtasks = [f"T{highest + i:03d}" for i in range(1, subtask_count + 1)]
        slug = kebab(title) or "work-package"
        path = tasks_dir / f"{wp_id}-{slug}.md"
        rendered = _render_wp(wp_id, title, list(dict.fromkeys(deps)), subtasks, owns, content)
        display = f"{mission.display}/tasks/{path.name}"
        back = parse_wp(display, path.name, rendered)  # what we write must read back
        if back.title != title:
            raise UsageError(f"the title {title!r} does not survive YAML", "simplify the title")
        result = {
            "mission": mission.slug,
            "wp_id": wp_id,
            "path": str(path),
            "dependencies": deps,
            "subtasks": subtasks,
            "owned_files": owns,
            #: lines of template text left to replace (finalize refuses them)
            "placeholders": [line for line, _ in placeholders.find(rendered, 1)],
        }
        finish = then(result, back) if then is not None else None
        atomic_write(path, rendered)
        if finish is not None:
            finish()
    mission.refresh()
    return result


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
    from kitty.core import dag
    from kitty.core.validate import format_cycle, mission_problems

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
