"""Parse one work package file (YAML front matter + Markdown body) into a WorkPackage.

Pure: the caller passes the file's text. Every problem is a SpecError with the
line it is on, so `kitty finalize` can point at it.
"""

from __future__ import annotations

import re
from typing import Any

from kitty.core.frontmatter import read_plain
from kitty.core.model import (
    WorkPackage,
    format_wp_id,
    parse_dependencies,
    wp_id_from_filename,
    wp_number,
)
from kitty.errors import SpecError

_KEY_LINE = re.compile(r"^([A-Za-z_][\w-]*)\s*:")


def split_front_matter(text: str) -> tuple[str, str, int] | None:
    """Return (front matter, body, number of the body's first line) or None."""
    if not text.startswith("---"):
        return None
    lines = text.split("\n")
    if lines[0].strip() != "---":
        return None
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1 :]), index + 2
    return None


def key_lines(front: str) -> dict[str, int]:
    """Line number (in the whole file) of each top-level key of the front matter."""
    found: dict[str, int] = {}
    for offset, line in enumerate(front.split("\n")):
        match = _KEY_LINE.match(line)
        if match and match.group(1) not in found:
            found[match.group(1)] = offset + 2  # +1 for the opening ---, +1 for 1-based
    return found


def load_front_matter(path: str, text: str) -> tuple[dict[str, Any], str, dict[str, int]]:
    parts = split_front_matter(text)
    if parts is None:
        raise SpecError(
            path,
            1,
            "no YAML front matter",
            "start the file with a '---' line, the YAML keys, and a closing '---' line",
        )
    front, body, _ = parts
    lines: dict[str, int] = {}
    meta = read_plain(front, lines)
    if meta is None:
        meta = _load_yaml(path, front)
        lines = key_lines(front)
    if not isinstance(meta, dict):
        raise SpecError(
            path,
            2,
            "front matter is not a mapping of keys to values",
            "write the front matter as 'key: value' lines",
        )
    return meta, body, lines


#: At most this many nodes once aliases are expanded (a WP file has a few hundred): a
#: "billion laughs" document of nested aliases is refused before anything walks it.
MAX_YAML_NODES = 100_000


class AliasBomb(ValueError):
    """A YAML document whose aliases expand beyond MAX_YAML_NODES (or into themselves)."""

    def __init__(self, line: int, cycle: bool = False) -> None:
        super().__init__(
            "aliases refer to themselves (a recursive YAML structure)"
            if cycle
            else f"aliases expand to more than {MAX_YAML_NODES} values (a YAML bomb?)"
        )
        self.line = line


def _expanded_size(node: Any, sizes: dict[int, int]) -> int:
    """Nodes `node` stands for with every alias expanded (each shared node counted once
    per use), stopping at the bound; AliasBomb on a cycle."""
    key = id(node)
    known = sizes.get(key)
    if known is not None:
        if known < 0:
            raise AliasBomb(node.start_mark.line, cycle=True)
        return known
    sizes[key] = -1  # in progress: meeting it again is a cycle
    total = 1
    value = node.value
    if isinstance(value, list):
        for item in value:
            for child in item if isinstance(item, tuple) else (item,):
                total += _expanded_size(child, sizes)
                if total > MAX_YAML_NODES:
                    raise AliasBomb(child.start_mark.line)
    sizes[key] = total
    return total


def safe_yaml(text: str) -> Any:
    """`yaml.safe_load` (the C loader when there is one) that refuses alias bombs (AliasBomb,
    a ValueError with the 0-based `line`) before constructing anything. Raises yaml.YAMLError,
    also for a value YAML cannot build (a date that does not exist), at that value."""
    import yaml

    loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if "*" in text:  # no alias, no expansion: skip the walk
            _expanded_size(node, {})
        try:
            return loader.construct_document(node)
        except (ValueError, OverflowError) as exc:
            # A date, number or tagged value YAML cannot build (`2026-13-45`, `!!int x`): a
            # YAML error at that value, not a crash. It is the innermost node still being built.
            culprit = ([*loader.recursive_objects] or [node])[-1]  # a scalar: only they fail
            raise yaml.constructor.ConstructorError(
                None, None, f"{culprit.value!r} cannot be read: {exc}", culprit.start_mark
            ) from None
    finally:
        loader.dispose()


def _load_yaml(path: str, front: str) -> Any:
    """PyYAML for what the plain reader leaves (imported only then: it costs ~30 ms)."""
    import yaml

    try:
        meta = safe_yaml(front)
    except AliasBomb as exc:
        raise SpecError(
            path,
            exc.line + 2,
            str(exc),
            f"front matter needs no aliases: write the values out (at most {MAX_YAML_NODES})",
        ) from None
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or str(exc).split("\n")[0]
        raise SpecError(
            path,
            _error_line(exc, front),
            f"unreadable YAML: {problem}",
            "fix the YAML syntax (quote values containing ':' or '#')",
        ) from None
    return {} if meta is None else meta


