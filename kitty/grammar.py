"""Each hot command's parameters, declared once, as plain data (no click, no dataclasses).

Three routes read these declarations, each deriving its own form of them:

- `cli`: click's arguments and options (kitty/commands/base.py `declared`), so `--help`
  shows each parameter's `help`;
- `fast`: the click-free parse table of kitty/fastpath.py, which runs the plain
  spellings without importing click and leaves every other spelling to click;
- `tool`: the MCP tool's JSON schema (kitty/mcp/catalog.py `declared`) and the
  mapping from a printed command line to its tool call (kitty/mcp/hints.py).

A parameter's `name` is the keyword of the command's body in kitty/hot.py (click's
name for it too); `tool_name` is its name in the MCP schema. Help text is written once
with the CLI's spellings (`--note`); the MCP schema reads `--self-review-fallback` as
`self_review_fallback`. tests/test_grammar.py walks click's commands and checks the
fast path's table and the MCP schemas against them, option by option.
"""

from __future__ import annotations

from kitty.core.lanes import ALIASES, SUBTASK_STATUSES
from kitty.core.lanes import LANES as _LANES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CLI, FAST, TOOL = "cli", "fast", "tool"
#: kinds: a string, a flag (a boolean), a file path (a string over MCP), a list of strings
TEXT, FLAG, PATH, LIST = "text", "flag", "path", "list"

#: kitty's lanes with `doing` beside `in_progress` (the alias Spec Kitty's skills use)
LANES = tuple(
    name
    for lane in _LANES
    for name in (lane, *(alias for alias, to in ALIASES.items() if to == lane))
)


class Param:
    """One parameter of a command.

    `flags`: its spellings on the command line, () for a positional argument; `routes`:
    which of cli, fast and tool take it; `choices` with `checked=False`: advertised (MCP's
    enum) but checked by kitty itself, whose error names the near miss; `required`: on
    the command line, `tool_required`: over MCP; `fills`: a positional argument that
    gives that option's value instead (`kitty move WP LANE` or `--to LANE`: one of the
    two is needed, not both); `tool_help`: the MCP description where it must differ.
    """

    def __init__(
        self,
        name: str,
        flags: tuple[str, ...],
        kind: str,
        help: str,
        metavar: str | None = None,
        routes: tuple[str, ...] = (CLI, FAST, TOOL),
        choices: tuple[str, ...] | None = None,
        checked: bool = True,
        required: bool = False,
        tool_name: str | None = None,
        tool_required: bool | None = None,
        tool_help: str | None = None,
        fills: str | None = None,
    ) -> None:
        self.name, self.flags, self.kind, self.help = name, flags, kind, help
        self.metavar, self.routes, self.choices, self.checked = metavar, routes, choices, checked
        self.required, self.tool_name = required, tool_name or name
        self.tool_required = required if tool_required is None else tool_required
        self.tool_help, self.fills = tool_help, fills

    def but(self, **changes: Any) -> Param:
        """This parameter with `changes` (another command's variant of it; `tool_name` and
        `tool_required` are copied as they are, not derived again)."""
        return Param(**(vars(self) | changes))

    def __repr__(self) -> str:
        return f"Param({self.name!r}, {self.flags!r}, {self.kind!r})"


class Command:
    """A hot command: its words, its parameters in help order, the function of kitty.hot
    that does it, whether it writes (False, True, the flag that makes it a write, or
    None: a server a client waits for), and the MCP tool derived from it (if any)."""

    def __init__(
        self,
        words: tuple[str, ...],
        params: tuple[Param, ...],
        body: str,
        writes: bool | str | None,
        tool: str | None = None,
    ) -> None:
        self.words, self.params, self.body = words, params, body
        self.writes, self.tool = writes, tool

    def on(self, route: str) -> tuple[Param, ...]:
        """The parameters `route` takes, in order."""
        return tuple(p for p in self.params if route in p.routes)


ONLY_CLI = (CLI,)
NOT_TOOL = (CLI, FAST)

MISSION = Param(
    "mission",
    ("--mission", "-m"),
    TEXT,
    "Mission slug or unique prefix (default: $KITTY_MISSION, else the mission of the lane "
    "worktree/branch you are in, else the only one).",
    "MISSION",
)
AGENT = Param(
    "agent",
    ("--agent", "-a"),
    TEXT,
    "Who acts (default: $KITTY_AGENT, config `identity`, git user.name, `user`).",
    "NAME",
)
JSON = Param("as_json", ("--json",), FLAG, "Print JSON (schema 1).", routes=NOT_TOOL)
WP = Param("wp", (), TEXT, "Work package id: WP03, WP3 or 3.", "WP", required=True)

