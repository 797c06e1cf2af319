"""`kitty sprint --remote origin`: one mission shared by sprints on several machines.

A `RemoteSprint` is a `Sprint` whose shared state goes through the git remote:

* every dispatch first claims the WP on the coordination branch with a
  compare-and-swap push (`kitty.teams.remote`); a machine that loses the race
  simply picks other work on its next turn;
* the mission's events are published (and the other machines' folded in) after
  every dispatch and agent exit, and at least every `PUBLISH_EVERY` seconds, so
  reviews, rejections and approvals from any machine reach every other one;
* lane branches travel with the work: before a WP starts here, the mission's
  branches are fetched and fast-forwarded; after an agent exits, the WP's lane
  branch and the mission branch are pushed, so a reviewer, a fixer or a
  dependent lane on another machine builds on the same commits;
* a machine with nothing to do keeps waiting while other machines still hold
  work (with a live lease) instead of ending the sprint early;
* acceptance and merge happen once: the first machine to create the
  `kitty/coord/<mission>-finish` branch (a create-only push) accepts, merges and
  pushes; the others report who finished the mission.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from kitty.adapters import eventlog
from kitty.adapters.git import Git
from kitty.core import lanes
from kitty.core.log.state import Board
from kitty.errors import KittyError
from kitty.mission.workspace import Mission
from kitty.mission.worktrees import (
    existing_workspace,
    lane_branch,
    lane_of,
    mission_branch,
)
from kitty.sprint.runner import IMPLEMENT, Emit, Options, Sprint
from kitty.teams.leases import foreign_holds, lease_of, remote_lease
from kitty.teams.remote import coord_ref, lost_race, machine_id, transact

PUBLISH_EVERY = 1.0
#: Running agents heartbeat this often when the sprint is shared, so the other
#: machines can tell work in progress from work left behind.
HEARTBEAT_EVERY = 10.0
#: Another machine's WP counts as being worked on while it saw an event this recently.
ACTIVE_WINDOW_US = 45_000_000


class RemoteSprint(Sprint):
    def __init__(self, repo: Path, mission: str | None, opts: Options, emit: Emit) -> None:
        opts.heartbeat_every = min(opts.heartbeat_every, HEARTBEAT_EVERY)
        super().__init__(repo, mission, opts, emit)
        assert opts.remote is not None
        self.remote = opts.remote
        self.machine = machine_id()
        self.git = Git(self.mission().project.root)
        self.last_publish: float | None = None  # None: the first publish always goes
        self.pushed: dict[str, str] = {}  # branch -> the sha last pushed
        self.finished_by: str | None = None

    # -- events --------------------------------------------------------------------
    def publish(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and self.last_publish is not None and now - self.last_publish < PUBLISH_EVERY:
            return
        self.last_publish = now
        # Branches first: when a WP's for_review reaches the remote, its commits are there.
        for job in list(self.jobs.values()):
            if job.role == IMPLEMENT:
                self.push_branches(job.wp_id)
        transact(self.mission(), self.remote, lambda board: [], f"sprint on {self.machine}")

    def dispatch(self) -> bool:
        self.publish()
        return super().dispatch()

    # -- claims ----------------------------------------------------------------------
    def start(self, mission: Mission, wp_id: str, role: str, agent: str) -> bool:
        self.fetch_branches()
        if role != IMPLEMENT:
            base = mission.board.get(wp_id).scalars.get("base_commit")
            if isinstance(base, str) and not self.git.ok("cat-file", "-e", f"{base}^{{commit}}"):
                # The implementer's branch has not reached the remote yet: next turn.
                self.emit({"event": "wait_branch", "wp_id": wp_id, "role": role})
                return False
        if not self.claim(mission, wp_id, role, agent):
            self.emit({"event": "lost_claim", "wp_id": wp_id, "role": role, "agent": agent})
            return False
        if role != IMPLEMENT:
            try:
                self.checkout_for_review(wp_id)
            except KittyError as exc:  # e.g. its lane branch is checked out in the main clone
                self.fail_to_start(self.mission(), wp_id, role, agent, exc)
                return True
        started = super().start(self.mission(), wp_id, role, agent)
        self.publish(force=True)
        return started

    def claim(self, mission: Mission, wp_id: str, role: str, agent: str) -> bool:
        """Claim `wp_id` on the coordination branch; False when another machine has it."""
        lease = remote_lease(mission)
        won: list[bool] = []

        def build(board: Board) -> list[dict[str, Any]]:
            won.clear()  # a rejected push runs build again on the fresher board
            ok, records = claim_records(board, mission, wp_id, role, agent, self.machine, lease)
            won.extend([True] if ok else [])
            return records

        transact(mission, self.remote, build, f"{agent} on {self.machine} claims {wp_id}")
        return bool(won)

    def owns_claim(self, claim: dict[str, Any]) -> bool:
        return claim.get("machine") in (None, self.machine)

    def others_active(self) -> bool:
        """True while another machine is working on the mission (so wait for it).

        Work counts as in progress while its lease is live and it saw an event
        (heartbeats included) within `ACTIVE_WINDOW_US`; a WP another machine
        left behind (a halted review, a killed sprint) does not keep us waiting.
        """
        self.publish()
        mission = self.mission()
        ids = [i for i in mission.all_ids() if i not in self.jobs]
        return active_elsewhere(mission.board, ids, self.machine, eventlog.now_us())

    # -- branches ------------------------------------------------------------------------
    def branch_prefix(self) -> str:
        return mission_branch(self.mission())

    def fetch_branches(self) -> None:
        """Fetch the mission's branches and fast-forward the local ones (never rewinds); one
        that cannot move (uncommitted work in its worktree) is left as it is, with a notice."""
        prefix = self.branch_prefix()
        tracking = f"refs/kitty/remotes/{self.remote}/branches/"
        code, _, err = self.git.status(
            "fetch", "--quiet", "--no-tags", self.remote,
            f"+refs/heads/{prefix}*:{tracking}{prefix}*",
        )  # fmt: skip
        if code != 0:
            self.emit({"event": "notice", "message": f"fetching branches failed: {err.strip()}"})
            return
        listed = self.git.run("for-each-ref", "--format=%(refname)", tracking)
        checked_out = self._worktrees()
        for ref in listed.split():
            branch = ref[len(tracking) :]
            local = self.git.rev(f"refs/heads/{branch}")
            theirs = self.git.rev(ref)
            if theirs is None or local == theirs:
                continue
            if local is None:
                self.git.run("branch", branch, theirs)
            elif self.git.ok("merge-base", "--is-ancestor", local, theirs):
                where = checked_out.get(branch)
                if where is not None:
                    code, _, err = Git(where).status("merge", "--ff-only", "--quiet", theirs)
                else:
                    code, _, err = self.git.status(
                        "update-ref", f"refs/heads/{branch}", theirs, local
                    )
                if code != 0:  # uncommitted work in its worktree, a commit landed meanwhile
                    why = " ".join(err.split())
                    message = (
                        f"lane branch {branch} left as it is: {why} (the next fetch tries again)"
                    )
                    self.emit({"event": "notice", "message": message})

    def _worktrees(self) -> dict[str, Path]:
        found: dict[str, Path] = {}
        current: Path | None = None
        for line in self.git.run("worktree", "list", "--porcelain").splitlines():
            if line.startswith("worktree "):
                current = Path(line[len("worktree ") :])
            elif line.startswith("branch refs/heads/") and current is not None:
                found[line[len("branch refs/heads/") :]] = current
        return found

    def checkout_for_review(self, wp_id: str) -> None:
        """Give a reviewer the implementer's lane branch exactly as pushed (no merges)."""
        ws = existing_workspace(self.mission(), wp_id)
        if ws.branch is None or ws.path.exists() or not self.git.rev(f"refs/heads/{ws.branch}"):
            return
        self.git.run("worktree", "add", "--quiet", str(ws.path), ws.branch)

    def push_branches(self, wp_id: str) -> None:
        mission = self.mission()
        names = [mission_branch(mission)]
        lane = lane_of(mission, wp_id)
        if lane is not None:
            names.append(lane_branch(mission, str(lane["lane_id"])))
        shas = {n: self.git.rev(f"refs/heads/{n}") for n in names}
        refs = [f"refs/heads/{n}:refs/heads/{n}" for n, sha in shas.items() if sha]
        if not refs or all(self.pushed.get(n) == sha for n, sha in shas.items()):
            return
        code, out, err = self.git.status("push", "--porcelain", self.remote, *refs)
        if code == 0:
            self.pushed.update({n: sha for n, sha in shas.items() if sha})
        else:
            why = push_refusal(out, err)
            self.emit({"event": "notice", "message": f"pushing {', '.join(names)}: {why}"})

    def settle(self, job: Any, how: str) -> None:
        super().settle(job, how)
        if job.role == IMPLEMENT:
            self.push_branches(job.wp_id)
        self.publish(force=True)

    # -- the end ---------------------------------------------------------------------------
    def claim_finish(self) -> bool:
        """Create `kitty/coord/<mission>-finish` (only if absent): exactly one machine wins."""
        self.publish(force=True)
        ref = coord_ref(self.slug) + "-finish"
        tree = self.git.run("mktree", stdin=b"").strip()
        commit = self.git.run(
            "commit-tree", tree, "-m", f"kitty: {self.machine} finishes {self.slug}"
        ).strip()
        code, out, err = self.git.status(
            "push", "--porcelain", f"--force-with-lease={ref}:", self.remote, f"{commit}:{ref}"
        )
        if code == 0:
            self.fetch_branches()
            return True
        if not lost_race(out + err) and "already exists" not in (out + err):
            self.emit({"event": "notice", "message": f"finish lock: {push_refusal(out, err)}"})
        self.finished_by = "another machine"
        return False

    def after_finish(self, result: dict[str, Any]) -> None:
        """Publish the done events and push the merged target branch."""
        from kitty.teams.sync import sync

        self.publish(force=True)
        if result.get("merged"):
            try:
                sync(self.repo, self.remote)
            except KittyError as exc:
                self.emit({"event": "notice", "message": f"kitty sync failed: {exc.message}"})


