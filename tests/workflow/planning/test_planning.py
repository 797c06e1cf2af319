"""Planning: `wp add` writes the real content, `finalize` refuses the template's placeholders,
and `wp edit`, `wp depend`, `wp split`, `wp show`, `wp search` change and read the plan."""

from __future__ import annotations

from pathlib import Path

import pytest

from kitty.core.model import WorkPackage
from kitty.core.record import replace
from kitty.workflow.rules.prompts import PromptContext, implement_prompt
from tests.helpers import kitty, ok


@pytest.fixture
def planned(repo: Path) -> Path:
    ok(repo, "init")
    ok(repo, "mission", "create", "shop")
    return repo


def _wp_file(repo: Path, wp_id: str) -> Path:
    return next((repo / "kitty-specs").glob(f"*/tasks/{wp_id}-*.md"))


def test_wp_add_writes_the_objective_and_subtask_texts(planned: Path) -> None:
    added = ok(
        planned,
        "wp",
        "add",
        "--title",
        "Cart API",
        "--objective",
        "A REST endpoint that adds items to a cart.",
        "--subtask",
        "POST /cart/items with validation",
        "--subtask",
        "Tests for the happy path and bad input",
        "--json",
    ).json()
    assert added["subtasks"] == ["T001", "T002"] and added["placeholders"] == []
    text = _wp_file(planned, "WP01").read_text()
    assert "## Objectives\n\nA REST endpoint that adds items to a cart.\n" in text
    assert "- [ ] T001: POST /cart/items with validation\n" in text
    assert "- [ ] T002: Tests for the happy path and bad input\n" in text
    assert "Describe what" not in text and "describe this subtask" not in text
    done = ok(planned, "finalize", "--json").json()
    assert done["bootstrapped"] == ["WP01"] and done["warnings"] == []


def test_wp_add_takes_the_body_from_a_file(planned: Path, tmp_path: Path) -> None:
    body = tmp_path / "body.md"
    body.write_text("## Objectives\n\nShip the search index.\n\n## Notes\n\n- keep it small\n")
    ok(planned, "wp", "add", "--title", "Index", "--body-file", str(body), "--subtasks", "1")
    text = _wp_file(planned, "WP01").read_text()
    assert text.split("---\n", 2)[2].startswith("\n# Work Package Prompt: WP01 – Index\n")
    assert "Ship the search index.\n\n## Notes\n\n- keep it small\n" in text
    clash = kitty(
        planned, "wp", "add", "--title", "X", "--body-file", str(body), "--objective", "y"
    )
    assert clash.code == 2 and "--body-file" in clash.err
    missing = kitty(planned, "wp", "add", "--title", "X", "--body-file", str(tmp_path / "nope.md"))
    assert missing.code != 0 and "nope.md" in missing.err
    assert len(list((planned / "kitty-specs").glob("*/tasks/WP*.md"))) == 1


def test_finalize_refuses_untouched_placeholders_naming_file_and_line(planned: Path) -> None:
    added = ok(planned, "wp", "add", "--title", "Cart API", "--subtasks", "2")
    path = _wp_file(planned, "WP01")
    lines = path.read_text().splitlines()
    objective = lines.index("Describe what this work package delivers.") + 1
    subtask = lines.index("- [ ] T002: describe this subtask") + 1
    assert f"template text at lines {objective}, {subtask - 1}, {subtask} of" in added.out
    refused = kitty(planned, "finalize")
    assert refused.code == 1
    rel = path.relative_to(planned)
    assert f"{rel}:{objective}: placeholder text" in refused.err
    assert f"{rel}:{subtask}: placeholder text" in refused.err
    assert "--allow-placeholders" in refused.err
    assert not (path.parent.parent / "lanes.json").exists()  # nothing written
    warned = kitty(planned, "finalize", "--allow-placeholders")
    assert warned.code == 0 and f"{rel}:{objective}: placeholder text" in warned.err
    lines[objective - 1] = "The cart's REST API."
    lines[subtask - 2] = "- [ ] T001: the endpoint"
    lines[subtask - 1] = "- [ ] T002: its tests"
    path.write_text("\n".join(lines) + "\n")
    ok(planned, "finalize")
    assert "placeholder" not in kitty(planned, "finalize").err


