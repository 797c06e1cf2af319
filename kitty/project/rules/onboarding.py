"""The kitty section of AGENTS.md / CLAUDE.md / GEMINI.md: spliced between marker lines.

Pure text in, text out. Everything outside the markers is kept byte for byte; running it
again with the same section changes nothing.
"""

from __future__ import annotations

from kitty.errors import SpecError

BEGIN = "<!-- kitty:begin (written by `kitty init`; edits between these lines are replaced) -->"
END = "<!-- kitty:end -->"
_BEGIN_PREFIX = "<!-- kitty:begin"
_END_PREFIX = "<!-- kitty:end"


def block(section: str) -> str:
    return f"{BEGIN}\n{section.strip()}\n{END}\n"


def splice(text: str, section: str, path: str) -> str:
    """`text` with its kitty block replaced by (or, without one, followed by) `section`.

    Raises SpecError (naming the line) when the markers are unbalanced, so a half-deleted
    block is never guessed at.
    """
    lines = text.splitlines(keepends=True)
    begins = [i for i, line in enumerate(lines) if line.strip().startswith(_BEGIN_PREFIX)]
    ends = [i for i, line in enumerate(lines) if line.strip().startswith(_END_PREFIX)]
    new = block(section)
    if not begins and not ends:
        if not text.strip():
            return new
        sep = "" if text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
        return text + sep + new
    if len(begins) == 1 and len(ends) == 1 and begins[0] < ends[0]:
        start, stop = begins[0], ends[0]
        return "".join(lines[:start]) + new + "".join(lines[stop + 1 :])
    where = (begins or ends)[-1] + 1 if len(begins) > 1 or not ends else ends[0] + 1
    raise SpecError(
        path,
        where,
        "the kitty section's marker lines are unbalanced",
        f"keep exactly one `{_BEGIN_PREFIX} …` line followed by one `{END}` line "
        "(or delete both), then run `kitty init` again",
    )
