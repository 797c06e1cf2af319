"""The web board in a real browser (headless Chromium): what a person sees and does."""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import ARTIFACTS, Watched, record, serve, stop
from tests.helpers import kitty_argv, lane_commit, make_mission, ok

WPS = [
    {
        "wp_id": "WP01",
        "title": "Cart API with a title long enough to wrap",
        "owned": ["src/cart/**"],
        "subtasks": ["T001"],
    },
    {"wp_id": "WP02", "title": "Cart UI", "deps": ["WP01"], "owned": ["web/**"]},
    {"wp_id": "WP03", "title": "Checkout", "deps": ["WP02"], "owned": ["src/checkout/**"]},
    {"wp_id": "WP04", "title": "Docs", "owned": ["docs/**"]},
    {"wp_id": "WP05", "title": "Cart tests", "deps": ["WP01"], "owned": ["src/cart/tests/**"]},
    {"wp_id": "WP06", "title": "Search", "owned": ["src/search/**"]},
]
COLUMN = {
    "planned": "Planned",
    "claimed": "In progress",
    "in_progress": "In progress",
    "for_review": "Review",
    "in_review": "Review",
    "approved": "Approved",
    "done": "Done",
    "blocked": "Blocked",
}


def wait_for(page: Any, expression: str, timeout: float = 30000) -> bool:
    """Poll `expression` until it is truthy. Unlike Playwright's wait_for_function, which
    compiles the predicate with eval inside the page (refused at times by the page's CSP),
    page.evaluate goes through the DevTools protocol, which the CSP does not govern."""
    deadline = time.monotonic() + timeout / 1000
    while not page.evaluate(expression):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} ms waiting for: {expression}")
        time.sleep(0.02)
    return True


def mission_with_history(repo: Path) -> None:
    make_mission(repo, wps=WPS)
    lane_commit(repo, "WP01")  # its work, so it may enter review (issue 41)
    ok(repo, "agent", "tasks", "mark-status", "T001", "--status", "done", "--mission", "demo")
    for wp, lane, agent in [
        ("WP01", "claimed", "claude"),
        ("WP01", "in_progress", "claude"),
        ("WP01", "for_review", "claude"),
        ("WP01", "in_review", "codex"),
        ("WP01", "approved", "codex"),
        ("WP04", "claimed", "gemini"),
        ("WP06", "blocked", "lead"),
    ]:
        extra = ["--note", "needs a decision"] if lane == "blocked" else []
        ok(repo, "move", wp, lane, "--agent", agent, *extra)


def columns_of(page: Any) -> dict[str, str]:
    """WP id -> the title of the column its card is in, read from the DOM."""
    result: dict[str, str] = page.evaluate(
        """() => Object.fromEntries(Array.from(document.querySelectorAll('.card')).map(
            c => [c.dataset.wp, c.closest('.column').dataset.column]))"""
    )
    return result


def expected_columns(repo: Path) -> dict[str, str]:
    data = ok(repo, "status", "--json").json()
    return {w["id"]: COLUMN[w["lane"] or "planned"] for w in data["work_packages"]}


def test_board_graph_and_chart_render_without_errors(repo: Path, watched: Watched) -> None:
    mission_with_history(repo)
    served = serve(repo)
    page = watched.page
    try:
        page.set_viewport_size({"width": 1400, "height": 1000})
        page.goto(served.url)
        page.wait_for_selector(".kitty-graph .node")
        assert columns_of(page) == expected_columns(repo)
        assert page.inner_text("#live") == "live" or wait_for(
            page, "document.getElementById('live').textContent === 'live'", timeout=5000
        )
        # Full titles, never clipped.
        assert "Cart API with a title long enough to wrap" in page.inner_text(".card[data-wp=WP01]")
        # The graph: one node per WP, the critical path marked, lanes named in text.
        nodes = page.eval_on_selector_all(
            ".kitty-graph .node", "els => els.map(e => [e.dataset.wp, e.dataset.critical])"
        )
        assert sorted(n[0] for n in nodes) == [w["wp_id"] for w in WPS]
        assert {n[0] for n in nodes if n[1] == "true"} == {"WP01", "WP02", "WP03"}
        assert page.locator(".kitty-graph .edge.critical").count() == 2
        legend = page.text_content(".kitty-graph .legend") or ""
        assert "lane-a" in legend and "critical path" in legend
        box = page.locator(".kitty-graph").bounding_box()
        assert box and box["width"] > 300 and box["height"] > 100
        # The chart: one band per column, actually drawn, with a text legend.
        assert page.locator(".kitty-flow polygon").count() == 6
        chart = page.locator(".kitty-flow").bounding_box()
        assert chart and chart["width"] > 300 and chart["height"] > 100
        assert "Approved 1" in (page.text_content(".kitty-flow") or "")
        assert page.locator("#cycles-box tr").count() >= 3
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shot = ARTIFACTS / "web-board.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 10_000
        record("screenshot", str(shot))
    finally:
        err = stop(served)
    assert watched.errors == []
    assert "stopped" in err


