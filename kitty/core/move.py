"""A move as data: what is asked (`MoveRequest`), under which policy (`Policy`, with
the mission's issue matrix rows), and what `transitions.check_move` found (`MoveCheck`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kitty.core.record import Record


class MoveRequest(Record, frozen=True):
    __slots__ = (
        "actor",
        "force",
        "has_feedback",
        "intended_reviewer",
        "merged",
        "note",
        "reviewer_failure_reason",
        "self_review_fallback",
        "to_lane",
    )
    to_lane: str
    actor: str | None
    force: bool
    note: str | None
    has_feedback: bool
    merged: bool
    intended_reviewer: str | None
    reviewer_failure_reason: str | None
    self_review_fallback: bool

    def __init__(
        self,
        to_lane: str,
        actor: str | None,
        force: bool = False,
        note: str | None = None,
        has_feedback: bool = False,
        merged: bool = False,
        intended_reviewer: str | None = None,
        reviewer_failure_reason: str | None = None,
        self_review_fallback: bool = False,
    ) -> None:
        object.__setattr__(self, "to_lane", to_lane)
        object.__setattr__(self, "actor", actor)
        object.__setattr__(self, "force", force)
        object.__setattr__(self, "note", note)
        object.__setattr__(self, "has_feedback", has_feedback)
        object.__setattr__(self, "merged", merged)
        object.__setattr__(self, "intended_reviewer", intended_reviewer)
        object.__setattr__(self, "reviewer_failure_reason", reviewer_failure_reason)
        object.__setattr__(self, "self_review_fallback", self_review_fallback)


class IssueRow(Record, frozen=True):
    __slots__ = ("issue", "source", "verdict", "wps")
    issue: str
    verdict: str
    wps: tuple[str, ...]  # empty: the row concerns the whole mission
    source: str  # the file it came from (or the legacy issue-matrix.md)

    def __init__(
        self, issue: str, verdict: str, wps: tuple[str, ...] = (), source: str = "issue-matrix.json"
    ) -> None:
        object.__setattr__(self, "issue", issue)
        object.__setattr__(self, "verdict", verdict)
        object.__setattr__(self, "wps", wps)
        object.__setattr__(self, "source", source)


class Policy(Record, frozen=True):
    __slots__ = ("issue_rows", "max_cycles")
    max_cycles: int
    issue_rows: Sequence[IssueRow]

    def __init__(self, max_cycles: int = 3, issue_rows: Sequence[IssueRow] = ()) -> None:
        object.__setattr__(self, "max_cycles", max_cycles)
        object.__setattr__(self, "issue_rows", issue_rows)


#: The policy when none is given: three review cycles, no issue matrix.
DEFAULT_POLICY = Policy()


class MoveCheck(Record, frozen=True):
    __slots__ = ("arbiter", "from_lane", "release", "self_review", "to_lane", "verdict")
    from_lane: str
    to_lane: str
    verdict: str | None
    arbiter: dict[str, Any] | None
    self_review: dict[str, Any] | None
    #: claimed -> planned by the claim's holder: recorded as a forced edge, since Spec
    #: Kitty's table has no such edge (`kitty move WP planned` undoes a claim).
    release: bool

    def __init__(
        self,
        from_lane: str,
        to_lane: str,
        verdict: str | None = None,
        arbiter: dict[str, Any] | None = None,
        self_review: dict[str, Any] | None = None,
        release: bool = False,
    ) -> None:
        object.__setattr__(self, "from_lane", from_lane)
        object.__setattr__(self, "to_lane", to_lane)
        object.__setattr__(self, "verdict", verdict)
        object.__setattr__(self, "arbiter", arbiter)
        object.__setattr__(self, "self_review", self_review)
        object.__setattr__(self, "release", release)
