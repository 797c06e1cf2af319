"""Holder checks in replay (issue 27.6): only who holds a WP moves it out of a held lane.

A WP in `claimed` / `in_progress` is held by its implementer, in `in_review` by its
reviewer (`WPState.agent` / `WPState.reviewer`). After clones merge, a kitty-written
transition out of such a lane by another agent is not applied, even when its
`from_lane` matches: it is a `not_holder` conflict, reported by `kitty doctor`, `kitty
next` and the board like every conflict. That covers an old holder's offline move
after a lease reclaim: the reclaim made the new agent the holder, so the old holder's
later move (dated after the reclaim) no longer undoes it.

Rules, exactly:
* only transitions kitty wrote are checked (`Transition.linked`: the line carries
  `kitty_after`); history (Spec Kitty's lines) is folded as Spec Kitty folds it;
* a move whose `kitty_after` names a transition applied since the holder took the WP
  (`WPState.since_hold`) is applied: its writer saw the holder, and `kitty move` lets
  anyone move a held WP on one clone (this check is about merges, not permissions);
* a forced move is never refused here (`--force --note` is the explicit takeover, and
  a lease reclaim's release is forced);
* nothing is checked when the lane is not held, when nobody holds the WP, or when the
  event names no agent (`policy_metadata.agent`, else the actor's tool).
Pure: no imports from the replay module, so it can be merged into any replay.
"""

from __future__ import annotations

from typing import Any

#: The conflict kind of a move by someone who does not hold the WP.
NOT_HOLDER = "not_holder"
#: Held lanes -> which field of the WP's state names the holder.
HELD_BY = {"claimed": "agent", "in_progress": "agent", "in_review": "reviewer"}


def holder_conflict(st: Any, lane: str, ev: Any, agent: str | None) -> str | None:
    """Why replay must not apply `ev` (a kitty-written transition by `agent` of a WP in
    `lane`, state `st`), or None when the holder rule lets it through."""
    if not getattr(ev, "linked", False) or ev.force or not agent:
        return None
    field = HELD_BY.get(lane)
    holder = getattr(st, field) if field else None
    if not holder or holder == agent:
        return None
    if getattr(ev, "after", None) in getattr(st, "since_hold", ()):
        return None  # its writer saw the holder: a takeover kitty allowed at write time
    message = (
        f"{ev.wp_id} {ev.from_lane} -> {ev.to_lane} by {agent} was not applied: "
        f"{holder} holds {ev.wp_id} ({lane})"
    )
    reclaim = getattr(st, "reclaim", None)
    if isinstance(reclaim, dict) and reclaim.get("previous_holder") == agent:
        message += (
            f"; {reclaim.get('by') or holder} reclaimed it when {agent}'s lease expired"
            f" at {reclaim.get('lease_expired_at')}, and this move would undo that"
        )
    return message
