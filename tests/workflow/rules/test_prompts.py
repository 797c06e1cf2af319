# ruff: noqa: E501  (the prompts are pinned verbatim; their long lines are the point)
"""Implementation and review prompts, pinned word for word (agents act on every line)."""

from __future__ import annotations

from kitty.core.model import WorkPackage
from kitty.workflow.rules.prompts import (
    DependencyInfo,
    PromptContext,
    implement_prompt,
    review_prompt,
)


def full_context() -> PromptContext:
    wp = WorkPackage(
        "WP03",
        "Cart UI",
        ("WP01",),
        ("T001", "T002"),
        ("web/cart/**",),
        "t/WP03-cart-ui.md",
        "WP03-cart-ui",
        meta={"work_package_id": "WP03", "title": "Cart UI"},
        body="\n# Cart UI\n\nBuild it.\n",
    )
    deps = [
        DependencyInfo("WP01", "Cart API", "approved", [f"c{i} feat" for i in range(12)]),
        DependencyInfo("WP02", "Lib", None),
    ]
    return PromptContext(
        "shop",
        "claude",
        wp,
        "/ws",
        "kitty/lane-a",
        1,
        3,
        deps,
        [("WP05", "Docs")],
        "Fix the empty cart.\n",
        "review-cycle://shop/WP03/review-cycle-1.md",
        "abc123",
        ["web/cart/a.ts", "README.md"],
        ["d1 feat(WP03): ui"],
    )


def bare_context() -> PromptContext:
    wp = WorkPackage(
        "WP04", "Bare", (), (), (), "t/WP04.md", "WP04", meta={"work_package_id": "WP04"}
    )
    return PromptContext("shop", "codex", wp, "/ws2", None, 0, 3)


FIX_PROMPT = """\
# Fix WP03 – Cart UI

This is cycle 1/3: a reviewer sent this work package back 1 time(s), and at 3 it goes to an arbiter. Address every point of the feedback below, then resubmit.

## Review feedback (review-cycle://shop/WP03/review-cycle-1.md)

Fix the empty cart.

## Workspace

Work only in `/ws` (branch `kitty/lane-a`).
    cd /ws

## Dependencies (already approved, merged into your workspace)

- WP01 Cart API (approved)
    - c0 feat
    - c1 feat
    - c2 feat
    - c3 feat
    - c4 feat
    - c5 feat
    - c6 feat
    - c7 feat
    - c8 feat
    - c9 feat
- WP02 Lib (unknown)

## Work package

```yaml
work_package_id: WP03
title: Cart UI
```

# Cart UI

Build it.

## Definition of done

- Every subtask is done: T001, T002.
- Tests cover the behaviour the work package describes.
- New code is called from a live entry point (no dead code).
- Lint and type checks are clean on the files you changed.
- Only files in the write scope changed: web/cart/**.

## Verification

Nothing verifies the work: the project configures no verification commands (verify.* in .kittify/config.yaml), so you cannot rely on a test run here. Say in your note what you could not check.

## Finish with exactly these commands

1. `kitty safe-commit <each file you changed> -m "feat(WP03): <summary>"`
2. `kitty agent tasks mark-status T001 T002 --mission shop --status done --agent claude`
3. `kitty agent tasks move-task WP03 --mission shop --to for_review --agent claude --note "Ready for review: <summary>"`
"""


REVIEW_PROMPT = """\
IMPORTANT: After reviewing, you MUST execute exactly one of the kitty agent tasks move-task commands shown at the bottom of this prompt.

# Review WP03 – Cart UI (cycle 1/3)

## Workspace

The lane worktree of this work package: `/ws`.
    cd /ws

## The changes of this work package

    git -C /ws diff --no-ext-diff abc123..kitty/lane-a
    git -C /ws log --oneline abc123..kitty/lane-a

Commits:
- d1 feat(WP03): ui

Changed files:
- web/cart/a.ts
- README.md

Write scope (owned_files): web/cart/**. Flag changes outside it.

## Verification

Nothing verifies the work: the project configures no verification commands (verify.* in .kittify/config.yaml), so you cannot rely on a test run here. Say in your note what you could not check.

## Acceptance criteria (the work package)

# Cart UI

Build it.

Subtasks: T001, T002

## Previous review feedback (check that it was addressed)

Fix the empty cart.

## Downstream warnings

- WP05 (Docs) depends on WP03: approving it unblocks WP05 at once; check the interfaces it will rely on.

## Verdict: run exactly one

Approve:

    kitty agent tasks move-task WP03 --mission shop --to approved --agent claude --note "Review passed: <summary>"

Reject: first write what must change to <feedback.md>, then run:

    kitty agent tasks move-task WP03 --mission shop --to planned --agent claude --review-feedback-file <feedback.md>

Or write structured findings to <findings.json> (see `kitty review schema`) and run:

    kitty review submit WP03 --mission shop --agent claude --findings <findings.json>
"""


