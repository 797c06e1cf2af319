"""The merge queue's rules, on data: which lanes to merge into the integration tree, in
what order, what a gate's outcome means, who the culprit is, and what is recorded.

The target branch only ever moves to a tree whose gate passed (bors' "not rocket
science rule"). The queue first merges every approved lane, in dependency order, onto
the target's tip and runs the gate once (`batch`). When that fails, it starts again
from the target's tip one lane at a time (`try`), the gate after each: a lane whose
merge conflicts or fails the gate is a culprit (sent back to fix mode, naming the WPs
it was merged with) and is left out; the lanes that depend on a culprit wait (`hold`);
the rest go on. Then the target moves to the last tree that passed (`move`) and the
log records it all (`record`).

The state is plain JSON (kitty.workflow.gating.queue writes it, fsynced, before each
step); each step starts from a commit the state names, so a step cut short by a kill
is simply done again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

BATCH, TRY, HOLD, MOVE, RECORD = "batch", "try", "hold", "move", "record"
INTEGRATE = "integrate"  # the phase before MOVE and RECORD


def lanes_in_order(
    steps: Sequence[Mapping[str, Any]],
    done: Sequence[str],
    dependencies: Mapping[str, Sequence[str]],
) -> list[dict[str, Any]]:
    """The lanes to merge (merging.plan's lane steps, in its dependency order), without
    the lanes whose every WP is done already (nothing is merged twice); each with the
    WPs of other lanes its WPs depend on (`needs`)."""
    found = []
    for step in steps:
        if step.get("kind") != "lane":
            continue
        wps = [w for w in step["wp_ids"] if w not in done]
        if not wps:
            continue
        needs = sorted({d for w in wps for d in dependencies.get(w, ()) if d not in step["wp_ids"]})
        found.append(
            {"lane_id": step["lane_id"], "branch": step["branch"], "wp_ids": wps, "needs": needs}
        )
    return found


def start(
    lanes: Sequence[Mapping[str, Any]], base: str, target: str, **extra: Any
) -> dict[str, Any]:
    """A new queue: `base` is the target's tip the integration tree starts from."""
    return {
        "phase": INTEGRATE,
        "mode": BATCH,
        "lanes": [dict(lane) for lane in lanes],
        "base": base,
        "head": base,
        "target": target,
        "index": 0,
        "kept": [],
        "culprits": [],
        "held": [],
        "batch_failure": None,
        "final": None,
        "recorded": [],
        **extra,
    }


def _lane(state: Mapping[str, Any], lane_id: str) -> dict[str, Any]:
    return next(dict(lane) for lane in state["lanes"] if lane["lane_id"] == lane_id)


def _wps(state: Mapping[str, Any], lane_ids: Sequence[str]) -> list[str]:
    return [w for lane_id in lane_ids for w in _lane(state, lane_id)["wp_ids"]]


def left_out(state: Mapping[str, Any]) -> list[str]:
    """The WPs of the culprit and held lanes: not on the tested tree."""
    return [w for entry in (*state["culprits"], *state["held"]) for w in entry["wp_ids"]]


def next_action(state: Mapping[str, Any]) -> tuple[str, dict[str, Any] | None]:
    """(what to do next, the lane it is about): BATCH, TRY a lane, HOLD a lane, MOVE the
    target to `head`, or RECORD the outcome (the last step)."""
    if state["phase"] == MOVE:
        return MOVE, None
    if state["phase"] == RECORD:
        return RECORD, None
    if state["mode"] == BATCH:
        return (BATCH, None) if state["lanes"] else (RECORD, None)
    if state["index"] >= len(state["lanes"]):
        return (MOVE, None) if state["head"] != state["base"] else (RECORD, None)
    lane = state["lanes"][state["index"]]
    if set(lane["needs"]) & set(left_out(state)):
        return HOLD, dict(lane)
    return TRY, dict(lane)


def known_to_fail(state: Mapping[str, Any]) -> dict[str, Any] | None:
    """A TRY whose tree is the failed batch's: the last lane, every lane before it kept
    (the same merges, so the same tree). Its failure, known without running the gate."""
    failure = state.get("batch_failure")
    last = state["index"] == len(state["lanes"]) - 1
    if failure is None or not last or failure.get("why") != "gate":
        return None
    if len(state["kept"]) != len(state["lanes"]) - 1:
        return None
    return dict(failure)


def after_batch(
    state: Mapping[str, Any], head: str | None, failure: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The batch passed (`head`: its tested commit) or failed (`failure`: why, and the
    gate run or the conflicting files)."""
    new = dict(state)
    if failure is None:
        assert head is not None
        new.update(head=head, kept=[lane["lane_id"] for lane in state["lanes"]], phase=MOVE)
        return new
    new.update(mode=TRY, index=0, head=state["base"], batch_failure=dict(failure))
    return new


def after_try(
    state: Mapping[str, Any], head: str | None, failure: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The lane at `index` passed on top of the kept lanes (`head`: the tested commit) or
    is a culprit (`failure`), merged together with the kept lanes' WPs."""
    lane = state["lanes"][state["index"]]
    new = dict(state)
    new["index"] = state["index"] + 1
    if failure is None:
        assert head is not None
        new.update(head=head, kept=[*state["kept"], lane["lane_id"]])
        return new
    culprit = {
        "lane_id": lane["lane_id"],
        "wp_ids": list(lane["wp_ids"]),
        "with": _wps(state, state["kept"]),
        **dict(failure),
    }
    new["culprits"] = [*state["culprits"], culprit]
    return new


def after_hold(state: Mapping[str, Any]) -> dict[str, Any]:
    """The lane at `index` waits: it needs a WP that is left out."""
    lane = state["lanes"][state["index"]]
    waits = sorted(set(lane["needs"]) & set(left_out(state)))
    new = dict(state)
    new["index"] = state["index"] + 1
    new["held"] = [
        *state["held"],
        {"lane_id": lane["lane_id"], "wp_ids": list(lane["wp_ids"]), "waits_for": waits},
    ]
    return new


def after_move(state: Mapping[str, Any], final: str) -> dict[str, Any]:
    new = dict(state)
    new.update(phase=RECORD, final=final)
    return new


def before_move(state: Mapping[str, Any]) -> dict[str, Any]:
    new = dict(state)
    new["phase"] = MOVE
    return new


def merged_wps(state: Mapping[str, Any]) -> list[str]:
    """The WPs on the tree the target moved to."""
    return _wps(state, state["kept"]) if state.get("final") or state["phase"] == MOVE else []


def fix_note(culprit: Mapping[str, Any], target: str) -> str:
    """The note of the move that sends a culprit's WPs back to fix mode."""
    wps = ", ".join(culprit["wp_ids"])
    others = ", ".join(culprit["with"])
    together = f"merged together with {others}" if others else f"merged onto {target}"
    if culprit["why"] == "conflict":
        what = f"conflicts on {', '.join(culprit.get('files') or [])} when {together}"
    else:
        what = f"fails the test gate when {together}"
    return (
        f"merge queue: {wps} ({culprit['lane_id']}) {what}; back to fix mode, {target} "
        "never received it"
        + (f"; output: {culprit['run']['output']}" if culprit.get("run") else "")
    )


def hold_note(held: Mapping[str, Any]) -> str:
    return (
        f"merge queue: {', '.join(held['wp_ids'])} ({held['lane_id']}) waits: it needs "
        f"{', '.join(held['waits_for'])}, sent back to fix mode; it stays approved and "
        "merges once they pass"
    )


def outcome(state: Mapping[str, Any]) -> dict[str, Any]:
    """What `kitty merge` answers about the queue (besides the commit and the target)."""
    return {
        "verified": True,
        "merged_wps": merged_wps(state) if state.get("final") else [],
        "sent_back": [
            {k: c[k] for k in ("lane_id", "wp_ids", "with", "why") if k in c}
            for c in state["culprits"]
        ],
        "held": [dict(h) for h in state["held"]],
        "mode": state["mode"],
    }
