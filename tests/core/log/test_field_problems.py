"""`kitty doctor`'s strict view of one log record: every wrongly typed key, named."""

from __future__ import annotations

from kitty.core.log.events import field_problems

GOOD = {
    "event_id": "A",
    "wp_id": "WP01",
    "from_lane": "planned",
    "to_lane": "claimed",
    "at": "2026-01-01T00:00:00+00:00",
    "actor": "claude",
    "force": False,
    "reason": None,
    "policy_metadata": None,
}


def test_a_well_typed_transition_has_no_problem() -> None:
    assert field_problems(GOOD) == []
    assert field_problems(dict(GOOD, from_lane="genesis", force=True, actor={"tool": "c"})) == []
    assert field_problems(dict(GOOD, from_lane="doing", evidence={"a": 1}, reason="r")) == []


def test_every_wrong_type_is_named_in_order() -> None:
    bad = {
        "event_id": 3,
        "wp_id": "wp1",
        "from_lane": "nowhere",
        "to_lane": 5,
        "at": "2026-01-01T00:00:00",
        "actor": [1],
        "force": "yes",
        "reason": 7,
        "review_ref": ["x"],
        "mission_id": {"a": 1},
        "mission_slug": 1.5,
        "execution_mode": True,
        "policy_metadata": "x",
        "review_result": [1],
        "evidence": 0,
    }
    assert field_problems(bad) == [
        "event_id must be a string, not a number",
        "wp_id must be a string like 'WP01', not 'wp1'",
        "at '2026-01-01T00:00:00' has no time zone (write it as …+00:00)",
        "actor must be a string or an object, not a list",
        "to_lane must be a string, not a number",
        "unknown from_lane 'nowhere'",
        "force must be true or false, not 'yes'",
        "reason must be a string or null, not a number",
        "review_ref must be a string or null, not a list",
        "mission_id must be a string or null, not an object",
        "mission_slug must be a string or null, not a number",
        "execution_mode must be a string or null, not a boolean",
        "policy_metadata must be an object or null, not a string",
        "review_result must be an object or null, not a list",
        "evidence must be an object or null, not a number",
    ]


def test_annotations_check_only_their_own_keys_and_other_records_are_free() -> None:
    note = {"kind": "annotation", "event_id": "A", "wp_id": "WP01", "at": 5, "actor": True}
    note.update({"force": "x", "from_lane": 1})  # transition keys: not an annotation's business
    assert field_problems(note) == [
        "at must be a string, not a number",
        "actor must be a string or an object, not a boolean",
    ]
    assert field_problems({"event_type": "X", "at": 3}) == []
    assert field_problems({"type": "X", "at": 3}) == []
    assert field_problems({"kind": "merge-note", "at": 3}) == []
    assert field_problems({"at": "garbage"}) == []  # the parser reports bad timestamps itself
    assert field_problems({"event_id": None, "wp_id": None}) == [
        "event_id must be a string, not null",
        "wp_id must be a string like 'WP01', not None",
    ]
    assert field_problems({"wp_id": "WP1x"}) == ["wp_id must be a string like 'WP01', not 'WP1x'"]
    assert field_problems({"wp_id": "WP07"}) == []
