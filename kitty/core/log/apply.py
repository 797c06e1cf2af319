"""What an applied event changes on its WP's state (see `kitty.core.log.state`).

A transition sets the lane and who holds the WP (implementer, reviewer, the runtime
claim, Spec Kitty's runtime slots), records a review verdict and an arbiter's or the
self-review fallback's decision; an annotation sets subtasks, notes, scalars and the
claim's process. `kitty.core.log.admit` decides first whether a transition applies.
"""

from __future__ import annotations

from contextlib import suppress
from typing import TYPE_CHECKING, Any

from kitty.core import lanes
from kitty.core.log.events import Annotation, Transition
from kitty.core.log.records import ReviewRecord

if TYPE_CHECKING:
    from kitty.core.log.records import WPState

#: Annotation delta keys with a dedicated meaning; other scalars are kept latest-wins.
_STRUCTURED_DELTA = frozenset(
    {"subtasks", "note", "release_runtime_claim", "review", "conflicts_resolved", "review_status"}
)
#: `review_status` values (Spec Kitty's names): feedback waiting, and read by the implementer.
HAS_FEEDBACK, ACKNOWLEDGED = "has_feedback", "acknowledged"
#: Lanes in which a process holds the WP (for_review waits for a reviewer instead).
HELD = frozenset({lanes.CLAIMED, lanes.IN_PROGRESS, lanes.IN_REVIEW})
#: Annotation keys that describe the process holding a WP.
CLAIM_KEYS = ("shell_pid", "agent_pid", "agent_started_at", "sprint_run")
#: Spec Kitty's runtime slots: set by a `planned -> claimed` policy (besides `agent`),
#: replaced by annotations, cleared by `release_runtime_claim` (its reducer's tables).
SK_CLAIM_SLOTS = ("shell_pid", "shell_pid_created_at")
SK_NOTED_SLOTS = (
    "shell_pid",
    "shell_pid_created_at",
    "agent",
    "assignee",
    "role",
    "agent_profile",
    "agent_profile_version",
    "model",
    "provider",
)
SK_RELEASED_SLOTS = ("agent", "shell_pid", "shell_pid_created_at")
#: Policy keys of a claim made through a remote (see kitty.teams.leases).
LEASE_KEYS = ("machine", "lease_seconds")


_NO_POLICY: dict[str, Any] = {}  # read only


def apply_transition(st: WPState, ev: Transition) -> None:
    # Runs once per applied transition (hundreds of thousands in a big log): every
    # field of the event is read once, event_agent/event_machine are inlined.
    tool = ev.tool
    policy = ev.policy or _NO_POLICY
    said = policy.get("agent")
    agent = said if isinstance(said, str) else tool
    machine = policy.get("machine")
    to_lane, from_lane, at = ev.to_lane, ev.from_lane, ev.at
    previous = st.lane
    st.setter = (ev.event_id, at, ev.rollback)
    if ev.linked:
        st.taken.add(ev.after or "")
    if from_lane == lanes.PLANNED and to_lane == lanes.CLAIMED and policy:
        for key in SK_CLAIM_SLOTS:
            if policy.get(key) is not None:
                st.claim_slots[key] = policy[key]
        if said:  # an empty agent is no claim (Spec Kitty #2960)
            st.claim_slots["agent"] = said
    st.entry = (
        from_lane,
        said if isinstance(said, str) and said else tool,
        ev.at_us,
        machine if isinstance(machine, str) and machine else None,
    )
    st.lane = to_lane
    st.actor = tool
    st.last_transition_at = at
    st.lane_since_us = ev.at_us
    st.last_reason = ev.reason
    if ev.force:
        st.force_count += 1
    if to_lane == lanes.CLAIMED or (
        to_lane == lanes.IN_PROGRESS and from_lane in (lanes.CLAIMED, lanes.PLANNED)
    ):
        st.implementer = agent
        st.agent = agent
        st.since_hold = set()
    elif to_lane == lanes.IN_REVIEW:
        st.reviewer = agent
        st.agent = agent
        st.since_hold = set()
    st.since_hold.add(ev.event_id)
    if to_lane in HELD or st.runtime_claim is not None:
        _runtime_claim(st, to_lane, previous, policy, agent, at)
    if ev.review_result is not None:
        _review(st, ev, ev.review_result)
    if policy and to_lane in _COMMIT_KEYS:
        _commit(st, policy, _COMMIT_KEYS[to_lane])
    # A forced move's reason may record an arbiter's decision too.
    if ev.force or "arbiter" in policy or "self_review_fallback" in policy or "reclaim" in policy:
        _decisions(st, ev, policy)


#: The lane commit a transition records (kitty.mission.readiness), kept as a scalar:
#: the head that entered review, and the commit an approval approved.
_COMMIT_KEYS = {
    lanes.FOR_REVIEW: ("lane_head", "review_commit"),
    lanes.APPROVED: ("approved_commit", "approved_commit"),
}


def _commit(st: WPState, policy: dict[str, Any], keys: tuple[str, str]) -> None:
    sha = policy.get(keys[0])
    if isinstance(sha, str) and sha:
        st.scalars[keys[1]] = sha
    if keys[1] == "review_commit":  # a move into review forced past the guard, or not
        unready = policy.get("review_ready")
        if isinstance(unready, str) and unready:
            st.scalars["review_forced"] = unready
        else:
            st.scalars.pop("review_forced", None)


