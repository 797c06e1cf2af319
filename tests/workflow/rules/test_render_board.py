"""The `kitty status` board a person sees, to the column: parked lines, the critical path,
column widths, card details at their limits, the `--list` view, and the width helpers."""

from __future__ import annotations

from typing import Any

import pytest

from kitty.workflow.rules.render import board_text, card, clip, list_text, pack, width_of, wrap
from tests.workflow.rules.test_render import golden_view


def mission(*wps: dict[str, Any], title: str = "t") -> dict[str, Any]:
    return {
        "mission": {"slug": "s", "title": title},
        "progress": {"done_percentage": 0.0, "weighted_percentage": 0.0},
        "work_packages": list(wps),
    }


def leased_view() -> dict[str, Any]:
    """The golden board with two leases (one expired), two blocked WPs and a long path."""
    view = golden_view()
    wps = view["work_packages"]
    wps[2]["lease"] = {
        "holder": "gemini",
        "machine": "box-2",
        "expires_at": "2026-01-02T10:00:00Z",
        "expired": True,
    }
    wps[8]["lease"] = {
        "holder": "claude",
        "machine": "laptop",
        "expires_at": "2026-01-02T11:00:00Z",
        "expired": False,
    }
    wps.append({"id": "WP10", "title": "Refunds", "lane": "blocked"})
    view["critical_path"] = ["WP01", "WP03", "WP05", "WP10", "WP11", "WP12", "WP13"]
    return view


GOLDEN_40 = """\
shop-01ABCDEF · Shop · 10 WPs
Progress ████░░░░░░ 38% done · 52% weig…
Planne… In pro… Review… Approv… Done (…
─────── ─────── ─────── ─────── ───────
◆WP05   ◆WP03   WP02    WP04    ◆WP01
 Docs    Check…  Cart…   Payme…  Cart…
 waits…  STALL…  cycle…  arbit…
WP06     claim…  revie…  self-…
 Ops     @gemi…  @codex  @clau…
 unfin… WP09
 waits…  Search
         CONFL…
         @clau…
         on la…
◆ critical path: WP01 → WP03 → WP05 →
  WP10 → WP11 → WP12 → WP13
Blocked: WP07 (waits for the lawyers to
  read every cla…), WP10
Canceled: WP08
Arbiter override WP04 → approved:
  Arbiter decision: fine
Self-review fallback WP04: claude
  approved after codex failed
Lease WP03: gemini on box-2 until
  2026-01-02T10:00:00Z (expired)
Lease WP09: claude on laptop until
  2026-01-02T11:00:00Z
Conflict WP09: two claims
  resolve: kitty resolve WP09 --keep A
"""


def test_golden_board_40_columns_with_leases_and_wrapped_parked_lines() -> None:
    """On a 40-column terminal every line fits; each lease is listed under the columns with
    its holder, machine and end (and `(expired)` only when it is); blocked WPs are comma
    separated; the critical path and the parked lines wrap with a two-space indent."""
    text = board_text(leased_view(), 40)
    assert text == GOLDEN_40
    assert max(width_of(line) for line in text.splitlines()) <= 40


def test_a_critical_path_of_one_wp_is_not_a_path() -> None:
    """The legend appears for a chain of two or more WPs, never for a lone WP."""
    one = dict(mission({"id": "WP01", "title": "A", "lane": "planned"}), critical_path=["WP01"])
    assert "critical path" not in board_text(one, 80)
    two = dict(one, critical_path=["WP01", "WP02"])
    assert board_text(two, 80).splitlines()[-1] == "◆ critical path: WP01 → WP02"


@pytest.mark.parametrize(("width", "col"), [(30, 6), (34, 6), (83, 15), (84, 16), (120, 23)])
def test_columns_use_the_width_they_have_and_never_get_narrower_than_six(
    width: int, col: int
) -> None:
    """Five columns of (width - 4 separators) // 5 each: the ruler never exceeds the
    terminal, and below 34 columns the cells stay 6 wide instead of becoming unreadable."""
    text = board_text(mission({"id": "WP01", "title": "A", "lane": "planned"}), width)
    assert text.splitlines()[3] == " ".join(["─" * col] * 5)


def test_the_default_board_is_80_columns_wide() -> None:
    """Without a width the board fits an 80-column terminal: a long title is cut at 80."""
    text = board_text(mission(title="x" * 100))
    assert text.splitlines()[0] == "s · " + "x" * 75 + "…"


def test_a_column_with_exactly_max_cards_shows_them_all() -> None:
    """Ten cards fit a column: none is hidden behind `… 1 more` (only an eleventh is)."""
    ten = [{"id": f"WP{i:02d}", "title": "T", "lane": "planned"} for i in range(1, 11)]
    text = board_text(mission(*ten), 80)
    assert "WP10" in text and "more" not in text
    eleven = board_text(mission(*ten, {"id": "WP11", "title": "T", "lane": "planned"}), 80)
    assert "WP09" in eleven and "WP10" not in eleven and "… 2 more" in eleven


BASE = {"id": "WP01", "title": "Checkout flow", "lane": "in_review"}


def test_card_shows_the_missions_cycle_cap_and_acknowledged_feedback() -> None:
    """`cycle 2/5` when the mission allows 5 review cycles; `feedback ack` once the
    implementer has the reviewer's feedback."""
    assert card(dict(BASE, review_cycles=2, max_cycles=5), 40)[1] == " cycle 2/5 reviewing"
    assert card(dict(BASE, review_status="acknowledged"), 40)[1] == " feedback ack reviewing"