def test_the_implement_prompt_never_hands_over_placeholder_text() -> None:
    body = (
        "# Work Package Prompt: WP01 – Cart\n\n## Objectives\n\n"
        "Describe what this work package delivers.\n\n## Subtasks\n\n"
        "- [ ] T001: describe this subtask\n- [ ] T002: the endpoint\n"
    )
    wp = WorkPackage("WP01", "Cart", (), ("T001", "T002"), (), "x/WP01-cart.md", "WP01-cart")
    ctx = PromptContext("m", "claude", replace(wp, body=body), "/w", None, 0, 3)
    prompt = implement_prompt(ctx)
    assert "Describe what" not in prompt and "describe this subtask" not in prompt
    assert "\n(No objective was written: the title and the subtasks are the brief.)\n" in prompt
    assert "\n- [ ] T001\n- [ ] T002: the endpoint\n" in prompt


def _add(repo: Path, title: str, *extra: str) -> None:
    ok(repo, "wp", "add", "--title", title, "--objective", f"{title} works", *extra)


@pytest.fixture
def plan(planned: Path) -> Path:
    """WP01 ← WP02 ← WP04, WP01 ← WP03 ← WP04, finalized; WP03 has subtasks T001–T003."""
    _add(planned, "Catalog")
    _add(planned, "Cart", "--depends-on", "WP01")
    _add(planned, "Pricing", "--depends-on", "WP01", "--subtask", "base prices")
    ok(planned, "wp", "edit", "WP03", "--objective", "Prices and discounts")
    _add(planned, "Checkout", "--depends-on", "WP02,WP03")
    ok(planned, "finalize")
    return planned


def test_wp_show_prints_the_dependency_tree_both_ways(plan: Path) -> None:
    text = ok(plan, "wp", "show", "WP02").out
    assert text.startswith("WP02 Cart  [planned]\n")
    assert "Depends on:\n└── WP01 Catalog [planned]\n" in text
    assert "Dependents:\n└── WP04 Checkout [planned]\n" in text
    tree = ok(plan, "wp", "show", "4").out
    assert "Depends on:\n├── WP02 Cart [planned]\n│   └── WP01 Catalog [planned]\n" in tree
    assert "└── WP03 Pricing [planned]\n    └── WP01 Catalog [planned]\n" in tree
    assert "Dependents: none" in tree
    view = ok(plan, "wp", "show", "WP01", "--json").json()
    assert view["dependents"] == ["WP02", "WP03"]
    assert [n["id"] for n in view["dependents_tree"][0]["children"]] == ["WP04"]
    assert "## Objectives\n\nCatalog works" in view["body"]
    assert kitty(plan, "wp", "show", "WP09").code == 1


def test_wp_edit_changes_the_file_and_refuses_bad_input(plan: Path) -> None:
    before = _wp_file(plan, "WP02").read_text()
    edited = ok(
        plan, "wp", "edit", "WP02", "--title", "Cart (web)", "--owns", "web/**", "--json"
    ).json()
    assert edited["changed"] == ["title", "owned_files"] and edited["next"].startswith(
        "kitty finalize"
    )
    text = _wp_file(plan, "WP02").read_text()
    assert "title: Cart (web)" in text and "# Work Package Prompt: WP02 – Cart (web)" in text
    assert text.split("## Objectives")[1] == before.split("## Objectives")[1]
    ok(plan, "wp", "edit", "WP02", "--objective", "The cart page, with totals")
    assert (
        "## Objectives\n\nThe cart page, with totals\n\n## Subtasks"
        in _wp_file(plan, "WP02").read_text()
    )
    snapshot = {p: p.read_text() for p in (plan / "kitty-specs").rglob("*.md")}
    cycle = kitty(plan, "wp", "edit", "WP01", "--depends-on", "WP04", "--json")
    assert cycle.code == 1 and cycle.json()["error"]["code"] == "dependency_cycle"
    assert "WP01 → WP04" in cycle.json()["error"]["message"] or "WP04" in cycle.out
    assert kitty(plan, "wp", "edit", "WP02").code == 2  # nothing to change
    assert kitty(plan, "wp", "edit", "WP02", "--title", "a\nb").code == 2
    assert kitty(plan, "wp", "edit", "WP02", "--depends-on", "WP09").code == 1
    assert snapshot == {p: p.read_text() for p in (plan / "kitty-specs").rglob("*.md")}
    ok(plan, "finalize")


