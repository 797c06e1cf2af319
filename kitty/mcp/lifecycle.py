"""The tools that take a mission from an empty git repository to merged, beside the loop's
(kitty.mcp.catalog): init, mission_create, safe_commit, review_answer, resolve, accept,
merge. Data, like the catalog: kitty.mcp.tools answers each."""

from __future__ import annotations

from kitty.mcp.catalog import AGENT, MISSION, WP, Tool, _choice, _flag, _list, _text

LIFECYCLE: tuple[Tool, ...] = (
    Tool(
        "init",
        """Make this git repository a kitty project (safe to call again): writes
        .kittify/config.yaml with the agents that work here, .gitattributes and
        .gitignore entries and the kitty section of AGENTS.md. Same JSON as
        `kitty init --json`.""",
        "init",
        {
            "agents": _list(
                'The agents that work here (agents.available), e.g. ["claude", "codex"]: '
                "a WP's reviewer must be another of them than its implementer."
            ),
            "initial_commit": _flag("In a new repository, give the branch its first commit."),
        },
    ),
    Tool(
        "mission_create",
        """Create a mission (kitty-specs/<name>-<id8>/): then add its WPs with wp_add and
        call finalize. Same JSON as `kitty mission create --json`.""",
        "mission_create",
        {
            "name": _text("A short name, e.g. checkout-flow (kebab-cased)."),
            "title": _text("A human title, e.g. Checkout flow."),
            "target_branch": _text("The branch it merges into; default: the current one."),
            "initial_commit": _flag("In a new repository, give the branch its first commit."),
        },
        ("name",),
    ),
    Tool(
        "safe_commit",
        """Commit only the named files you changed, in the workspace that implement
        returned (never kitty's own or another lane's files). Same JSON as
        `kitty safe-commit --json`.""",
        "safe_commit",
        {
            "paths": _list("The files you changed, relative to the workspace (or absolute)."),
            "message": _text('The commit message, e.g. "feat(WP01): the cart API".'),
            "workspace": _text(
                "The directory to commit in: the workspace implement returned; default: "
                "the repository."
            ),
        },
        ("paths", "message"),
    ),
    Tool(
        "review_answer",
        """Answer a HALTed review panel's blocker questions (next lists each option as a
        choice), or continue after a soft warning. Same JSON as
        `kitty review answer --json`.""",
        "review_answer",
        {
            "wp_id": WP,
            "answers": _list('ID=LABEL per question, e.g. ["q1=keep-api"].'),
            "notes": _list('ID=TEXT per question, e.g. ["q1=callers depend on it"].'),
            "continue": _flag("After a soft warning: run one more panel round."),
            "abort": _flag("Give the panel up."),
            "agent": AGENT,
            "mission": MISSION,
        },
        ("wp_id",),
    ),
    Tool(
        "resolve",
        """Close a WP's open conflicts (two clones moved it at once), keeping the lane
        replay chose. Same JSON as `kitty resolve --json`.""",
        "resolve",
        {
            "wp_id": WP,
            "note": _text("Why this lane wins (recorded)."),
            "agent": AGENT,
            "mission": MISSION,
        },
        ("wp_id", "note"),
    ),
    Tool(
        "accept",
        """Check every WP is approved (listing every problem) and record the mission's
        acceptance; then merge. Same JSON as `kitty accept --json`.""",
        "accept",
        {"agent": AGENT, "mission": MISSION},
    ),
    Tool(
        "merge",
        """Merge every lane into the mission branch, then the mission into its target;
        merged WPs move to done. Same JSON as `kitty merge --json`.""",
        "merge",
        {
            "mission": MISSION,
            "dry_run": _flag("Show the plan and predicted conflicts only."),
            "strategy": _choice(("merge", "squash"), "How the mission lands on the target."),
            "keep_worktrees": _flag("Keep lane worktrees and branches."),
            "resume": _flag("Continue after resolving a conflict."),
            "abort": _flag("Give up a conflicted merge and go back."),
        },
    ),
)