def test_a_move_in_another_process_moves_the_card_within_2s(repo: Path, watched: Watched) -> None:
    mission_with_history(repo)
    served = serve(repo)
    page = watched.page
    try:
        page.goto(served.url)
        wait_for(page, "document.getElementById('live').textContent === 'live'")
        assert columns_of(page)["WP05"] == "Planned"
        latencies = []
        for wp, lane, agent, column in [
            ("WP05", "claimed", "claude", "In progress"),
            ("WP04", "in_progress", "gemini", "In progress"),
            ("WP01", "in_progress", "claude", "In progress"),  # sent back after approval
        ]:
            subprocess.run(
                kitty_argv(repo, "move", wp, lane, "--agent", agent, "--note", "browser test"),
                check=True,
                capture_output=True,
            )
            moved = time.monotonic()
            wait_for(
                page,
                f"""() => {{ const c = document.querySelector('.card[data-wp={wp}]');
                    return c && c.closest('.column').dataset.column === '{column}'; }}""",
                timeout=5000,
            )
            latencies.append(time.monotonic() - moved)
        assert columns_of(page) == expected_columns(repo)
    finally:
        stop(served)
    record("update_latency_s_small_mission", [round(x, 3) for x in latencies])
    assert max(latencies) < 2.0, latencies
    assert watched.errors == []


def test_keyboard_details_dark_mode_and_small_and_large_screens(
    repo: Path, watched: Watched
) -> None:
    mission_with_history(repo)
    served = serve(repo)
    page = watched.page
    try:
        page.set_viewport_size({"width": 1280, "height": 900})
        page.goto(served.url)
        page.wait_for_selector(".card")
        # Keyboard: Tab reaches the board, arrows move, Enter opens, Esc closes.
        page.focus(".card[tabindex='0']")
        first = page.evaluate("document.activeElement.dataset.wp")
        page.keyboard.press("ArrowDown")
        second = page.evaluate("document.activeElement.dataset.wp")
        assert second != first
        page.keyboard.press("ArrowRight")
        third = page.evaluate("document.activeElement.dataset.wp")
        assert third not in (first, second)
        page.focus(".card[data-wp=WP01]")
        page.keyboard.press("Enter")
        page.wait_for_selector("dialog[open]")
        detail = page.inner_text("#detail")
        assert "Timeline" in detail and "for review → in review" in detail
        assert "kitty/mission-demo-01ABCDEF-lane-a" in detail and "T001: done" in detail
        assert "WP02" in detail and "WP05" in detail  # dependents
        page.keyboard.press("Escape")
        page.wait_for_selector("dialog[open]", state="detached")
        assert page.evaluate("document.activeElement.dataset.wp") == "WP01"
        # `/` filters.
        page.keyboard.press("/")
        wait_for(page, "document.activeElement.id === 'filter'", timeout=3000)
        page.keyboard.type("checkout")
        wait_for(page, "document.querySelectorAll('.card:not(.hidden)').length === 1", timeout=3000)
        assert page.get_attribute(".card:not(.hidden)", "data-wp") == "WP03"
        page.fill("#filter", "")
        # The lane is text on every card, not colour alone.
        for wp_id, lane in [("WP01", "approved"), ("WP04", "claimed"), ("WP06", "blocked")]:
            assert lane in page.inner_text(f".card[data-wp={wp_id}] .tag")
        # Dark mode follows the OS.
        light = page.evaluate("getComputedStyle(document.body).backgroundColor")
        page.emulate_media(color_scheme="dark")
        dark = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert luminance(light) > 0.8 and luminance(dark) < 0.2
        page.screenshot(path=str(ARTIFACTS / "web-board-dark.png"), full_page=True)
        page.emulate_media(color_scheme="light")
        # 360 px wide: no sideways scrolling of the page, text still readable.
        page.set_viewport_size({"width": 360, "height": 800})
        assert page.evaluate("document.documentElement.scrollWidth") <= 360
        size = page.evaluate(
            "parseFloat(getComputedStyle(document.querySelector('.card')).fontSize)"
        )
        assert size >= 14
        page.screenshot(path=str(ARTIFACTS / "web-board-360.png"), full_page=False)
        # 4k: the text grows with the screen.
        page.set_viewport_size({"width": 3840, "height": 2160})
        big = page.evaluate(
            "parseFloat(getComputedStyle(document.querySelector('.card')).fontSize)"
        )
        assert big >= 20
        assert page.evaluate("document.documentElement.scrollWidth") <= 3840
        page.screenshot(path=str(ARTIFACTS / "web-board-4k.png"))
    finally:
        stop(served)
    assert watched.errors == []


