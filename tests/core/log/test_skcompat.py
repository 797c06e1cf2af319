"""What `kitty doctor` says about a log line Spec Kitty 3.2.7's reader would refuse:
`refusal` gives the reason it prints after "Spec Kitty 3.2.7 refuses the whole log at
this line (...)", or None for a line Spec Kitty reads. Each row is one shape of line and
the exact words the user sees (tests/core/log/test_spec_kitty_refusals.py checks the verdicts
against Spec Kitty's own reader)."""

from __future__ import annotations

from typing import Any

import pytest

from kitty.core.log.skcompat import SK_LANES, refusal

ULID = "01KQ0000000000000000000001"
TRANSITION: dict[str, Any] = {
    "event_id": ULID,
    "wp_id": "WP01",
    "from_lane": "planned",
    "to_lane": "claimed",
    "at": "2026-03-01T12:00:00+00:00",
    "actor": "claude",
    "force": False,
    "execution_mode": "worktree",
    "mission_slug": "001-demo",
    "reason": None,
    "review_ref": None,
    "evidence": None,
    "policy_metadata": None,
}
ANNOTATION: dict[str, Any] = {
    "event_id": ULID,
    "kind": "annotation",
    "wp_id": "WP01",
    "at": "2026-03-01T12:00:00+00:00",
    "actor": "claude",
    "delta": {"agent": "claude"},
}
ACTOR = {"role": "implementer", "profile": None, "tool": "claude", "model": None}
REVIEW = {"reviewer": "codex", "verdict": "approved", "reference": "r"}
REPO = {"repo": "kitty", "branch": "main", "commit": "abc1234"}
CHECK = {"command": "make test", "result": "pass", "summary": "ok"}
OVERRIDE = {"at": "2026-03-01T12:00:00+00:00", "actor": "lead", "wp_id": "WP01", "reason": "r"}


def move(**changes: Any) -> dict[str, Any]:
    return {**TRANSITION, **changes}


def note(**changes: Any) -> dict[str, Any]:
    return {**ANNOTATION, **changes}


def delta(**fields: Any) -> dict[str, Any]:
    return note(delta=fields)


def without(record: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != key}


def done(**evidence: Any) -> dict[str, Any]:
    return move(from_lane="approved", to_lane="done", evidence=evidence)


NOT_A_LANE = "is not one of Spec Kitty's lanes"
READ: list[Any] = [
    TRANSITION,
    move(kind=None),  # a null kind is no kind: a transition
    *(move(from_lane=lane, to_lane=lane) for lane in sorted(SK_LANES)),
    move(actor=ACTOR),
    move(actor={"role": None, "profile": None, "tool": None, "model": None}),
    move(actor=None),  # Spec Kitty reads any scalar actor as a string
    move(actor=5),
    move(actor=["claude"]),
    move(evidence={}),  # an empty evidence is none
    move(evidence=[]),
    move(evidence=""),
    move(evidence=0),
    done(review=REVIEW),
    done(review=REVIEW, repos=[REPO], verification=[CHECK]),
    done(review=REVIEW, repos=[], verification=[]),
    done(review=REVIEW, repos={}, verification=""),  # Spec Kitty iterates them: nothing
    move(mission_slug=5, mission_id=ULID),  # the id is read, the slug never looked up
    move(mission_slug=0, feature_slug=[]),  # no slug to look up
    move(mission_slug="001-demo", feature_slug=5),
    move(review_result=None),
    move(review_result={}),
    move(review_result=REVIEW),
    move(kitty_after=ULID, kitty_extra={"any": "thing"}),  # unknown keys are ignored
    {"event_name": "retrospective.captured", "at": "x"},  # skipped in place
    {"type": "RetrospectiveCaptured"},
    {"type": "RetrospectiveCaptureFailed"},
    {"type": "RetrospectiveSkipped"},
    {"event_type": "KittyDispatch", "payload": {}},
    {"event_type": None},
    ANNOTATION,
    note(delta={}),
    note(actor=ACTOR),
    note(actor=None),
    note(event_type="x"),  # still an annotation, and a good one
    delta(subtasks={"T001": "done", "T002": "planned"}),
    delta(subtasks={}),
    delta(subtasks=None),
    delta(review=OVERRIDE),
    delta(review=None),
    delta(shell_pid=4242),
    delta(shell_pid="4242"),
    delta(shell_pid=42.5),  # Spec Kitty truncates it
    delta(shell_pid=True),
    delta(shell_pid=None),
    delta(tracker_refs=["GH-1"], tracker_refs_replace=[]),
    delta(tracker_refs="GH-1", tracker_refs_replace={}),
    delta(tracker_refs=None, tracker_refs_replace=None),
]


@pytest.mark.parametrize("line", READ)
def test_spec_kitty_reads_these_lines_and_doctor_says_nothing(line: Any) -> None:
    assert refusal(line) is None


