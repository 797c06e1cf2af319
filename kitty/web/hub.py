"""The live board's data: one model per mission, grown by the lines appended to its
log, a version per poll shared by every client, and the message a stream is sent
next (a `diff` from the version it shows, else the whole `board`)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
import time
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from kitty.adapters import eventlog, layout
from kitty.core.printable import utf8
from kitty.mission.workspace import Mission
from kitty.web import board as webboard
from kitty.web import sprint_view

POLL_S = 0.1
FILES_EVERY_S = 2.0


@dataclass
class Snapshot:
    """One version of a mission's board; and, when it grew from the previous version
    by appended log lines alone, what changed since (`diff`, from `diff_from`)."""

    version: str
    model: dict[str, Any]
    diff_from: str | None = None
    diff: dict[str, Any] | None = None

    @cached_property
    def payload(self) -> str:
        """page_json(model), built once (only when a client needs the whole board)."""
        return webboard.page_json(self.model)

    @cached_property
    def board_event(self) -> bytes:
        return utf8(f"event: board\nid: {self.version}\ndata: {self.payload}\n\n")

    @cached_property
    def diff_event(self) -> bytes:
        data = webboard.page_json(self.diff or {})
        return utf8(f"event: diff\nid: {self.version}\ndata: {data}\n\n")


@dataclass
class Hub:
    """One live model per mission, grown by the lines appended to its log (a diff per
    version), rebuilt only when another of its files changes."""

    root: Path
    default_mission: str
    lock: threading.Lock = field(default_factory=threading.Lock)
    cache: dict[str, Snapshot] = field(default_factory=dict)
    lives: dict[str, tuple[str, webboard.LiveModel]] = field(default_factory=dict)
    version_lock: threading.Lock = field(default_factory=threading.Lock)
    versions: dict[str, tuple[float, str, float, str, str]] = field(default_factory=dict)
    stop: threading.Event = field(default_factory=threading.Event)

    @cached_property
    def project(self) -> layout.Project:
        return layout.find_project(self.root)

    def resolve(self, name: str | None) -> str:
        return layout.resolve_mission(self.project, name or self.default_mission)

    def version(self, slug: str) -> str:
        """The mission's signature, computed at most once per poll for all clients.

        The log and the small files are stat'ed every poll; the WP files (one stat
        each, 1,000 on a big mission) only every `FILES_EVERY_S`.
        """
        return self._version(slug)[0]

    def _version(self, slug: str) -> tuple[str, str]:
        """(the version, the signature of every file but the log)."""
        now = time.monotonic()
        with self.version_lock:
            cached = self.versions.get(slug)
            if cached is not None and now - cached[0] < POLL_S * 0.8:
                return cached[1], cached[4]
            if cached is None or now - cached[2] >= FILES_EVERY_S:
                files, files_at = wp_files_signature(self.project, slug), now
            else:
                files, files_at = cached[3], cached[2]
            others = signature(self.project, slug, with_log=False, with_wp_files=False)
            log = signature(self.project, slug, with_log=True, with_wp_files=False)
            version = log + files
            self.versions[slug] = (now, version, files_at, files, others + files)
            return version, others + files

    def snapshot(self, slug: str) -> Snapshot:
        with self.lock:
            version, files = self._version(slug)
            cached = self.cache.get(slug)
            if cached is not None and cached.version == version:
                return cached
            now = eventlog.now_us()
            live = self.lives.get(slug)
            grown = None
            if live is not None and live[0] == files:
                try:
                    grown = live[1].grow(now)
                except BaseException:
                    del self.lives[slug]  # half grown: never grow it again
                    raise
            if grown is not None and cached is not None and live is not None:
                top, changed = grown
                model = dict(live[1].model, version=version, live=True, sprint=self.sprint(slug))
                diff: dict[str, Any] = {"from": cached.version, "version": version}
                diff |= {"top": top, "work_packages": changed, "sprint": model["sprint"]}
                snap = Snapshot(version, model, cached.version, diff)
            else:
                mission = Mission.open(self.root, slug)
                if live is not None and live[0] == files:
                    # Only the log changed: keep the parsed WP files.
                    old = live[1].mission.__dict__
                    mission.__dict__.update({k: old[k] for k in _FILE_READS if k in old})
                fresh = webboard.LiveModel(mission, now)
                self.lives[slug] = (files, fresh)
                model = dict(fresh.model, version=version, live=True, sprint=self.sprint(slug))
                snap = Snapshot(version, model)
            self.cache[slug] = snap
            return snap

    def sprint(self, slug: str) -> dict[str, Any] | None:
        """The sprint running on `slug` (web.sprint_view), sent with every version."""
        return sprint_view.running_sprint(self.project.kittify, slug)

    def message(self, slug: str, seen: str) -> tuple[bytes, str]:
        """What a stream that shows version `seen` is sent next (the diff from it when
        there is one, else the whole board), and the version it then shows."""
        snap = self.snapshot(slug)
        if snap.diff is not None and seen == snap.diff_from:
            return snap.diff_event, snap.version
        return snap.board_event, snap.version


#: What a Mission reads from files other than the log (reused while their stats hold).
_FILE_READS = ("meta", "config", "specset", "lanes_doc", "wp_paths")


def signature(
    project: layout.Project, slug: str, with_log: bool = True, with_wp_files: bool = True
) -> str:
    """Changes whenever anything the board shows changes: the log, lanes.json, meta,
    the WP files, the config, the run-log folder. Stats only (cheap)."""
    base = project.specs_dir / slug
    paths = [
        base / "lanes.json",
        base / "meta.json",
        base / "tasks",
        project.config_path,
        project.kittify / "runs",
    ]
    if with_log:
        paths.insert(0, base / "status.events.jsonl")
    text = _stats(paths)
    if with_wp_files:
        text += wp_files_signature(project, slug)
    return hashlib.blake2b(utf8(text), digest_size=8).hexdigest()


def wp_files_signature(project: layout.Project, slug: str) -> str:
    """The stats of every WP file (an edit in place changes no folder)."""
    paths: list[str] = []
    with contextlib.suppress(OSError), os.scandir(project.specs_dir / slug / "tasks") as found:
        paths = [e.path for e in sorted(found, key=lambda e: e.name) if e.name.endswith(".md")]
    return hashlib.blake2b(_stats(paths).encode(), digest_size=8).hexdigest()


def _stats(paths: list[Path] | list[str]) -> str:
    parts = []
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            parts.append("-")
            continue
        parts.append(f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}")
    return "|".join(parts)
