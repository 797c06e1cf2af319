"""Implementation and review prompts: pure text from data the services gather."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field

import yaml

from kitty.core import placeholders
from kitty.core.model import WorkPackage

#: Agent ids may hold spaces and parentheses (Spec Kitty histories do): quoted in
#: every printed command so it runs as printed.
_q = shlex.quote


@dataclass(frozen=True)
class DependencyInfo:
    wp_id: str
    title: str
    lane: str | None
    delivered: Sequence[str] = ()  # commit subjects of its lane


@dataclass(frozen=True)
class PromptContext:
    mission: str
    agent: str
    wp: WorkPackage
    workspace: str
    branch: str | None
    cycles: int  # review cycles: rejections since the last arbiter decision (of the cap)
    max_cycles: int
    dependencies: Sequence[DependencyInfo] = ()
    dependents: Sequence[tuple[str, str]] = ()  # (id, title) of WPs that depend on this one
    feedback: str | None = None  # the latest review feedback (fix mode)
    feedback_ref: str | None = None
    base: str | None = None
    changed_files: Sequence[str] = ()
    commits: Sequence[str] = field(default_factory=tuple)
    gate_failure: str | None = None  # the test gate failed: its text (fix mode)
    gate_passed: str | None = None  # the test gate passed: "the tests passed at <commit>"
    #: The lane's head when the WP entered review (the commit an approval approves), and
    #: `git diff --stat` from the base to it (issue 41).
    reviewed_commit: str | None = None
    diff_stat: str = ""
    #: The project's verify.* command lines: the agent runs exactly these (and may).
    verify: Sequence[str] = ()
    #: The agent starts in `workspace` (the sprint's agent CLIs): no `cd` line.
    in_workspace: bool = False
    #: Where a reviewer writes its feedback / findings (an ignored folder in the lane).
    feedback_file: str | None = None
    findings_file: str | None = None
    cycles_total: int | None = None  # every rejection, when an arbiter decided since some
    lane_changed: str | None = None  # what this review changed in the lane (read-only!)


def _cycle(ctx: PromptContext) -> str:
    """`1/3`, or `0/3, 4 in all` after an arbiter decision (the count `next` names)."""
    total = ctx.cycles_total
    return f"{ctx.cycles}/{ctx.max_cycles}" + (
        f", {total} in all" if total is not None and total != ctx.cycles else ""
    )


def _times(ctx: PromptContext) -> str:
    total = ctx.cycles_total
    if total is None or total == ctx.cycles:
        return f"{ctx.cycles} time(s)"
    return f"{ctx.cycles} time(s) since the arbiter's decision ({total} in all)"


def _front_matter(wp: WorkPackage) -> str:
    return yaml.safe_dump(wp.meta, sort_keys=False, allow_unicode=True).rstrip()


def _cmd(ctx: PromptContext, rest: str) -> str:
    return f"kitty agent tasks {rest} --mission {ctx.mission}"


def implement_prompt(ctx: PromptContext) -> str:
    wp = ctx.wp
    if ctx.gate_failure is not None:
        out = [
            f"# Fix {wp.wp_id} – {wp.title}",
            "",
            "The tests failed: make them pass, commit, then resubmit.",
            "",
            "## The test gate failed",
            "",
            ctx.gate_failure.strip(),
            "",
        ]
        if ctx.feedback is not None:
            out += [f"## Review feedback ({ctx.feedback_ref or 'latest'})", "", ctx.feedback, ""]
    elif ctx.feedback is not None:
        out = [
            f"# Fix {wp.wp_id} – {wp.title}",
            "",
            f"This is cycle {_cycle(ctx)}: a reviewer sent this work package "
            f"back {_times(ctx)}, and at {ctx.max_cycles} it goes to an arbiter. "
            "Address every point of the feedback below, then resubmit.",
            "",
            f"## Review feedback ({ctx.feedback_ref or 'latest'})",
            "",
            ctx.feedback.strip(),
            "",
        ]
    else:
        out = [f"# Implement {wp.wp_id} – {wp.title}", ""]
    out += [
        "## Workspace",
        "",
        f"Work only in `{ctx.workspace}`" + (f" (branch `{ctx.branch}`)." if ctx.branch else "."),
        *_way_in(ctx),
        "",
    ]
    if ctx.dependencies:
        out += ["## Dependencies (already approved, merged into your workspace)", ""]
        for dep in ctx.dependencies:
            out.append(f"- {dep.wp_id} {dep.title} ({dep.lane or 'unknown'})")
            out += [f"    - {line}" for line in dep.delivered[:10]]
        out.append("")
    body, criteria = _split_done(placeholders.strip(wp.body).strip())
    out += ["## Work package", "", "```yaml", _front_matter(wp), "```", "", body, ""]
    return "\n".join(out + _done_and_finish(ctx, criteria)) + "\n"


#: The template's one line under "## Definition of done" (`kitty wp add`): kitty's own list
#: says it in full, so it is not repeated.
_TEMPLATE_DONE = "- All subtasks done, tests written and passing."


def _split_done(body: str) -> tuple[str, list[str]]:
    """The body without its "## Definition of done" section, and that section's own lines
    (kitty's section takes them: the prompt has one definition of done)."""
    lines = body.split("\n")
    start = next(
        (i for i, t in enumerate(lines) if t.strip().lower() == "## definition of done"), None
    )
    if start is None:
        return body, []
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("#")), len(lines))
    criteria = [t for t in lines[start + 1 : end] if t.strip() and t.strip() != _TEMPLATE_DONE]
    rest = [*lines[:start], *lines[end:]]
    return "\n".join(rest).strip(), criteria


