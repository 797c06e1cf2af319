"""Read a mission's files: meta.json, the WP files, lanes.json and issue-matrix.json."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from kitty.adapters import contain
from kitty.adapters.files import read_json, read_text
from kitty.core.model import WorkPackage, wp_id_from_filename, wp_number
from kitty.core.move import IssueRow
from kitty.core.record import Record, replace
from kitty.core.wpfile import parse_wp
from kitty.errors import KittyError, SpecError


class SpecSet(Record):
    wps: dict[str, WorkPackage]
    all_wps: list[WorkPackage]  # including duplicate ids
    errors: list[SpecError]

    def __init__(
        self,
        wps: dict[str, WorkPackage] | None = None,
        all_wps: list[WorkPackage] | None = None,
        errors: list[SpecError] | None = None,
    ) -> None:
        self.wps = {} if wps is None else wps
        self.all_wps = [] if all_wps is None else all_wps
        self.errors = [] if errors is None else errors


def wp_files(tasks_dir: Path) -> list[Path]:
    return [tasks_dir / name for name, _ in stat_wp_files(tasks_dir)]


def wp_file_names(tasks_dir: Path) -> list[str]:
    """The names `stat_wp_files` lists, sorted, from the directory's entries alone (a
    regular file, or a symlink to one, as there; no stat of every file)."""
    try:
        with os.scandir(tasks_dir) as scan:
            return sorted(e.name for e in scan if wp_id_from_filename(e.name) and e.is_file())
    except (FileNotFoundError, NotADirectoryError):
        return []


def stat_wp_files(tasks_dir: Path) -> list[tuple[str, os.stat_result]]:
    """(file name, stat) of every WP file, sorted by name (no Path objects: 10k of them cost)."""
    try:
        with os.scandir(tasks_dir) as scan:
            entries = list(scan)
    except (FileNotFoundError, NotADirectoryError):
        return []
    found = []
    for entry in entries:
        if not wp_id_from_filename(entry.name):
            continue
        try:
            st = entry.stat()
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            found.append((entry.name, st))
    found.sort(key=lambda item: item[0])
    return found


def load_wps(
    mission_dir: Path,
    rel_prefix: str,
    cache_dir: Path | None = None,
    listing: list[tuple[str, os.stat_result]] | None = None,
) -> SpecSet:
    """Parse every WP file; errors are collected, never raised.

    With `cache_dir`, files unchanged since the last parse come from the snapshot cache.
    """
    from kitty.adapters.snapshots import cached_parse

    tasks_dir = mission_dir / "tasks"
    folder = _Folder(tasks_dir)

    def parse(name: str) -> WorkPackage | SpecError:
        display = f"{rel_prefix}/tasks/{name}"
        try:
            text = folder.read(name)
            if text is None:
                text = read_text(tasks_dir / name, display)
            return parse_wp(display, name, text or "")
        except SpecError as exc:
            return exc

    result = SpecSet()
    if listing is None:
        listing = stat_wp_files(tasks_dir)
    try:
        parsed_files = cached_parse(cache_dir, listing, parse)
    finally:
        folder.close()
    for parsed in parsed_files:
        if isinstance(parsed, SpecError):
            result.errors.append(parsed)
            continue
        result.all_wps.append(parsed)
        result.wps.setdefault(parsed.wp_id, parsed)
    _align_dependency_ids(result)
    return result


class _Folder:
    """Reads the files of one directory through a descriptor of it, opened once after
    `contain.check` (no symlink on the way): checking every component again for each
    of 10,000 WP files cost more than parsing them. `read` returns None for anything
    unusual (a symlink, not a regular file, not UTF-8, any error) and the caller then
    takes the general path, which reports it as always."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd: int | None = None
        self.opened = False

    def read(self, name: str) -> str | None:
        if not self.opened:
            self.opened = True
            try:
                contain.check(self.path)
                flags = os.O_RDONLY | contain.NOFOLLOW | contain.CLOEXEC
                self.fd = os.open(self.path, flags | getattr(os, "O_DIRECTORY", 0))
            except (OSError, KittyError):
                self.fd = None
        if self.fd is None or os.sep in name or name in (".", ".."):
            return None
        try:
            fd = os.open(name, os.O_RDONLY | contain.NOFOLLOW | contain.CLOEXEC, dir_fd=self.fd)
        except OSError:
            return None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return None
            chunks = []
            size = info.st_size + 1
            while chunk := os.read(fd, size):
                chunks.append(chunk)
            return b"".join(chunks).decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        finally:
            os.close(fd)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _align_dependency_ids(result: SpecSet) -> None:
    """`WP1`/`WP01` in a dependency list names `WP0001` when that is the mission's id."""
    by_number = {wp_number(i): i for i in result.wps}
    for index, wp in enumerate(result.all_wps):
        deps = tuple(
            d if d in result.wps else by_number.get(wp_number(d), d) for d in wp.dependencies
        )
        if deps != wp.dependencies:
            wp = replace(wp, dependencies=deps)
            result.all_wps[index] = wp
            if result.wps.get(wp.wp_id) is not None and result.wps[wp.wp_id].path == wp.path:
                result.wps[wp.wp_id] = wp


