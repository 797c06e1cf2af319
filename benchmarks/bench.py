"""Speed at scale: one table of every measurement, each beside its target.

Times an installed (non-editable) `kitty` end to end, as an agent runs it, on
generated missions (benchmarks/missions.py): a Spec Kitty-written mission of 99
WPs and of 10,000 WPs (its real payloads, ~27 log lines per WP), and kitty's own
format at 1,000 and 10,000 WPs x ~20 events. Bare `python -c pass` of the
interpreter that runs `kitty` is measured in the same run; relative targets are
multiples of it.

    python benchmarks/bench.py --kitty .bench-venv/bin/kitty          # everything
    python benchmarks/bench.py --kitty .bench-venv/bin/kitty --quick  # skip 10k
    python benchmarks/bench.py --smoke  # tiny sizes, one run, seconds (run by the test suite)

Wall times are medians of --runs runs (3 at 10k); peak RSS is the command's
ru_maxrss, measured through a small launcher (see LAUNCHER). `make bench` builds
the installed copy and runs this.

Every command's CPU time (user + sys of it and its children, git included) is
reported beside its wall time. Moves are timed with `agents.auto_commit` off and
on (with how much `.git/objects` grows a move), and the growth exponents from
1,000 to 10,000 WPs are fitted from CPU medians, not wall times: on a shared
machine one run's wall time is mostly its wait for a processor.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from missions import add_history, init_repo, kitty_mission, spec_kitty_mission

ENV = dict(
    os.environ,
    NO_COLOR="1",
    KITTY_AGENT="",
    GIT_AUTHOR_NAME="bench",
    GIT_AUTHOR_EMAIL="bench@example.com",
    GIT_COMMITTER_NAME="bench",
    GIT_COMMITTER_EMAIL="bench@example.com",
)


@dataclass
class Run:
    ms: float
    rss_mib: float
    cpu_ms: float


#: Runs one command and reports its wall time and rusage. Linux folds the memory of
#: the process that forks into the child's ru_maxrss (exec records the old address
#: space's high-water mark), so a child forked straight from this process, which
#: holds the generated missions (hundreds of MiB at 10,000 WPs), would report this
#: process's size as its own peak. The launcher is a bare interpreter (~10 MiB).
LAUNCHER = """
import os, sys, time
report = int(sys.argv[1])
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
ms = (time.perf_counter() - start) * 1000
cpu = (usage.ru_utime + usage.ru_stime) * 1000
os.write(report, f"{ms} {usage.ru_maxrss} {cpu} {os.waitstatus_to_exitcode(status)}".encode())
"""


def run_once(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> Run:
    """Wall time, peak RSS (of the command alone, see LAUNCHER) and CPU of one run."""
    read_end, write_end = os.pipe()
    proc = subprocess.Popen(
        [sys.executable, "-c", LAUNCHER, str(write_end), *cmd],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env or ENV,
        pass_fds=(write_end,),
    )
    os.close(write_end)
    _, stderr_bytes = proc.communicate()
    with os.fdopen(read_end, "rb") as report:
        fields = report.read().decode().split()
    stderr = stderr_bytes.decode(errors="replace")
    if proc.returncode != 0 or len(fields) != 4 or fields[3] != "0":
        code = fields[3] if len(fields) == 4 else proc.returncode
        raise SystemExit(f"{' '.join(cmd)} failed ({code}):\n{stderr}")
    ms, rss_kib, cpu_ms = (float(f) for f in fields[:3])
    return Run(ms, rss_kib / 1024, cpu_ms)


def median_run(
    cmd: list[str], runs: int, cwd: Path, before: Callable[[], None] | None = None
) -> Run:
    results = []
    for _ in range(runs):
        if before:
            before()
        results.append(run_once(cmd, cwd))
    return Run(
        statistics.median(r.ms for r in results),
        max(r.rss_mib for r in results),
        statistics.median(r.cpu_ms for r in results),
    )


class Table:
    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str, str, str, str]] = []
        #: measurement -> WPs -> median CPU ms, for the growth exponents
        self.cpu: dict[str, dict[int, float]] = {}

    def point(self, what: str, wps: int, run: Run) -> None:
        self.cpu.setdefault(what, {})[wps] = run.cpu_ms

    def fit(self, small: int, big: int, target: float = 1.1) -> None:
        """Growth exponent log(cpu_big / cpu_small) / log(big / small) of every measurement
        taken at both sizes. From CPU, not wall time: on a shared machine the wall time
        of one run is mostly the wait for a processor."""
        for what, points in self.cpu.items():
            if small in points and big in points and points[small] > 0:
                exponent = math.log(points[big] / points[small]) / math.log(big / small)
                note = f"CPU {points[small]:.0f} → {points[big]:.0f} ms"
                self.add(
                    f"{what}: CPU growth exponent",
                    f"kitty {small}→{big} WPs",
                    exponent,
                    "",
                    target,
                    note=note,
                )

    def add(
        self,
        what: str,
        size: str,
        value: float,
        unit: str,
        target: float | None,
        lower_is_better: bool = True,
        note: str = "",
        cpu_ms: float | None = None,
    ) -> None:
        fmt = f"{value:.0f}" if value >= 100 or unit in ("ms", "MiB") else f"{value:.2f}"
        if target is None:
            verdict = note or "-"
            shown = "-"
        else:
            ok = value <= target if lower_is_better else value >= target
            ratio = value / target if target else math.inf
            tgt = f"{target:.0f}" if target >= 100 or unit in ("ms", "MiB") else f"{target:.2f}"
            shown = f"{'≤' if lower_is_better else '≥'} {tgt} {unit}"
            verdict = "met" if ok else f"MISSED ({ratio:.2f}× target)"
            if note:
                verdict += f"; {note}"
        cpu = f"{cpu_ms:.0f} ms" if cpu_ms is not None else ""
        self.rows.append((what, size, f"{fmt} {unit}", cpu, shown, verdict))
        print(f"  {what} [{size}]: {fmt} {unit} ({verdict})", file=sys.stderr, flush=True)

    def print(self) -> None:
        print("| measurement | mission | result | CPU (user+sys) | target | verdict |")
        print("|---|---|---:|---:|---|---|")
        for row in self.rows:
            print("| " + " | ".join(row) + " |")


def clear_cache(root: Path) -> Callable[[], None]:
    def clear() -> None:
        shutil.rmtree(root / ".git" / "kitty" / "cache", ignore_errors=True)

    return clear


def clear_views(root: Path) -> Callable[[], None]:
    """Drop only the cached finished status views (kitty/adapters/viewcache.py): a warm
    read as it was before them (the snapshot cache stays)."""

    def clear() -> None:
        shutil.rmtree(root / ".git" / "kitty" / "cache" / ".status-views", ignore_errors=True)

    return clear


#: Files changed this recently are not trusted by the caches (the racy-git rule).
RACY_S = 2.1


def startup_rows(kitty: str, root: Path, size: str, runs: int, bare: Run, table: Table) -> None:
    """Issue 26.4: the hot commands' start-up against a bare Python start-up (warm)."""
    time.sleep(RACY_S)  # a warm read: the files are older than the caches' racy window
    for what, cmd in (
        ("status --json (cached view)", [kitty, "status", "--json"]),
        ("status (cached view)", [kitty, "status"]),
        ("next --json", [kitty, "next", "--agent", "codex", "--json"]),
    ):
        run_once(cmd, root)  # keeps the view (a warm read is what is timed)
        run = median_run(cmd, runs, root)
        table.add(
            f"26.4 start-up: {what} ÷ python -c pass",
            size,
            run.ms / bare.ms,
            "×",
            2.5,
            note=f"{run.ms:.0f} ms; CPU {run.cpu_ms / max(bare.cpu_ms, 1):.1f}× python's",
            cpu_ms=run.cpu_ms,
        )


