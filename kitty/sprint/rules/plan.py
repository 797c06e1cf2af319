"""What a sprint does next, decided without I/O.

Which work to start (a re-run first, then reviews, the arbiter, fixes and fresh
work), which agent takes it, what an agent's exit means for its WP, what the
arbiter does at the cycle cap, the text of a reviewer halt, and why a sprint ended.
`kitty/sprint/runner.py` reads the mission, asks these functions and carries
out the answer through the mission's one write path.
"""

from __future__ import annotations

import shlex
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from kitty.core import lanes
from kitty.core.decide.steps import Context, Queues, stalled
from kitty.core.log.state import WPState


@dataclass
class Options:
    """What `kitty sprint` was asked to do (its options, as data)."""

    implementers: list[str]
    reviewers: list[str]
    parallel: int = 2
    timeout: int = 1800
    max_cycles: int | None = None
    merge: bool = False
    caffeinate: bool = True
    dry_run: bool = False
    retries: int = 2
    poll: float = 0.2
    heartbeat_every: float = 60.0
    arbiter: str = "escalate"  # escalate | approve
    review_panel: list[str] | None = None  # personas: reviews run as `kitty review run`
    remote: str | None = None  # share the mission with sprints on other machines
    implementer_model: str | None = None  # --implementer-model (else agents.models...)
    reviewer_model: str | None = None
    budget_usd: float | None = None  # --budget: no new run once this much was spent
    max_tokens: int | None = None  # --max-tokens: the same in tokens
    rate_limit_wait: float = 30.0  # the first wait after a rate limit (then doubling)


IMPLEMENT, REVIEW = "implement", "review"
#: The agent name of a review run by a persona panel (`kitty review run`).
PANEL = "review-panel"
#: `Step.kind` values.
START, HALT, ARBITRATE = "start", "halt", "arbitrate"
#: What an agent's exit means (`after_exit`).
DONE, HALT_REVIEW, RETRY, GIVE_UP = "done", "halt-review", "retry", "give-up"

#: How many times a sprint goes back to work after its merge queue sent WPs back.
MAX_REQUEUES = 10

Retry = tuple[str, str, str]  # (wp, role, agent) to dispatch again before anything else


@dataclass(frozen=True)
class Step:
    """One thing to do: start `role` on `wp_id` by `agent`, halt it, or call the arbiter."""

    kind: str
    wp_id: str
    role: str = ""
    agent: str = ""
    why: str = ""


def take_retry(
    retry: Sequence[Retry],
    running: Collection[str],
    halted: Collection[str],
    waiting: Collection[str] = (),
) -> tuple[Step | None, list[Retry]]:
    """The first queued re-run still worth starting, and the queue after it (re-runs of
    WPs that are running or halted meanwhile are dropped; those `waiting` out a rate
    limit stay queued)."""
    kept: list[Retry] = []
    for index, (wp_id, role, agent) in enumerate(retry):
        if wp_id in waiting:
            kept.append(retry[index])
        elif wp_id not in running and wp_id not in halted:
            return Step(START, wp_id, role, agent), kept + list(retry[index + 1 :])
    return None, kept


def pick_implementer(
    previous: str | None, implementers: Sequence[str], turn: int
) -> tuple[str, int]:
    """A fix goes back to whoever wrote it; fresh work goes round-robin.
    Returns (agent, the next turn)."""
    if previous is not None and previous in implementers:
        return previous, turn
    return implementers[turn % len(implementers)], turn + 1


def pick_reviewer(
    implementer: str | None, reviewers: Sequence[str], used: Collection[str]
) -> str | None:
    """Never the implementer; a reviewer that has not reviewed this WP yet when possible."""
    candidates = [r for r in reviewers if r != implementer]
    if not candidates:
        return None
    fresh = [r for r in candidates if r not in used] or candidates
    return fresh[0]


def choose(
    queues: Queues,
    implementer_of: dict[str, str | None],
    reviewed_by: dict[str, list[str]],
    implementers: Sequence[str],
    reviewers: Sequence[str],
    turn: int,
    panel: bool = False,
) -> tuple[Step | None, int]:
    """The next step from the shared work queues (ordered as `kitty next` orders them):
    a review (by the persona panel with `panel`), the arbiter, a fix, fresh work.
    Returns (step or None when there is nothing to start, the next turn)."""
    if queues.reviews:
        wp_id = queues.reviews[0]
        if panel:
            return Step(START, wp_id, REVIEW, PANEL), turn
        reviewer = pick_reviewer(implementer_of.get(wp_id), reviewers, reviewed_by.get(wp_id, []))
        if reviewer is None:
            why = "every configured reviewer implemented it"
            return Step(HALT, wp_id, REVIEW, ",".join(reviewers), why), turn
        return Step(START, wp_id, REVIEW, reviewer), turn
    if queues.capped:
        return Step(ARBITRATE, queues.capped[0]), turn
    if queues.fixes or queues.fresh:
        wp_id = (queues.fixes or queues.fresh)[0]
        agent, turn = pick_implementer(implementer_of.get(wp_id), implementers, turn)
        return Step(START, wp_id, IMPLEMENT, agent), turn
    return None, turn


