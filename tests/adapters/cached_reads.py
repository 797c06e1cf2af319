"""What the tests of the cached reads share (kitty/adapters/viewcache.py: the finished
`kitty status` and `kitty next`, test_status_cache.py and test_next_cache.py): the
committed mission they read, the fast path run in-process, and the check that click,
the uncached fast path and the cached fast path print the same bytes."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from kitty import fastpath
from kitty.adapters import viewcache
from tests.helpers import git, lane_commit, make_mission, ok
from tests.helpers import kitty as click_kitty

Result = tuple[int, str, str]
Served = Callable[[Path, list[str]], bool]
WPS = [{"wp_id": "WP01"}, {"wp_id": "WP02", "deps": ["WP01"]}, {"wp_id": "WP03"}]


def committed_mission(repo: Path, slug: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A committed mission; inputs count as settled at once (no two-second racy wait)."""
    monkeypatch.setattr(viewcache, "RACY_NS", 0)
    make_mission(repo, slug=slug, wps=WPS)
    ok(repo, "move", "WP01", "claimed", "--agent", "claude")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "mission")
    return repo


def in_review(repo: Path) -> None:
    """WP01 implemented by claude and in review by codex."""
    ok(repo, "move", "WP01", "in_progress", "--agent", "claude")
    lane_commit(repo, "WP01")
    ok(repo, "move", "WP01", "for_review", "--agent", "claude")
    ok(repo, "move", "WP01", "in_review", "--agent", "codex")


def fast(repo: Path, args: list[str], capsys: pytest.CaptureFixture[str]) -> Result:
    code = fastpath.run(["-C", str(repo), *args])
    out = capsys.readouterr()
    assert code is not None
    return code, out.out, out.err


def routes_agree(
    repo: Path,
    args: list[str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    served: Served,
    stored: bool = True,
    click: bool = True,
) -> Result:
    """The three routes agree; the cached route is served from its record the second time."""
    monkeypatch.setenv("KITTY_NO_CACHE", "1")
    plain = fast(repo, args, capsys)
    monkeypatch.delenv("KITTY_NO_CACHE")
    first = fast(repo, args, capsys)
    assert served(repo, args) == stored, "the first cached run kept its output"
    second = fast(repo, args, capsys)
    assert first == plain and second == plain
    if click:
        full = click_kitty(repo, *args)
        assert (full.code, full.out, full.err) == plain
    return plain


def outputs_after(
    repo: Path,
    args: list[str],
    changes: Iterable[tuple[str, Callable[[], object]]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    served: Served,
) -> set[Result]:
    """The routes agree after each change; what they printed, all told."""
    seen = set()
    for what, change in changes:
        change()
        capsys.readouterr()
        if "--mission" not in args and what == "another mission":
            # two missions and no --mission: an error, never cached (click says it too)
            monkeypatch.setenv("KITTY_NO_CACHE", "1")
            code, _, err = fast(repo, args, capsys)
            monkeypatch.delenv("KITTY_NO_CACHE")
            assert code != 0 and fast(repo, args, capsys)[2] == err, what
            assert not served(repo, args)
            continue
        seen.add(routes_agree(repo, args, capsys, monkeypatch, served))
    return seen


def append(path: Path, text: str) -> None:
    with path.open("a") as handle:
        handle.write(text)


def edit_json(path: Path, **changes: str) -> None:
    path.write_text(json.dumps(json.loads(path.read_text()) | changes, indent=2))
