"""Doctor check: conflict markers left in kitty's files by an unfinished merge."""

from __future__ import annotations

from pathlib import Path

from kitty.mission.workspace import Mission

MARKERS = (b"<<<<<<< ", b">>>>>>> ")


def has_markers(path: Path) -> int | None:
    """The 1-based line of the first conflict marker in `path`, or None. Read in blocks
    (a log can be a gigabyte): memory holds one block, or one line once a marker shows."""
    try:
        handle = path.open("rb")
    except OSError:
        return None
    with handle:
        tail = b""
        try:
            while chunk := handle.read(4 << 20):
                window = tail + chunk
                if b"<<<<<<<" in window or b">>>>>>>" in window:
                    break
                tail = chunk[-7:]
            else:
                return None
            handle.seek(0)
            for number, line in enumerate(handle, start=1):
                line = line.rstrip(b"\r\n")
                if line.startswith(MARKERS) or line in (b"<<<<<<<", b">>>>>>>"):
                    return number
        except OSError:
            return None
    return None


def git_problems(mission: Mission) -> list[str]:
    """Each of kitty's files that still holds git conflict markers, with the fix."""
    problems = []
    rebuild = f"kitty rebuild --mission {mission.slug}"
    for path in (mission.events_path, mission.status_path, mission.dir / "lanes.json"):
        line = has_markers(path)
        if line is None:
            continue
        shown = f"{mission.display}/{path.name}"
        if path == mission.status_path:
            hint = f"it is derived: run `{rebuild}` then `git add {shown}`"
        elif path == mission.events_path:
            hint = (
                "keep the lines of both sides (delete only the marker lines), then "
                f"`git add {shown}`; run `kitty init` so the union merge rule is in .gitattributes"
            )
        else:
            hint = f"run `kitty finalize --mission {mission.slug}` then `git add {shown}`"
        problems.append(f"{shown}:{line}: git conflict markers (unfinished merge): {hint}")
    return problems