def _runtime_claim(
    st: WPState, to_lane: str, previous: str | None, policy: dict[str, Any], agent: Any, at: str
) -> None:
    """The runtime claim says which process holds the WP; a new holder replaces it."""
    if to_lane in HELD:
        if not (to_lane == lanes.IN_PROGRESS and previous == lanes.CLAIMED):
            st.runtime_claim = None
        if policy:
            if "shell_pid" in policy:
                st.runtime_claim = dict(
                    st.runtime_claim or {}, agent=agent, shell_pid=policy.get("shell_pid"), at=at
                )
            lease = {k: policy[k] for k in LEASE_KEYS if k in policy}
            if lease:
                st.runtime_claim = dict(st.runtime_claim or {}, agent=agent, at=at, **lease)
    else:
        st.runtime_claim = None


def _review(st: WPState, ev: Transition, result: dict[str, Any]) -> None:
    """Record the review verdict a transition carries."""
    st.review_result = result
    verdict = str(result.get("verdict") or "")
    reviewer = result.get("reviewer")
    to_lane = ev.to_lane
    record = ReviewRecord(
        verdict=verdict,
        reviewer=reviewer if isinstance(reviewer, str) else ev.tool,
        at=ev.at,
        reference=result.get("reference"),
        feedback_path=result.get("feedback_path"),
        to_lane=to_lane,
        event_id=ev.event_id,
        note=st.last_reason,
    )
    if verdict == "changes_requested" and to_lane in (lanes.PLANNED, lanes.IN_PROGRESS):
        st.review_cycles += 1
        record.cycle = st.review_cycles
        st.review_status = HAS_FEEDBACK
    elif verdict == "approved":
        st.review_status = None
    st.reviews.append(record)


def _decisions(st: WPState, ev: Transition, policy: dict[str, Any]) -> None:
    """The self-review fallback, a lease takeover and an arbiter's decision in a policy."""
    at = ev.at
    if isinstance(policy.get("self_review_fallback"), dict):
        st.self_review = dict(policy["self_review_fallback"], at=at)
    if isinstance(policy.get("reclaim"), dict):
        st.reclaim = dict(policy["reclaim"], at=at)
    _arbiter(st, ev, policy.get("arbiter"))


def _arbiter(st: WPState, ev: Transition, arbiter: Any) -> None:
    # `cycles`: the rejections counted when it was decided (the cap restarts from there).
    at, to_lane = ev.at, ev.to_lane
    if isinstance(arbiter, dict):
        st.arbiter = dict(arbiter, at=at, to_lane=to_lane, cycles=st.review_cycles)
    elif (
        ev.force
        and to_lane in (lanes.APPROVED, lanes.BLOCKED, lanes.DONE)
        and ((st.last_reason or "").lower().startswith(("arbiter decision", "escalated")))
    ):
        st.arbiter = {
            "note": st.last_reason,
            "at": at,
            "to_lane": to_lane,
            "by": ev.tool,
            "cycles": st.review_cycles,
        }


_NESTED = (dict, list)  # a tuple: isinstance is faster with it than with a union


def apply_annotation(st: WPState, ev: Annotation) -> None:
    delta = ev.delta
    noted = st.noted_slots
    if delta.get("release_runtime_claim"):
        noted.update(dict.fromkeys(SK_RELEASED_SLOTS))
    for key in SK_NOTED_SLOTS:
        value = delta.get(key)
        if value is not None and value != "":
            if key == "shell_pid" and not isinstance(value, bool):
                with suppress(TypeError, ValueError, OverflowError):  # e.g. infinity
                    value = int(value)  # Spec Kitty reads it with int()
            noted[key] = value
    subtasks = delta.get("subtasks")
    if isinstance(subtasks, dict):
        for task, status in subtasks.items():
            st.subtasks[str(task)] = str(status)
    note = delta.get("note")
    if isinstance(note, str) and note:
        st.notes.append(note)
    run = delta.get("agent_run")
    if run is not None and isinstance(run, dict):
        add_run(st, run)
    if delta.get("release_runtime_claim") is True:
        st.runtime_claim = None
    if delta.get("review_status") == ACKNOWLEDGED and st.review_status == HAS_FEEDBACK:
        st.review_status = ACKNOWLEDGED
    scalars = st.scalars
    for key, value in delta.items():
        if key in _STRUCTURED_DELTA or isinstance(value, _NESTED):
            continue
        scalars[key] = value
        if key == "agent" and isinstance(value, str) and value:
            st.agent = value
    if st.lane in HELD:
        claim = {k: delta[k] for k in CLAIM_KEYS if k in delta}
        if claim:
            st.runtime_claim = dict(st.runtime_claim or {}, **claim, at=ev.at)
    if "heartbeat" in delta and st.runtime_claim is not None:
        st.runtime_claim["heartbeat"] = ev.at


#: The numbers an `agent_run` annotation's usage carries, summed per WP.
RUN_USAGE = (
    "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost_usd",
    "turns", "seconds",
)  # fmt: skip


def add_run(st: WPState, run: dict[str, Any]) -> None:
    """A sprint's record of one agent run: its usage summed into `st.usage`, with the
    runs, refused calls and errors counted."""
    total = dict(st.usage or {})
    usage = run.get("usage")
    for key in RUN_USAGE:
        value = usage.get(key) if isinstance(usage, dict) else None
        if isinstance(value, int | float) and not isinstance(value, bool):
            total[key] = round(total.get(key, 0) + value, 6)
    total["runs"] = total.get("runs", 0) + 1
    denials = run.get("denials")
    total["denials"] = total.get("denials", 0) + (len(denials) if isinstance(denials, list) else 0)
    total["errors"] = total.get("errors", 0) + (1 if run.get("error") else 0)
    total["tokens"] = total.get("input_tokens", 0) + total.get("output_tokens", 0)
    st.usage = total