REFUSED: list[tuple[Any, str]] = [
    ([TRANSITION], "expected JSON object"),
    ("planned", "expected JSON object"),
    (None, "expected JSON object"),
    (5, "expected JSON object"),
    (move(kind="dispatch"), "unknown event kind 'dispatch'"),
    (move(kind=False), "unknown event kind False"),
    (note(kind="Annotation"), "unknown event kind 'Annotation'"),
    (move(kind="dispatch", event_type="KittyDispatch"), "unknown event kind 'dispatch'"),
    (note(event_type="KittyDispatch", delta=[]), "annotation delta is not an object"),
    (note(event_name="retrospective.x", event_id="x"), "annotation event_id 'x' is not a ULID"),
    *(
        (without(TRANSITION, key), f"missing {key!r}")
        for key in ("event_id", "wp_id", "from_lane", "to_lane", "at", "actor", "force")
    ),
    (without(TRANSITION, "execution_mode"), "missing 'execution_mode'"),
    (without(move(kind=None), "event_id"), "missing 'event_id'"),
    ({"event_name": "Retrospective.captured"}, "missing 'event_id'"),
    ({"event_name": 5}, "missing 'event_id'"),
    ({"type": "KittyDispatch"}, "missing 'event_id'"),
    ({"type": ["RetrospectiveSkipped"]}, "missing 'event_id'"),
    (move(from_lane="doing"), f"from_lane 'doing' {NOT_A_LANE}"),
    (move(to_lane="doing"), f"to_lane 'doing' {NOT_A_LANE}"),
    (move(to_lane="Planned"), f"to_lane 'Planned' {NOT_A_LANE}"),
    (move(from_lane=None), f"from_lane None {NOT_A_LANE}"),
    (move(to_lane=["done"]), f"to_lane ['done'] {NOT_A_LANE}"),
    (move(from_lane="doing", to_lane="doing"), f"from_lane 'doing' {NOT_A_LANE}"),
    (
        move(actor={"role": "implementer", "tool": "claude"}),
        "a structured actor must have exactly the keys model, profile, role, tool",
    ),
    (
        move(actor={**ACTOR, "agent": "claude"}),
        "a structured actor must have exactly the keys model, profile, role, tool",
    ),
    (move(actor={**ACTOR, "model": 4}), "a structured actor's fields must be strings or null"),
    (move(actor={**ACTOR, "role": ["x"]}), "a structured actor's fields must be strings or null"),
    (move(evidence=["review"]), "evidence is not an object"),
    (move(evidence="approved"), "evidence is not an object"),
    (move(evidence={"reviewer": "codex"}), "evidence is missing 'review'"),
    (done(review="approved"), "evidence.review is not an object"),
    (done(review={}), "evidence.review is missing 'reviewer'"),
    (done(review=without(REVIEW, "verdict")), "evidence.review is missing 'verdict'"),
    (done(review=without(REVIEW, "reference")), "evidence.review is missing 'reference'"),
    (done(review=REVIEW, repos=None), "evidence.repos is not a list"),
    (done(review=REVIEW, repos=3), "evidence.repos is not a list"),
    (done(review=REVIEW, verification=True), "evidence.verification is not a list"),
    (done(review=REVIEW, repos=["kitty"]), "evidence.repos[] is not an object"),
    (done(review=REVIEW, repos=REPO), "evidence.repos is not a list"),
    (done(review=REVIEW, verification="pass"), "evidence.verification is not a list"),
    (
        done(review=REVIEW, repos={}, verification=[without(CHECK, "summary")]),
        "evidence.verification[] is missing 'summary'",
    ),  # an empty repos object passes, the checks after it are still read
    (move(mission_slug=5), "mission_slug 5 is not a string"),
    (move(mission_slug=["001-demo"], mission_id=""), "mission_slug ['001-demo'] is not a string"),
    (move(mission_slug=True, mission_id=None), "mission_slug True is not a string"),
    (move(mission_slug="", feature_slug={"a": 1}), "feature_slug {'a': 1} is not a string"),
    (without(move(feature_slug=1.5), "mission_slug"), "feature_slug 1.5 is not a string"),
    (done(review=REVIEW, repos=[without(REPO, "repo")]), "evidence.repos[] is missing 'repo'"),
    (
        done(review=REVIEW, repos=[REPO, without(REPO, "branch")]),
        "evidence.repos[] is missing 'branch'",
    ),
    (done(review=REVIEW, repos=[without(REPO, "commit")]), "evidence.repos[] is missing 'commit'"),
    (
        done(review=REVIEW, repos=[REPO], verification=[without(CHECK, "command")]),
        "evidence.verification[] is missing 'command'",
    ),
    (
        done(review=REVIEW, verification=[without(CHECK, "result")]),
        "evidence.verification[] is missing 'result'",
    ),
    (
        done(review=REVIEW, verification=[CHECK, without(CHECK, "summary")]),
        "evidence.verification[] is missing 'summary'",
    ),
    (
        done(review=REVIEW, verification=[CHECK, None]),
        "evidence.verification[] is not an object",
    ),
    (move(review_result="approved"), "review_result is not an object"),
    (move(review_result={"verdict": "approved"}), "review_result is missing 'reviewer'"),
    (move(review_result=without(REVIEW, "verdict")), "review_result is missing 'verdict'"),
    (move(review_result=without(REVIEW, "reference")), "review_result is missing 'reference'"),
    (
        done(review=REVIEW, repos=[REPO], verification=[CHECK]) | {"review_result": ["x"]},
        "review_result is not an object",
    ),
    (without(ANNOTATION, "event_id"), "missing 'event_id'"),
    (note(event_id=ULID.lower()), f"annotation event_id {ULID.lower()!r} is not a ULID"),
    (note(event_id=5), "annotation event_id 5 is not a ULID"),
    (note(event_id=None), "annotation event_id None is not a ULID"),
    (note(event_id=ULID[:-1]), f"annotation event_id {ULID[:-1]!r} is not a ULID"),
    (note(event_id=ULID[:-1] + "U"), f"annotation event_id {ULID[:-1] + 'U'!r} is not a ULID"),
    (note(event_id="x" + ULID), f"annotation event_id {'x' + ULID!r} is not a ULID"),
    (without(ANNOTATION, "delta"), "missing 'delta'"),
    (without(ANNOTATION, "wp_id"), "missing 'wp_id'"),
    (without(ANNOTATION, "at"), "missing 'at'"),
    (without(ANNOTATION, "actor"), "missing 'actor'"),
    (note(delta=["agent"]), "annotation delta is not an object"),
    (note(delta=None), "annotation delta is not an object"),
    (delta(subtasks=["T001"]), "delta.subtasks is not an object"),
    (
        delta(subtasks={"T001": "done", "T002": "doing"}),
        "delta.subtasks T002: 'doing' is not one of Spec Kitty's statuses",
    ),
    (
        delta(subtasks={"T001": ["done"]}),
        "delta.subtasks T001: ['done'] is not one of Spec Kitty's statuses",
    ),
    (delta(review="approved"), "delta.review is not an object"),
    (delta(review=without(OVERRIDE, "at")), "delta.review is missing 'at'"),
    (delta(review=without(OVERRIDE, "actor")), "delta.review is missing 'actor'"),
    (delta(review=without(OVERRIDE, "wp_id")), "delta.review is missing 'wp_id'"),
    (delta(review=without(OVERRIDE, "reason")), "delta.review is missing 'reason'"),
    (delta(shell_pid="pid-4242"), "delta.shell_pid 'pid-4242' is not a number"),
    (delta(shell_pid=[4242]), "delta.shell_pid [4242] is not a number"),
    (delta(shell_pid=float("inf")), "delta.shell_pid inf is not a number"),
    (delta(shell_pid=float("-inf")), "delta.shell_pid -inf is not a number"),
    (delta(shell_pid=float("nan")), "delta.shell_pid nan is not a number"),
    (delta(tracker_refs=5), "delta.tracker_refs is not a list"),
    (delta(tracker_refs_replace=True), "delta.tracker_refs_replace is not a list"),
    (delta(tracker_refs=[], tracker_refs_replace=1.5), "delta.tracker_refs_replace is not a list"),
    (
        note(actor={"tool": "claude"}),
        "a structured actor must have exactly the keys model, profile, role, tool",
    ),
    (note(actor={**ACTOR, "tool": 1}), "a structured actor's fields must be strings or null"),
]