def luminance(css: str) -> float:
    parts = [float(x) for x in css[css.index("(") + 1 : css.index(")")].split(",")[:3]]
    r, g, b = (p / 255 for p in parts)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def test_keys_pressed_while_the_details_close_keep_their_focus(
    repo: Path, watched: Watched
) -> None:
    """Closing the details gives focus back to the card, but only when nothing took it in
    the meantime: `/` pressed right after Esc (before the dialog's close event ran, as on a
    busy machine) must leave the focus in the filter."""
    mission_with_history(repo)
    served = serve(repo)
    page = watched.page
    try:
        page.goto(served.url)
        page.wait_for_selector(".card")
        page.focus(".card[data-wp=WP01]")
        page.keyboard.press("Enter")
        page.wait_for_selector("dialog[open]")
        # close and focus the filter in one task: the close event comes after both
        page.evaluate(
            "document.getElementById('detail').close();document.getElementById('filter').focus()"
        )
        page.wait_for_timeout(200)
        assert page.evaluate("document.activeElement.id") == "filter"
        # with nothing focused meanwhile, the card gets its focus back
        page.focus(".card[data-wp=WP01]")
        page.keyboard.press("Enter")
        page.wait_for_selector("dialog[open]")
        page.keyboard.press("Escape")
        wait_for(page, "document.activeElement.dataset.wp === 'WP01'", timeout=3000)
    finally:
        stop(served)
    assert watched.errors == []


def test_the_static_export_works_offline(repo: Path, watched: Watched, tmp_path: Path) -> None:
    mission_with_history(repo)
    out = tmp_path / "board.html"
    ok(repo, "board", "--html", str(out))
    page = watched.page
    requests: list[str] = []
    page.on("request", lambda req: requests.append(req.url))
    page.goto(out.as_uri())
    page.wait_for_selector(".kitty-graph .node")
    assert columns_of(page) == expected_columns(repo)
    assert page.locator(".kitty-graph .node").count() == len(WPS)
    assert page.locator(".kitty-flow polygon").count() == 6
    assert "snapshot" in page.inner_text("#live")
    assert requests == [out.as_uri()], "the file loads nothing else"
    assert watched.errors == []  # a CSP violation would be a console error


def big_mission(repo: Path, count: int) -> None:
    """`count` WPs, each depending on one or two of the 30 before it, in 40 lanes of files."""
    wps: list[dict[str, Any]] = []
    for i in range(1, count + 1):
        deps = [f"WP{i - 1 - (i * 7) % 30:04d}"] if i > 31 else []
        if i > 60 and i % 3 == 0:
            deps.append(f"WP{i - 45:04d}")
        wps.append(
            {
                "wp_id": f"WP{i:04d}",
                "title": f"Work package number {i} with a realistic title",
                "deps": sorted(set(deps)),
                "owned": [f"src/area{i % 40}/module{i}.py"],
                "name": f"WP{i:04d}-wp.md",
            }
        )
    make_mission(repo, wps=wps)