TO = Param(
    "to",
    ("--to",),
    TEXT,
    "Target lane (doing = in_progress; done comes by merging).",
    "LANE",
    choices=LANES,
    checked=False,
    required=True,
)
MOVE = (
    MISSION,
    AGENT,
    Param(
        "note",
        ("--note",),
        TEXT,
        "Why; required with --force, and the feedback of a rejection.",
        "TEXT",
    ),
    Param(
        "force",
        ("--force",),
        FLAG,
        "Take any edge of the transition table (needs --note; counted).",
    ),
    Param(
        "feedback_file",
        ("--review-feedback-file",),
        PATH,
        "Review feedback; to reject a WP in review pass this or --note.",
        "FILE",
        routes=(CLI, TOOL),
        tool_name="review_feedback_file",
        tool_help="Review feedback file (absolute, or relative to the repository); to reject "
        "a WP in review pass this or note.",
    ),
    Param(
        "self_review_fallback",
        ("--self-review-fallback",),
        FLAG,
        "Approve your own WP after a reviewer failed, recorded as a self-review fallback "
        "(needs --force).",
        routes=(CLI, TOOL),
    ),
    Param(
        "intended_reviewer",
        ("--intended-reviewer",),
        TEXT,
        "With --self-review-fallback: the reviewer that failed.",
        "AGENT",
        routes=(CLI, TOOL),
    ),
    Param(
        "reviewer_failure_reason",
        ("--reviewer-failure-reason",),
        TEXT,
        "With --self-review-fallback: how the reviewer failed.",
        "TEXT",
        routes=(CLI, TOOL),
    ),
    JSON,
)

STATUS = Command(
    ("status",),
    (
        MISSION,
        Param(
            "as_list", ("--list",), FLAG, "One line per WP with its full title.", routes=ONLY_CLI
        ),
        Param("show_all", ("--all",), FLAG, "Every card (no `… N more`).", routes=ONLY_CLI),
        JSON,
    ),
    "status",
    False,
    "status",
)
NEXT = Command(
    ("next",),
    (
        AGENT.but(
            tool_required=True, tool_help="Your agent name, e.g. claude; the step is chosen for it."
        ),
        MISSION,
        Param(
            "claim",
            ("--claim",),
            FLAG,
            "Atomically claim the chosen WP, so one agent wins it (implement/fix → claimed, "
            "review → in_review).",
        ),
        Param(
            "remote",
            ("--remote",),
            TEXT,
            "With --claim: claim through this git remote (compare-and-swap on "
            "kitty/coord/<mission>), so one machine wins each WP.",
            "REMOTE",
            routes=ONLY_CLI,
        ),
        JSON,
    ),
    "next_",
    "claim",
    "next",
)
MOVE_TASK = Command(
    ("agent", "tasks", "move-task"), (WP.but(tool_name="wp_id"), TO, *MOVE), "move", True, "move"
)
SHORT_MOVE = Command(
    ("move",),
    (
        WP.but(tool_name="wp_id"),
        Param("lane", (), TEXT, "Target lane.", "LANE", routes=NOT_TOOL, fills="to"),
        TO.but(required=False, help="Target lane (instead of the LANE argument)."),
        *MOVE,
    ),
    "move",
    True,
    "move",
)
MARK_STATUS = Command(
    ("agent", "tasks", "mark-status"),
    (
        Param(
            "tasks",
            (),
            LIST,
            'Subtask ids, e.g. ["T001", "T002"].',
            "T001 [T002 ...]",
            tool_name="task_ids",
            tool_required=True,
        ),
        Param(
            "status_",
            ("--status",),
            TEXT,
            "New subtask status.",
            choices=SUBTASK_STATUSES,
            required=True,
            tool_name="status",
        ),
        Param(
            "wp",
            ("--wp",),
            TEXT,
            "Only look in this WP's subtasks (WP03, WP3 or 3).",
            "WP",
            tool_name="wp_id",
        ),
        MISSION,
        AGENT,
        JSON,
    ),
    "mark_status",
    True,
    "mark_status",
)
#: the MCP server: a client waits for its start-up
MCP = Command(("mcp",), (), "mcp", None)

#: every hot command by its words, in the order the fast path tries them
COMMANDS: dict[tuple[str, ...], Command] = {
    c.words: c for c in (STATUS, NEXT, SHORT_MOVE, MOVE_TASK, MCP, MARK_STATUS)
}
