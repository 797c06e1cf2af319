from __future__ import annotations

from typing import Any

from kitty.core.render import board_text


def view(n: int) -> dict[str, Any]:
    lanes = [
        "planned",
        "claimed",
        "in_progress",
        "for_review",
        "in_review",
        "approved",
        "done",
        "blocked",
        "canceled",
    ]
    wps = [
        {
            "id": f"WP{i:02d}",
            "title": "A rather long work package title " * 2,
            "lane": lanes[i % len(lanes)],
            "agent": "claude-code-agent",
            "review_cycles": i % 3,
            "max_cycles": 3,
            "waits_for": ["WP01"] if i % 9 == 0 else [],
            "reason": "needs a human decision about scope" if i % 9 == 7 else None,
        }
        for i in range(n)
    ]
    return {
        "mission": {"slug": "demo-01ABCDEF", "title": "Demo"},
        "work_packages": wps,
        "progress": {"done_percentage": 12.5, "weighted_percentage": 40.0},
    }


def test_board_fits_80_columns_and_shows_every_wp() -> None:
    text = board_text(view(30), 80, colour=False)
    assert max(len(line) for line in text.splitlines()) <= 80
    for i in range(30):
        assert f"WP{i:02d}" in text
    assert "Blocked: WP07 (needs a human" in text
    assert "cycle 1/3" in text and "waits: WP01" in text
    assert "\x1b[" not in text


def test_colour_only_when_asked() -> None:
    assert "\x1b[" in board_text(view(3), 80, colour=True)


def test_empty_board() -> None:
    assert "no work packages yet" in board_text(view(0), 80)
