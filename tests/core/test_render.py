from __future__ import annotations

from typing import Any

import pytest

from kitty.core.render import board_text, clip, list_text, pad, width_of, wrap


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


def one(title: str, lane: str = "planned", **extra: Any) -> dict[str, Any]:
    wp = {"id": "WP01", "title": title, "lane": lane, "waits_for": [], **extra}
    return {
        "mission": {"slug": "demo-01ABCDEF", "title": "Demo"},
        "work_packages": [wp],
        "progress": {"done_percentage": 0.0, "weighted_percentage": 0.0},
    }


def test_display_width_counts_wide_and_zero_width_characters() -> None:
    assert width_of("abc") == 3
    assert width_of("購物車") == 6
    assert width_of("🚀") == 2
    assert width_of("e\u0301") == 1  # e + combining acute
    assert width_of("👍\ufe0f") == 2  # variation selector takes no column
    assert clip("購物車購物車", 7) == "購物車…"
    assert width_of(clip("購物車購物車", 7)) == 7
    assert pad("購", 4) == "購  "


def test_wrap_breaks_words_and_clips_the_last_line() -> None:
    assert wrap("one two three four", 9, 2) == ["one two", "three fo…"]
    assert wrap("one two", 9, 2) == ["one two"]
    assert wrap("abcdefghijkl", 5, 3) == ["abcde", "fghij", "kl"]
    assert wrap("one two three", 8, None, indent="  ") == ["one two", "  three"]
    assert wrap("", 10, 2) == [""]


def test_titles_wrap_to_two_lines_instead_of_clipping() -> None:
    text = board_text(one("Implement the checkout flow with cart"), 80)
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("WP01"))
    assert lines[first].rstrip() == "WP01 Implement"
    assert lines[first + 1].rstrip() == " the checkout…"


def test_wide_terminal_shows_whole_titles() -> None:
    title = "Implement the checkout flow with cart and payment"
    text = board_text(one(title), 200)
    assert "WP01 Implement the checkout flow with\n     cart and payment\n" in text
    assert "…" not in text
    assert max(width_of(line) for line in text.splitlines()) <= 200


@pytest.mark.parametrize("width", [60, 80, 131])
def test_wide_characters_keep_columns_aligned(width: int) -> None:
    data = view(10)
    data["work_packages"][0]["title"] = "購物車 API 実装と決済フローの統合テスト"
    data["work_packages"][1]["title"] = "Emoji 🚀 launch 🎉 party for the release notes"
    data["work_packages"][2]["title"] = "Ünïcödé ñame with combining e\u0301 marks"
    text = board_text(data, width)
    assert max(width_of(line) for line in text.splitlines()) <= width
    col = (width - 4) // 5
    rows = text.splitlines()[2:]
    rows = rows[: next(i for i, r in enumerate(rows) if r.startswith(("Blocked", "Canceled")))]
    for line in rows:
        # walk the line by display width: a cell boundary never falls inside a character
        used = 0
        for char in line:
            used += width_of(char)
            assert used <= col + 1, line
            used %= col + 1


def test_long_columns_collapse() -> None:
    data = view(0)
    data["work_packages"] = [
        {"id": f"WP{i:03d}", "title": f"Task {i}", "lane": "planned", "waits_for": []}
        for i in range(1, 101)
    ]
    text = board_text(data, 80)
    assert "Planned (100)" in text and "… 91 more" in text
    assert "WP009" in text and "WP010" not in text
    assert len(text.splitlines()) < 30
    every = board_text(data, 80, max_cards=None)
    assert "WP100" in every and "more" not in every


def test_list_gives_one_line_per_wp_with_full_titles() -> None:
    data = view(12)
    text = list_text(data)
    lines = text.splitlines()
    assert len(lines) == 12
    full = "A rather long work package title A rather long work package title"
    assert all(full in line for line in lines)
    assert lines[7].split()[:3] == ["WP07", "blocked", "@claude-code-agent"]
    assert "needs a human decision about scope" in lines[7]
    assert "[waits: WP01]" in lines[0]
    assert list_text(view(0)).startswith("(no work packages yet")
