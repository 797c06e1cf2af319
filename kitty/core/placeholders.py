"""The template text `kitty wp add` writes where the planner's own words belong.

`kitty finalize` refuses a WP file that still holds one of these lines (naming its file and
line), and the agents' prompts never show them: an agent told "Describe what this work
package delivers." has been told nothing.
"""

from __future__ import annotations

import re

from kitty.errors import UsageError

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


#: The placeholders of the notes kitty prints for someone to fill in (`next`'s arbiter
#: choices and their `fill`, the prompts' verdict notes, a conflict's resolve commands).
WHY_ACCEPTABLE = "<why the work is acceptable>"
DISAGREEMENT = "<the disagreement>"
SUMMARY = "<summary>"
ARBITER = "<arbiter>"
WHY_THIS_MOVE = "<why this move wins>"
WHY_FIRST_MOVE = "<why the first move wins>"
NOTE_PLACEHOLDERS = (WHY_ACCEPTABLE, DISAGREEMENT, SUMMARY, ARBITER, WHY_THIS_MOVE, WHY_FIRST_MOVE)


def check_note(note: str | None, what: str = "--note") -> None:
    """Refuse a note that still holds a placeholder kitty printed: it was copied, not written
    (a recorded "Escalated to human: <the disagreement>" tells a person nothing)."""
    if not note:
        return
    for mark in NOTE_PLACEHOLDERS:
        if mark in note:
            raise UsageError(
                f"{what} still holds the placeholder {mark}: {note!r}",
                f"replace {mark} with your own words (what it asks for), then run the "
                "command again",
            )