@pytest.mark.timeout(600)
def test_a_thousand_wps_first_paint_and_update_latency(repo: Path, watched: Watched) -> None:
    big_mission(repo, 1000)
    for i in range(1, 41):
        ok(repo, "move", f"WP{i:04d}", "claimed", "--agent", "claude")
    served = serve(repo)
    page = watched.page
    try:
        page.set_viewport_size({"width": 1600, "height": 1000})
        started = time.monotonic()
        page.goto(served.url)
        wait_for(page, "document.querySelectorAll('.card').length === 1000")
        to_cards = time.monotonic() - started
        wait_for(page, "document.querySelectorAll('.kitty-graph .node').length === 1000")
        to_graph = time.monotonic() - started
        paint = page.evaluate(
            """() => Object.fromEntries(performance.getEntriesByType('paint')
                .map(e => [e.name, e.startTime]))"""
        )
        nav = page.evaluate(
            """() => { const n = performance.getEntriesByType('navigation')[0];
                return {response_end: n.responseEnd, dom_content_loaded: n.domContentLoadedEventEnd,
                        load: n.loadEventEnd, bytes: n.transferSize}; }"""
        )
        wait_for(page, "document.getElementById('live').textContent === 'live'")
        wait_for(page, "document.body.dataset.pictures !== undefined")
        page.evaluate("window.__full = 0; document.body.dataset.marker = 'kept'")
        latencies, cpu = [], []
        for number in range(41, 48):
            wp = f"WP{number:04d}"
            time.sleep(0.3)  # let the server idle between moves
            before = cpu_seconds(served.proc.pid)
            subprocess.run(
                kitty_argv(repo, "move", wp, "claimed", "--agent", "codex"),
                check=True,
                capture_output=True,
            )
            moved = time.monotonic()
            wait_for(
                page,
                f"""() => {{ const c = document.querySelector('.card[data-wp={wp}]');
                    return c && c.closest('.column').dataset.column === 'In progress'; }}""",
                timeout=10000,
            )
            latencies.append(time.monotonic() - moved)
            cpu.append(cpu_seconds(served.proc.pid) - before)
        # The page was patched, not reloaded, and it agrees with `kitty status`.
        assert page.evaluate("document.body.dataset.marker") == "kept"
        assert columns_of(page) == expected_columns(repo)
        state = page.get_attribute(".kitty-graph .node[data-wp=WP0047]", "data-state")
        assert state == "claimed"
        latency = statistics.median(latencies)
        page.screenshot(path=str(ARTIFACTS / "web-board-1000.png"))
    finally:
        stop(served)
    figures = {
        "first_contentful_paint_ms": round(paint.get("first-contentful-paint", -1)),
        "first_paint_ms": round(paint.get("first-paint", -1)),
        "all_1000_cards_s": round(to_cards, 3),
        "graph_of_1000_nodes_s": round(to_graph, 3),
        "navigation": {k: round(v) for k, v in nav.items()},
        "update_latency_after_move_s": round(latency, 3),
        "update_latencies_s": [round(x, 3) for x in latencies],
        "server_cpu_per_update_s": [round(x, 3) for x in cpu],
    }
    record("thousand_wps", figures)
    print(json.dumps(figures))
    assert watched.errors == []
    # Issue 26: a move reaches the page in <= 0.5 s with <= 50 ms of server CPU.
    assert latency <= 0.5, figures
    assert statistics.median(cpu) <= 0.05, figures
    assert 0 < figures["first_contentful_paint_ms"] < 5000, figures


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process `pid` so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# -- editing from the page (kitty board --serve --edit) ----------------------------------


def status_says(page: Any, words: str) -> None:
    """Wait for the edit status line to say `words`: the board's event stream may move
    the card before the page has the reply to its own request (a loaded machine)."""
    wait_for(page, f"document.getElementById('edit-status').textContent.includes({words!r})")


def in_column(wp: str, column: str) -> str:
    return f"""() => {{ const c = document.querySelector('.card[data-wp={wp}]');
        return c && c.closest('.column').dataset.column === '{column}'; }}"""