def warm_rows(kitty: str, root: Path, size: str, runs: int, table: Table) -> None:
    """Issue 26.4: a warm `kitty status` and `kitty next` at 10,000 WPs from the cached
    finished view, against the same read without it (snapshot cache warm, view cache
    dropped)."""
    time.sleep(RACY_S)
    for args in (["status", "--json"], ["status"], ["next", "--agent", "codex", "--json"]):
        cmd = [kitty, *args]
        before = median_run(cmd, runs, root, before=clear_views(root))
        run_once(cmd, root)  # keeps the view
        warm = median_run(cmd, runs, root)
        table.add(
            f"26.4 warm {' '.join(a for a in args if a not in ('--agent', 'codex'))} (cached view)",
            size,
            warm.ms,
            "ms",
            150,
            note=f"{before.ms:.0f} ms ({before.cpu_ms:.0f} ms CPU) without the view cache",
            cpu_ms=warm.cpu_ms,
        )


def flip_moves(kitty: str, root: Path, wp: str, runs: int, first: int = 0) -> Run:
    """`runs` moves of `wp` between planned and blocked; `first` moves made before."""
    results = []
    for i in range(first, first + runs):
        lane = ("blocked", "planned")[i % 2]
        move = [kitty, "agent", "tasks", "move-task", wp, "--to", lane, "--agent", "bench"]
        move += ["--note", "bench"]
        results.append(run_once(move, root))
    return Run(
        statistics.median(r.ms for r in results),
        max(r.rss_mib for r in results),
        statistics.median(r.cpu_ms for r in results),
    )