def no_second_reviewer(
    implementers: Sequence[str], reviewers: Sequence[str], builtin: Collection[str] = ()
) -> str | None:
    """Why some implementer's WPs can never be reviewed in this sprint (its only reviewer
    is itself), with how to configure a second reviewer identity; None when all can.
    `builtin`: the agents that run one of kitty's built-in CLIs, which answers to a
    second name on its own (`codex:reviewer` is codex under another name)."""
    alone = [i for i in dict.fromkeys(implementers) if all(r == i for r in reviewers)]
    if not alone:
        return None
    who = alone[0]
    other = "codex" if who.split(":", 1)[0] == "claude" else "claude"
    if who in builtin:
        second = f"the same CLI under a second name (--reviewer {who}:reviewer)"
    else:
        second = (
            f"the same command under a second name (copy agents.commands.{who} in "
            f".kittify/config.yaml to agents.commands.{who}-reviewer, run `kitty trust`, "
            f"then --reviewer {who}-reviewer)"
        )
    return (
        f"no reviewer can review a WP {who} implements: a reviewer never reviews its own WP, "
        f"and --reviewer names only {', '.join(dict.fromkeys(reviewers))}. Configure a second "
        f"reviewer identity: another agent (--reviewer {other}), or {second}"
    )


def left_done(role: str, lane: str | None) -> bool:
    """Did the agent move its WP on? An implementer leaves claimed/in_progress, a
    reviewer leaves for_review/in_review."""
    if role == IMPLEMENT:
        return lane not in (lanes.CLAIMED, lanes.IN_PROGRESS)
    return lane not in (lanes.IN_REVIEW, lanes.FOR_REVIEW)


def after_exit(role: str, lane: str | None, failures: int, retries: int) -> str:
    """What an agent's exit means for its WP. `failures` counts this WP's failed runs in
    this role, this one included: DONE (it moved the WP on), HALT_REVIEW (a failed
    reviewer: never a silent approval), RETRY, or GIVE_UP after `retries` re-runs."""
    if left_done(role, lane):
        return DONE
    if role == REVIEW:
        return HALT_REVIEW
    return GIVE_UP if failures > retries else RETRY


@dataclass(frozen=True)
class Arbiter:
    """The arbiter's answer for a WP at the cycle cap: move it (`to_lane`, with `text`
    as the note) or, for a panel HALT no policy can answer, halt it (`text` says how)."""

    to_lane: str | None
    text: str


def arbiter(
    slug: str,
    wp_id: str,
    policy: str,
    review_cycles: int,
    halt_reason: object = None,
    halt_round: object = None,
    halt_text: object = None,
) -> Arbiter:
    """`policy` is escalate (block it for a human) or approve. A review panel HALT for a
    blocker question or a soft warning goes to a human whatever the policy."""
    if halt_reason in ("blocker", "soft_warn"):
        how = (
            "   # shows the open questions; answer with --answer ID=LABEL"
            if halt_reason == "blocker"
            else "--continue"
        )
        return Arbiter(
            None,
            f"review panel HALT ({halt_reason}) at round {halt_round}: {halt_text}\n"
            f"  kitty review answer {wp_id} --mission {slug} {how}",
        )
    if policy == "approve":
        return Arbiter(
            lanes.APPROVED,
            f"Arbiter decision: approved by sprint policy after {review_cycles} review cycles",
        )
    return Arbiter(
        lanes.BLOCKED,
        f"Escalated to human after {review_cycles} review cycles (sprint arbiter policy)",
    )