def test_editing_from_the_page_moves_a_card_and_adds_a_wp(repo: Path, watched: Watched) -> None:
    mission_with_history(repo)
    served = serve(repo, "--edit")
    page = watched.page
    try:
        page.goto(served.url)
        wait_for(page, "document.getElementById('live').textContent === 'live'")
        page.click(".card[data-wp=WP05]")
        page.wait_for_selector("dialog[open] #move-form:not(.hidden)")
        page.select_option("#move-to", "claimed")
        page.fill("#move-agent", "board-user")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "web-board-edit.png"))
        page.click("#move-go")
        wait_for(page, in_column("WP05", "In progress"), timeout=5000)
        status_says(page, "moved WP05")
        page.keyboard.press("Escape")
        page.fill("#add-title", "Added from the page")
        page.fill("#add-deps", "WP01")
        page.click("#add-go")
        wait_for(page, in_column("WP07", "Planned"), timeout=8000)
        status_says(page, "added WP07")
        assert "Added from the page" in page.inner_text(".card[data-wp=WP07]")
        # An illegal move is refused with the CLI's own message, and changes nothing.
        page.click(".card[data-wp=WP03]")
        page.select_option("#move-to", "done")
        page.click("#move-go")
        wait_for(page, "document.getElementById('edit-status').className.includes('bad')")
        status_says(page, "refused")
    finally:
        stop(served)
    wps = {w["id"]: w for w in ok(repo, "status", "--json").json()["work_packages"]}
    assert wps["WP05"]["lane"] == "claimed" and wps["WP05"]["agent"] == "board-user"
    assert wps["WP07"]["dependencies"] == ["WP01"] and wps["WP03"]["lane"] == "planned"
    # The browser logs a failed fetch (the refused move) as a console error: nothing else.
    assert [e for e in watched.errors if "409" not in e] == []


ATTACKER = """<!doctype html><title>other local page</title><script>
const board = %s, token = %s;
async function attempt(init) {
  try { const r = await fetch(board + "api/move", init); return String(r.status); }
  catch (e) { return "blocked"; }
}
(async () => {
  const body = JSON.stringify({wp: "WP05", to: "claimed", agent: "attacker"});
  const results = [
    // A "simple" request: no preflight, so it reaches the server (which refuses it).
    await attempt({method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body}),
    // With the token (as if leaked): the custom header needs a preflight, never granted.
    await attempt({method: "POST", headers: {"Content-Type": "application/json",
                                             "X-Kitty-Token": token}, body}),
  ];
  document.body.dataset.results = results.join(",");
})();
</script>"""


def test_forged_edits_are_refused(repo: Path, watched: Watched) -> None:
    import http.server
    import threading

    mission_with_history(repo)
    served = serve(repo, "--edit")
    log = repo / "kitty-specs" / "demo-01ABCDEF" / "status.events.jsonl"
    page = watched.page
    other: http.server.ThreadingHTTPServer | None = None
    try:
        page.goto(served.url)
        wait_for(page, "document.getElementById('live').textContent === 'live'")
        token = page.evaluate(
            "JSON.parse(document.getElementById('kitty-data').textContent).edit.token"
        )
        before = log.read_bytes()
        # From the board's own page, without the token or with a wrong one.
        statuses = page.evaluate(
            """async () => { const out = [];
              for (const token of [null, "wrong"]) {
                const headers = {"Content-Type": "application/json"};
                if (token) headers["X-Kitty-Token"] = token;
                const r = await fetch("api/move", {method: "POST", headers,
                  body: JSON.stringify({wp: "WP05", to: "claimed"})});
                out.push(r.status);
              }
              return out; }"""
        )
        assert statuses == [403, 403]
        # From another page on this machine (another port is another origin).
        html = ATTACKER % (json.dumps(served.url.split("?")[0]), json.dumps(token))

        class Attacker(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                data = html.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        other = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Attacker)
        threading.Thread(target=other.serve_forever, daemon=True).start()
        evil = watched.page.context.new_page()
        evil.goto(f"http://127.0.0.1:{other.server_address[1]}/")
        wait_for(evil, "document.body.dataset.results !== undefined")
        results = evil.evaluate("document.body.dataset.results").split(",")
        evil.close()
        # no-cors hides the status ("0"); the preflighted one never leaves the browser.
        assert results == ["0", "blocked"], results
        time.sleep(0.5)
        assert log.read_bytes() == before, "no forged request wrote anything"
    finally:
        if other is not None:
            other.shutdown()
            other.server_close()
        err = stop(served)
    refusals = [line for line in err.splitlines() if "refused an edit" in line]
    assert len(refusals) == 3, err  # two from the page, one from the other origin
    assert any("token" in line for line in refusals)
    wps = {w["id"]: w for w in ok(repo, "status", "--json").json()["work_packages"]}
    assert wps["WP05"]["lane"] == "planned"