def test_wp_depend_adds_and_removes_refusing_cycles(plan: Path) -> None:
    done = ok(plan, "wp", "depend", "WP03", "--on", "WP02", "--json").json()
    assert done["dependencies"] == ["WP01", "WP02"] and done["added"] == ["WP02"]
    assert ok(plan, "wp", "depend", "WP03", "--remove", "1").out.startswith("WP03 depends on WP02")
    refused = kitty(plan, "wp", "depend", "WP02", "--on", "WP04")
    assert refused.code == 1 and "cycle" in refused.err
    assert kitty(plan, "wp", "depend", "WP02", "--on", "WP02").code == 1
    ok(plan, "finalize")


def test_wp_split_moves_subtasks_and_rewires_dependents(plan: Path) -> None:
    ok(plan, "wp", "edit", "WP01", "--objective", "Books")  # (a no-op on the lanes)
    text = _wp_file(plan, "WP03").read_text()
    text = text.replace("subtasks:\n- T001\n", "subtasks:\n- T001\n- T002\n- T003\n").replace(
        "- [ ] T001: base prices\n",
        "- [ ] T001: base prices\n- [ ] T002: volume discounts\n- [ ] T003: coupon codes\n",
    )
    _wp_file(plan, "WP03").write_text(text)
    result = ok(
        plan,
        "wp",
        "split",
        "WP03",
        "--title",
        "Discounts",
        "--move",
        "T002,T003",
        "--owns",
        "src/discounts.py",
        "--objective",
        "Volume discounts and coupons",
        "--json",
    ).json()
    assert result["new"]["wp_id"] == "WP05" and result["new"]["dependencies"] == ["WP01"]
    assert result["moved_subtasks"] == {"T002": "T004", "T003": "T005"}
    assert result["dependents_updated"] == ["WP04"]
    original = _wp_file(plan, "WP03").read_text()
    assert "T002" not in original and "T003" not in original and "T001: base prices" in original
    new = _wp_file(plan, "WP05").read_text()
    assert "- [ ] T004: volume discounts\n- [ ] T005: coupon codes\n" in new
    assert "owned_files:\n- src/discounts.py" in new
    assert ok(plan, "wp", "show", "WP04", "--json").json()["dependencies"] == [
        "WP02",
        "WP03",
        "WP05",
    ]
    ok(plan, "finalize")
    ok(plan, "move", "WP01", "claimed", "--agent", "claude")
    busy = kitty(plan, "wp", "split", "WP01", "--title", "More", "--json")
    assert busy.code == 1 and busy.json()["error"]["code"] == "guard_refused"
    assert kitty(plan, "wp", "split", "WP03", "--title", "X", "--move", "T001").code == 2
    assert kitty(plan, "wp", "split", "WP03", "--title", "X", "--move", "T009").code == 1


def test_wp_search_finds_words_with_their_lines(plan: Path) -> None:
    found = ok(plan, "wp", "search", "prices DISCOUNTS", "--json").json()
    assert [r["id"] for r in found["results"]] == ["WP03"]
    assert any("Prices and discounts" in m["text"] for m in found["results"][0]["matches"])
    text = ok(plan, "wp", "search", "cart").out
    assert text.startswith("WP02  Cart  [planned]\n") and "WP02-cart.md:" in text
    assert ok(plan, "wp", "search", "cart", "--lane", "approved").out.startswith("no work")
    assert kitty(plan, "wp", "search", "cart", "--lane", "sideways").code == 2
    assert kitty(plan, "wp", "search", " ").code == 2


def test_a_refused_split_writes_nothing(plan: Path) -> None:
    """The new WP, the original and its dependents are checked together, under one lock,
    before the first byte is written: a cycle (here made by hand) refuses all of it."""
    path = _wp_file(plan, "WP01")
    path.write_text(path.read_text().replace("dependencies: []", "dependencies: [WP02]"))
    before = {p: p.read_text() for p in (plan / "kitty-specs").rglob("*.md")}
    refused = kitty(plan, "wp", "split", "WP01", "--title", "More", "--objective", "x", "--json")
    assert refused.code == 1 and refused.json()["error"]["code"] == "dependency_cycle"
    assert {p: p.read_text() for p in (plan / "kitty-specs").rglob("*.md")} == before