def halt_message(
    slug: str,
    wp_id: str,
    reviewer: str,
    why: str,
    implementer: str | None,
    implementers: Sequence[str],
    candidates: Sequence[str],
) -> str:
    """The reviewer-failure block: retry, switch reviewer (one of `candidates` that is
    neither the failed reviewer nor the implementer), or an explicit self-review. Each
    option is a command that runs as printed."""
    author = implementer or "the implementer"
    configured = reviewer.split(",")
    others = [r for r in dict.fromkeys(candidates) if r not in (*configured, author)]
    other = others[0] if others else "gemini"
    # When the only reviewer is the implementer, retrying with it fails again: name another.
    again = other if author in configured else reviewer
    retry = shlex.join(
        ["kitty", "sprint", "--mission", slug, "--implementer", ",".join(implementers),
         "--reviewer", again]
    )  # fmt: skip
    fallback = shlex.join(
        ["kitty", "agent", "tasks", "move-task", wp_id, "--mission", slug, "--to", "approved",
         "--force", "--agent", author, "--self-review-fallback", "--intended-reviewer",
         reviewer, "--reviewer-failure-reason", why, "--note",
         f"Self-review fallback after reviewer failure: {reviewer} could not review"]
    )  # fmt: skip
    option_a = (
        f"  a) Retry with '{reviewer}' after fixing the error:\n     {retry}\n"
        if again == reviewer
        else f"  a) Retry with a second reviewer identity (not {author}):\n     {retry}\n"
    )
    return (
        f"ERROR: Configured reviewer '{reviewer}' failed ({why}).\n"
        f"{wp_id} is back in for_review.\n"
        "Options:\n"
        f"{option_a}"
        f"  b) Switch reviewer:\n     kitty agent action review {wp_id} --mission "
        f"{slug} --agent {shlex.quote(other)}\n"
        "  c) Proceed with self-review -- WARNING: no independent review:\n"
        f"     {fallback}"
    )


def all_approved(lanes_by_wp: dict[str, str | None]) -> bool:
    """The sprint's work is done: at least one WP, and every WP not canceled is approved
    or done."""
    active = [lane for lane in lanes_by_wp.values() if lane != lanes.CANCELED]
    return bool(active) and all(lane in lanes.SATISFIED for lane in active)


def review_lanes(verdict: str | None) -> tuple[str, ...]:
    """The lanes a reviewer's `verdict` leaves a WP in (tells a fresh verdict from a stale one)."""
    if verdict == "approved":
        return (lanes.APPROVED, lanes.DONE)
    if verdict == "changes_requested":
        return (lanes.PLANNED, lanes.IN_PROGRESS)
    return ()


def stalled_review(
    ctx: Context,
    wps: Mapping[str, WPState],
    ids: Sequence[str],
    busy: Collection[str],
    reviewers: Sequence[str],
    reviewed_by: Mapping[str, Sequence[str]],
) -> tuple[str, str, str] | None:
    """A review nobody works on (silent past review.stall_minutes, not in `busy`: this
    sprint's jobs and halted WPs), with the reviewer to take it over and why; None if
    there is none."""
    for wp_id in ids:
        st = wps.get(wp_id)
        if st is None or st.lane != lanes.IN_REVIEW or wp_id in busy:
            continue
        why = stalled(ctx, st)
        if why is None:
            continue
        others = [r for r in reviewers if r != st.reviewer] or list(reviewers)
        reviewer = pick_reviewer(st.implementer, others, reviewed_by.get(wp_id, []))
        if reviewer is not None:
            return wp_id, reviewer, f"{st.reviewer}'s review was STALLED: {why}"
    return None


def foreign_holds(
    slug: str, wps: Mapping[str, WPState], ids: Sequence[str], mine: Collection[str], run: str
) -> list[str]:
    """WPs held (claimed, in progress) by an agent this sprint does not run (not in
    `mine`, no claim of run `run`): named, with how the holder releases the claim
    (issue 22.12)."""
    found = []
    for wp_id in ids:
        st = wps.get(wp_id)
        if st is None or st.lane not in (lanes.CLAIMED, lanes.IN_PROGRESS):
            continue
        holder = st.implementer or "unknown"
        if wp_id in mine or (st.runtime_claim or {}).get("sprint_run") == run:
            continue
        how = (
            f"kitty move {wp_id} planned --mission {slug} --agent {shlex.quote(holder)} "
            '--note "claim released"'
        )
        found.append(
            f"{wp_id} is {st.lane} by {holder}, which this sprint does not run "
            f"(held by nobody it runs): {holder} finishes it or releases it: {how}"
        )
    return found


def finish_reason(accepted: bool, merged: bool) -> str:
    """Why a sprint whose WPs are all approved ended (accept, then merge when asked)."""
    if merged:
        return "every work package is merged"
    return "every work package is approved" + ("" if accepted else "; acceptance failed")


def manual_message(wp_id: str, role: str, agent: str, workspace: str, prompt: str) -> str:
    """Tier 3: what a human runs for an agent kitty cannot start, and how to hand back."""
    verb = "for_review" if role == IMPLEMENT else "approved (or planned with feedback)"
    return (
        f"Manual dispatch required for agent: {agent}\n"
        f"Workspace: cd {workspace}\n"
        f"Prompt: cat {prompt}\n"
        f"When done, move {wp_id} to {verb} with "
        "kitty agent tasks move-task"
    )