# -- the graph and charts at a glance ------------------------------------------------------

LONG = "with a title long enough that the box must cut it"


def graph_mission(repo: Path, count: int) -> None:
    """`count` WPs in chains and diamonds, with long titles, in many execution lanes."""
    wps: list[dict[str, Any]] = []
    for i in range(1, count + 1):
        deps = [f"WP{i - 1:04d}"] if i % 6 != 1 else []
        if i > 6 and i % 4 == 0:
            deps.append(f"WP{i - 6:04d}")
        wps.append(
            {
                "wp_id": f"WP{i:04d}",
                "title": f"Package {i} {LONG}",
                "deps": sorted(set(deps)),
                "owned": [f"src/area{i % 23}/m{i}.py"],
                "name": f"WP{i:04d}-wp.md",
            }
        )
    make_mission(repo, wps=wps)
    for wp, lane, agent, extra in [
        ("WP0001", "claimed", "claude", []),
        ("WP0001", "in_progress", "claude", []),
        ("WP0001", "approved", "lead", ["--force", "--note", "review skipped: hotfix"]),
        ("WP0002", "claimed", "claude", []),
        ("WP0002", "planned", "lead", ["--force", "--note", "reclaimed"]),
        ("WP0007", "claimed", "claude", []),
    ]:
        ok(repo, "move", wp, lane, "--agent", agent, *extra)


@pytest.mark.parametrize("count", [30, 200])
def test_the_graph_reads_at_a_glance(repo: Path, watched: Watched, count: int) -> None:
    graph_mission(repo, count)
    served = serve(repo)
    page = watched.page
    try:
        page.set_viewport_size({"width": 1400, "height": 1000})
        page.goto(served.url)
        wait_for(page, f"document.querySelectorAll('.kitty-graph .node').length === {count}")
        # The legend wraps inside the picture; past 8 lanes the rest are grey and named.
        overflow = page.evaluate(
            """() => { const svg = document.querySelector('.kitty-graph').getBoundingClientRect();
                return Array.from(document.querySelectorAll('.kitty-graph .legend .item'))
                  .map(i => i.getBoundingClientRect())
                  .filter(r => r.right > svg.right + 1).length; }"""
        )
        assert overflow == 0
        legend = page.text_content(".kitty-graph .legend") or ""
        assert "more lanes (grey, named on each box)" in legend
        styles = page.eval_on_selector_all(
            ".kitty-graph .node .box", "els => els.map(e => e.getAttribute('style'))"
        )
        coloured = {s for s in styles if "--lane-s:0%" not in s}
        assert 1 < len(coloured) <= 8 and len(coloured) < len(styles)
        # Hover: the full title, the predecessors and the dependents lit, the rest dimmed.
        node = ".kitty-graph .node[data-wp=WP0009]"  # WP0008 -> WP0009 -> WP0010
        page.locator("#graph").scroll_into_view_if_needed()
        page.hover(node)
        tip = page.inner_text("#graph-tip")
        assert f"WP0009 Package 9 {LONG}" in tip and "WP0008" in tip and "WP0010" in tip
        lit = page.evaluate(
            """() => Object.fromEntries(['WP0007', 'WP0008', 'WP0009', 'WP0010', 'WP0019']
                .map(id => [id, document.querySelector(`.kitty-graph .node[data-wp=${id}]`)
                  .getAttribute('class')]))"""
        )
        assert "hl-self" in lit["WP0009"] and "hl-up" in lit["WP0008"]
        assert "hl-up" in lit["WP0007"] and "hl-down" in lit["WP0010"]
        assert "hl" not in lit["WP0019"]
        assert page.locator(".kitty-graph.focusing .edge.hl").count() >= 3
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shot = ARTIFACTS / f"graph-{count}.png"
        page.locator("#graph").screenshot(path=str(shot))
        record(f"graph_screenshot_{count}", str(shot))
        page.mouse.move(5, 5)
        wait_for(page, "document.getElementById('graph-tip').classList.contains('hidden')")
        # Keyboard focus does the same.
        page.focus(".kitty-graph .node[data-wp=WP0004]")
        assert f"WP0004 Package 4 {LONG}" in page.inner_text("#graph-tip")
        # Times are local and human, the full stamp on hover.
        stamp = page.get_attribute("#cycles-box time", "title") or ""
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+\+00:00", stamp), stamp
        assert "T" not in page.inner_text("#cycles-box time")
        axis = page.eval_on_selector_all(
            ".kitty-flow text[data-at]",
            "els => els.map(e => [e.childNodes[0].textContent,"
            " e.querySelector('title').textContent])",
        )
        assert len(axis) == 2 and all("UTC" not in shown and "T" in iso for shown, iso in axis)
        # Force is shown where it matters: an approval past review, not a reclaim.
        assert "forced approval" in page.inner_text(".card[data-wp=WP0001]")
        assert "forced" not in page.inner_text(".card[data-wp=WP0002]")
    finally:
        stop(served)
    assert watched.errors == []


