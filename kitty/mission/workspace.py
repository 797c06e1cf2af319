"""An opened mission: its files, its reduced state, and the one write path."""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import Any

from kitty.adapters import config as config_adapter
from kitty.adapters import contain, eventlog, layout, snapshots, specs, statusparts
from kitty.adapters.files import atomic_write, check_writable, read_text
from kitty.adapters.identity import DEFAULT_ACTOR, git_identity
from kitty.core.clock import format_at, hybrid_at, is_implausible, ulid
from kitty.core.limits import check_agent, check_record
from kitty.core.log.events import Annotation, LogWarning, ParsedLog, Transition, parse_record
from kitty.core.log.snapshot import sort_ids
from kitty.core.log.state import Board, extend, link, replay
from kitty.core.model import WorkPackage, wp_id_from_filename, wp_number
from kitty.core.move import Policy
from kitty.core.record import Record
from kitty.core.wpfile import parse_wp
from kitty.errors import AmbiguousId, KittyError, NotFound

AGENT_ENV = "KITTY_AGENT"
Builder = Callable[[Board], list[dict[str, Any]]]


class Mission(Record):
    project: layout.Project
    slug: str

    def __init__(self, project: layout.Project, slug: str) -> None:
        self.project = project
        self.slug = slug

    @classmethod
    def open(cls, cwd: Path, name: str | None) -> Mission:
        project = layout.find_project(cwd)
        return cls(project, layout.resolve_mission(project, name))

    # -- paths -------------------------------------------------------------
    @property
    def dir(self) -> Path:
        return self.project.specs_dir / self.slug

    @property
    def display(self) -> str:
        return f"{layout.SPECS}/{self.slug}"

    @property
    def events_path(self) -> Path:
        return self.dir / "status.events.jsonl"

    @property
    def status_path(self) -> Path:
        return self.dir / "status.json"

    @property
    def cache_dir(self) -> Path:
        """The disposable snapshot cache (in the git dir: never tracked)."""
        return self.project.git_common_dir / "kitty" / "cache" / self.slug

    # -- files (read once per command) -------------------------------------
    @cached_property
    def meta(self) -> dict[str, Any]:
        return specs.load_meta(self.dir, self.display)

    @cached_property
    def config(self) -> config_adapter.Config:
        """`.kittify/config.yaml`, from the snapshot cache while the file is unchanged
        (parsing it is what imports PyYAML on the read path)."""
        path = self.project.config_path
        try:
            listing = [(path.name, os.stat(path))]
        except OSError:
            return config_adapter.load(path)

        def parse(_: str) -> config_adapter.Config | KittyError:
            try:
                return config_adapter.load(path)
            except KittyError as exc:
                return exc

        cache = self.project.git_common_dir / "kitty" / "cache"
        [result] = snapshots.cached_parse(cache, listing, parse, store="config.pickle")
        if isinstance(result, KittyError):
            raise result
        config: config_adapter.Config = result
        return config

    @cached_property
    def specset(self) -> specs.SpecSet:
        return specs.load_wps(self.dir, self.display, self.cache_dir, self.wp_listing)

    @property
    def wps(self) -> dict[str, WorkPackage]:
        return self.specset.wps

    @cached_property
    def lanes_doc(self) -> dict[str, Any] | None:
        return specs.load_lanes(self.dir, self.display)

    def policy(self) -> Policy:
        return Policy(self.config.max_cycles, specs.load_issue_rows(self.dir, self.display))

    @cached_property
    def log(self) -> ParsedLog:
        return eventlog.read(self.events_path)

    @cached_property
    def log_state(self) -> snapshots.LogState:
        """The replayed board and the log's warnings, from the snapshot cache when valid."""
        if "log" in self.__dict__:
            return snapshots.LogState(replay(self.log.events), self.log.warnings)
        return snapshots.read_log(self.events_path, self.cache_dir)

    @cached_property
    def board(self) -> Board:
        return self.log_state.board

    @property
    def mission_id(self) -> str:
        return str(self.meta.get("mission_id") or "")

    def warnings(self) -> list[str]:
        """Every problem found while reading, one line each, `file:line: what`."""
        shown = f"{self.display}/status.events.jsonl"
        found = [w.render(shown) for w in self.log_state.warnings]
        found += [w.render(shown) for w in self.board.warnings]
        found += [str(e) for e in self.specset.errors]
        return found

    @cached_property
    def wp_listing(self) -> list[tuple[str, os.stat_result]]:
        """(file name, stat) of each WP file: one directory scan per command."""
        return specs.stat_wp_files(self.dir / "tasks")

    @cached_property
    def wp_names(self) -> dict[str, str]:
        """WP id -> file name, from file names alone (no parsing)."""
        names: dict[str, str] = {}
        listed = (
            [name for name, _ in self.wp_listing]
            if "wp_listing" in self.__dict__
            else specs.wp_file_names(self.dir / "tasks")  # no stat of every file (a move)
        )
        for name in listed:
            wp_id = wp_id_from_filename(name)
            if wp_id and wp_id not in names:
                names[wp_id] = name
        return names

    @property
    def wp_paths(self) -> dict[str, Path]:
        """WP id -> file, from file names alone (no parsing)."""
        tasks = self.dir / "tasks"
        return {wp_id: tasks / name for wp_id, name in self.wp_names.items()}

    def wp(self, wp_id: str) -> WorkPackage | None:
        """One WP, parsing only its own file unless every file was already read."""
        if "specset" in self.__dict__ or wp_id not in self.wp_names:
            return self.wps.get(wp_id)
        name = self.wp_names[wp_id]
        display = f"{self.display}/tasks/{name}"
        text = read_text(self.dir / "tasks" / name, display)
        if text is None:
            return None
        return parse_wp(display, name, text)

    def store_status(self, board: Board, end: int | None = None) -> bool:
        """Rewrite the derived status.json from `board` (store_status below)."""
        return store_status(self, board, end)

    def read_inside(self, path: Path) -> str | None:
        """Text of a file inside the repository only (see read_inside_repo)."""
        return read_inside_repo(self, path)

    def all_ids(self) -> list[str]:
        return sort_ids(set(self.wp_names) | set(self.board.wps))

    def resolve_wp(self, text: str) -> str:
        """`WP3`, `WP03`, `3` -> the WP id used by this mission."""
        return resolve_wp_id(self, text)

    def preload(self) -> None:
        """Read every file but the log now, so a write's locked section stays short."""
        _ = (self.meta, self.config, self.specset, self.lanes_doc)

    def refresh(self) -> None:
        """Forget what was read, after this process changed the mission's files."""
        for name in (
            "meta",
            "specset",
            "lanes_doc",
            "log",
            "log_state",
            "board",
            "wp_listing",
            "wp_names",
        ):
            self.__dict__.pop(name, None)

    def actor(self, agent: str | None) -> str:
        """Who acts: --agent, $KITTY_AGENT, config `identity`, git user.name/email, `user`."""
        return who_acts(self, agent)

    # -- the one write path (the functions at the end of this module) ----------
    def transition(
        self, wp_id: str, from_lane: str, to_lane: str, actor: Any, **fields: Any
    ) -> dict[str, Any]:
        return transition(self, wp_id, from_lane, to_lane, actor, **fields)

    @staticmethod
    def annotation(wp_id: str, actor: Any, delta: dict[str, Any]) -> dict[str, Any]:
        return {"actor": actor, "delta": delta, "kind": "annotation", "wp_id": wp_id}

    def record(self, build: Builder) -> list[dict[str, Any]]:
        """Lock, re-read, let `build` validate against the fresh board, append, fsync
        (record below)."""
        return record(self, build)

    def publish_status(self, board: Board, end: int) -> bool:
        """`store_status` after an append; a failure is a warning."""
        return publish_status(self, board, end)


