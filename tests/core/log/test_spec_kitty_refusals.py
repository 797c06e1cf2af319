"""`kitty doctor` names exactly the log lines Spec Kitty 3.2.7 would refuse (one bad line
makes it refuse the whole mission), checked against Spec Kitty's own reader (tests/oracle).

Every line of the table in tests/core/log/test_skcompat.py (one per reason kitty gives, and
the shapes it reads) is put to Spec Kitty's reader. Then Hypothesis writes single lines
of `status.events.jsonl`: a line Spec Kitty reads (transitions over all its lanes,
scalar and structured actors, evidence, review results, annotations with subtasks,
review overrides, shell_pid, tracker_refs) with one or two faults from a catalog: each
required key missing, lanes out of Spec Kitty's (`doing` among them), structured actors
with wrong keys or types, evidence and review_result shapes, annotations with bad ULIDs
and odd deltas, mission slugs that are not strings, the retrospective and `event_type`
markers of records it skips; and lines that are not objects. kitty's verdict
(`refusal`) must be "reads it" exactly when Spec Kitty reads the one-line log. Seeds are
fixed in CI (derandomize); 500 lines.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kitty.core.log.skcompat import SK_LANES, refusal
from tests import oracle
from tests.core.log.test_skcompat import READ, REFUSED

SETTINGS = settings(
    max_examples=500,
    database=None,
    deadline=None,
    derandomize=os.environ.get("CI") == "true",
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
ULID = "01KQ0000000000000000000001"
AT = "2026-03-01T12:00:00+00:00"
REVIEW_KEYS = ("reviewer", "verdict", "reference")
REPO_KEYS = ("repo", "branch", "commit")
CHECK_KEYS = ("command", "result", "summary")
OVERRIDE_KEYS = ("at", "actor", "wp_id", "reason")
ACTOR_KEYS = ("role", "profile", "tool", "model")
REQUIRED = ("event_id", "wp_id", "from_lane", "to_lane", "at", "actor", "force")
#: A fault's value that removes the key instead.
GONE = "<key left out>"
Fault = tuple[str, Any]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[oracle.Server]:
    serving = oracle.Server(tmp_path_factory.mktemp("oracle"))
    yield serving
    serving.close()


def verdicts(server: oracle.Server, line: Any) -> tuple[str | None, dict[str, Any]]:
    """kitty's reason (None: read) and Spec Kitty's answer for the one-line log."""
    text = json.dumps(line)
    return refusal(json.loads(text)), server.ask({"read": text})


def test_every_line_of_the_table_is_judged_as_spec_kitty_judges_it(
    server: oracle.Server,
) -> None:
    wrong = []
    for line in [*READ, *(line for line, _ in REFUSED)]:
        why, answer = verdicts(server, line)
        if (why is None) != ("read" in answer):
            wrong.append((line, why, answer))
    assert wrong == []


def shapes(keys: tuple[str, ...]) -> list[Any]:
    """An object with these keys, with each one left out, and values that are not one."""
    full = dict.fromkeys(keys, "x")
    left_out = ({k: v for k, v in full.items() if k != key} for key in keys)
    return [full, *left_out, {}, "x", [], 5, None, [full]]


def listed(keys: tuple[str, ...]) -> list[Any]:
    one = dict.fromkeys(keys, "x")
    return [[], [one], [one, one], *([s] for s in shapes(keys)[1:]), None, 5, True, {}, "", one]


def at(key: str, values: list[Any]) -> list[Fault]:
    return [(key, value) for value in values]


ODD_LANES = ["doing", "Planned", "", None, 5, ["done"], {"a": 1}]
ACTOR = {"role": "implementer", "profile": None, "tool": "claude", "model": None}
ODD_ACTORS = [
    {},
    {"role": "implementer", "tool": "claude"},
    {**ACTOR, "agent": "claude"},
    {**ACTOR, "model": 1},
    {**ACTOR, "role": ["x"]},
    {**ACTOR, "profile": {}},
]
REVIEW = dict.fromkeys(REVIEW_KEYS, "x")
ODD_EVIDENCE = [
    ["review"],
    "approved",
    5,
    True,
    {"reviewer": "codex"},
    *({"review": shape} for shape in shapes(REVIEW_KEYS)),
    *({"review": REVIEW, "repos": repos} for repos in listed(REPO_KEYS)),
    *({"review": REVIEW, "verification": checks} for checks in listed(CHECK_KEYS)),
]
SLUGS = ["001-oracle", "demo", "../x", "", None, 0, [], {}, 5, 1.5, True, ["001-oracle"], {"a": 1}]
KINDS = [None, "annotation", "Annotation", "dispatch", "", False, 0, GONE]
NON_LANE = [
    *at("event_name", ["retrospective.captured", "Retrospective.x", "x", 5]),
    *at("type", ["RetrospectiveCaptured", "RetrospectiveCaptureFailed", "RetrospectiveSkipped"]),
    *at("type", ["KittyDispatch", "retrospectiveskipped", ["RetrospectiveSkipped"], None]),
    *at("event_type", ["KittyDispatch", None]),
]
TRANSITION_FAULTS = [
    *at("from_lane", ODD_LANES),
    *at("to_lane", ODD_LANES),
    *at("actor", ODD_ACTORS),
    *at("evidence", ODD_EVIDENCE),
    *at("review_result", [*shapes(REVIEW_KEYS), ["x"]]),
    *at("mission_slug", SLUGS),
    *at("feature_slug", SLUGS),
    *at("mission_id", [ULID, "", None, 5, GONE]),
    *at("kind", KINDS),
    *((key, GONE) for key in (*REQUIRED, "execution_mode")),
    *NON_LANE,
]
ODD_PIDS = ["x", "", "4242x", [1], {}, float("inf"), float("-inf"), float("nan")]
ODD_REFS = [5, True, 1.5, 0, False]
ANNOTATION_FAULTS = [
    *at("event_id", [ULID.lower(), ULID[:-1], ULID + "0", ULID[:-1] + "U", ULID[:-1] + "I"]),
    *at("event_id", [ULID + "\n", "x" + ULID, 5, None, "", GONE]),
    *at("delta", [None, [], "x", 5, {}, GONE]),
    *at("delta.subtasks", [None, [], "", "x", {}, 5, *({"T001": lane} for lane in ODD_LANES)]),
    *at("delta.review", [None, *shapes(OVERRIDE_KEYS)]),
    *at("delta.shell_pid", ODD_PIDS),
    *at("delta.tracker_refs", ODD_REFS),
    *at("delta.tracker_refs_replace", [*ODD_REFS, None, ["GH-1"], {"a": 1}]),
    *at("actor", ODD_ACTORS),
    *at("kind", KINDS),
    *((key, GONE) for key in ("wp_id", "at", "actor")),
    *NON_LANE,
    *at("mission_slug", [5, ["x"]]),  # an annotation's slug is never looked up
]


def faulty(line: st.SearchStrategy[dict[str, Any]], faults: list[Fault]) -> Any:
    """A line Spec Kitty reads, with one or two faults (a key set to a value or left out;
    `delta.` sets one inside the delta), which may or may not make it refuse the line."""

    def apply(parts: tuple[dict[str, Any], list[Fault]]) -> dict[str, Any]:
        result, changes = parts
        result = {**result, "delta": dict(result["delta"])} if "delta" in result else result
        for key, value in changes:
            target = result
            if key.startswith("delta.") and isinstance(result.get("delta"), dict):
                target, key = result["delta"], key.removeprefix("delta.")
            if value == GONE:
                target.pop(key, None)
            else:
                target[key] = value
        return result

    return st.tuples(line, st.lists(st.sampled_from(faults), min_size=1, max_size=2)).map(apply)


LANES = st.sampled_from(sorted(SK_LANES))
ACTORS = st.one_of(  # what Spec Kitty reads: a scalar as a string, or a whole binding
    st.sampled_from(["claude", "", None, 5, ["claude"]]),
    st.fixed_dictionaries({k: st.sampled_from([None, "claude"]) for k in ACTOR_KEYS}),
)
TRANSITION = st.fixed_dictionaries(
    {
        "event_id": st.just(ULID),
        "wp_id": st.just("WP01"),
        "from_lane": LANES,
        "to_lane": LANES,
        "at": st.just(AT),
        "actor": ACTORS,
        "force": st.booleans(),
        "execution_mode": st.sampled_from(["worktree", "direct_repo"]),
    },
    optional={
        "mission_slug": st.sampled_from(["001-oracle", "../x", "", None, 0]),
        "mission_id": st.sampled_from([ULID, "", None]),
        "evidence": st.sampled_from(
            [None, {}, [], "", 0, {"review": REVIEW}, {"review": REVIEW, "repos": {}}]
        ),
        "review_result": st.sampled_from([None, {}, REVIEW]),
        "kitty_after": st.just(ULID),
    },
)
ANNOTATION = st.fixed_dictionaries(
    {
        "event_id": st.just(ULID),
        "kind": st.just("annotation"),
        "wp_id": st.sampled_from(["WP01", None, 5]),  # Spec Kitty reads any as a string
        "at": st.sampled_from([AT, None]),
        "actor": ACTORS,
        "delta": st.fixed_dictionaries(
            {},
            optional={
                "subtasks": st.dictionaries(st.sampled_from(["T001", "T002"]), LANES),
                "review": st.just(dict.fromkeys(OVERRIDE_KEYS, "x")),
                "shell_pid": st.sampled_from([4242, "4242", " 7 ", "1_000", 42.5, True, None]),
                "tracker_refs": st.sampled_from([None, [], ["GH-1"], "GH-1", "", {}]),
                "agent": st.sampled_from(["claude", "", None, 5]),
                "release_runtime_claim": st.sampled_from([True, False, None, "x"]),
            },
        ),
    },
)
LINES = st.one_of(
    faulty(TRANSITION, TRANSITION_FAULTS),
    faulty(ANNOTATION, ANNOTATION_FAULTS),
    faulty(TRANSITION, TRANSITION_FAULTS),
    faulty(ANNOTATION, ANNOTATION_FAULTS),
    st.lists(st.sampled_from(NON_LANE), min_size=1).map(dict),  # skipped, or unreadable
    st.sampled_from([None, 5, "x", [], [{"event_id": ULID}], True]),
)


@SETTINGS
@given(line=LINES)
def test_doctor_names_exactly_the_lines_spec_kitty_refuses(
    server: oracle.Server, line: Any
) -> None:
    why, answer = verdicts(server, line)
    assert (why is None) == ("read" in answer), (line, why, answer)
    if why == "expected JSON object":
        assert answer == {"error": "Invalid event structure on line 1: expected JSON object"}
    elif why is not None and why.startswith("unknown event kind"):
        assert answer == {"error": f"Unknown event kind {line['kind']!r} on line 1"}
    elif why is not None and "error" in answer:
        assert answer["error"].startswith("Invalid event structure on line 1: "), answer
    elif why is not None:  # Spec Kitty fails without naming the line (e.g. a delta list)
        assert "crash" in answer, answer
