"""The snapshot cache never changes a result.

Random sequences of operations (moves, claims, subtask marks, WP files edited,
added and removed, foreign lines appended out of order, repeated and torn lines,
the log rewritten, the cache corrupted or deleted) run in one repository. After
each operation every read command runs with the cache (twice: building it, then
using it) and without it (`KITTY_NO_CACHE=1`); the outputs must be identical,
byte for byte, and reads must not change any file of the mission.
"""

from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path

import pytest

from kitty.adapters import snapshots
from tests.helpers import git, kitty, make_mission, write_wp

SLUG = "cache-01CACHE0"
READS = [
    ("status", "--json"),
    ("status",),
    ("next", "--agent", "claude", "--json"),
    ("next", "--agent", "codex", "--json"),
    ("lanes", "--json"),
]
LANES7 = ["planned", "claimed", "blocked"]
LANES = ["planned", "claimed", "in_progress", "for_review", "in_review", "approved", "blocked"]


def tree(mission: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(mission.rglob("*")) if p.is_file()}


def read_all(repo: Path, monkeypatch: pytest.MonkeyPatch, done: str = "") -> list[tuple[int, str]]:
    outputs = []
    now = time.time_ns()
    with monkeypatch.context() as patch:
        patch.setattr(time, "time_ns", lambda: now)  # "claimed for 1s" must not tick
        for args in READS:
            patch.setenv("KITTY_NO_CACHE", "1")
            plain = kitty(repo, *args)
            patch.delenv("KITTY_NO_CACHE")
            building = kitty(repo, *args)
            using = kitty(repo, *args)
            for cached in (building, using):  # warnings (stderr) included: same bytes
                assert (cached.code, cached.out, cached.err) == (
                    plain.code,
                    plain.out,
                    plain.err,
                ), (args, done)
            outputs.append((plain.code, plain.out + plain.err))
    return outputs


class Ops:
    def __init__(self, repo: Path, mission: Path, rng: random.Random) -> None:
        self.repo, self.mission, self.rng = repo, mission, rng
        self.log = mission / "status.events.jsonl"
        self.cache = repo / ".git" / "kitty" / "cache" / SLUG
        self.next_wp = 7
        self.future = 0

    def wp_ids(self) -> list[str]:
        return sorted(p.name[:4] for p in (self.mission / "tasks").glob("WP*.md"))

    def move(self) -> None:
        wp, lane = self.rng.choice(self.wp_ids()), self.rng.choice(LANES)
        force = ["--force", "--note", "cache test"] if self.rng.random() < 0.5 else []
        kitty(self.repo, "move", wp, lane, "--agent", "claude", *force)

    def claim(self) -> None:
        kitty(self.repo, "next", "--agent", self.rng.choice(["claude", "codex"]), "--claim")

    def mark(self) -> None:
        task = f"T{self.rng.randint(1, 12):03d}"
        kitty(self.repo, "mark-status", task, "--status", "done", "--agent", "claude")

    def edit_wp(self) -> None:
        path = self.rng.choice(sorted((self.mission / "tasks").glob("WP*.md")))
        text = path.read_text()
        path.write_text(text.replace("title: ", f"title: E{self.rng.randint(0, 9)} ", 1))

    def add_wp(self) -> None:
        wp = f"WP{self.next_wp:02d}"
        self.next_wp += 1
        write_wp(self.mission, wp, title=f"Added {wp}", deps=[self.rng.choice(self.wp_ids())])

    def remove_wp(self) -> None:
        files = sorted((self.mission / "tasks").glob("WP*.md"))
        if len(files) > 3:
            self.rng.choice(files).unlink()

    def broken_wp(self) -> None:
        write_wp(self.mission, "WP99", title="Broken", extra="owned_files: [unclosed")

    def foreign_line(self) -> None:
        """A transition written by another clone, with an `at` in the past."""
        wp = self.rng.choice(self.wp_ids())
        record = {
            "actor": "gemini",
            "at": f"2020-01-0{self.rng.randint(1, 9)}T00:00:00+00:00",
            "event_id": f"01FOREIGN{self.rng.randint(0, 10**9):017d}",
            "evidence": None,
            "execution_mode": "worktree",
            "force": True,
            "from_lane": "planned",
            "mission_id": "01ABCDEFGHJKMNPQRSTVWXYZ00",
            "mission_slug": SLUG,
            "policy_metadata": None,
            "reason": "foreign",
            "review_ref": None,
            "to_lane": self.rng.choice(LANES),
            "wp_id": wp,
        }
        with self.log.open("a") as handle:
            handle.write(json.dumps(record, sort_keys=True) + "\n")

    def repeat_line(self) -> None:
        lines = self.log.read_text().splitlines(keepends=True)
        line = self.rng.choice(lines)
        if self.rng.random() < 0.5:
            line = line.replace('"reason": null', '"reason": "changed"')
        with self.log.open("a") as handle:
            handle.write(line if line.endswith("\n") else line + "\n")

    def repeat_id_newer(self) -> None:
        """An event id seen before, now dated after everything: replay keeps the first."""
        lines = [x for x in self.log.read_text().splitlines() if '"to_lane"' in x]
        if not lines:
            return
        record = json.loads(self.rng.choice(lines))
        self.future += 1
        record["at"] = f"2099-01-01T00:00:{self.future % 60:02d}.{self.future:06d}+00:00"
        with self.log.open("a") as handle:
            handle.write(json.dumps(record, sort_keys=True) + "\n")

    def torn_line(self) -> None:
        with self.log.open("a") as handle:
            handle.write('{"event_id": "torn", "wp_id": "WP01", "to_la')

    def junk_line(self) -> None:
        with self.log.open("a") as handle:
            handle.write(self.rng.choice(["not json\n", "[1, 2]\n", "\n", '{"kind": "x"}\n']))

    def truncate_log(self) -> None:
        lines = self.log.read_text().splitlines(keepends=True)
        self.log.write_text("".join(lines[: self.rng.randint(1, len(lines))]))

    def rewrite_same_size(self) -> None:
        """Edited in place, same size (a hand edit): the last planned/claimed/blocked
        transition now goes to another of these lanes (all three are 7 letters)."""
        text = self.log.read_text()
        spots = [(text.rfind(f'"to_lane": "{lane}"'), lane) for lane in LANES7]
        at, lane = max(spots)
        if at >= 0:
            other = self.rng.choice([x for x in LANES7 if x != lane])
            at += len('"to_lane": "')
            self.log.write_text(text[:at] + other + text[at + len(lane) :])

    def restore_log(self) -> None:
        """A checkout brings the committed log back (a new file, as git writes it)."""
        git(self.repo, "checkout", "--", str(self.log.relative_to(self.repo)))

    def corrupt_cache(self) -> None:
        for path in self.cache.glob("*.pickle"):
            path.write_bytes(self.rng.choice([b"", b"garbage", path.read_bytes()[:50]]))

    def drop_cache(self) -> None:
        for path in self.cache.glob("*.pickle"):
            path.unlink()

    def touch_log(self) -> None:
        os.utime(self.log)


