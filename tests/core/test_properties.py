"""Property-based tests (hypothesis) for the parsers and replay (issue 10).

* the event parser never raises on any text or any JSON value: bad lines are warnings;
* the WP front-matter reader raises only SpecError, whatever the text;
* every WP file `kitty wp add` renders reads back with the same title, for any unicode title;
* replay is deterministic: any order of the same events gives the same board, since
  it folds in (at, event_id) order.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kitty.core import lanes
from kitty.core.clock import format_at, parse_at
from kitty.core.log.events import Annotation, LogWarning, Transition, parse_record
from kitty.core.log.read import parse_lines
from kitty.core.log.state import replay
from kitty.core.wpfile import parse_wp
from kitty.errors import SpecError
from kitty.workflow.planning.add import _render_wp

PROPERTY = settings(
    database=None,
    deadline=None,
    max_examples=150,
    suppress_health_check=[HealthCheck.too_slow],
)

json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
EVENT_KEYS = (
    "event_id",
    "wp_id",
    "from_lane",
    "to_lane",
    "at",
    "actor",
    "force",
    "kind",
    "delta",
    "event_type",
    "type",
    "review_result",
    "policy_metadata",
    "reason",
)
plausible_values = st.one_of(
    json_values,
    st.sampled_from([*lanes.LANES, "genesis", "doing", "annotation", "WP01", "WP1", ""]),
    st.sampled_from(
        ["2026-01-01T00:00:00+00:00", "9999-12-31T23:59:59.999999+00:00", "2026-01-01", "x"]
    ),
)
event_like = st.dictionaries(st.sampled_from(EVENT_KEYS), plausible_values, max_size=10)


@PROPERTY
@given(st.lists(st.text(max_size=60), max_size=8), st.booleans())
def test_parser_never_raises_on_any_text(lines: list[str], unterminated: bool) -> None:
    parsed = parse_lines(lines, unterminated=unterminated)
    assert len(parsed.events) + len(parsed.warnings) <= len(lines)


@PROPERTY
@given(st.lists(json_values | event_like, max_size=8))
def test_parser_never_raises_on_any_json(values: list[Any]) -> None:
    lines = [json.dumps(v) for v in values]
    parsed = parse_lines(lines)
    for event in parsed.events:
        if isinstance(event, Transition | Annotation):
            assert isinstance(event.wp_id, str) and event.wp_id.startswith("WP")
            assert isinstance(event.at_us, int)
            format_at(event.at_us)  # never crashes, whatever the year
    assert all(isinstance(w, LogWarning) for w in parsed.warnings)


front_values = st.one_of(json_values, st.text(max_size=30))


@PROPERTY
@given(st.text(max_size=300))
def test_wp_reader_raises_only_spec_errors_on_any_text(text: str) -> None:
    for candidate in (text, "---\n" + text, "---\n" + text + "\n---\n"):
        with contextlib.suppress(SpecError):
            parse_wp("tasks/WP01-x.md", "WP01-x.md", candidate)


@PROPERTY
@given(
    st.dictionaries(
        st.sampled_from(
            ["work_package_id", "title", "dependencies", "subtasks", "owned_files", "estimate"]
        )
        | st.text(max_size=8),
        front_values,
        max_size=7,
    )
)
def test_wp_reader_raises_only_spec_errors_on_any_front_matter(front: dict[str, Any]) -> None:
    import yaml

    text = "---\n" + yaml.safe_dump(front, allow_unicode=True) + "---\nbody\n"
    with contextlib.suppress(SpecError):
        parse_wp("tasks/WP01-x.md", "WP01-x.md", text)


@PROPERTY
@given(st.text(min_size=1, max_size=80).map(str.strip).filter(bool))
def test_every_title_kitty_writes_reads_back(title: str) -> None:
    text = _render_wp("WP07", title, ["WP01"], ["T001"], ["src/**"])
    wp = parse_wp("tasks/WP07-t.md", "WP07-t.md", text)
    assert wp.title == title
    assert wp.dependencies == ("WP01",) and wp.subtasks == ("T001",)
    assert wp.owned_files == ("src/**",)


LANES = [*lanes.LANES, "doing"]


@st.composite
def event_sets(draw: st.DrawFn) -> list[dict[str, Any]]:
    count = draw(st.integers(min_value=1, max_value=14))
    base = parse_at("2026-01-01T00:00:00+00:00")
    records: list[dict[str, Any]] = []
    for index in range(count):
        at = format_at(base + draw(st.integers(min_value=0, max_value=5)) * 1_000_000)
        wp_id = draw(st.sampled_from(["WP01", "WP02", "WP03"]))
        event_id = f"01K{index:023d}"
        if draw(st.booleans()):
            records.append(
                {
                    "event_id": event_id,
                    "wp_id": wp_id,
                    "at": at,
                    "from_lane": draw(st.sampled_from(["genesis", *LANES])),
                    "to_lane": draw(st.sampled_from(LANES)),
                    "actor": draw(st.sampled_from(["claude", "codex", None])),
                    "force": draw(st.booleans()),
                    "review_result": draw(
                        st.none()
                        | st.fixed_dictionaries(
                            {
                                "verdict": st.sampled_from(["approved", "changes_requested"]),
                                "reviewer": st.sampled_from(["codex", "claude"]),
                                "reference": st.none(),
                            }
                        )
                    ),
                }
            )
        else:
            delta = draw(
                st.fixed_dictionaries(
                    {},
                    optional={
                        "note": st.text(max_size=10),
                        "subtasks": st.dictionaries(
                            st.sampled_from(["T001", "T002"]),
                            st.sampled_from(["done", "planned", "in_progress"]),
                        ),
                        "release_runtime_claim": st.booleans(),
                        "shell_pid": st.integers(1, 99999),
                    },
                )
            )
            records.append(
                {
                    "event_id": event_id,
                    "wp_id": wp_id,
                    "at": at,
                    "kind": "annotation",
                    "actor": "claude",
                    "delta": delta,
                }
            )
    return records


@PROPERTY
@given(event_sets(), st.randoms(use_true_random=False))
def test_replay_is_deterministic_for_any_interleaving(
    records: list[dict[str, Any]], rng: Any
) -> None:
    events = [parse_record(dict(r)) for r in records]
    assert not [e for e in events if isinstance(e, LogWarning)]
    expected = replay(events)  # type: ignore[arg-type]
    shuffled = list(events)
    rng.shuffle(shuffled)
    assert replay(shuffled) == expected  # type: ignore[arg-type]
    reordered = sorted(events, key=lambda e: (e.at_us, e.event_id), reverse=True)  # type: ignore[union-attr]
    assert replay(reordered) == expected  # type: ignore[arg-type]
