"""Time and ids as pure functions: callers pass the clock reading and randomness in."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)
_MAX_US = (datetime.max.replace(tzinfo=UTC) - _EPOCH) // _US
_MIN_US = (datetime.min.replace(tzinfo=UTC) - _EPOCH) // _US

#: How far ahead of the local clock an event may be dated and still count for the
#: hybrid clock: 24 hours covers any real clock skew and time zone mistake between
#: machines. Anything later is implausible (a typo, a broken clock, a hostile edit):
#: it never pushes new events' timestamps, and `kitty doctor` reports it.
FUTURE_BOUND_US = 24 * 3600 * 1_000_000


def parse_at(text: str) -> int:
    """ISO-8601 timestamp -> microseconds since the epoch (naive times are UTC).

    Raises ValueError for anything that is not a timestamp.
    """
    if not isinstance(text, str):
        raise ValueError(f"not a timestamp: {text!r}")
    dt = datetime.fromisoformat(text)
    if dt.tzinfo is None:  # fromisoformat gives a fixed offset or none: same as utcoffset()
        dt = dt.replace(tzinfo=UTC)
    delta = dt - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def format_at(us: int) -> str:
    """Microseconds since the epoch -> `2026-11-29T22:19:56.764854+00:00`.

    Never raises: values beyond what a datetime can hold are clamped to its range.
    """
    us = min(max(us, _MIN_US), _MAX_US)
    dt = _EPOCH + timedelta(microseconds=us)
    return dt.isoformat(timespec="microseconds")


def is_implausible(at_us: int, now_us: int) -> bool:
    """True for a timestamp more than FUTURE_BOUND_US ahead of the local clock."""
    return at_us > now_us + FUTURE_BOUND_US


def hybrid_at(now_us: int, newest_us: int | None) -> int:
    """The hybrid logical clock of FORMAT.md: never earlier than anything already logged.

    `newest_us` beyond the plausible bound is ignored (the caller passes the newest
    *plausible* timestamp); an implausible one can never drag the clock years ahead.
    """
    if newest_us is None or is_implausible(newest_us, now_us):
        return now_us
    return max(now_us, newest_us + 1)


def ulid(ms: int, randomness: bytes) -> str:
    """A 26-character ULID from a millisecond timestamp and 10 random bytes."""
    if len(randomness) != 10:
        raise ValueError("a ULID needs exactly 10 random bytes")
    value = (ms & ((1 << 48) - 1)) << 80 | int.from_bytes(randomness, "big")
    chars = []
    for _ in range(26):
        value, digit = divmod(value, 32)
        chars.append(_CROCKFORD[digit])
    return "".join(reversed(chars))


def humanize_duration(seconds: float) -> str:
    """`42s`, `12m`, `3h05m`, `2d4h`: compact, for boards and reasons."""
    s = max(0, int(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m"
    if s < 86_400:
        return f"{s // 3600}h{(s % 3600) // 60:02d}m"
    return f"{s // 86_400}d{(s % 86_400) // 3600}h"


def duration_ticks_at(elapsed_us: int) -> int:
    """The first elapsed time (µs) at which `humanize_duration` shows something else
    (a little early, never late: float rounding)."""
    seconds = max(0, int(elapsed_us / 1e6))
    unit = 1 if seconds < 60 else 60 if seconds < 86_400 else 3600
    return (seconds // unit + 1) * unit * 1_000_000 - 1000