class Mover:
    """Moves `wp` between planned and blocked, one move per call: the write an agent makes
    before its next read (`before=` of median_run)."""

    def __init__(self, kitty: str, root: Path, wp: str) -> None:
        self.kitty, self.root, self.wp, self.moves = kitty, root, wp, 0

    def __call__(self) -> None:
        lane = ("blocked", "planned")[self.moves % 2]
        self.moves += 1
        move = [self.kitty, "agent", "tasks", "move-task", self.wp, "--to", lane]
        run_once([*move, "--agent", "bench", "--note", "bench"], self.root)


def after_move_rows(
    kitty: str, root: Path, wp: str, size: str, runs: int, bare: Run, table: Table, big: bool
) -> None:
    """Issue 37.1: the agent's loop: a read right after a move (the view cache misses)."""
    mover = Mover(kitty, root, wp)
    mover()
    for what, args, small_target, big_target in (
        ("next --json right after a move", ["next", "--agent", "codex", "--json"], 3.0, 250),
        ("status --json right after a move", ["status", "--json"], None, 500),
    ):
        run = median_run([kitty, *args], runs, root, before=mover)
        ratio = f"{run.ms / bare.ms:.1f}× python; CPU {run.cpu_ms / max(bare.cpu_ms, 1):.1f}×"
        if big:
            table.add(what, size, run.ms, "ms", big_target, note=ratio, cpu_ms=run.cpu_ms)
        else:
            target = small_target
            table.add(f"{what} ÷ python -c pass", size, run.ms / bare.ms, "×", target,
                      note=f"{run.ms:.0f} ms; CPU {run.cpu_ms / max(bare.cpu_ms, 1):.1f}×",
                      cpu_ms=run.cpu_ms)  # fmt: skip
    if mover.moves % 2:
        mover()  # leave the WP where it was


def git_commit_alone(root: Path, runs: int) -> Run:
    """What an auto-commit must cost at least: one line appended to the log and one
    `git commit --only` of it (the same repository, its history as the moves left it)."""
    log = next((root / "kitty-specs").glob("*/status.events.jsonl"))
    rel = str(log.relative_to(root))
    script = (
        f"tail -n 1 {shlex.quote(rel)} >> {shlex.quote(rel)} && "
        f"exec git commit -q --only -m 'kitty: bench' -- {shlex.quote(rel)}"
    )
    run = median_run(["sh", "-c", script], runs, root)
    subprocess.run(["git", "reset", "-q", "--hard", "HEAD~" + str(runs)], cwd=root, env=ENV)
    return run


def git_objects_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in (root / ".git" / "objects").rglob("*") if p.is_file())