WEIGHTED = [
    ("move", 6),
    ("claim", 4),
    ("mark", 2),
    ("edit_wp", 2),
    ("add_wp", 1),
    ("remove_wp", 1),
    ("broken_wp", 1),
    ("foreign_line", 2),
    ("repeat_line", 2),
    ("repeat_id_newer", 2),
    ("torn_line", 1),
    ("junk_line", 1),
    ("truncate_log", 1),
    ("rewrite_same_size", 3),
    ("restore_log", 1),
    ("corrupt_cache", 1),
    ("drop_cache", 1),
    ("touch_log", 1),
]


@pytest.mark.parametrize("trust_fresh_files", [False, True])
@pytest.mark.parametrize("seed", [1, 2])
def test_random_operations_read_the_same_with_and_without_the_cache(
    repo: Path, monkeypatch: pytest.MonkeyPatch, seed: int, trust_fresh_files: bool
) -> None:
    """`trust_fresh_files` lifts the racy-file rule so WP files are served from the cache
    at once (every edit here changes the file's size, so the stat key must notice)."""
    if trust_fresh_files:
        monkeypatch.setattr(snapshots, "RACY_NS", -(10**12))
    rng = random.Random(seed)
    wps = [
        {"wp_id": f"WP0{i}", "title": f"Module {i}", "subtasks": [f"T{2 * i - 1:03d}"]}
        for i in range(1, 7)
    ]
    wps[3]["deps"] = ["WP01"]
    wps[4]["deps"] = ["WP02", "WP04"]
    mission = make_mission(repo, slug=SLUG, wps=wps)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "mission")
    ops = Ops(repo, mission, rng)
    names = [name for name, weight in WEIGHTED for _ in range(weight)]
    read_all(repo, monkeypatch)
    done: list[str] = []
    for _ in range(30):
        done.append(rng.choice(names))
        getattr(ops, done[-1])()
        before = tree(mission)
        read_all(repo, monkeypatch, " ".join(done))
        assert tree(mission) == before, "a read changed a file of the mission"


def test_a_file_rewritten_within_the_timestamp_granularity_is_parsed_again(
    tmp_path: Path,
) -> None:
    """Same size, same mtime (an edit inside one filesystem tick): the racy rule re-reads."""
    cache = tmp_path / "cache"
    path = tmp_path / "WP01-x.md"
    path.write_text("one")

    def parse(name: str) -> str:
        return (tmp_path / name).read_text()

    def listing() -> list[tuple[str, os.stat_result]]:
        return [(path.name, path.stat())]

    assert snapshots.cached_parse(cache, listing(), parse) == ["one"]
    before = path.stat()
    path.write_text("two")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert snapshots.cached_parse(cache, listing(), parse) == ["two"]
    assert snapshots.cached_parse(cache, listing(), parse) == ["two"]