def _error_line(exc: Exception, front: str) -> int:
    """The file line a YAML error is on (the front matter starts on line 2)."""
    import yaml

    # The context mark is where the broken construct starts (an unclosed `[`), which is
    # where the fix goes; the problem mark is where parsing gave up.
    mark = getattr(exc, "context_mark", None) or getattr(exc, "problem_mark", None)
    if mark is not None:
        return int(mark.line) + 2
    if isinstance(exc, yaml.reader.ReaderError):  # a character YAML refuses: its first use
        return front[: front.find(chr(exc.character))].count("\n") + 2
    return 1  # no YAML error PyYAML raises while loading has neither


def _str_list(path: str, meta: dict[str, Any], key: str, lines: dict[str, int]) -> tuple[str, ...]:
    value = meta.get(key)
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str | int) for v in value):
        raise SpecError(
            path,
            lines.get(key, 1),
            f"'{key}' must be a list of strings",
            f"write {key} as a YAML list, one '- item' per line",
        )
    return tuple(str(v) for v in value)


def parse_wp(path: str, filename: str, text: str) -> WorkPackage:
    """Parse and check one WP file on its own (mission-wide checks are in `validate`)."""
    meta, body, lines = load_front_matter(path, text)
    raw_id = _checked_id(path, filename, meta, lines)
    deps = _checked_dependencies(path, meta, lines)
    estimate = meta.get("estimate")
    if estimate is not None and (
        isinstance(estimate, bool) or not isinstance(estimate, int | float) or estimate <= 0
    ):
        raise SpecError(
            path,
            lines.get("estimate", 1),
            "'estimate' must be a positive number",
            "remove it or write a number such as 2 or 0.5",
        )
    mode = meta.get("execution_mode")
    return WorkPackage(
        wp_id=raw_id,
        title=str(meta["title"]),
        dependencies=tuple(dict.fromkeys(deps)),
        subtasks=_str_list(path, meta, "subtasks", lines),
        owned_files=_str_list(path, meta, "owned_files", lines),
        path=path,
        stem=filename[:-3],
        estimate=float(estimate) if estimate is not None else None,
        execution_mode=str(mode) if mode is not None else None,
        meta=meta,
        body=body,
        key_lines=lines,
    )


def _checked_id(path: str, filename: str, meta: dict[str, Any], lines: dict[str, int]) -> str:
    """The WP id: present with a title, of the form WP01, and the one the file name has."""
    file_id = wp_id_from_filename(filename)
    for key in ("work_package_id", "title"):
        if meta.get(key) in (None, ""):
            raise SpecError(path, 1, f"missing '{key}'", f"add a '{key}:' line to the front matter")
    raw_id = str(meta["work_package_id"])
    if not re.fullmatch(r"WP\d{2,}", raw_id):
        raise SpecError(
            path,
            lines.get("work_package_id", 1),
            f"work_package_id {raw_id!r} is not of the form WP01",
            "use 'WP' followed by two or more digits",
        )
    if file_id is None or file_id != raw_id:
        raise SpecError(
            path,
            lines.get("work_package_id", 1),
            f"work_package_id {raw_id} does not match the file name {filename}",
            f"rename the file to {raw_id}-<title>.md or fix work_package_id",
        )
    return raw_id


def _checked_dependencies(path: str, meta: dict[str, Any], lines: dict[str, int]) -> list[str]:
    """The dependencies as WP ids (`3`, `WP3` -> WP03; `WP0001` stays as written)."""
    deps_raw = parse_dependencies(meta.get("dependencies"))
    if deps_raw is None:
        raise SpecError(
            path,
            lines.get("dependencies", 1),
            "'dependencies' must be a list of WP ids",
            "write dependencies as a YAML list such as [WP01, WP02]",
        )
    deps: list[str] = []
    for dep in deps_raw:
        number = wp_number(dep)
        if re.fullmatch(r"WP\d{2,}", dep):
            deps.append(dep)  # canonical already; `WP0001` stays as written
            continue
        if number is None:
            raise SpecError(
                path,
                lines.get("dependencies", 1),
                f"dependency {dep!r} is not a WP id",
                "list dependencies as WP ids such as WP01",
            )
        deps.append(format_wp_id(number))
    return deps


_BREAKS = frozenset("\n\r\x85\u2028\u2029")


def _front_dumper() -> Any:
    """A SafeDumper writing free text (titles, notes) in double quotes with escapes whenever
    it has a line break or edge spaces, so no value can end the front matter early or
    change shape. Built on first use: reads never import yaml for the plain subset."""
    import yaml

    class FrontDumper(yaml.SafeDumper):
        pass

    def represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
        style = '"' if value != value.strip() or not _BREAKS.isdisjoint(value) else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    FrontDumper.add_representer(str, represent_str)
    return FrontDumper


def dump_front_matter(front: dict[str, Any], *, sort_keys: bool = False) -> str:
    """`---\\n<yaml>---\\n`: the one way kitty writes front matter (reads back as `front`)."""
    import yaml

    text = yaml.dump(
        front,
        Dumper=_front_dumper(),
        sort_keys=sort_keys,
        allow_unicode=True,
        width=1 << 30,
        default_flow_style=False,
    )
    return "---\n" + text + "---\n"


def one_line(text: str) -> str:
    """Free text for a Markdown heading: every line break becomes a space."""
    return " ".join(text.split())  # str.split() breaks at every one of _BREAKS too