#: meta.json keys kitty reads, and what each must be.
_META_STRINGS = (
    "mission_id",
    "mission_slug",
    "slug",
    "friendly_name",
    "target_branch",
    "created_at",
    "accepted_at",
    "mission_type",
    "vcs",
)
_ULID_CHARS = frozenset("0123456789ABCDEFGHJKMNPQRSTVWXYZ")


def load_meta(mission_dir: Path, display: str) -> dict[str, Any]:
    """meta.json, type-checked: every key kitty copies into events or git commands is a
    plain string (a `mission_id` of `$(touch x)` or a branch `--upload-pack=…` is refused)."""
    shown = f"{display}/meta.json"
    meta = read_json(mission_dir / "meta.json", shown)
    if meta is None:
        return {}
    if not isinstance(meta, dict):
        raise SpecError(shown, 1, "meta.json is not an object", "restore it from git")
    for key in _META_STRINGS:
        value = meta.get(key)
        if value is not None and not isinstance(value, str):
            raise SpecError(
                shown, None, f"{key} must be a string, not {value!r}", "restore it from git"
            )
    mission_id = meta.get("mission_id")
    if mission_id and not set(mission_id.upper()) <= _ULID_CHARS:
        raise SpecError(
            shown,
            None,
            f"mission_id {mission_id!r} is not a ULID",
            "restore meta.json from git; mission ids are 26 letters and digits",
        )
    branch = meta.get("target_branch")
    if branch is not None and (
        not branch or branch.startswith("-") or any(c.isspace() or c in "~^:?*[\\" for c in branch)
    ):
        raise SpecError(
            shown,
            None,
            f"target_branch {branch!r} is not a branch name",
            'write the branch to merge into, e.g. "target_branch": "main"',
        )
    return meta


def load_lanes(mission_dir: Path, display: str) -> dict[str, Any] | None:
    data = read_json(mission_dir / "lanes.json", f"{display}/lanes.json")
    if data is not None and (not isinstance(data, dict) or not isinstance(data.get("lanes"), list)):
        raise SpecError(
            f"{display}/lanes.json",
            1,
            "lanes.json has no 'lanes' list",
            "re-create it with `kitty finalize`",
        )
    return data


def _cells(line: str) -> list[str]:
    return [c.strip().strip("`").strip() for c in line.strip().strip("|").split("|")]


def load_legacy_issue_rows(path: Path, display: str) -> list[IssueRow]:
    """The legacy `issue-matrix.md`: one Markdown table with `Issue` and `Verdict` columns
    (and optionally `WP`). Read only when there is no issue-matrix.json, as Spec Kitty does."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(display, None, f"unreadable: {exc}", "fix or remove the file") from None
    tables: list[list[tuple[int, str]]] = []
    current: list[tuple[int, str]] = []
    for number, line in enumerate(lines, start=1):
        if line.lstrip().startswith("|"):
            current.append((number, line))
        elif current:
            tables.append(current)
            current = []
    if current:
        tables.append(current)
    if len(tables) != 1:
        raise SpecError(
            display,
            tables[1][0][0] if len(tables) > 1 else None,
            f"issue-matrix.md must hold exactly one Markdown table (found {len(tables)})",
            "keep one table with Issue and Verdict columns, or write issue-matrix.json",
        )
    (header_no, header), *rest = tables[0]
    columns = [c.lower().replace(" ", "_") for c in _cells(header)]
    missing = [c for c in ("issue", "verdict") if c not in columns]
    if missing:
        raise SpecError(
            display,
            header_no,
            f"issue-matrix.md table has no {' or '.join(missing)} column",
            "the header must name Issue and Verdict (e.g. | Issue | Title | Verdict |)",
        )
    wp_col = next((columns.index(c) for c in ("wp", "wps", "work_package") if c in columns), None)
    rows = []
    for _number, line in rest:
        cells = _cells(line)
        if all(set(c) <= set("-: ") for c in cells):
            continue  # the separator row
        cells += [""] * (len(columns) - len(cells))
        issue, verdict = cells[columns.index("issue")], cells[columns.index("verdict")]
        wps: tuple[str, ...] = ()
        if wp_col is not None and cells[wp_col]:
            wps = tuple(w.strip() for w in cells[wp_col].split(",") if w.strip())
        if issue:
            rows.append(IssueRow(issue, verdict, wps, "issue-matrix.md"))
    return sorted(rows, key=lambda r: r.issue)


def load_issue_rows(mission_dir: Path, display: str) -> list[IssueRow]:
    path_display = f"{display}/issue-matrix.json"
    data = read_json(mission_dir / "issue-matrix.json", path_display)
    if data is None:
        return load_legacy_issue_rows(mission_dir / "issue-matrix.md", f"{display}/issue-matrix.md")
    rows = data.get("rows") if isinstance(data, dict) else None
    if not isinstance(rows, dict):
        raise SpecError(
            path_display,
            1,
            "issue-matrix.json has no 'rows' object",
            'write it as {"schema_version": 1, "rows": {"#123": {"verdict": ...}}}',
        )
    result = []
    for issue, row in sorted(rows.items()):
        row = row if isinstance(row, dict) else {}
        wp = row.get("wp")
        wps = tuple(str(w) for w in wp) if isinstance(wp, list) else ((str(wp),) if wp else ())
        result.append(IssueRow(issue, str(row.get("verdict") or ""), wps))
    return result
