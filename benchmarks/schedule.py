"""The sprint's schedule, measured: its real dispatch rules on random missions, in
simulated time (no processes, no files).

Each mission has 20-500 WPs: a random DAG (each WP depends on up to three of the
twenty before it), owned files drawn from a shared pool so that some WPs overlap
and share an execution lane (`kitty.core.schedule.lane_map`, as `kitty next` and
the sprint compute it), and for every WP its runs drawn in advance: implement and
review times from log-normal spreads (a fix takes about half an implementation)
and a review rejection at the given rate (at most four in a row); a fifth of
the WPs also edit one of a few shared files. The simulated
sprint dispatches exactly as `kitty sprint` does (`kitty/sprint/runner.py`):
`kitty.core.decide.work_queues` (the shared queues, with the running WPs excluded)
and `kitty.sprint.rules.plan.choose` (reviews, the arbiter, fixes, fresh work),
whenever a slot is free; an execution lane holds one WP in flight at a time.

Reported per `--parallel`: the makespan against a lower bound (the largest of the
critical path of the WPs' own work, the busiest execution lane's work, and the
total work divided by the slots) and against a naive order (whatever is startable,
lowest WP id first), and where the idle slot-time went: a startable WP waiting for
its execution lane, WPs waiting for their dependencies, or the tail (everything
left is running).

    python benchmarks/schedule.py                 # 200 missions x --parallel 2 4 8 16
    python benchmarks/schedule.py --missions 50 --parallel 4
    python benchmarks/schedule.py --smoke         # a few small missions (the test suite)
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kitty.core import lanes
from kitty.core.decide.context import Context
from kitty.core.decide.queues import Queues, work_queues
from kitty.core.log.state import Board, WPState
from kitty.core.model import WorkPackage, wp_number
from kitty.core.schedule import lane_map
from kitty.sprint.rules import plan

IMPLEMENTERS, REVIEWERS = ["claude"], ["codex"]
#: minutes: median implementation, review; the spread (sigma of the log)
IMPLEMENT_MIN, REVIEW_MIN, SIGMA = 12.0, 4.0, 0.7
MAX_REJECTIONS = 4


@dataclass
class Run:
    implement: float  # minutes
    review: float
    rejected: bool


@dataclass
class Mission:
    wps: dict[str, WorkPackage]
    lane_of: dict[str, str]
    runs: dict[str, list[Run]]

    def work(self, wp_id: str) -> float:
        return sum(r.implement + r.review for r in self.runs[wp_id])


def random_mission(rng: random.Random, n: int, reject_rate: float, overlap: float = 0.2) -> Mission:
    ids = [f"WP{i:03d}" for i in range(1, n + 1)]
    shared = [f"src/shared/file{f}.py" for f in range(max(2, n // 10))]
    wps: dict[str, WorkPackage] = {}
    runs: dict[str, list[Run]] = {}
    for i, wp_id in enumerate(ids):
        window = ids[max(0, i - 20) : i]
        deps = tuple(sorted(set(rng.sample(window, min(len(window), rng.randint(0, 3))))))
        owned = (f"src/{wp_id.lower()}/**",)
        if rng.random() < overlap:  # also edits a file other WPs edit: one lane with them
            owned += (rng.choice(shared),)
        wps[wp_id] = WorkPackage(wp_id, wp_id, deps, (), owned, f"tasks/{wp_id}.md", wp_id)
        size = rng.lognormvariate(0.0, SIGMA)
        cycles: list[Run] = []
        while True:
            fix = 0.5 if cycles else 1.0
            implement = IMPLEMENT_MIN * size * fix * rng.lognormvariate(0.0, 0.3)
            review = REVIEW_MIN * rng.lognormvariate(0.0, SIGMA)
            rejected = len(cycles) < MAX_REJECTIONS and rng.random() < reject_rate
            cycles.append(Run(implement, review, rejected))
            if not rejected:
                break
        runs[wp_id] = cycles
    return Mission(wps, lane_map(None, wps, ids), runs)


def lower_bound(mission: Mission, parallel: int) -> tuple[float, str]:
    """The largest of three bounds no schedule can beat, and which one it is."""
    finish: dict[str, float] = {}
    for wp_id in sorted(mission.wps, key=lambda w: wp_number(w) or 0):  # deps come first
        start = max((finish[d] for d in mission.wps[wp_id].dependencies), default=0.0)
        finish[wp_id] = start + mission.work(wp_id)
    load: dict[str, float] = {}
    for wp_id, lane in mission.lane_of.items():
        load[lane] = load.get(lane, 0.0) + mission.work(wp_id)
    total = sum(mission.work(w) for w in mission.wps)
    bounds = {
        "critical path": max(finish.values()),
        "busiest lane": max(load.values()),
        "work / slots": total / parallel,
    }
    name = max(bounds, key=lambda k: bounds[k])
    return bounds[name], name


Chooser = Callable[[Queues, dict[str, str | None], dict[str, list[str]], int], tuple[Any, int]]


def sprint_choice(
    queues: Queues, implementer_of: dict[str, str | None], reviewed: dict[str, list[str]], turn: int
) -> tuple[plan.Step | None, int]:
    """What `kitty sprint` starts next (`SprintRunner.choose`)."""
    return plan.choose(queues, implementer_of, reviewed, IMPLEMENTERS, REVIEWERS, turn)


def fifo_choice(
    queues: Queues, implementer_of: dict[str, str | None], reviewed: dict[str, list[str]], turn: int
) -> tuple[plan.Step | None, int]:
    """The naive order: whatever can start, lowest WP id first."""
    ready = [(w, plan.REVIEW) for w in queues.reviews]
    ready += [(w, plan.IMPLEMENT) for w in [*queues.fixes, *queues.fresh]]
    if not ready:
        return None, turn
    wp_id, role = min(ready, key=lambda item: wp_number(item[0]) or 0)
    agent = REVIEWERS[0] if role == plan.REVIEW else IMPLEMENTERS[0]
    return plan.Step(plan.START, wp_id, role, agent), turn


@dataclass
class Outcome:
    makespan: float
    idle: dict[str, float] = field(default_factory=dict)  # cause -> slot-minutes


class Sim:
    """One sprint in simulated time: a slot starts work whenever the rules give some."""

    def __init__(self, mission: Mission, parallel: int, chooser: Chooser) -> None:
        self.mission, self.parallel, self.chooser = mission, parallel, chooser
        self.board = Board({w: WPState(w, lane=lanes.PLANNED) for w in mission.wps})
        self.jobs: dict[str, tuple[float, str]] = {}  # wp -> (end, role)
        self.cycle = dict.fromkeys(mission.wps, 0)
        self.reviewed: dict[str, list[str]] = {}
        self.now, self.turn = 0.0, 0

    def ctx(self) -> Context:
        us = int(self.now * 60e6)
        return Context(
            "sim", "sprint", self.mission.wps, self.board, self.mission.lane_of, 99, now_us=us
        )

    def dispatch(self) -> None:
        while len(self.jobs) < self.parallel:
            queues = work_queues(self.ctx(), exclude=frozenset(self.jobs))
            implementer_of = {
                w: self.board.wps[w].implementer
                for w in [*queues.reviews, *queues.fixes, *queues.fresh]
            }
            step, self.turn = self.chooser(queues, implementer_of, self.reviewed, self.turn)
            if step is None:
                return
            if step.kind != plan.START:
                raise SystemExit(f"the simulation does not expect {step}")
            self.start(step.wp_id, step.role, step.agent)

    def start(self, wp_id: str, role: str, agent: str) -> None:
        st, run = self.board.wps[wp_id], self.mission.runs[wp_id][self.cycle[wp_id]]
        st.lane_since_us = int(self.now * 60e6)
        if role == plan.REVIEW:
            st.lane, st.reviewer = lanes.IN_REVIEW, agent
            self.reviewed.setdefault(wp_id, []).append(agent)
            self.jobs[wp_id] = (self.now + run.review, role)
        else:
            st.lane, st.implementer = lanes.IN_PROGRESS, agent
            self.jobs[wp_id] = (self.now + run.implement, role)

    def finish(self, wp_id: str, role: str) -> None:
        st, run = self.board.wps[wp_id], self.mission.runs[wp_id][self.cycle[wp_id]]
        st.lane_since_us = int(self.now * 60e6)
        if role == plan.IMPLEMENT:
            st.lane = lanes.FOR_REVIEW
        elif run.rejected:
            st.lane, st.review_cycles = lanes.PLANNED, st.review_cycles + 1
            self.cycle[wp_id] += 1
        else:
            st.lane = lanes.APPROVED

    def idle_cause(self) -> str:
        ctx = self.ctx()
        waiting = [w for w, st in self.board.wps.items() if st.lane == lanes.PLANNED]
        waiting = [w for w in waiting if w not in self.jobs]
        ready = [
            w
            for w in waiting
            if all(self.board.lane(d) in lanes.SATISFIED for d in self.mission.wps[w].dependencies)
        ]
        if ready and any(ctx.lane_holders.get(self.mission.lane_of[w]) for w in ready):
            return "lane held"
        if waiting:
            return "dependencies"
        return "tail"

    def run(self) -> Outcome:
        outcome = Outcome(0.0)
        while True:
            self.dispatch()
            if not self.jobs:
                break
            end = min(e for e, _ in self.jobs.values())
            free = self.parallel - len(self.jobs)
            if free:
                cause = self.idle_cause()
                outcome.idle[cause] = outcome.idle.get(cause, 0.0) + free * (end - self.now)
            self.now = end
            for wp_id, (at, role) in sorted(self.jobs.items()):
                if at == end:
                    del self.jobs[wp_id]
                    self.finish(wp_id, role)
        left = [w for w, st in self.board.wps.items() if st.lane != lanes.APPROVED]
        if left:
            raise SystemExit(f"the sprint stopped with {len(left)} WPs left: {left[:5]}")
        outcome.makespan = self.now
        return outcome


@dataclass
class Row:
    parallel: int
    vs_bound: list[float] = field(default_factory=list)
    vs_fifo: list[float] = field(default_factory=list)
    bounds: dict[str, int] = field(default_factory=dict)
    idle: dict[str, float] = field(default_factory=dict)
    slot_minutes: float = 0.0


def measure(missions: list[Mission], parallel: int) -> Row:
    row = Row(parallel)
    for mission in missions:
        bound, name = lower_bound(mission, parallel)
        sprint = Sim(mission, parallel, sprint_choice).run()
        fifo = Sim(mission, parallel, fifo_choice).run()
        row.vs_bound.append(sprint.makespan / bound)
        row.vs_fifo.append(sprint.makespan / fifo.makespan)
        row.bounds[name] = row.bounds.get(name, 0) + 1
        for cause, minutes in sprint.idle.items():
            row.idle[cause] = row.idle.get(cause, 0.0) + minutes
        row.slot_minutes += parallel * sprint.makespan
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--missions", type=int, default=200)
    parser.add_argument("--parallel", type=int, nargs="+", default=[2, 4, 8, 16])
    parser.add_argument("--reject-rate", type=float, default=0.25)
    parser.add_argument("--seed", type=int, default=37)
    parser.add_argument("--sizes", type=int, nargs=2, default=[20, 500], metavar=("MIN", "MAX"))
    parser.add_argument("--smoke", action="store_true", help="a few small missions")
    parser.add_argument("--kitty", help="ignored: the rules are imported, no kitty is run")
    args = parser.parse_args()
    if args.smoke:
        args.missions, args.parallel, args.sizes = 4, [2, 8], [20, 40]
    rng = random.Random(args.seed)
    started = time.perf_counter()
    missions = [
        random_mission(rng, rng.randint(*args.sizes), args.reject_rate)
        for _ in range(args.missions)
    ]
    print(
        f"{len(missions)} random missions of {args.sizes[0]}-{args.sizes[1]} WPs, "
        f"review rejection rate {args.reject_rate:.0%}, seed {args.seed}\n"
    )
    print(
        "| --parallel | makespan ÷ lower bound: mean | max | makespan ÷ FIFO: mean | max "
        "| missions worse than FIFO | binding bound | idle slot-time: lane held "
        "| dependencies | tail |"
    )
    print("|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|")
    for parallel in args.parallel:
        row = measure(missions, parallel)
        worse = sum(1 for r in row.vs_fifo if r > 1 + 1e-9)
        binding = ", ".join(f"{k} {v}" for k, v in sorted(row.bounds.items()))
        idle = [
            row.idle.get(c, 0.0) / row.slot_minutes for c in ("lane held", "dependencies", "tail")
        ]
        print(
            f"| {parallel} | {statistics.mean(row.vs_bound):.3f} | {max(row.vs_bound):.3f} "
            f"| {statistics.mean(row.vs_fifo):.3f} | {max(row.vs_fifo):.3f} | {worse} "
            f"| {binding} | " + " | ".join(f"{x:.1%}" for x in idle) + " |",
            flush=True,
        )
    print(f"\n{time.perf_counter() - started:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