def test_card_shows_the_panel_round_while_the_wp_is_open() -> None:
    """A WP in a review panel shows its round, clipped to the card; not once it is done,
    nor before it is finalized."""
    assert card(dict(BASE, review_round=2), 40) == [
        "WP01 Checkout flow",
        " reviewing",
        " panel round 2",
    ]
    assert card(dict(BASE, lane="approved", review_round=3), 12)[-1] == " panel roun…"
    assert card(dict(BASE, lane="done", review_round=2), 40) == ["WP01 Checkout flow"]
    assert card(dict(BASE, lane=None, review_round=2), 40) == ["WP01 Checkout flow", " unfinalized"]


def test_card_lists_every_wait_when_they_fit_exactly() -> None:
    """`waits: WP03,WP04` when it fits the card to the column, else the first and `+1`."""
    planned = dict(BASE, lane="planned", waits_for=["WP03", "WP04"])
    assert card(planned, 17)[-1] == " waits: WP03,WP04"
    assert card(planned, 16)[-1] == " waits: WP03 +1"


def test_title_continuation_aligns_under_the_title_from_24_columns() -> None:
    """From 24 columns on, a title's second line starts under its first word; narrower
    cards indent it by one space only."""
    wp = dict(BASE, title="Implement the checkout flow today")
    assert card(wp, 24)[:2] == ["WP01 Implement the", "     checkout flow today"]
    assert card(wp, 23)[:2] == ["WP01 Implement the", " checkout flow today"]


def test_card_details_fill_the_card_and_stop_at_three_lines() -> None:
    """Details share a line when they fit the card exactly (one column for the indent);
    past three lines the last one is cut with `…`."""
    assert card(dict(BASE, lane="approved", stalled=1, holder="abcde"), 15)[2:] == [
        " STALLED @abcde"
    ]
    busy = dict(
        BASE,
        stalled=1,
        conflicts=1,
        review_cycles=1,
        review_status="has_feedback",
        arbiter={"note": "n"},
        self_review={"approved_by": "a"},
        holder="codex",
    )
    assert card(busy, 15)[2:] == [" STALLED", " CONFLICT", " cycle 1/3 has…"]


GOLDEN_LIST = """\
◆WP01  done         @claude  Cart API
WP02   in_review    @codex   Cart UI  [cycle 1/3]
◆WP03  claimed      @gemini  Checkout  [STALLED]
WP04   approved     @claude  Payments
◆WP05  planned      -        Docs  [waits: WP03,WP04]
WP06   planned      -        Ops  [unfinalized; waits: WP02]
WP07   blocked      -        Legal  [waits for the lawyers to read every clause twice]
WP08   canceled     -        Old
WP09   in_progress  @claude  Search  [CONFLICT]
"""


def test_golden_list() -> None:
    """`kitty status --list`: aligned id (critical ones marked), lane, agent (`-` when
    none) and full title, then in brackets only what applies, separated by `; `."""
    assert list_text(golden_view()) == GOLDEN_LIST


def test_width_helpers_at_their_edges() -> None:
    """What the board's layout rests on: a one-column cut still shows `…`; a line that fits
    exactly is not wrapped; a character wider than the line gets a line of its own; the
    last of the lines allowed takes what does not fit; combining, enclosing and zero-width
    characters take no column, fullwidth ones take two."""
    assert clip("abc", 1) == "…"
    assert wrap("one two", 7) == ["one two"]
    assert wrap("購物車", 1) == ["購", "物", "車"]
    assert pack(["aaaa", "bbbb", "cccc", "dddd"], 4, 3) == ["aaaa", "bbbb", "ccc…"]
    assert width_of("e\u0300") == 1  # e + combining grave accent
    assert width_of("a\u20ddb") == 2  # enclosing circle
    assert width_of("a\u200bb") == 2  # zero-width space
    assert width_of("ＡＢ") == 4  # fullwidth A B
    assert width_of("co\xadop") == 5  # a soft hyphen is drawn, one column


def test_control_characters_in_data_keep_the_columns_aligned() -> None:
    """A title or agent name holding control characters is shown with them escaped
    (`\\x1b`, `\\u202e`), and the board counts the escapes' columns: every cell still starts
    where its column does, on the board and in `--list`, as the terminal receives them."""
    from kitty.core.printable import printable

    view = mission(
        {"id": "WP01", "title": "Evil\x1b]0;pwned\x07 title", "lane": "planned"},
        {"id": "WP02", "title": "ok", "lane": "claimed", "holder": "ev\x1bil"},
        {"id": "WP03", "title": "Ünï \u202e\x9b x", "lane": "for_review"},
    )
    assert printable(board_text(view, 80)).splitlines()[4:] == [
        "WP01            WP02 ok         WP03 Ünï",
        " Evil\\x1b]0;pw…  claimed         \\u202e\\x9b x",
        "                 @ev\\x1bil",
    ]
    assert printable(list_text(view)) == (
        "WP01   planned     -          Evil\\x1b]0;pwned\\x07 title\n"
        "WP02   claimed     @ev\\x1bil  ok\n"
        "WP03   for_review  -          Ünï \\u202e\\x9b x\n"
    )
    assert width_of("é\tb") == width_of("e\tb") == 3  # a tab counts the same in any text
