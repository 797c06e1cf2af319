"""Change and read a mission's plan after `kitty wp add`: edit, depend, split, show, search.

Every change rewrites one or more WP files under the mission lock (the lock `wp add` takes),
atomically, and only after the new text parses back as a valid WP and the dependency graph
stays acyclic; a refusal writes nothing. The CLI (`kitty wp …`) and `kitty mcp` both call
these functions, so both validate alike and fail with the same error objects.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kitty.adapters import contain, eventlog
from kitty.adapters.files import atomic_write, read_text
from kitty.core import lanes
from kitty.core.log.snapshot import sort_ids
from kitty.core.model import WorkPackage
from kitty.core.wpfile import dump_front_matter, load_front_matter, one_line, parse_wp
from kitty.errors import DependencyCycle, GuardRefused, NotFound, UsageError
from kitty.mission.workspace import Mission
from kitty.workflow.planning.add import _next_ids
from kitty.workflow.planning.view import search, show, summary
from kitty.workflow.rules.subtasks import SubtaskEdit
from kitty.workflow.rules.subtasks import apply as apply_subtasks

__all__ = ["depend", "edit", "search", "show", "split"]

#: Lanes in which a WP's plan may still be cut in two (nobody works on it).
SPLITTABLE = (None, lanes.PLANNED, lanes.BLOCKED)


@dataclass
class _Draft:
    """One WP file being rewritten: its front matter and its body."""

    wp: WorkPackage
    path: Path
    meta: dict[str, Any]
    body: str

    def text(self) -> str:
        return dump_front_matter(self.meta) + self.body


def _draft(mission: Mission, wp_id: str) -> _Draft:
    wp = mission.wps.get(wp_id)
    if wp is None:
        raise NotFound(
            f"{wp_id} has no readable WP file in {mission.display}/tasks",
            f"kitty doctor --mission {mission.slug} lists the problems",
        )
    path = mission.project.root / wp.path
    text = read_text(path, wp.path)
    if text is None:
        raise NotFound(f"{wp.path} is gone", "restore it from git")
    meta, body, _ = load_front_matter(wp.path, text)
    return _Draft(wp, path, dict(meta), body)


def _locked(mission: Mission) -> Any:
    return eventlog.locked(mission.project.lock_path(mission.slug), f"mission {mission.slug}")


def _write(mission: Mission, drafts: list[_Draft]) -> None:
    """Check every draft reads back as a valid WP and the graph stays acyclic, then write."""
    _check(mission, drafts)
    _commit(mission, drafts)


def _check(mission: Mission, drafts: list[_Draft], new: WorkPackage | None = None) -> None:
    deps = {w.wp_id: list(w.dependencies) for w in mission.wps.values()}
    if new is not None:
        deps[new.wp_id] = list(new.dependencies)
    for draft in drafts:
        back = parse_wp(draft.wp.path, draft.path.name, draft.text())
        deps[back.wp_id] = list(back.dependencies)
    cycle = _cycle(deps)
    if cycle:
        raise DependencyCycle(
            f"that would make a dependency cycle {' → '.join(cycle)}",
            "drop one of these dependencies; nothing was written",
        )


def _commit(mission: Mission, drafts: list[_Draft]) -> None:
    for draft in drafts:
        contain.check(draft.path.parent)
        atomic_write(draft.path, draft.text())
    mission.refresh()


def _cycle(deps: dict[str, list[str]]) -> list[str] | None:
    """A dependency cycle as a closed walk, or None (a plain DFS: no networkx here)."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for dep in deps.get(node, []):
            if state.get(dep) == 1:
                return [*stack[stack.index(dep) :], dep]
            if dep in deps and dep not in state:
                found = visit(dep)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sort_ids(deps):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def _ids(mission: Mission, values: list[str]) -> list[str]:
    return list(
        dict.fromkeys(
            mission.resolve_wp(v) for part in values for v in part.split(",") if v.strip()
        )
    )


def _set_section(body: str, heading: str, text: str) -> str:
    """`body` with the section `## heading` holding `text` (added after the title if absent)."""
    lines = body.split("\n")
    start = next((i for i, line in enumerate(lines) if line.strip() == f"## {heading}"), None)
    if start is None:
        at = next((i + 1 for i, line in enumerate(lines) if line.startswith("# ")), 0)
        return "\n".join([*lines[:at], "", f"## {heading}", "", text.strip(), *lines[at:]])
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return "\n".join([*lines[: start + 1], "", text.strip(), "", *lines[end:]])


