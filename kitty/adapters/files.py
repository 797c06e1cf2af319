"""Small file helpers: atomic replace for derived files, tolerant JSON reads."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from kitty.errors import SpecError


def atomic_write(path: Path, text: str) -> None:
    """Write `text` to `path` via a temp file + fsync + os.replace: never half-written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def dump_json(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def read_json(path: Path, display: str) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        return json.loads(text)
    except ValueError as exc:
        line = getattr(exc, "lineno", None)
        raise SpecError(
            display, line, f"not valid JSON: {exc}", "fix the file by hand or restore it from git"
        ) from None