def read_inside_repo(mission: Mission, path: Path) -> str | None:
    """Text of a file the log or a WP points at, only when it lies inside the repository
    (no symlinks on the way); None when it is absent, outside or unreadable.

    Paths in the log are repository content: a crafted `feedback_path` must not make
    kitty copy `~/.ssh/id_rsa` into an agent's prompt.
    """
    full = Path(os.path.abspath(path))
    root = mission.project.root
    if full != root and root not in full.parents:
        return None
    try:
        return contain.read_text(full)
    except (OSError, UnicodeDecodeError, KittyError):
        return None


def resolve_wp_id(mission: Mission, text: str) -> str:
    """`WP3`, `WP03`, `3` -> the WP id used by this mission."""
    number = wp_number(text)
    if number is None:
        raise NotFound(f"{text!r} is not a work package id", "write it as WP03, WP3 or 3")
    # File names first: resolving an id should not cost a replay of the log.
    matches = [i for i in mission.wp_names if wp_number(i) == number]
    if not matches:
        matches = [i for i in mission.all_ids() if wp_number(i) == number]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise AmbiguousId(f"{text} matches {', '.join(matches)}", "use the full id")
    raise NotFound(
        f"no work package {text} in {mission.slug}",
        "work packages: " + (", ".join(mission.all_ids()) or "none"),
    )


def who_acts(mission: Mission, agent: str | None) -> str:
    """Who acts: --agent, $KITTY_AGENT, config `identity`, git user.name/email, `user`."""
    if agent is not None and agent.strip():
        return check_agent(agent.strip(), "--agent")
    from_env = os.environ.get(AGENT_ENV, "").strip()
    if from_env:
        return check_agent(from_env, f"${AGENT_ENV}")
    if mission.config.identity:
        return check_agent(mission.config.identity, "identity: in .kittify/config.yaml")
    if "_git_identity" not in mission.__dict__:
        mission.__dict__["_git_identity"] = git_identity(mission.project.worktree)
    found = mission.__dict__["_git_identity"]
    return check_agent(found, "git's user.name (pass --agent)") if found else DEFAULT_ACTOR