def _done_and_finish(ctx: PromptContext, criteria: Sequence[str] = ()) -> list[str]:
    """The implementation prompt's end: the definition of done (the WP's own criteria
    first), then the exact commands."""
    wp = ctx.wp
    out = ["## Definition of done", "", *criteria]
    if wp.subtasks:
        out.append(f"- Every subtask is done: {', '.join(wp.subtasks)}.")
    out += [
        "- Tests cover the behaviour the work package describes"
        + (", and every verification command below passes." if ctx.verify else "."),
        "- New code is called from a live entry point (no dead code).",
    ]
    if not ctx.verify:
        out.append("- Lint and type checks are clean on the files you changed.")
    if wp.owned_files:
        out.append(f"- Only files in the write scope changed: {', '.join(wp.owned_files)}.")
    out += ["", *_verification(ctx, "Run them before you commit; fix what fails."), ""]
    out += [
        "## Finish with exactly these commands",
        "",
        f'1. `kitty safe-commit <each file you changed> -m "feat({wp.wp_id}): <summary>"`',
    ]
    step = 2
    if wp.subtasks:
        tasks = " ".join(wp.subtasks)
        out.append(
            f"{step}. `{_cmd(ctx, f'mark-status {tasks}')} --status done --agent {_q(ctx.agent)}`"
        )
        step += 1
    out.append(
        f"{step}. `{_cmd(ctx, f'move-task {wp.wp_id}')} --to for_review --agent {_q(ctx.agent)} "
        f'--note "Ready for review: <summary>"`'
    )
    return out


def review_prompt(ctx: PromptContext) -> str:
    wp = ctx.wp
    out = [
        "IMPORTANT: After reviewing, you MUST execute exactly one of the kitty agent tasks "
        "move-task commands shown at the bottom of this prompt.",
        "",
        f"# Review {wp.wp_id} – {wp.title}"
        + (f" (cycle {_cycle(ctx)})" if ctx.cycles or ctx.cycles_total else ""),
        "",
        "## Workspace",
        "",
        f"The lane worktree of this work package: `{ctx.workspace}`.",
        *_way_in(ctx),
        "",
    ]
    if ctx.gate_passed is not None:
        out += ["## The test gate", "", ctx.gate_passed, ""]
    out += _lane_changed(ctx) + _review_changes(ctx)
    out += [*_verification(ctx, "Run them; reject when one fails."), ""]
    body = placeholders.strip(wp.body).strip()
    out += ["## Acceptance criteria (the work package)", "", body, ""]
    if wp.subtasks:
        out += [f"Subtasks: {', '.join(wp.subtasks)}", ""]
    if ctx.feedback is not None:
        out += [
            "## Previous review feedback (check that it was addressed)",
            "",
            ctx.feedback.strip(),
            "",
        ]
    if ctx.dependents:
        out += ["## Downstream warnings", ""]
        out += [
            f"- {wid} ({title}) depends on {wp.wp_id}: approving it unblocks {wid} at once; "
            "check the interfaces it will rely on."
            for wid, title in ctx.dependents
        ]
        out.append("")
    return "\n".join(out + _verdicts(ctx))


