"""The template text `kitty wp add` writes where the planner's own words belong.

`kitty finalize` refuses a WP file that still holds one of these lines (naming its file and
line), and the agents' prompts never show them: an agent told "Describe what this work
package delivers." has been told nothing.
"""

from __future__ import annotations

import re

OBJECTIVE = "Describe what this work package delivers."
SUBTASK = "describe this subtask"
_SUBTASK_LINE = re.compile(r"^- \[[ xX]\] (T\d{3,}): " + re.escape(SUBTASK) + r"\s*$")


def subtask_line(task_id: str, text: str | None = None) -> str:
    """The unchecked subtask line `kitty wp add` writes; the placeholder when no text."""
    return f"- [ ] {task_id}: {text or SUBTASK}"


def find(body: str, first_line: int) -> list[tuple[int, str]]:
    """(line number in the file, the line) of each placeholder line of a WP body whose first
    line is line `first_line` of the file."""
    found = []
    for offset, line in enumerate(body.split("\n")):
        text = line.strip()
        if text == OBJECTIVE or _SUBTASK_LINE.match(text):
            found.append((first_line + offset, text))
    return found


def strip(body: str) -> str:
    """The body with each placeholder line replaced by what it means (nothing was written)."""
    out = []
    for line in body.split("\n"):
        text = line.strip()
        match = _SUBTASK_LINE.match(text)
        if text == OBJECTIVE:
            out.append("(No objective was written: the title and the subtasks are the brief.)")
        elif match:
            out.append(line.replace(f"{match.group(1)}: {SUBTASK}", match.group(1)))
        else:
            out.append(line)
    return "\n".join(out)
