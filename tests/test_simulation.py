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

Issue 22 adds, on a simulated clock (a minute per step, in-process runs): arbiter
decisions taken from `choices` (filled in, each naming its actor), a person who decides
when the mission is BLOCKED (the arbiter of a lone agent's WP, or un-blocking an
escalated one), a "ghost" who starts a review by hand and walks away (another agent must
be offered the takeover once review.stall_minutes pass), and reviewers that edit the
lane before approving (the approval must be refused as reviewer_failed).

Asserted for every scenario:
0. `commands` never holds a placeholder (`<...>`); running one turn's commands never
   records two arbiter decisions for a WP; no WP ever has more rejections since its
   last arbiter decision than the cap; no agent is told to wait while a review has
   been silent past the stall limit;
1. every command kitty printed (in `next` and in the prompts) exits 0;
2. the mission ends — DONE, or BLOCKED with a reason a human must act on — within a
   step bound;
3. no agent gets the same decision twice in a row without the event log changing
   (after completing the previous one), and `wait` is never answered when nothing
   can move.

CI runs SEEDS; `KITTY_SIM_SEEDS=0-199` runs more (the totals are printed with -s).
Seeds 0-199 (2026-12-03, issue 22): 200 missions, 3,889 agent turns, 12,846 printed
commands, all exit 0; 149 merged, 51 blocked; 273 arbiter decisions (never two in a
turn, the cap held after each), 44 abandoned reviews all taken over, 55 reviewer edits
all refused, 34 decisions by a person; at most 133 steps per mission (16 minutes wall
in three processes on a loaded 2-core machine).
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
import json
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
#: CI: every shape, 1 and many agents, MERGE-without-branch (2), ACCEPT-after-arbiter (4, 18);
#: issue 22: a ghost review taken over (0, 170), reviewers that edit (4, 9, 113), a person
#: deciding when BLOCKED (9, 16).
SEEDS = [0, 2, 4, 9, 16, 18, 21, 29, 30, 33, 113, 170]
#: One mission where every printed command runs as a real `kitty` process.
SUBPROCESS_SEED = 53
SLUG = "sim-01ABCDEF"
FENCED = re.compile(r"`(kitty [^`]+)`")
#: Something to fill in: `<why>`, `<arbiter>` (never allowed in `commands`).
PLACEHOLDER = re.compile(r"<[^<>\s][^<>]*>")
MINUTE_US = 60 * 1_000_000
#: review.stall_minutes (default): the simulated clock advances a minute per step.
STALL_US = 30 * MINUTE_US
PERSON = "lead"  # the human who decides when the mission is BLOCKED
GHOST = "ghost"  # a person who starts a review by hand and never finishes it


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
    ghost_p: float = 0.0  # a person starts a review by hand and walks away (issue 22.5)
    edit_p: float = 0.0  # a reviewer edits the lane before approving (issue 22.6)
    humans: int = 0  # decisions a person takes when the mission is BLOCKED (issue 22.1/4)


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
        ghost_p=rng.choice([0.0, 0.0, 0.1]),
        edit_p=rng.choice([0.0, 0.3]),
        humans=rng.choice([0, 2]),
    )


