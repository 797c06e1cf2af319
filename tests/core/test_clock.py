"""Timestamps, the hybrid clock, ULIDs and durations: exact values at every boundary."""

from __future__ import annotations

import pytest

from kitty.core.clock import (
    duration_ticks_at,
    format_at,
    humanize_duration,
    hybrid_at,
    parse_at,
    ulid,
)


def test_parse_and_format_round_trip_to_the_microsecond() -> None:
    us = 1_764_454_796_764_854
    assert format_at(us) == "2025-11-29T22:19:56.764854+00:00"
    assert parse_at("2025-11-29T22:19:56.764854+00:00") == us
    assert parse_at("2025-11-29T22:19:56.764854") == us  # naive means UTC
    assert parse_at("2025-11-30T00:19:56.764854+02:00") == us
    assert parse_at("1970-01-02T00:00:01Z") == 86_401_000_000
    assert format_at(0) == "1970-01-01T00:00:00.000000+00:00"


@pytest.mark.parametrize("bad", ["yesterday", "", 12])
def test_parse_refuses_what_is_not_a_timestamp(bad: object) -> None:
    with pytest.raises(ValueError) as err:
        parse_at(bad)  # type: ignore[arg-type]
    if not isinstance(bad, str):
        assert str(err.value) == "not a timestamp: 12"


def test_hybrid_clock_is_never_earlier_than_the_log() -> None:
    assert hybrid_at(100, None) == 100
    assert hybrid_at(100, 50) == 100
    assert hybrid_at(100, 100) == 101
    assert hybrid_at(100, 200) == 201


def test_ulid_is_the_crockford_encoding_of_time_and_randomness() -> None:
    assert ulid(0, bytes(10)) == "0" * 26
    assert ulid(1, bytes(10)) == "0000000001" + "0" * 16
    assert ulid(0, bytes(9) + b"\x1f") == "0" * 25 + "Z"
    assert ulid(1_469_918_176_385, bytes(range(10))) == "01ARYZ6S41" + "000G40R40M30E209"
    assert ulid((1 << 48) - 1, b"\xff" * 10) == "7" + "Z" * 25
    assert ulid(1 << 48, bytes(10)) == "0" * 26  # only 48 bits of time fit
    with pytest.raises(ValueError) as err:
        ulid(0, bytes(9))
    assert str(err.value) == "a ULID needs exactly 10 random bytes"


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (-5, "0s"),
        (0, "0s"),
        (0.9, "0s"),
        (59, "59s"),
        (60, "1m"),
        (3599, "59m"),
        (3600, "1h00m"),
        (3660 + 59, "1h01m"),
        (3600 + 59 * 60, "1h59m"),
        (86_399, "23h59m"),
        (86_400, "1d0h"),
        (86_400 + 23 * 3600, "1d23h"),
        (2 * 86_400 + 4 * 3600 + 59 * 60, "2d4h"),
    ],
)
def test_humanize_duration_boundaries(seconds: float, text: str) -> None:
    assert humanize_duration(seconds) == text


def test_implausible_is_strictly_beyond_the_bound() -> None:
    from kitty.core.clock import FUTURE_BOUND_US, is_implausible

    assert not is_implausible(1_000 + FUTURE_BOUND_US, 1_000)
    assert is_implausible(1_001 + FUTURE_BOUND_US, 1_000)


def test_a_silence_age_is_the_same_text_until_its_tick() -> None:
    """`duration_ticks_at` never names a moment after the shown age changes."""
    for seconds in (0, 1.5, 59.9, 60, 61.2, 3599.5, 3600, 7261.7, 86_399.9, 86_400, 200_001.3):
        elapsed = int(seconds * 1e6)
        tick = duration_ticks_at(elapsed)
        assert tick > elapsed
        shown = humanize_duration(elapsed / 1e6)
        assert humanize_duration((tick - 1) / 1e6) == shown  # still true up to the tick
        # and changes within a millisecond after: the view is never redrawn more than 1 ms early
        assert humanize_duration((tick + 1000) / 1e6) != shown
