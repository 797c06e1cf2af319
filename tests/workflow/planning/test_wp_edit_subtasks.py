"""`kitty wp edit --subtask / --remove-subtask`: subtasks added, reworded and removed, each
keeping its T-id, in the front matter and the body's checklist alike."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import kitty, ok


def _mission(repo: Path) -> Path:
    ok(repo, "init", "--agents", "claude,codex")
    ok(repo, "mission", "create", "shop")
    ok(repo, "wp", "add", "--title", "Cart", "--objective", "A cart", "--subtask", "Add items",
       "--subtask", "Totals")  # fmt: skip
    ok(repo, "wp", "add", "--title", "Pay", "--objective", "Pay", "--subtask", "Card form")  # T003
    return next((repo / "kitty-specs").glob("*/tasks/WP01-*.md"))


def test_subtasks_are_added_reworded_and_removed_keeping_their_ids(repo: Path) -> None:
    path = _mission(repo)
    result = ok(
        repo, "wp", "edit", "WP01", "--subtask", "Empty-cart message",
        "--subtask", "T002=Totals with tax", "--json",
    ).json()  # fmt: skip
    assert result["changed"] == ["subtasks"]
    shown = ok(repo, "wp", "show", "WP01", "--json").json()
    assert shown["subtasks"] == ["T001", "T002", "T004"]  # T003 is WP02's: the next free id
    text = path.read_text()
    assert "- [ ] T002: Totals with tax" in text and "Totals\n" not in text
    assert (
        "- [ ] T001: Add items\n- [ ] T002: Totals with tax\n- [ ] T004: Empty-cart message" in text
    )
    ok(repo, "wp", "edit", "WP01", "--remove-subtask", "T001")
    assert ok(repo, "wp", "show", "WP01", "--json").json()["subtasks"] == ["T002", "T004"]
    assert "T001" not in path.read_text()
    ok(repo, "finalize")  # what it wrote reads back as a valid plan


def test_a_bad_subtask_edit_is_refused_and_writes_nothing(repo: Path) -> None:
    path = _mission(repo)
    before = path.read_text()
    for args, words in [
        (("--remove-subtask", "T009"), "has no subtask T009"),
        (("--subtask", "T003=Not mine"), "has no subtask T003"),
        (("--subtask", " "), "one non-empty line"),
    ]:
        refused = kitty(repo, "wp", "edit", "WP01", *args)
        assert refused.code != 0 and words in refused.err, refused.err
        assert "Traceback" not in refused.err
    assert path.read_text() == before