def _check_text(label: str, value: str | None, one: bool = False) -> None:
    if value is None:
        return
    if not value.strip():
        raise UsageError(f"the {label} is empty", f"write the {label}, or leave it out")
    if one and any(c in value for c in "\n\r\x85\u2028\u2029"):
        raise UsageError(f"the {label} must be one line", f"write the {label} on one line")


def edit(
    mission: Mission,
    wp_text: str,
    title: str | None = None,
    objective: str | None = None,
    owns: list[str] | None = None,
    depends_on: list[str] | None = None,
    body: str | None = None,
    subtasks: SubtaskEdit | None = None,
) -> dict[str, Any]:
    """Change a WP's title, objective, owned files, dependencies (replaced), subtasks (added,
    reworded, removed: each keeps its T-id) or whole body."""
    subtasks = subtasks or SubtaskEdit()
    if all(v is None for v in (title, objective, owns, depends_on, body)) and not subtasks:
        raise UsageError(
            "nothing to change",
            "pass --title, --objective, --owns, --depends-on, --subtask, --remove-subtask "
            "or --body-file",
        )
    if body is not None and objective is not None:
        raise UsageError(
            "--body-file replaces the whole body, --objective one section of it",
            "pass one of them",
        )
    _check_text("title", title, one=True)
    _check_text("objective", objective)
    _check_text("body", body)
    wp_id = mission.resolve_wp(wp_text)
    deps = _ids(mission, depends_on) if depends_on is not None else None
    if deps and wp_id in deps:
        raise DependencyCycle(f"{wp_id} cannot depend on itself", "name other WPs")
    with _locked(mission):
        mission.refresh()
        draft = _draft(mission, wp_id)
        changed: list[str] = []
        if title is not None and title.strip() != draft.meta.get("title"):
            _retitle(draft, title)
            changed.append("title")
        if owns is not None:
            draft.meta["owned_files"] = list(dict.fromkeys(owns))
            changed.append("owned_files")
        if deps is not None:
            draft.meta["dependencies"] = deps
            changed.append("dependencies")
        if objective is not None:
            draft.body = _set_section(draft.body, "Objectives", objective)
            changed.append("objective")
        if body is not None:
            heading = next((ln for ln in draft.body.split("\n") if ln.startswith("# ")), None)
            draft.body = "\n" + (f"{heading}\n\n" if heading else "") + body.rstrip("\n") + "\n"
            changed.append("body")
        if subtasks:
            new_ids = _next_ids(mission, mission.dir / "tasks", len(subtasks.add))[1]
            ids, draft.body = apply_subtasks(draft.wp.subtasks, draft.body, subtasks, new_ids)
            draft.meta["subtasks"] = ids
            changed.append("subtasks")
        _write(mission, [draft])
    return {**summary(mission, wp_id), "changed": changed, **_refinalize(mission)}


def _retitle(draft: _Draft, title: str) -> None:
    draft.meta["title"] = title.strip()
    draft.body = re.sub(
        r"^(# Work Package Prompt: \S+ – ).*$",
        lambda m: m.group(1) + one_line(title),
        draft.body,
        count=1,
        flags=re.M,
    )


def depend(
    mission: Mission, wp_text: str, add: list[str] | None = None, remove: list[str] | None = None
) -> dict[str, Any]:
    """Add or remove dependencies of one WP (refusing unknown WPs, itself and cycles)."""
    wp_id = mission.resolve_wp(wp_text)
    adding = _ids(mission, add or [])
    removing = _ids(mission, remove or [])
    if not adding and not removing:
        raise UsageError("nothing to change", "pass --on WP01 or --remove WP01")
    if wp_id in adding:
        raise DependencyCycle(f"{wp_id} cannot depend on itself", "name other WPs")
    with _locked(mission):
        mission.refresh()
        draft = _draft(mission, wp_id)
        current = [str(d) for d in draft.wp.dependencies]
        new = [d for d in current if d not in removing] + [d for d in adding if d not in current]
        draft.meta["dependencies"] = new
        _write(mission, [draft])
    return {
        **summary(mission, wp_id),
        "added": [d for d in adding if d not in current],
        "removed": [d for d in removing if d in current],
        **_refinalize(mission),
    }


