"""`kitty wp add`: the next WP file, with the next free ids, rendered from the template
(or the planner's objective, subtasks or whole body), checked to read back."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kitty.adapters import contain, eventlog
from kitty.adapters.files import atomic_write, read_text
from kitty.core import placeholders
from kitty.core.limits import check_encodable, check_text
from kitty.core.model import WorkPackage, format_wp_id, kebab, wp_id_from_filename, wp_number
from kitty.core.wpfile import dump_front_matter, one_line, parse_wp
from kitty.errors import UsageError
from kitty.mission.workspace import Mission

_SUBTASK = re.compile(r"\bT(\d{3,})\b")


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
    title = _checked_title(mission, title, subtask_count)
    deps = [mission.resolve_wp(d) for part in depends_on for d in part.split(",") if d.strip()]
    tasks_dir = mission.dir / "tasks"
    # Numbers are allocated under the mission lock: parallel `wp add`s get distinct ids.
    with eventlog.locked(mission.project.lock_path(mission.slug), f"mission {mission.slug}"):
        wp_id, subtasks = _next_ids(mission, tasks_dir, subtask_count)
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


def _checked_title(mission: Mission, title: str, subtask_count: int) -> str:
    """The title, stripped: present, within the text limit, valid UTF-8."""
    if not title.strip():
        raise UsageError("a work package needs a title", 'pass --title "What it delivers"')
    if subtask_count < 0:
        raise UsageError("--subtasks must be 0 or more", "for example --subtasks 3")
    title = title.strip()
    check_text(title, "--title", mission.config.max_text_bytes)
    return check_encodable(title, "--title")


def _next_ids(mission: Mission, tasks_dir: Path, subtask_count: int) -> tuple[str, list[str]]:
    """The next WP id and `subtask_count` subtask ids after the highest any WP file names
    (called under the mission lock)."""
    contain.check(tasks_dir)
    files = [p for p in tasks_dir.iterdir() if p.is_file()] if tasks_dir.is_dir() else []
    numbers = [wp_number(i) or 0 for p in files if (i := wp_id_from_filename(p.name))]
    wp_id = format_wp_id(max(numbers, default=0) + 1)
    highest = 0
    for path in files:
        if wp_id_from_filename(path.name):
            text = read_text(path, f"{mission.display}/tasks/{path.name}") or ""
            highest = max([highest, *(int(n) for n in _SUBTASK.findall(text))])
    return wp_id, [f"T{highest + i:03d}" for i in range(1, subtask_count + 1)]