def auto_commit_moves(kitty: str, root: Path, wp: str, runs: int, first: int) -> tuple[Run, float]:
    """`flip_moves` with `agents.auto_commit: true` (everything committed first): the
    median run, and how much `.git/objects` grew per move, in MiB (before any gc)."""
    config = root / ".kittify" / "config.yaml"
    plain = config.read_text()
    config.write_text(plain.rstrip("\n") + "\n  auto_commit: true\n")
    for args in (["add", "-A"], ["commit", "-qm", "bench: before auto-committed moves"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=ENV, capture_output=True)
    before = git_objects_bytes(root)
    try:
        run = flip_moves(kitty, root, wp, runs, first)
    finally:
        config.write_text(plain)
    return run, (git_objects_bytes(root) - before) / runs / 2**20


def bench_spec_kitty(kitty: str, tmp: Path, n: int, runs: int, bare: Run, table: Table) -> None:
    base = bare.ms
    root = tmp / f"sk{n}"
    init_repo(root)
    slug = spec_kitty_mission(root, n)
    lines = sum(1 for _ in (root / "kitty-specs" / slug / "status.events.jsonl").open())
    size = f"Spec Kitty {n} WPs ({lines} lines)"
    big = n >= 10_000
    if big:
        first = median_run([kitty, "status", "--json"], runs, root, before=clear_cache(root))
        table.add(
            "status --json, first run (no cache)",
            size,
            first.ms,
            "ms",
            cpu_ms=first.cpu_ms,
            target=4000,
        )
        table.add("status --json, first run: peak RSS", size, first.rss_mib, "MiB", 250)
    # the snapshot cache warm, the cached finished view dropped: warm_rows and
    # startup_rows time the views
    views = clear_views(root)
    status = median_run([kitty, "status", "--json"], runs, root, before=views)
    nxt = median_run([kitty, "next", "--agent", "codex", "--json"], runs, root, before=views)
    if big:
        table.add(
            "status --json, later runs", size, status.ms, "ms", cpu_ms=status.cpu_ms, target=800
        )
        table.add("status --json, later runs: peak RSS", size, status.rss_mib, "MiB", 200)
        table.add("next --json, later runs", size, nxt.ms, "ms", cpu_ms=nxt.cpu_ms, target=800)
        after_move_rows(kitty, root, f"WP{n:02d}", size, runs, bare, table, big=True)
        move = flip_moves(kitty, root, f"WP{n:02d}", runs)
        table.add("one move, auto-commit off", size, move.ms, "ms", 250, cpu_ms=move.cpu_ms)
        run_once([kitty, "finalize"], root)  # writes lanes.json once
        fin = median_run([kitty, "finalize"], runs, root)
        table.add("finalize re-run", size, fin.ms, "ms", cpu_ms=fin.cpu_ms, target=3000)
        table.add("finalize re-run: peak RSS", size, fin.rss_mib, "MiB", None)
        warm_rows(kitty, root, size, runs, table)
        return
    startup_rows(kitty, root, size, runs, bare, table)
    after_move_rows(kitty, root, f"WP{n:02d}", size, runs, bare, table, big=False)
    table.add(
        "status --json",
        size,
        status.ms,
        "ms",
        cpu_ms=status.cpu_ms,
        target=2.5 * base,
        note=f"{status.ms / base:.1f}× python",
    )
    table.add(
        "next --json",
        size,
        nxt.ms,
        "ms",
        cpu_ms=nxt.cpu_ms,
        target=2.5 * base,
        note=f"{nxt.ms / base:.1f}× python",
    )
    last = f"WP{n:02d}"
    move = flip_moves(kitty, root, last, runs)
    table.add(
        "one move, auto-commit off",
        size,
        move.ms,
        "ms",
        cpu_ms=move.cpu_ms,
        target=3.5 * base,
        note=f"{move.ms / base:.1f}× python",
    )
    committed, _ = auto_commit_moves(kitty, root, last, runs, runs)
    alone = git_commit_alone(root, runs)
    table.add(
        "one move, auto-commit on",
        size,
        committed.ms,
        "ms",
        cpu_ms=committed.cpu_ms,
        target=move.ms + alone.ms,
        note=f"{committed.ms / base:.1f}× python; target: a move + `git commit` alone "
        f"({alone.ms:.0f} ms, CPU {alone.cpu_ms:.0f} ms)",
    )


def bench_kitty(kitty: str, tmp: Path, n: int, runs: int, bare: Run, table: Table) -> float:
    """Returns the finalize re-run time (for the linearity exponent)."""
    root = tmp / f"k{n}"
    init_repo(root)
    slug = kitty_mission(root, n)
    start = time.perf_counter()
    run_once([kitty, "finalize"], root)
    first_ms = (time.perf_counter() - start) * 1000
    events = add_history(root / "kitty-specs" / slug, n)
    size = f"kitty {n} WPs × {(events + n) / n:.0f} events"
    table.add("finalize, first run", size, first_ms, "ms", 3000 if n >= 10_000 else None)
    target = 800 if n >= 10_000 else 150
    first = median_run([kitty, "status", "--json"], runs, root, before=clear_cache(root))
    table.add("status --json, no cache", size, first.ms, "ms", cpu_ms=first.cpu_ms, target=None)
    views = clear_views(root)  # the snapshot cache only (the views: warm_rows)
    status = median_run([kitty, "status", "--json"], runs, root, before=views)
    table.add("status --json", size, status.ms, "ms", cpu_ms=status.cpu_ms, target=target)
    nxt = median_run([kitty, "next", "--agent", "codex", "--json"], runs, root, before=views)
    table.add("next --json", size, nxt.ms, "ms", cpu_ms=nxt.cpu_ms, target=target)
    board = median_run([kitty, "status"], runs, root, before=views)
    table.add("status (board)", size, board.ms, "ms", cpu_ms=board.cpu_ms, target=target)
    if n >= 10_000:
        table.add("status/next: peak RSS", size, max(status.rss_mib, nxt.rss_mib), "MiB", 150)
        warm_rows(kitty, root, size, runs, table)
    if n >= 10_000:
        after_move_rows(kitty, root, f"WP{n:04d}", size, runs, bare, table, big=True)
    move = flip_moves(kitty, root, f"WP{n:04d}", runs)
    table.add(
        "one move, auto-commit off",
        size,
        move.ms,
        "ms",
        cpu_ms=move.cpu_ms,
        target=250 if n >= 10_000 else None,
    )
    committed, growth = auto_commit_moves(kitty, root, f"WP{n:04d}", runs, runs)
    table.add(
        "one move, auto-commit on",
        size,
        committed.ms,
        "ms",
        cpu_ms=committed.cpu_ms,
        target=None,
        note=f".git grows {growth:.2f} MiB a move before `git gc`",
    )
    fin = median_run([kitty, "finalize"], runs, root)
    for what, run in (
        ("status --json", status),
        ("next --json", nxt),
        ("one move, auto-commit off", move),
        ("one move, auto-commit on", committed),
        ("finalize re-run", fin),
    ):
        table.point(what, n, run)
    table.add(
        "finalize re-run",
        size,
        fin.ms,
        "ms",
        cpu_ms=fin.cpu_ms,
        target=3000 if n >= 10_000 else None,
    )
    return fin.ms


def bench_claims(kitty: str, tmp: Path, table: Table, claimers: int = 8, wps: int = 200) -> None:
    root = tmp / "claims"
    init_repo(root)
    kitty_mission(root, wps, deps=False)
    run_once([kitty, "finalize"], root)
    script = (
        "import json, subprocess, sys, time\n"
        "kitty, me = sys.argv[1], sys.argv[2]\n"
        "lat = []\n"
        "for i in range(10**6):\n"
        "    t = time.perf_counter()\n"
        "    out = subprocess.run([kitty, 'next', '--agent', f'{me}-{i}', '--claim', '--json'],\n"
        "                         capture_output=True, text=True)\n"
        "    lat.append(time.perf_counter() - t)\n"
        "    if out.returncode != 0 and 'locked' not in out.stdout + out.stderr:\n"
        "        sys.exit(out.stdout + out.stderr)\n"
        "    if out.returncode == 0 and not json.loads(out.stdout).get('claimed'):\n"
        "        break\n"
        "print(json.dumps(lat))\n"
    )
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, kitty, f"c{k}"],
            cwd=root,
            stdout=subprocess.PIPE,
            env=ENV,
            text=True,
        )
        for k in range(claimers)
    ]
    latencies: list[float] = []
    for proc in procs:
        out, _ = proc.communicate()
        if proc.returncode:
            raise SystemExit(f"claimer failed: {out}")
        latencies += json.loads(out)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    events = (root / "kitty-specs").glob("*/status.events.jsonl")
    claimed = sum(line.count('"to_lane": "claimed"') for p in events for line in p.open())
    size = f"{claimers} claimers, {wps} WPs"
    per_claim = cpu * 1000 / max(len(latencies), 1)  # each `kitty next --claim` run
    table.add(
        "claims per second",
        size,
        claimed / seconds,
        "/s",
        20,
        lower_is_better=False,
        note=f"{per_claim:.0f} ms CPU per kitty run",
    )
    table.add("claim latency (median)", size, statistics.median(latencies) * 1000, "ms", None)
    if claimed != wps:
        raise SystemExit(f"{claimed} claims for {wps} WPs: a claim was lost or doubled")