def _way_in(ctx: PromptContext) -> list[str]:
    """The `cd` line, for an agent that does not start in its workspace."""
    return (
        ["You start there: it is your working directory."]
        if ctx.in_workspace
        else [f"    cd {ctx.workspace}"]
    )


def _verification(ctx: PromptContext, what: str) -> list[str]:
    """The project's verify.* commands, exactly, or that none is configured."""
    if not ctx.verify:
        return [
            "## Verification",
            "",
            "Nothing verifies the work: the project configures no verification commands "
            "(verify.* in .kittify/config.yaml), so you cannot rely on a test run here. "
            "Say in your note what you could not check.",
        ]
    return [
        "## Verification: exactly these commands",
        "",
        f"The project's verification commands (verify.* in .kittify/config.yaml). {what} "
        "They are the only commands besides `git` and `kitty` you may run (more words "
        "after one are fine: a single test file, `-x`).",
        "",
        *[f"    {line}" for line in ctx.verify],
    ]


def _lane_changed(ctx: PromptContext) -> list[str]:
    """A review that changed the lane it reviews: the approval is refused; what is left."""
    if not ctx.lane_changed:
        return []
    return [
        "## Your review changed the lane: approval is refused",
        "",
        f"Reviewers are read-only, and this review changed the lane ({ctx.lane_changed}).",
        "An approval would approve code nobody reviewed, so it is refused (reviewer_failed).",
        "Reject with your findings (say what you changed and why), or leave the review:",
        "another agent takes it over (`kitty next` offers them the takeover now).",
        "",
    ]


def _review_changes(ctx: PromptContext) -> list[str]:
    """How to see the WP's changes, its commits and changed files (and its write scope)."""
    out = ["## The changes of this work package", ""]
    head = ctx.reviewed_commit or ctx.branch
    if ctx.reviewed_commit:
        out += [
            f"You review commit {ctx.reviewed_commit}: {ctx.branch}'s head when "
            f"{ctx.wp.wp_id} entered review. An approval approves exactly that commit; "
            "a lane that moves on is refused.",
            "",
        ]
    if ctx.base and head:
        out += [
            # --no-ext-diff: gemini's shell sets diff.external to "" (git then fails)
            f"    git -C {ctx.workspace} diff --no-ext-diff {ctx.base}..{head}",
            f"    git -C {ctx.workspace} log --oneline {ctx.base}..{head}",
            "",
        ]
    if ctx.diff_stat.strip():
        out += [*(f"    {line}" for line in ctx.diff_stat.rstrip().splitlines()), ""]
    if ctx.commits:
        out += ["Commits:", *[f"- {c}" for c in ctx.commits[:30]], ""]
    if ctx.changed_files:
        out += ["Changed files:", *[f"- {f}" for f in ctx.changed_files[:100]], ""]
        if ctx.wp.owned_files:
            out.append(
                f"Write scope (owned_files): {', '.join(ctx.wp.owned_files)}. "
                "Flag changes outside it."
            )
            out.append("")
    return out


def _verdicts(ctx: PromptContext) -> list[str]:
    """The review prompt's end: the verdict commands, exactly one of which runs."""
    move = _cmd(ctx, f"move-task {ctx.wp.wp_id}")
    feedback = _q(ctx.feedback_file) if ctx.feedback_file else "<feedback.md>"
    findings = _q(ctx.findings_file) if ctx.findings_file else "<findings.json>"
    where = (
        " (kitty takes the file into the review and removes it; git ignores its folder)"
        if ctx.feedback_file
        else ""
    )
    return [
        "## Verdict: run exactly one",
        "",
        "Approve:",
        "",
        f'    {move} --to approved --agent {_q(ctx.agent)} --note "Review passed: <summary>"',
        "",
        f"Reject: first write what must change to {feedback}{where}, then run:",
        "",
        f"    {move} --to planned --agent {_q(ctx.agent)} --review-feedback-file {feedback}",
        "",
        f"Or write structured findings to {findings} (see `kitty review schema`) and run:",
        "",
        f"    kitty review submit {ctx.wp.wp_id} --mission {ctx.mission} --agent {_q(ctx.agent)} "
        f"--findings {findings}",
        "",
    ]
