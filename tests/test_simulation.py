"""The agent-loop invariant, tested as one: simulated agents do exactly what `kitty next`
says, and no command kitty prints fails and no loop spins.

Each scenario (fixed seed) builds a mission — a chain, a diamond, a wide fan, WPs whose
owned files overlap (one execution lane), or a random DAG — with 1 to 6 agents. Every
turn one idle agent asks `kitty next --agent A --json` and runs its `commands` verbatim
(parsed with shlex, run through kitty's real CLI entry point; `-C repo` is the only thing
added). For implement/fix/review it then does what the generated prompt's own commands
say, substituting only the prompt's `<placeholders>` (the files it changed, a feedback
file). Agents succeed, get rejected at random, crash (and are retried), run slowly, hit
the review cycle cap (the arbiter approves or escalates, with the printed command), and
some missions start with the skill's arbiter approval of a WP nobody implemented.

Asserted for every scenario:
1. every command kitty printed (in `next` and in the prompts) exits 0;
2. the mission ends — DONE, or BLOCKED with a reason a human must act on — within a
   step bound;
3. no agent gets the same decision twice in a row without the event log changing
   (after completing the previous one), and `wait` is never answered when nothing
   can move.

CI runs SEEDS; `KITTY_SIM_SEEDS=0-199` runs more (the totals are printed with -s).
Seeds 0-199 (2026-11-30): 200 missions, 3,225 agent turns, 10,590 printed commands,
all exit 0; 135 merged (done), 65 blocked (40 arbiter escalations, 25 lone agents
whose own WP needs another reviewer); at most 61 turns per mission. Before the fixes
of issue 9 it found MERGE answered forever (7 of seeds 0-59), ACCEPT printed while
`kitty accept` refused (reset subtasks after an arbiter approval), and a lone agent
told to WAIT for a review nobody could do.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from random import Random
from typing import Any

import pytest

from kitty.sim import target_files
from tests.helpers import git, init_repo, kitty, kitty_argv, make_mission

SHAPES = ("chain", "diamond", "fan", "overlap", "random")
#: CI: every shape, 1 and many agents, MERGE-without-branch (2), ACCEPT-after-arbiter (4, 18).
SEEDS = [2, 4, 18, 21, 29, 30, 33]
#: One mission where every printed command runs as a real `kitty` process.
SUBPROCESS_SEED = 53
SLUG = "sim-01ABCDEF"
FENCED = re.compile(r"`(kitty [^`]+)`")


@dataclass
class Scenario:
    seed: int
    shape: str
    wps: list[dict[str, Any]]
    agents: list[str]
    max_cycles: int
    reject_p: float
    crash_p: float
    slow_p: float
    escalate_p: float
    pre_approve: str | None


def scenario(seed: int, attempt: int = 0) -> Scenario:
    rng = Random(seed * 1_000 + attempt)
    shape = SHAPES[seed % len(SHAPES)]
    n = rng.randint(2, 6)
    ids = [f"WP{i:02d}" for i in range(1, n + 1)]
    deps: dict[str, list[str]] = {w: [] for w in ids}
    if shape == "chain":
        for a, b in itertools.pairwise(ids):
            deps[b] = [a]
    elif shape == "diamond":
        for w in ids[1:-1]:
            deps[w] = [ids[0]]
        deps[ids[-1]] = ids[1:-1] or [ids[0]]
    elif shape == "fan":
        for w in ids[1:]:
            deps[w] = [ids[0]] if rng.random() < 0.5 else []
    else:
        for i, w in enumerate(ids[1:], start=1):
            deps[w] = sorted(rng.sample(ids[:i], rng.randint(0, min(2, i))))
    owned = {w: [f"src/{w.lower()}/**"] for w in ids}
    if shape in ("overlap", "random"):
        for w in rng.sample(ids, rng.randint(2, n)):
            owned[w] = [f"src/{w.lower()}/**", "src/shared.py"]
    counter = 0
    wps = []
    for w in ids:
        tasks = []
        for _ in range(rng.randint(0, 3)):
            counter += 1
            tasks.append(f"T{counter:03d}")
        wps.append(
            {
                "wp_id": w,
                "title": f"Part {w}",
                "deps": deps[w],
                "subtasks": tasks,
                "owned": owned[w],
            }
        )
    return Scenario(
        seed=seed,
        shape=shape,
        wps=wps,
        agents=[f"agent{i}" for i in range(1, rng.randint(1, 6) + 1)],
        max_cycles=rng.choice([1, 2, 3]),
        reject_p=rng.choice([0.0, 0.3, 0.6, 1.0]),
        crash_p=rng.choice([0.0, 0.15]),
        slow_p=rng.choice([0.0, 0.3]),
        escalate_p=rng.choice([0.0, 0.5]),
        pre_approve=rng.choice(ids) if rng.random() < 0.3 else None,
    )


@dataclass
class Agent:
    name: str
    busy: int = 0  # turns of (slow) work left
    pending: list[list[str]] = field(default_factory=list)  # commands to run when done
    waiting_on: str | None = None  # log hash when it was told to wait
    last: tuple[Any, ...] | None = None  # (decision key, log hash) after a completed turn


class Finding(AssertionError):
    pass


class Sim:
    def __init__(self, repo: Path, sc: Scenario, rng: Random, processes: bool = False) -> None:
        self.repo, self.sc, self.rng, self.processes = repo, sc, rng, processes
        self.agents = [Agent(a) for a in sc.agents]
        self.steps = 0
        self.commands = 0
        self.decisions: dict[str, int] = {}
        self.blocked_lanes: dict[str, str] = {}

    # -- running what kitty printed ------------------------------------------------
    def run(self, command: str | list[str], cwd: Path | None = None) -> str:
        argv = shlex.split(command) if isinstance(command, str) else command
        if argv[0] != "kitty":
            raise Finding(f"seed {self.sc.seed}: printed command is not kitty: {command}")
        self.commands += 1
        if self.processes:
            done = subprocess.run(
                kitty_argv(cwd or self.repo, *argv[1:]), capture_output=True, text=True, timeout=120
            )
            code, out, err = done.returncode, done.stdout, done.stderr
        else:
            result = kitty(cwd or self.repo, *argv[1:])
            code, out, err = result.code, result.out, result.err
        if code != 0:
            raise Finding(
                f"seed {self.sc.seed} step {self.steps}: printed command failed "
                f"(exit {code}): {command}\n{out}\n{err}"
            )
        return out

    def log_hash(self) -> str:
        path = self.repo / "kitty-specs" / SLUG / "status.events.jsonl"
        return hashlib.sha1(path.read_bytes()).hexdigest()

    # -- one mission -----------------------------------------------------------------
    def play(self) -> str:
        bound = 60 * len(self.sc.wps) + 40
        if self.sc.pre_approve:  # the skill's Option A, copied literally (no --agent)
            self.run(
                f"kitty agent tasks move-task {self.sc.pre_approve} --to approved --force "
                '--note "Arbiter decision: Approved after 3 cycles. Meets acceptance criteria."'
            )
        while self.steps < bound:
            self.steps += 1
            for agent in self.agents:
                if agent.busy:
                    agent.busy -= 1
                    if not agent.busy:
                        self.finish(agent)
            idle = [a for a in self.agents if not a.busy]
            now = self.log_hash()
            ready = [a for a in idle if a.waiting_on != now]
            if not ready:
                if any(a.busy for a in self.agents):
                    continue
                last = self.run(f"kitty next --agent {idle[0].name} --mission {SLUG} --json")
                raise Finding(
                    f"seed {self.sc.seed}: every agent was told to wait and nothing is moving: "
                    + last
                )
            outcome = self.turn(self.rng.choice(ready))
            if outcome:
                return outcome
        raise Finding(f"seed {self.sc.seed}: the mission did not end within {bound} steps")

    def turn(self, agent: Agent) -> str | None:
        before = self.log_hash()
        out = self.run(f"kitty next --agent {agent.name} --mission {SLUG} --json")
        decision = __import__("json").loads(out)
        action = decision["action"]
        self.decisions[action] = self.decisions.get(action, 0) + 1
        key = (action, decision["wp_id"], tuple(decision["commands"]))
        if agent.last == (key, before) and action != "wait":
            raise Finding(
                f"seed {self.sc.seed} step {self.steps}: {agent.name} got the same decision "
                f"twice without the board changing: {action} {decision['wp_id']} "
                f"{decision['commands']}"
            )
        agent.waiting_on = None
        completed = True
        if action == "done":
            return "done"
        if action == "blocked":
            if not decision["blocked_by"]:
                raise Finding(f"seed {self.sc.seed}: blocked without a reason: {decision}")
            status = __import__("json").loads(self.run(f"kitty status --mission {SLUG} --json"))
            self.blocked_lanes = {w["id"]: w["lane"] for w in status["work_packages"]}
            for command in decision["commands"]:
                self.run(command)
            return "blocked"
        if action == "wait":
            for command in decision["commands"]:
                self.run(command)
            agent.waiting_on = before
        elif action == "arbiter":
            escalate = self.rng.random() < self.sc.escalate_p
            self.run(decision["commands"][1 if escalate else 0])
        elif action in ("accept", "merge"):
            for command in decision["commands"]:
                self.run(command)
        elif action in ("implement", "fix", "review"):
            completed = self.work(agent, action, decision)
        else:
            raise Finding(f"seed {self.sc.seed}: unknown action {action}")
        agent.last = (key, self.log_hash()) if completed else None
        return None

    def work(self, agent: Agent, action: str, decision: dict[str, Any]) -> bool:
        (command,) = decision["commands"]
        out = self.run(command)
        workspace = Path(re.search(r"Workspace: cd (.+)", out).group(1))  # type: ignore[union-attr]
        prompt = Path(re.search(r"^cat (.+)$", out, re.M).group(1)).read_text()  # type: ignore[union-attr]
        if self.rng.random() < self.sc.crash_p:
            return False  # the agent crashed: nothing more happens; it asks again later
        wp_id = decision["wp_id"]
        if action == "review":
            reject = self.rng.random() < self.sc.reject_p
            printed = FENCED.findall(prompt) + re.findall(
                r"^    (kitty agent tasks .+)$", prompt, re.M
            )
            verdicts = [c for c in printed if "move-task" in c]
            chosen = next(c for c in verdicts if ("--to planned" in c) == reject)
            if reject:
                feedback = self.repo.parent / f"feedback-{wp_id}-{self.steps}.md"
                feedback.write_text("Handle the empty case.\n")
                chosen = chosen.replace("<feedback.md>", str(feedback))
            agent.pending = [shlex.split(chosen)]
        else:
            wp = next(w for w in self.sc.wps if w["wp_id"] == wp_id)
            files = target_files(wp_id, tuple(wp["owned"]))
            for name in files:
                path = workspace / name
                path.parent.mkdir(parents=True, exist_ok=True)
                with path.open("a") as handle:
                    handle.write(f"{wp_id} step {self.steps}\n")
            pending = []
            for line in FENCED.findall(prompt.split("## Finish with exactly these commands")[1]):
                argv = shlex.split(line)
                if argv[1] == "safe-commit":
                    argv = ["kitty", "-C", str(workspace), "safe-commit", *files, *argv[-2:]]
                pending.append(argv)
            agent.pending = pending
        if self.rng.random() < self.sc.slow_p:
            agent.busy = self.rng.randint(1, 3)
            return True
        self.finish(agent)
        return True

    def finish(self, agent: Agent) -> None:
        for argv in agent.pending:
            self.run(argv)
        agent.pending = []


def play(tmp: Path, seed: int, processes: bool = False) -> tuple[Sim, str]:
    repo = init_repo(tmp / f"repo-{seed}")
    for attempt in range(20):
        sc = scenario(seed, attempt)
        config = (
            f"agents:\n  available: [{', '.join(sc.agents)}]\n"
            f"review:\n  max_cycles: {sc.max_cycles}\n"
        )
        mission = make_mission(repo, SLUG, wps=sc.wps, config=config, finalize=False)
        finalized = kitty(repo, "finalize", "--mission", SLUG)
        if finalized.code == 0:
            break
        # Shared files merged WPs into a lane that the dependencies make cyclic:
        # kitty refuses that plan (correctly); draw another one.
        assert "cycle" in finalized.err, finalized.err
        shutil.rmtree(mission)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plan")
    sim = Sim(repo, sc, Random(seed * 7919 + 1), processes)
    return sim, sim.play()


def seeds() -> list[int]:
    spec = os.environ.get("KITTY_SIM_SEEDS")
    if not spec:
        return SEEDS
    lo, _, hi = spec.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


@pytest.mark.parametrize("seed", seeds())
def test_agents_following_next_always_finish(tmp_path: Path, seed: int) -> None:
    sim, outcome = play(tmp_path, seed)
    sc = sim.sc
    print(
        f"seed={seed} shape={sc.shape} wps={len(sc.wps)} agents={len(sc.agents)} "
        f"cap={sc.max_cycles} reject={sc.reject_p} -> {outcome} in {sim.steps} steps, "
        f"{sim.commands} commands, {sim.decisions}"
    )
    assert outcome in ("done", "blocked")
    if outcome == "blocked":  # only a human decision may stop a mission
        lanes = set(sim.blocked_lanes.values())
        assert "blocked" in lanes or len(sc.agents) == 1, sim.blocked_lanes


def test_one_mission_with_real_kitty_processes(tmp_path: Path) -> None:
    """The same invariant with every printed command run as its own `kitty` process."""
    sim, outcome = play(tmp_path, SUBPROCESS_SEED, processes=True)
    assert outcome == "done" and sim.decisions.get("merge") == 1