def test_the_add_form_takes_objective_subtasks_and_owned_paths_and_edits_a_card(
    repo: Path, watched: Watched
) -> None:
    mission_with_history(repo)
    served = serve(repo, "--edit")
    page = watched.page
    try:
        page.goto(served.url)
        wait_for(page, "document.getElementById('live').textContent === 'live'")
        page.fill("#add-title", "Coupons")
        page.fill("#add-owns", "src/coupons/**, web/coupons.css")
        page.fill("#add-objective", "Apply a coupon at checkout")
        page.fill("#add-subtasks", "Coupon model\nApply at checkout\n")
        page.click("#add-go")
        wait_for(page, in_column("WP07", "Planned"), timeout=8000)
        status_says(page, "added WP07")
        # the same card, edited on the page: a new title, one more owned path and subtask
        page.click(".card[data-wp=WP07]")
        page.wait_for_selector("dialog[open] #wp-edit-form:not(.hidden)")
        assert page.input_value("#edit-owns") == "src/coupons/**, web/coupons.css"
        page.fill("#edit-title", "Coupons and vouchers")
        page.fill("#edit-owns", "src/coupons/**, web/coupons.css, src/vouchers/**")
        page.fill("#edit-subtasks", "Vouchers")
        page.click("#edit-go")
        wait_for(page, "document.getElementById('edit-status').textContent.includes('edited WP07')")
        wait_for(
            page, "document.querySelector('.card[data-wp=WP07]').innerText.includes('vouchers')"
        )
    finally:
        stop(served)
    shown = ok(repo, "wp", "show", "WP07", "--json").json()
    assert shown["title"] == "Coupons and vouchers"
    assert shown["owned_files"] == ["src/coupons/**", "web/coupons.css", "src/vouchers/**"]
    assert len(shown["subtasks"]) == 3
    text = (repo / shown["path"]).read_text()
    assert "Apply a coupon at checkout" in text and "Describe what" not in text
    assert ": Coupon model" in text and ": Vouchers" in text
    assert watched.errors == []


def test_after_the_edit_server_restarts_the_page_offers_to_reload_keeping_what_was_typed(
    repo: Path, watched: Watched
) -> None:
    mission_with_history(repo)
    served = serve(repo, "--edit")
    page = watched.page
    port = served.url.split(":")[2].split("/")[0]
    try:
        page.goto(served.url)
        wait_for(page, "document.getElementById('live').textContent === 'live'")
        page.fill("#add-title", "Typed before the restart")
        page.fill("#add-objective", "kept across the reload")
        stop(served)
        served = serve(repo, "--edit", "--port", port)  # the same address, a new token
        # the page sees the new server as soon as its stream comes back...
        wait_for(page, "!document.getElementById('reload-offer').classList.contains('hidden')")
        # ...and a click on an edit before reloading is refused, with the same offer
        page.click("#add-go")
        wait_for(page, "document.getElementById('edit-status').textContent.includes('edit token')")
        page.click("#reload-go")
        wait_for(page, "document.getElementById('live').textContent === 'live'")
        assert page.input_value("#add-title") == "Typed before the restart"
        assert page.input_value("#add-objective") == "kept across the reload"
        assert page.is_hidden("#reload-offer")
        page.click("#add-go")
        wait_for(page, in_column("WP07", "Planned"), timeout=8000)
    finally:
        stop(served)
    assert ok(repo, "wp", "show", "WP07", "--json").json()["title"] == "Typed before the restart"
    assert [e for e in watched.errors if "403" not in e] == []