def push_refusal(out: str, err: str) -> str:
    """Why a `git push --porcelain` failed, on one line: each refused ref with git's
    reason (from stdout), then what git and the remote said (stderr, hints left out)."""
    refused = [" ".join(line.split()[1:]) for line in out.splitlines() if line[:2] == "!\t"]
    said = [line.strip() for line in err.splitlines() if line.strip() and line[:5] != "hint:"]
    return "; ".join(refused + said)


def claim_records(
    board: Board,
    mission: Mission,
    wp_id: str,
    role: str,
    agent: str,
    machine: str,
    lease: dict[str, Any],
) -> tuple[bool, list[dict[str, Any]]]:
    """Decide a claim on the fresh `board`: (won, the events that claim it).

    Won with no event when `agent` already holds the WP in the role's lane (a
    resumed claim); won with the claim transition when the WP waits in the lane
    the role starts from; lost otherwise (another machine moved it first).
    """
    frm, to = (
        (lanes.PLANNED, lanes.CLAIMED) if role == IMPLEMENT else (lanes.FOR_REVIEW, lanes.IN_REVIEW)
    )
    foreign_holds(board, agent, machine)
    st = board.wps.get(wp_id)
    if st is None:
        return False, []
    holder = st.reviewer if st.lane == lanes.IN_REVIEW else st.implementer
    if st.lane in (lanes.CLAIMED, lanes.IN_PROGRESS, lanes.IN_REVIEW) and holder == agent:
        return True, []  # resuming our own claim
    if st.lane != frm:
        return False, []
    # all four keys of a structured actor, or Spec Kitty 3.2.7 refuses the log
    actor = {
        "tool": agent,
        "role": "implementer" if role == IMPLEMENT else "reviewer",
        "profile": None,
        "model": None,
    }
    event = mission.transition(
        wp_id,
        frm,
        to,
        actor,
        reason=f"claimed by kitty sprint on {machine}",
        policy_metadata={"agent": agent, **lease},
    )
    return True, [event]


def active_elsewhere(board: Board, wp_ids: list[str], machine: str, now: int) -> bool:
    """True while one of `wp_ids` is being worked on away from `machine` (so wait for it).

    A WP waiting for review counts (someone may review it); a WP in flight counts
    while another machine's lease on it is live and it saw an event within
    `ACTIVE_WINDOW_US`; a WP another machine left behind does not.
    """
    for wp_id in wp_ids:
        st = board.wps.get(wp_id)
        if st is None or st.lane not in lanes.IN_FLIGHT:
            continue
        if st.lane == lanes.FOR_REVIEW:
            return True  # someone may review it; our own dispatch gets the next turn
        lease = lease_of(st)
        if (
            lease is not None
            and lease["machine"] != machine
            and lease["expires_us"] > now
            and now - (st.last_activity_us or 0) < ACTIVE_WINDOW_US
        ):
            return True
    return False
