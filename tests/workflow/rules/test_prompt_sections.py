"""The implement prompt has one of each section, whatever the WP body already holds."""

from __future__ import annotations

from kitty.core.model import WorkPackage
from kitty.workflow.rules.prompts import PromptContext, implement_prompt

TEMPLATE_BODY = (
    "\n# Work Package Prompt: WP01 – Cart\n\n## Objectives\n\nBuild the cart.\n\n"
    "## Subtasks\n\n- [ ] T001: add items\n\n"
    "## Definition of done\n\n- All subtasks done, tests written and passing.\n"
    "- The cart survives a reload.\n\n## Activity Log\n"
)


def _context(body: str) -> PromptContext:
    wp = WorkPackage(
        "WP01",
        "Cart",
        (),
        ("T001",),
        ("src/**",),
        "t/WP01.md",
        "WP01",
        meta={"work_package_id": "WP01"},
        body=body,
    )
    return PromptContext("shop", "claude", wp, "/ws", None, 0, 3)


def test_the_implement_prompt_has_one_definition_of_done() -> None:
    text = implement_prompt(_context(TEMPLATE_BODY))
    assert text.count("## Definition of done") == 1
    # The planner's own criterion is kept, under kitty's one section, once.
    done = text.split("## Definition of done", 1)[1].split("## Finish", 1)[0]
    assert "- The cart survives a reload." in done
    assert text.count("The cart survives a reload.") == 1
    # The template's generic line adds nothing to kitty's own list.
    assert "All subtasks done, tests written and passing." not in text
    # What followed the section in the body is still there.
    assert "## Activity Log" in text


def test_a_body_without_the_section_is_unchanged() -> None:
    body = "\n# WP01\n\n## Objectives\n\nBuild it.\n"
    text = implement_prompt(_context(body))
    assert text.count("## Definition of done") == 1
    assert "Build it." in text
