from __future__ import annotations

from typing import Any

import pytest

from kitty.workflow.rules.render import board_text, card, clip, list_text, pack, pad, width_of, wrap


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
            "holder": "claude-code-agent",
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


def golden_view() -> dict[str, Any]:
    """One card of every kind, a critical path, parked WPs, an arbiter, a conflict."""
    return {
        "mission": {"slug": "shop-01ABCDEF", "title": "Shop"},
        "progress": {"done_percentage": 37.5, "weighted_percentage": 52.4},
        "critical_path": ["WP01", "WP03", "WP05"],
        "work_packages": [
            {
                "id": "WP01",
                "title": "Cart API",
                "lane": "done",
                "holder": "claude",
                "critical": True,
            },
            {
                "id": "WP02",
                "title": "Cart UI",
                "lane": "in_review",
                "holder": "codex",
                "review_cycles": 1,
                "max_cycles": 3,
            },
            {
                "id": "WP03",
                "title": "Checkout",
                "lane": "claimed",
                "holder": "gemini",
                "critical": True,
                "stalled": "gone",
            },
            {
                "id": "WP04",
                "title": "Payments",
                "lane": "approved",
                "holder": "claude",
                "arbiter": {"to_lane": "approved", "note": "Arbiter decision: fine"},
                "self_review": {"approved_by": "claude", "intended_reviewer": "codex"},
            },
            {
                "id": "WP05",
                "title": "Docs",
                "lane": "planned",
                "waits_for": ["WP03", "WP04"],
                "critical": True,
            },
            {"id": "WP06", "title": "Ops", "lane": None, "waits_for": ["WP02"]},
            {
                "id": "WP07",
                "title": "Legal",
                "lane": "blocked",
                "reason": "waits for the lawyers to read every clause twice",
            },
            {"id": "WP08", "title": "Old", "lane": "canceled"},
            {
                "id": "WP09",
                "title": "Search",
                "lane": "in_progress",
                "holder": "claude",
                "conflicts": 1,
            },
        ],
        "conflicts": [
            {"wp_id": "WP09", "message": "two claims", "commands": ["kitty resolve WP09 --keep A"]}
        ],
    }


GOLDEN_80 = """\
shop-01ABCDEF · Shop · 9 WPs
Progress ███████████░░░░░░░░░░░░░░░░░░░ 38% done · 52% weighted
Planned (2)     In progress (2) Review (1)      Approved (1)    Done (1)
─────────────── ─────────────── ─────────────── ─────────────── ───────────────
◆WP05 Docs      ◆WP03 Checkout  WP02 Cart UI    WP04 Payments   ◆WP01 Cart API
 waits: WP03 +1  STALLED         cycle 1/3       arbiter
WP06 Ops         claimed         reviewing       self-rev!
 unfinalized     @gemini         @codex          @claude
 waits: WP02    WP09 Search
                 CONFLICT
                 @claude
◆ critical path: WP01 → WP03 → WP05
Blocked: WP07 (waits for the lawyers to read every cla…)
Canceled: WP08
Arbiter override WP04 → approved: Arbiter decision: fine
Self-review fallback WP04: claude approved after codex failed
Conflict WP09: two claims
  resolve: kitty resolve WP09 --keep A
"""


def _lines(text: str) -> list[str]:
    """The board's lines exactly, indentation included (a `resolve:` line stands under its
    conflict, two columns in)."""
    return text.splitlines()


def test_golden_board_80_columns() -> None:
    text = board_text(golden_view(), 80)
    assert _lines(text) == _lines(GOLDEN_80) and text.endswith("\n")


def test_every_card_detail_when_there_is_room() -> None:
    from kitty.workflow.rules.render import card

    cards = [card(wp, 100) for wp in golden_view()["work_packages"]]
    assert cards == [
        ["◆WP01 Cart API"],
        ["WP02 Cart UI", " cycle 1/3 reviewing @codex"],
        ["◆WP03 Checkout", " STALLED claimed @gemini"],
        ["WP04 Payments", " arbiter self-rev! @claude"],
        ["◆WP05 Docs", " waits: WP03,WP04"],
        ["WP06 Ops", " unfinalized", " waits: WP02"],
        ["WP07 Legal"],
        ["WP08 Old"],
        ["WP09 Search", " CONFLICT @claude"],
    ]
    assert card({"id": "WP01", "title": "T", "lane": "planned", "review_cycles": 2}, 40) == [
        "WP01 T",
        " cycle 2/3",
    ]