@pytest.mark.parametrize(("line", "why"), REFUSED)
def test_doctor_names_why_spec_kitty_refuses_the_line(line: Any, why: str) -> None:
    assert refusal(line) == why


def test_the_first_problem_of_a_line_is_the_one_named() -> None:
    """One reason per line, in the order Spec Kitty's reader meets them."""
    worst = move(from_lane="doing", actor={"x": 1}, evidence=[1], review_result="x")
    assert refusal(worst) == f"from_lane 'doing' {NOT_A_LANE}"
    assert refusal(without(worst, "from_lane")) == "missing 'from_lane'"
    assert refusal({**worst, "from_lane": "planned"}) == (
        "a structured actor must have exactly the keys model, profile, role, tool"
    )
    bad_note = note(event_id="x", delta=[], actor={"x": 1})
    assert refusal(bad_note) == "annotation event_id 'x' is not a ULID"
    assert refusal(note(delta=[], actor={"x": 1})) == "annotation delta is not an object"
    assert refusal(without(note(delta=[]), "at")) == "missing 'at'"
    assert refusal(delta(subtasks=[], review="x", shell_pid="x", tracker_refs=1)) == (
        "delta.subtasks is not an object"
    )
    assert refusal(delta(review="x", shell_pid="x", tracker_refs=1)) == (
        "delta.review is not an object"
    )
    assert refusal(delta(shell_pid="x", tracker_refs=1)) == "delta.shell_pid 'x' is not a number"
    assert refusal(delta(tracker_refs=1, tracker_refs_replace=1)) == (
        "delta.tracker_refs is not a list"
    )
    assert refusal(delta(tracker_refs=1) | {"actor": {"x": 1}}) == (
        "delta.tracker_refs is not a list"
    )