# -- the one write path: lock, re-read, validate, append, fsync, then status.json --


def transition(
    mission: Mission, wp_id: str, from_lane: str, to_lane: str, actor: Any, **fields: Any
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "actor": actor,
        "evidence": None,
        "execution_mode": "worktree",
        "force": False,
        "from_lane": from_lane,
        "mission_id": mission.mission_id,
        "mission_slug": mission.slug,
        "policy_metadata": None,
        "reason": None,
        "review_ref": None,
        "review_result": None,
        "to_lane": to_lane,
        "wp_id": wp_id,
    }
    record.update(fields)
    return record


def record(mission: Mission, build: Builder) -> list[dict[str, Any]]:
    """Lock, re-read, let `build` validate against the fresh board, append, fsync.

    `build` raises to refuse (nothing is written) or returns the records to append.
    What can be checked is checked first (no symlinks, a writable regular log, a
    regular status.json), so a refusal writes nothing. status.json is then rewritten
    from the log, after the lock is released (the locked section is the tail, the
    decision and the append: other writers wait for nothing else); once the events
    are appended they are recorded, so a failure there is only a warning with the
    `kitty rebuild` hint.
    """
    _ = mission.meta, mission.config  # read before the lock: the locked section stays short
    with eventlog.locked(mission.project.lock_path(mission.slug), f"mission {mission.slug}"):
        eventlog.check_appendable(mission.events_path)
        check_writable(mission.status_path)
        # Only the tail appended since the last snapshot is parsed under the lock.
        board = snapshots.read_log(mission.events_path, mission.cache_dir).board
        records = build(board)
        for rec in records:  # nothing oversized enters the log, whoever built it
            check_record(rec, mission.config.max_text_bytes)
        if not records:
            mission.__dict__["board"] = board  # fresh: no second read after a no-op
            return []
        newest, now = board.newest_at_us, eventlog.now_us()
        implausible = newest is not None and is_implausible(newest, now)
        parsed = eventlog.read(mission.events_path) if implausible else ParsedLog()
        if implausible:  # a far-future event in the log: the clock ignores it
            newest = max(
                (
                    e.at_us
                    for e in parsed.events
                    if isinstance(e, Transition | Annotation) and not is_implausible(e.at_us, now)
                ),
                default=None,
            )
        for rec in records:
            at = hybrid_at(now, newest)
            newest = at
            rec["at"] = format_at(at)
            rec.setdefault("event_id", ulid(at // 1000, eventlog.random_bytes()))
        link(records, board)
        since = statusparts.since(mission.events_path, records)
        eventlog.append(mission.events_path, records)
        end = os.stat(mission.events_path).st_size
        new_events = [
            e for rec in records if not isinstance(e := parse_record(dict(rec)), LogWarning)
        ]
        fresh = replay([*parsed.events, *new_events]) if implausible else extend(board, new_events)
        mission.__dict__.pop("log", None)
        mission.__dict__.pop("log_state", None)
        mission.__dict__["board"] = fresh
    publish_status(mission, fresh, end, None if implausible else since)
    return records


def publish_status(
    mission: Mission, board: Board, end: int, since: statusparts.Since | None = None
) -> bool:
    """`store_status` after an append: a failure is a warning (the events are recorded)
    with the `kitty rebuild` hint; False when skipped or failed."""
    try:
        return store_status(mission, board, end, since)
    except (KittyError, OSError) as exc:
        from kitty.output import warn

        warn(
            [
                f"the event was recorded, but {mission.display}/status.json could not be "
                f"refreshed ({exc}); run `kitty rebuild --mission {mission.slug}`"
            ]
        )
        return False


def store_status(
    mission: Mission, board: Board, end: int | None = None, since: statusparts.Since | None = None
) -> bool:
    """Rewrite the derived status.json from `board` under the status lock, the one way
    kitty writes that file, so writers never interleave. With `end` (the log's size
    `board` was replayed from) it is skipped, returning False, when the log has grown
    since: a later writer's board is newer, and that writer rewrites it in turn, so
    status.json never goes back to an older board. `since`: what the append made of
    `board` changed (only those WPs are encoded again, adapters/statusparts).
    Errors propagate."""
    what = f"status.json of {mission.slug}"
    with eventlog.locked(mission.project.lock_path(f"status-{mission.slug}"), what):
        if end is not None and os.stat(mission.events_path).st_size != end:
            return False
        text = statusparts.render(
            mission.cache_dir, mission.events_path, board, mission.slug, mission.meta, end, since
        )
        atomic_write(mission.status_path, text)
    return True