def test_colour_codes_per_column_and_for_parked_lines() -> None:
    text = board_text(golden_view(), 80, colour=True)
    assert text.startswith("\x1b[1mshop-01ABCDEF · Shop · 9 WPs\x1b[0m\n")
    for code, title in (("37", "Planned (2)"), ("33", "In progress (2)"), ("35", "Review (1)")):
        assert f"\x1b[{code}m{title}" in text
    assert "\x1b[36mApproved (1)" in text and "\x1b[32mDone (1)" in text
    assert "\x1b[31mBlocked: WP07" in text and "\x1b[31mCanceled: WP08\x1b[0m" in text
    # colour never changes the layout (only trailing padding inside the header's codes)
    import re

    plain = re.sub(r"\x1b\[\d+m", "", text)
    assert _lines("\n".join(line.rstrip() for line in plain.splitlines())) == _lines(GOLDEN_80)


def test_narrow_empty_board_and_helpers() -> None:
    from kitty.workflow.rules.render import bar, clip

    empty = {
        "mission": {"slug": "s", "title": "t"},
        "progress": {"done_percentage": 0.0, "weighted_percentage": 0.0},
        "work_packages": [],
    }
    assert board_text(empty, 40) == (
        "s · t · 0 WPs\n"
        "Progress ░░░░░░░░░░ 0% done · 0% weight…\n"
        "Planne… In pro… Review… Approv… Done (…\n"
        "─────── ─────── ─────── ─────── ───────\n"
        "(no work packages yet: kitty wp add --title ...)\n"
    )
    assert clip("abcdef", 6) == "abcdef" and clip("abcdef", 5) == "abcd…" and clip("ab", 0) == ""
    assert bar(0.5, 4) == "██░░" and bar(-1, 3) == "░░░" and bar(2, 3) == "███"


def test_lease_agent_and_progress_details() -> None:
    from kitty.workflow.rules.render import card

    base = {"id": "WP01", "title": "T", "lane": "in_progress", "holder": "claude"}
    assert card(dict(base, lease={"machine": "m1", "expired": True}), 60) == [
        "WP01 T",
        " @claude on m1 lease expired",
    ]
    assert card(dict(base, lease={"machine": "m1"}), 60) == ["WP01 T", " @claude on m1"]
    assert card(dict(base, lease={"expired": True}), 60) == ["WP01 T", " @claude"]
    assert card(dict(base, lane="planned"), 60) == ["WP01 T"]  # a planned WP has no holder
    assert card(dict(base, lane="done"), 60) == ["WP01 T"]
    view = {
        "mission": {"slug": "s", "title": "t"},
        "progress": {"done_percentage": 85.0, "weighted_percentage": 90.0},
        "work_packages": [],
    }
    assert board_text(view) == board_text(view, 80)
    assert board_text(view, 100).splitlines()[1] == (
        "Progress " + "█" * 26 + "░" * 4 + " 85% done · 90% weighted"
    )


def test_card_details_wrap_by_item_instead_of_clipping() -> None:
    wp = {
        "id": "WP01",
        "title": "T",
        "lane": "planned",
        "review_cycles": 1,
        "review_status": "has_feedback",
        "review_round": 2,
        "review_halt": {"reason": "blocker_question"},
    }
    # a 15-column card (the 80-column board): nothing the reviewer left is cut off
    assert card(wp, 15) == ["WP01 T", " cycle 1/3", " has feedback", " HALT r2", "  blocker_ques…"]
    assert card(wp, 40) == ["WP01 T", " cycle 1/3 has feedback", " HALT r2 blocker_question"]


def test_pack_keeps_items_whole_and_clips_only_past_the_last_line() -> None:
    assert pack(["cycle 1/3", "has feedback", "arbiter"], 14, 3) == [
        "cycle 1/3",
        "has feedback",
        "arbiter",
    ]
    assert pack(["ab", "cd", "ef"], 5, 3) == ["ab cd", "ef"]
    assert pack(["ab", "cd", "ef"], 2, 2) == ["ab", "c…"]
    assert pack(["a-very-long-item"], 6, 2) == ["a-ver…"]
    assert pack([], 10, 2) == []


def test_a_long_resolve_line_wraps_inside_the_board_under_its_conflict() -> None:
    view = golden_view()
    view["conflicts"][0]["commands"] = ["kitty resolve WP09 --keep A --note " + "why " * 12]
    lines = board_text(view, 40).splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("  resolve: "))
    assert all(len(line) <= 40 for line in lines[start:])
    assert len(lines) - start > 1 and all(line.startswith("    ") for line in lines[start + 1 :])
