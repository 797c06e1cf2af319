"""`kitty wp edit --subtask / --remove-subtask`: a WP's subtasks added, reworded or removed,
in its front matter and its body's checklist alike, each keeping its T-id. Pure text."""

from __future__ import annotations

import re
from collections.abc import Sequence

from kitty.errors import UsageError

_CHANGE = re.compile(r"^(T\d{3,})=(.*)$", re.S)
_LINE = r"^(\s*-\s*\[([ xX])\]\s*){}\b:?\s*(.*)$"


class SubtaskEdit:
    """What to do: new texts (each gets the next free id), T-id -> new text, T-ids to drop."""

    def __init__(self, specs: Sequence[str] = (), remove: Sequence[str] = ()) -> None:
        self.add: list[str] = []
        self.change: dict[str, str] = {}
        for spec in specs:
            match = _CHANGE.match(spec.strip())
            text = (match.group(2) if match else spec).strip()
            if not text or any(c in text for c in "\n\r\x85\u2028\u2029"):
                raise UsageError(
                    f"--subtask {spec!r}: the text must be one non-empty line",
                    '--subtask "new subtask text" adds one; --subtask "T003=new text" '
                    "rewords T003; --remove-subtask T003 removes it",
                )
            if match:
                self.change[match.group(1)] = text
            else:
                self.add.append(text)
        self.remove = [t.strip() for part in remove for t in part.split(",") if t.strip()]

    def __bool__(self) -> bool:
        return bool(self.add or self.change or self.remove)


def apply(
    subtasks: Sequence[str], body: str, edit: SubtaskEdit, new_ids: Sequence[str]
) -> tuple[list[str], str]:
    """The WP's subtask ids and body after `edit`; `new_ids` are the ids the additions take."""
    unknown = [t for t in [*edit.change, *edit.remove] if t not in subtasks]
    if unknown:
        raise UsageError(
            f"the WP has no subtask {', '.join(unknown)}",
            f"its subtasks: {', '.join(subtasks) or '(none)'}",
        )
    lines = body.split("\n")
    for task, text in edit.change.items():
        lines = [_reword(line, task, text) for line in lines]
        if not any(_is(line, task) for line in lines):
            lines = _append(lines, [f"- [ ] {task}: {text}"])
    lines = [line for line in lines if not any(_is(line, t) for t in edit.remove)]
    added = [f"- [ ] {task}: {text}" for task, text in zip(new_ids, edit.add, strict=True)]
    if added:
        lines = _append([ln for ln in lines if ln.strip() != "- (none)"], added)
    kept = [t for t in subtasks if t not in edit.remove]
    return kept + list(new_ids), "\n".join(lines)


def _is(line: str, task: str) -> bool:
    return re.match(_LINE.format(re.escape(task)), line) is not None


def _reword(line: str, task: str, text: str) -> str:
    match = re.match(_LINE.format(re.escape(task)), line)
    return f"{match.group(1)}{task}: {text}" if match else line


def _append(lines: list[str], new: list[str]) -> list[str]:
    """`new` after the last checklist line of the Subtasks section (made when missing)."""
    start = next((i for i, ln in enumerate(lines) if ln.strip() == "## Subtasks"), None)
    if start is None:
        at = next((i + 1 for i, ln in enumerate(lines) if ln.startswith("# ")), len(lines))
        return [*lines[:at], "", "## Subtasks", "", *new, *lines[at:]]
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("#")), len(lines))
    last = max(
        (i for i in range(start + 1, end) if lines[i].lstrip().startswith("- ")), default=start + 1
    )
    return [*lines[: last + 1], *new, *lines[last + 1 :]]