AGENT = """#!{python}
import os, re, subprocess, sys, time
argv = sys.argv[1:]
# the prompt: on stdin (how kitty hands it to claude and codex), else after -p
prompt = "" if sys.stdin.isatty() else sys.stdin.read()
if not prompt and "-p" in argv:
    prompt = argv[argv.index("-p") + 1]
time.sleep(float(os.environ.get("BENCH_AGENT_SECONDS", "1")))
mission = re.search(r"--mission (\\S+)", prompt).group(1)
role, wp = re.search(r"^# (Implement|Fix|Review) (WP\\d+)", prompt, re.M).groups()
kitty = os.environ["BENCH_KITTY"]
name = os.path.basename(sys.argv[0])
if role != "Review":  # its work, committed: kitty refuses review without it (issue 41)
    work = f"bench_{{wp.lower()}}.txt"
    with open(work, "w") as out:
        out.write(f"{{wp}} {{time.time_ns()}}\\n")
    for git in (["add", work], ["-c", "user.name=bench", "-c", "user.email=bench@localhost",
                                "commit", "-qm", f"{{wp}}: bench"]):
        subprocess.run(["git", *git], check=True, stdout=subprocess.DEVNULL)
    tasks = re.search(r"mark-status ((?:T\\d+ ?)+) --mission", prompt)
    if tasks:
        subprocess.run([kitty, "agent", "tasks", "mark-status", *tasks.group(1).split(),
                        "--status", "done", "--mission", mission], check=True,
                       stdout=subprocess.DEVNULL)
    to = "for_review"
else:
    to = "approved"
subprocess.run([kitty, "agent", "tasks", "move-task", wp, "--to", to, "--mission", mission,
                "--agent", name, "--note", "bench"], check=True, stdout=subprocess.DEVNULL)
"""