BARE_IMPLEMENT = """\
# Implement WP04 – Bare

## Workspace

Work only in `/ws2`.
    cd /ws2

## Work package

```yaml
work_package_id: WP04
```



## Definition of done

- Tests cover the behaviour the work package describes.
- New code is called from a live entry point (no dead code).
- Lint and type checks are clean on the files you changed.

## Verification

Nothing verifies the work: the project configures no verification commands (verify.* in .kittify/config.yaml), so you cannot rely on a test run here. Say in your note what you could not check.

## Finish with exactly these commands

1. `kitty safe-commit <each file you changed> -m "feat(WP04): <summary>"`
2. `kitty agent tasks move-task WP04 --mission shop --to for_review --agent codex --note "Ready for review: <summary>"`
"""


BARE_REVIEW = """\
IMPORTANT: After reviewing, you MUST execute exactly one of the kitty agent tasks move-task commands shown at the bottom of this prompt.

# Review WP04 – Bare

## Workspace

The lane worktree of this work package: `/ws2`.
    cd /ws2

## The changes of this work package

## Verification

Nothing verifies the work: the project configures no verification commands (verify.* in .kittify/config.yaml), so you cannot rely on a test run here. Say in your note what you could not check.

## Acceptance criteria (the work package)



## Verdict: run exactly one

Approve:

    kitty agent tasks move-task WP04 --mission shop --to approved --agent codex --note "Review passed: <summary>"

Reject: first write what must change to <feedback.md>, then run:

    kitty agent tasks move-task WP04 --mission shop --to planned --agent codex --review-feedback-file <feedback.md>

Or write structured findings to <findings.json> (see `kitty review schema`) and run:

    kitty review submit WP04 --mission shop --agent codex --findings <findings.json>
"""


def test_fix_prompt_word_for_word() -> None:
    assert implement_prompt(full_context()) == FIX_PROMPT


def test_review_prompt_word_for_word() -> None:
    assert review_prompt(full_context()) == REVIEW_PROMPT


def test_bare_prompts_word_for_word() -> None:
    assert implement_prompt(bare_context()) == BARE_IMPLEMENT
    assert review_prompt(bare_context()) == BARE_REVIEW


def test_long_lists_are_cut() -> None:
    from dataclasses import replace

    ctx = replace(
        full_context(),
        commits=[f"c{i}" for i in range(40)],
        changed_files=[f"f{i}" for i in range(120)],
    )
    text = review_prompt(ctx)
    assert "- c29\n" in text and "- c30\n" not in text
    assert "- f99\n" in text and "- f100\n" not in text


def test_fallbacks_lists_and_unicode() -> None:
    from dataclasses import replace

    from kitty.core import record

    ctx = full_context()
    wp = record.replace(
        ctx.wp,
        owned_files=("web/cart/**", "web/shared/cart.css"),
        meta={"work_package_id": "WP03", "title": "Café UI"},
    )
    fix = implement_prompt(replace(ctx, wp=wp, feedback_ref=None))
    assert "## Review feedback (latest)\n" in fix
    assert "- Only files in the write scope changed: web/cart/**, web/shared/cart.css.\n" in fix
    assert "title: Café UI\n" in fix  # YAML keeps the text readable, not \\xE9 escapes
    review = review_prompt(replace(ctx, wp=wp, branch=None))
    assert "diff abc123" not in review  # no branch: no diff command to print
    assert (
        "Write scope (owned_files): web/cart/**, web/shared/cart.css. Flag changes outside it."
        in review
    )


def test_the_sprints_prompts_name_the_verify_commands_and_the_feedback_file() -> None:
    """An agent CLI the sprint starts in its workspace gets no `cd` line; the prompts name
    the project's verify.* commands exactly, and the review names the feedback file."""
    from dataclasses import replace

    ctx = replace(
        full_context(),
        verify=("python -m pytest -q", "ruff check ."),
        in_workspace=True,
        feedback_file="/ws/.kittify/feedback/WP03-feedback.md",
        findings_file="/ws/.kittify/feedback/WP03-findings.json",
    )
    commands = (
        "They are the only commands besides `git` and `kitty` you may run (more words after "
        "one are fine: a single test file, `-x`).\n\n"
        "    python -m pytest -q\n    ruff check .\n"
    )
    fix = implement_prompt(ctx)
    assert "    cd " not in fix
    assert (
        "Work only in `/ws` (branch `kitty/lane-a`).\nYou start there: it is your working directory.\n"
        in fix
    )
    assert (
        "- Tests cover the behaviour the work package describes, and every verification command below passes.\n"
        in fix
    )
    assert "## Verification: exactly these commands\n" in fix and commands in fix
    assert "Run them before you commit; fix what fails." in fix
    assert "Lint and type checks" not in fix and "Nothing verifies" not in fix
    review = review_prompt(ctx)
    assert "    cd " not in review and commands in review
    assert "Run them; reject when one fails." in review
    assert (
        "Reject: first write what must change to /ws/.kittify/feedback/WP03-feedback.md (kitty "
        "takes the file into the review and removes it; git ignores its folder), then run:\n\n"
        "    kitty agent tasks move-task WP03 --mission shop --to planned --agent claude "
        "--review-feedback-file /ws/.kittify/feedback/WP03-feedback.md\n"
    ) in review
    assert "--findings /ws/.kittify/feedback/WP03-findings.json\n" in review
    assert "<feedback.md>" not in review and "<findings.json>" not in review