@dataclass
class Agent:
    name: str
    busy: int = 0  # turns of (slow) work left
    pending: list[list[str]] = field(default_factory=list)  # commands to run when done
    waiting_on: tuple[str, frozenset[str]] | None = None  # (log hash, stalled reviews) at a wait
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
        self.now = 0  # the simulated clock (in-process runs), in µs
        self.ghosts: dict[str, int] = {}  # WP -> when a ghost took its review
        self.humans_left = sc.humans
        self.events = {"ghost": 0, "takeover": 0, "edit": 0, "human": 0, "arbiter": 0}

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
        if self.processes:
            return self.play_steps()
        from kitty.adapters import eventlog

        real = eventlog.now_us
        self.now = real()
        eventlog.now_us = lambda: self.now
        try:
            return self.play_steps()
        finally:
            eventlog.now_us = real

    def stalled_ghosts(self) -> frozenset[str]:
        return frozenset(w for w, at in self.ghosts.items() if self.now - at > STALL_US)

    def play_steps(self) -> str:
        bound = 80 * len(self.sc.wps) + 80 + 60 * self.sc.humans
        if self.sc.pre_approve:  # the skill's Option A, copied literally (no --agent)
            self.run(
                f"kitty agent tasks move-task {self.sc.pre_approve} --to approved --force "
                '--note "Arbiter decision: Approved after 3 cycles. Meets acceptance criteria."'
            )
        while self.steps < bound:
            self.steps += 1
            self.now += MINUTE_US
            for agent in self.agents:
                if agent.busy:
                    agent.busy -= 1
                    if not agent.busy:
                        self.finish(agent)
            if not self.processes and len(self.ghosts) < 2 and self.rng.random() < self.sc.ghost_p:
                self.ghost_review()
            idle = [a for a in self.agents if not a.busy]
            now = (self.log_hash(), self.stalled_ghosts())
            ready = [a for a in idle if a.waiting_on != now]
            if not ready:
                if any(a.busy for a in self.agents):
                    continue
                if set(self.ghosts) - self.stalled_ghosts():
                    continue  # an abandoned review: time passes until it is STALLED
                last = self.run(f"kitty next --agent {idle[0].name} --mission {SLUG} --json")
                raise Finding(
                    f"seed {self.sc.seed}: every agent was told to wait and nothing is moving: "
                    + last
                )
            outcome = self.turn(self.rng.choice(ready))
            if outcome:
                return outcome
        raise Finding(f"seed {self.sc.seed}: the mission did not end within {bound} steps")

    def status(self) -> list[dict[str, Any]]:
        view = json.loads(self.run(f"kitty status --mission {SLUG} --json"))
        return list(view["work_packages"])

    def ghost_review(self) -> None:
        """A person claims a waiting review by hand and never acts on it (issue 22.5)."""
        waiting = [w["id"] for w in self.status() if w["lane"] == "for_review"]
        if waiting:
            wp_id = self.rng.choice(waiting)
            self.run(f"kitty agent action review {wp_id} --mission {SLUG} --agent {GHOST}")
            self.ghosts[wp_id] = self.now
            self.events["ghost"] += 1

    def fill(self, choice: dict[str, Any], person: str) -> list[str]:
        """A choice's commands with what it asks to fill in filled in."""
        out = []
        for command in choice["commands"]:
            for key in choice["fill"]:
                command = command.replace(key, person if key == "<arbiter>" else "as decided")
            if PLACEHOLDER.search(command):
                raise Finding(f"seed {self.sc.seed}: a choice leaves {command!r} unfilled")
            out.append(command)
        return out

    def check_turn(self, offset: int, decision: dict[str, Any]) -> None:
        """The invariants of issue 22 after one turn: no contradictory decisions, the cycle
        cap holds after arbiter decisions, no wait past the stall limit without a takeover."""
        path = self.repo / "kitty-specs" / SLUG / "status.events.jsonl"
        with path.open("rb") as handle:
            handle.seek(offset)
            new = [json.loads(line) for line in handle.read().splitlines() if line.strip()]
        decided: dict[str, int] = {}
        for event in new:
            if ((event.get("policy_metadata") or {}).get("arbiter")) is not None:
                decided[event["wp_id"]] = decided.get(event["wp_id"], 0) + 1
        if any(n > 1 for n in decided.values()):
            raise Finding(f"seed {self.sc.seed}: contradictory arbiter decisions: {decided}")
        self.events["arbiter"] += sum(decided.values())
        from kitty.mission.workspace import Mission  # the board, read in-process (cheap)

        for wp_id, st in Mission.open(self.repo, SLUG).board.wps.items():
            since = st.review_cycles - int((st.arbiter or {}).get("cycles") or 0)
            if since > self.sc.max_cycles:
                raise Finding(
                    f"seed {self.sc.seed}: {wp_id} has {since} rejections since the last "
                    f"arbiter decision (cap {self.sc.max_cycles})"
                )
            if wp_id in self.ghosts and (st.lane != "in_review" or st.reviewer != GHOST):
                del self.ghosts[wp_id]  # taken over (or moved on)
                self.events["takeover"] += 1
        if decision["action"] == "wait":
            late = [w for w, at in self.ghosts.items() if self.now - at > STALL_US + 2 * MINUTE_US]
            if late:
                raise Finding(
                    f"seed {self.sc.seed}: {decision} while {late} waited past the stall "
                    "limit without a takeover"
                )

    def turn(self, agent: Agent) -> str | None:
        before = self.log_hash()
        offset = (self.repo / "kitty-specs" / SLUG / "status.events.jsonl").stat().st_size
        out = self.run(f"kitty next --agent {agent.name} --mission {SLUG} --json")
        decision = json.loads(out)
        outcome = self.act(agent, decision, before)
        self.check_turn(offset, decision)
        return outcome

    def act(self, agent: Agent, decision: dict[str, Any], before: str) -> str | None:
        action = decision["action"]
        for command in decision["commands"]:  # issue 22.1: steps, nothing to fill in
            if PLACEHOLDER.search(command):
                raise Finding(f"seed {self.sc.seed}: a placeholder in `commands`: {command}")
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
            for command in decision["commands"]:
                self.run(command)
            if self.humans_left and decision["choices"]:
                self.humans_left -= 1  # a person decides, and the agents go on
                self.events["human"] += 1
                for command in self.fill(self.rng.choice(decision["choices"]), PERSON):
                    self.run(command)
                agent.last = None
                return None
            self.blocked_lanes = {w["id"]: w["lane"] for w in self.status()}
            return "blocked"
        if action == "wait":
            for command in decision["commands"]:
                self.run(command)
            agent.waiting_on = (before, self.stalled_ghosts())
        elif action == "arbiter":
            for command in decision["commands"]:
                self.run(command)
            escalate = self.rng.random() < self.sc.escalate_p
            labels = [c["label"].split()[0] for c in decision["choices"]]
            choice = decision["choices"][labels.index("escalate" if escalate else "approve")]
            for command in self.fill(choice, agent.name):
                if f"--agent {agent.name}" not in command:  # issue 22.4: the actor is named
                    raise Finding(f"seed {self.sc.seed}: an arbiter command without --agent")
                self.run(command)
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
                # the file the prompt names (in the lane worktree, a folder git ignores)
                named = shlex.split(chosen)[-1]
                feedback = (
                    Path(named)
                    if named != "<feedback.md>"
                    else self.repo.parent / (f"feedback-{wp_id}-{self.steps}.md")
                )
                feedback.write_text("Handle the empty case.\n")
                chosen = chosen.replace("<feedback.md>", str(feedback))
            elif not self.processes and self.rng.random() < self.sc.edit_p:
                self.misbehave(workspace, shlex.split(chosen))
            # the prompt's <summary> is the agent's own words (a note that keeps it is refused)
            agent.pending = [shlex.split(chosen.replace("<summary>", f"{wp_id} reviewed"))]
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
                argv = shlex.split(line.replace("<summary>", f"{wp_id} step {self.steps}"))
                if argv[1] == "safe-commit":
                    argv = ["kitty", "-C", str(workspace), "safe-commit", *files, *argv[-2:]]
                pending.append(argv)
            agent.pending = pending
        if self.rng.random() < self.sc.slow_p:
            agent.busy = self.rng.randint(1, 3)
            return True
        self.finish(agent)
        return True

    def misbehave(self, workspace: Path, approve: list[str]) -> None:
        """A reviewer edits the lane, then approves: refused as reviewer_failed (issue
        22.6); it undoes its edit, and the same approval then runs."""
        scratch = workspace / "reviewer-scratch.txt"
        scratch.write_text("a reviewer was here\n")
        refused = kitty(self.repo, *approve[1:])
        scratch.unlink()
        if refused.code != 1 or "reviewer_failed" not in refused.err:
            raise Finding(
                f"seed {self.sc.seed}: an approval after a reviewer's edit was not refused: "
                f"{refused.code} {refused.err}"
            )
        self.events["edit"] += 1

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
        f"{sim.commands} commands, {sim.decisions}, {sim.events}"
    )
    assert outcome in ("done", "blocked")
    if outcome == "blocked":  # only a human decision may stop a mission
        lanes = set(sim.blocked_lanes.values())
        assert "blocked" in lanes or len(sc.agents) == 1, sim.blocked_lanes


def test_one_mission_with_real_kitty_processes(tmp_path: Path) -> None:
    """The same invariant with every printed command run as its own `kitty` process."""
    sim, outcome = play(tmp_path, SUBPROCESS_SEED, processes=True)
    assert outcome == "done" and sim.decisions.get("merge") == 1