def bench_sprint(
    kitty: str, tmp: Path, table: Table, parallel: int = 4, wps: int = 16, seconds: float = 2.0
) -> None:
    root = tmp / "sprint"
    init_repo(root)
    kitty_mission(root, wps, deps=False)
    run_once([kitty, "finalize"], root)
    for args in (["add", "-A"], ["commit", "-qm", "bench mission"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=ENV)
    bindir = tmp / "agents"
    bindir.mkdir()
    for name in ("claude", "codex"):
        path = bindir / name
        path.write_text(AGENT.format(python=sys.executable))
        path.chmod(0o755)
    env = dict(
        ENV,
        PATH=f"{bindir}:{os.environ['PATH']}",
        BENCH_KITTY=kitty,
        BENCH_AGENT_SECONDS=str(seconds),
    )
    cmd = [kitty, "sprint", "--implementer", "claude", "--reviewer", "codex"]
    cmd += ["--parallel", str(parallel), "--no-caffeinate", "--json"]
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    end = events[-1] if events else {}
    if end.get("event") != "end" or not end.get("ok"):
        raise SystemExit(f"sprint failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    size = f"{wps} WPs, --parallel {parallel}, {seconds:.0f} s agents"
    timing = end.get("timing")
    if not timing:
        table.add("sprint wall (no self-timing in this kitty)", size, wall * 1000, "ms", None)
        return
    table.add(
        "sprint: orchestrator CPU per dispatch",
        size,
        timing["cpu_per_dispatch_ms"],
        "ms",
        30,
        note=(
            f"of it {1000 * timing.get('subprocess_cpu_seconds', 0) / timing['dispatches']:.0f}"
            " ms in git; the agents not counted"
        ),
        cpu_ms=timing["orchestrator_cpu_seconds"] * 1000,
    )
    table.add(
        "sprint: mean busy slots",
        size,
        timing["mean_busy_slots"],
        "slots",
        0.95 * parallel,
        lower_is_better=False,
    )
    idle = timing.get("idle_slot_seconds")
    if idle and timing["mean_busy_slots"]:
        # The same, leaving out the slot-seconds a slot was free because no work was
        # ready (the tail, reviews waiting for implementations): what the sprint's own
        # latency (filling the slots, exit-to-next-start hand-offs) costs.
        span = timing["busy_seconds"]
        busy = timing["mean_busy_slots"] * span
        table.add(
            "sprint: mean busy slots while work was waiting",
            size,
            parallel * busy / (busy + idle["ramp_up"] + idle["handoff"]),
            "slots",
            0.95 * parallel,
            lower_is_better=False,
            note=f"idle slot-s: ramp-up {idle['ramp_up']}, hand-offs {idle['handoff']}, "
            f"no work ready {idle['no_work']} of {parallel * span:.0f}",
        )
    table.add("sprint: CPU while agents run", size, timing["idle_cpu_percent"] or 0.0, "%", 2)
    if timing.get("handoff_ms") is not None:
        table.add(
            "sprint: agent exit -> next agent started",
            size,
            timing["handoff_ms"],
            "ms",
            None,
            note="mean, when work was waiting",
        )


def interpreter(kitty: str) -> str:
    """The Python that runs `kitty` (its script's #! line): the baseline is that interpreter's
    bare start-up, not this script's (an editable install's .pth finder alone imports
    pathlib, re and urllib at every start, doubling `python -c pass`)."""
    try:
        with open(kitty, "rb") as handle:
            first = handle.readline().decode(errors="replace").strip()
    except OSError:
        return sys.executable
    if first.startswith("#!"):
        candidate = first[2:].strip().split()[0] if first[2:].strip() else ""
        if candidate and os.access(candidate, os.X_OK) and "env" not in Path(candidate).name:
            return candidate
    return sys.executable


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kitty", default=shutil.which("kitty"), help="kitty executable")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--big-runs", type=int, default=3, help="runs at 10,000 WPs")
    parser.add_argument("--quick", action="store_true", help="skip the 10,000-WP missions")
    parser.add_argument(
        "--smoke", action="store_true", help="tiny missions, one run: does every row still work?"
    )
    parser.add_argument(
        "--only", nargs="+", default=None, help="sk99 k1000 k10000 sk10000 claims sprint"
    )
    args = parser.parse_args()
    if not args.kitty:
        raise SystemExit("no kitty executable: pass --kitty PATH")
    kitty = str(Path(args.kitty).resolve())
    wanted = set(args.only or ["sk99", "k1000", "k10000", "sk10000", "claims", "sprint"])
    if args.quick or args.smoke:
        wanted -= {"k10000", "sk10000"}
    # --smoke: every row at a tiny size (sk99 and k1000 become 9 and 20 WPs)
    small, mid = (9, 20) if args.smoke else (99, 1000)
    if args.smoke:
        args.runs = args.big_runs = 1
    table = Table()
    with tempfile.TemporaryDirectory(prefix="kitty-bench-") as name:
        tmp = Path(name)
        python = interpreter(kitty)
        bare = median_run([python, "-c", "pass"], 1 if args.smoke else max(args.runs, 11), tmp)
        base = bare.ms
        table.add("python -c pass (baseline)", "-", base, "ms", None, cpu_ms=bare.cpu_ms)
        if os.path.abspath(python) != os.path.abspath(sys.executable):
            own = median_run(
                [sys.executable, "-c", "pass"], 1 if args.smoke else max(args.runs, 11), tmp
            )
            note = "this script's interpreter, for comparison; not the baseline"
            table.add("python -c pass", "-", own.ms, "ms", None, note=note, cpu_ms=own.cpu_ms)
        helps = median_run([kitty, "--help"], args.runs, tmp)
        table.add("kitty --help", "-", helps.ms, "ms", None, cpu_ms=helps.cpu_ms)
        if "sk99" in wanted:
            bench_spec_kitty(kitty, tmp, small, args.runs, bare, table)
        fin: dict[int, float] = {}
        if "k1000" in wanted:
            fin[1000] = bench_kitty(kitty, tmp, mid, args.runs, bare, table)
        if "k10000" in wanted:
            fin[10000] = bench_kitty(kitty, tmp, 10_000, args.big_runs, bare, table)
        if len(fin) == 2:
            table.fit(1000, 10_000)
        if "sk10000" in wanted:
            bench_spec_kitty(kitty, tmp, 10_000, args.big_runs, bare, table)
        if "claims" in wanted:
            bench_claims(kitty, tmp, table, *((2, 6) if args.smoke else ()))
        if "sprint" in wanted:
            bench_sprint(kitty, tmp, table, *((2, 2, 0.2) if args.smoke else ()))
    print(f"\nkitty: {kitty}; {os.cpu_count()} CPUs; load {os.getloadavg()[0]:.1f}\n")
    table.print()


if __name__ == "__main__":
    main()