def split(
    mission: Mission,
    wp_text: str,
    title: str,
    move: list[str] | None = None,
    objective: str | None = None,
    owns: list[str] | None = None,
) -> dict[str, Any]:
    """Cut a WP that is not being worked on in two: a new WP takes the subtasks `move` names
    (front matter and body lines), the original's dependencies, and `owns` (default: the
    original's owned files); every WP that depended on the original depends on both."""
    from kitty.workflow.planning.add import Content, add_wp

    _check_text("title", title, one=True)
    wp_id = mission.resolve_wp(wp_text)
    original = _splittable(mission, wp_id)
    moving = _moving(wp_id, original, move)
    lines = {t: _subtask_text(original.body, t) for t in moving}
    content = Content(objective=objective, subtasks=tuple(lines[t] or t for t in moving))
    dependents: list[str] = []

    def rewire(added: dict[str, Any], new: WorkPackage) -> Callable[[], None]:
        return _rewire(mission, wp_id, moving, dependents, new)

    added = add_wp(
        mission,
        title,
        list(original.dependencies),
        list(owns) if owns is not None else list(original.owned_files),
        len(moving),
        content,
        then=rewire,
    )
    return {
        "mission": mission.slug,
        "wp_id": wp_id,
        "new": {key: added[key] for key in ("wp_id", "path", "dependencies", "subtasks")},
        "moved_subtasks": dict(zip(moving, added["subtasks"], strict=True)),
        "dependents_updated": dependents,
        **_refinalize(mission),
    }


def _splittable(mission: Mission, wp_id: str) -> WorkPackage:
    """The WP to split: nobody works on it, and its file reads."""
    lane = mission.board.lane(wp_id)
    if lane not in SPLITTABLE:
        raise GuardRefused(
            f"{wp_id} is {lane}: only a WP nobody works on can be split",
            "split it while it is planned or blocked (or before finalize)",
        )
    original = mission.wps.get(wp_id)
    if original is None:
        raise NotFound(f"{wp_id} has no readable WP file", f"kitty doctor --mission {mission.slug}")
    return original


def _moving(wp_id: str, original: WorkPackage, move: list[str] | None) -> list[str]:
    """The subtask ids `--move` names (`t4,T005`: upper-cased, once each): the original's,
    and not all of them."""
    moving = list(dict.fromkeys(t.strip().upper() for part in move or [] for t in part.split(",")))
    moving = [t for t in moving if t]
    unknown = [t for t in moving if t not in original.subtasks]
    if unknown:
        raise NotFound(
            f"{wp_id} has no subtask {', '.join(unknown)}",
            f"its subtasks: {', '.join(original.subtasks) or 'none'}",
        )
    if moving and len(moving) == len(original.subtasks):
        raise UsageError(
            f"moving every subtask of {wp_id} would leave it empty",
            "keep at least one, or edit its title instead",
        )
    return moving


def _rewire(
    mission: Mission, wp_id: str, moving: list[str], dependents: list[str], new: WorkPackage
) -> Callable[[], None]:
    """Under add_wp's lock, before anything is written: the original without the moved
    subtasks, its dependents (added to `dependents`) also waiting for the new WP, all
    checked. Returns what writes them."""
    mission.refresh()
    drafts = []
    draft = _draft(mission, wp_id)
    if mission.board.lane(wp_id) not in SPLITTABLE:
        raise GuardRefused(f"{wp_id} was claimed meanwhile", "nothing was written")
    if moving:
        draft.meta["subtasks"] = [t for t in draft.wp.subtasks if t not in moving]
        draft.body = "\n".join(
            ln for ln in draft.body.split("\n") if not any(_mentions(ln, t) for t in moving)
        )
        drafts.append(draft)
    dependents.extend(sort_ids(w.wp_id for w in mission.wps.values() if wp_id in w.dependencies))
    for other in dependents:
        dep_draft = _draft(mission, other)
        dep_draft.meta["dependencies"] = [*dep_draft.wp.dependencies, new.wp_id]
        drafts.append(dep_draft)
    _check(mission, drafts, new)
    return lambda: _commit(mission, drafts)


_TASK_LINE = r"^\s*-\s*\[[ xX]\]\s*{}\b:?\s*(.*)$"


def _mentions(line: str, task: str) -> bool:
    return re.match(_TASK_LINE.format(re.escape(task)), line) is not None


def _subtask_text(body: str, task: str) -> str | None:
    for line in body.split("\n"):
        match = re.match(_TASK_LINE.format(re.escape(task)), line)
        if match and match.group(1).strip():
            return match.group(1).strip()
    return None


def _refinalize(mission: Mission) -> dict[str, Any]:
    """What to run next: a finalized mission recomputes its lanes (and plans new WPs)."""
    if mission.lanes_doc is None:
        return {"next": None}
    return {"next": f"kitty finalize --mission {mission.slug}"}
