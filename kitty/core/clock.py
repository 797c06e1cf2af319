"""Time and ids as pure functions: callers pass the clock reading and randomness in."""

from __future__ import annotations

from datetime import UTC, datetime

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def parse_at(text: str) -> int:
    """ISO-8601 timestamp -> microseconds since the epoch (naive times are UTC).

    Raises ValueError for anything that is not a timestamp.
    """
    if not isinstance(text, str):
        raise ValueError(f"not a timestamp: {text!r}")
    dt = datetime.fromisoformat(text)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    delta = dt - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def format_at(us: int) -> str:
    """Microseconds since the epoch -> `2026-11-29T22:19:56.764854+00:00`."""
    seconds, micro = divmod(us, 1_000_000)
    dt = datetime.fromtimestamp(seconds, tz=UTC).replace(microsecond=micro)
    return dt.isoformat(timespec="microseconds")


def hybrid_at(now_us: int, newest_us: int | None) -> int:
    """The hybrid logical clock of FORMAT.md: never earlier than anything already logged."""
    if newest_us is None:
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
