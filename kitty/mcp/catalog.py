"""The tools `kitty mcp` serves, as data: each a name, a description, a JSON schema (every
parameter described) and the function of kitty.mcp.tools that answers it.

kitty.mcp.server lists them and checks each call's arguments against them.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass
from typing import Any

from kitty import grammar
from kitty.core.lanes import LANES as _LANES

#: The lane enum of `move.to` (kitty/grammar.py): with `doing`, the alias of `in_progress`.
LANES = grammar.LANES


def _text(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def _flag(description: str) -> dict[str, Any]:
    return {"type": "boolean", "description": description, "default": False}


def _list(description: str) -> dict[str, Any]:
    return {"type": "array", "items": {"type": "string"}, "description": description}


def _choice(values: tuple[str, ...], description: str) -> dict[str, Any]:
    return {"type": "string", "enum": list(values), "description": description}


def schema(param: grammar.Param) -> dict[str, Any]:
    """A declared parameter's JSON schema (kitty/grammar.py), its help in the tools'
    spelling: `--self-review-fallback` is `self_review_fallback` here."""
    text = param.tool_help or re.sub(
        r"--([a-z][a-z-]*)", lambda m: m.group(1).replace("-", "_"), param.help
    )
    if param.kind == grammar.FLAG:
        return _flag(text)
    if param.kind == grammar.LIST:
        return _list(text)
    return _choice(param.choices, text) if param.choices else _text(text)


MISSION = schema(grammar.MISSION)
AGENT = schema(grammar.AGENT)
WP = schema(grammar.WP)


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    #: the function of kitty.mcp.tools that answers it (imported on the first call,
    #: so `initialize` and `tools/list` need none of the services)
    call: str
    params: dict[str, dict[str, Any]]
    required: tuple[str, ...] = ()
    read_only: bool = False
    #: parameters whose enum the schema advertises but kitty checks itself (its error
    #: names the near miss: "did you mean 'in_review'")
    lenient: frozenset[str] = frozenset()

    def listing(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": inspect.cleandoc(self.description),
            "inputSchema": {
                "type": "object",
                "properties": self.params,
                "required": list(self.required),
                "additionalProperties": False,
            },
            "annotations": {
                "readOnlyHint": self.read_only,
                "destructiveHint": False,
                "openWorldHint": False,
            },
        }

    def arguments(self, given: Any) -> dict[str, Any]:
        """The call's arguments checked against the schema, or a UsageError naming the fix."""
        from kitty.errors import UsageError

        if given is None:
            given = {}
        if not isinstance(given, dict):
            raise UsageError("the arguments must be a JSON object", f"see the {self.name} schema")
        unknown = sorted(set(given) - set(self.params))
        if unknown:
            raise UsageError(
                f"{self.name} has no parameter {', '.join(unknown)}",
                "its parameters: " + ", ".join(self.params),
            )
        missing = [name for name in self.required if given.get(name) is None]
        if missing:
            raise UsageError(f"{self.name} needs {', '.join(missing)}", "pass it and call again")
        out: dict[str, Any] = {}
        for name, value in given.items():
            if value is None:
                continue
            _check_encodable(name, value)
            schema = self.params[name]
            kind = schema["type"]
            good = {
                "string": isinstance(value, str),
                "boolean": isinstance(value, bool),
                "array": isinstance(value, list) and all(isinstance(v, str) for v in value),
            }[kind]
            if not good:
                what = {"array": "a list of strings"}.get(kind, f"a {kind}")
                raise UsageError(f"{name} must be {what}", f"see the {self.name} schema")
            if "enum" in schema and name not in self.lenient and value not in schema["enum"]:
                raise UsageError(
                    f"{name} {value!r} is not one of {', '.join(schema['enum'])}",
                    "pick one of those",
                )
            out[name] = value
        return out


def _check_encodable(name: str, value: Any) -> None:
    """Refuse a string (or a list's string) UTF-8 cannot hold, naming the argument."""
    from kitty.core.limits import check_encodable

    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, str):
            check_encodable(item, name)


def declared(
    command: grammar.Command, description: str, call: str, read_only: bool = False
) -> Tool:
    """The tool of a hot command, its schema derived from the command's declaration."""
    params = command.on(grammar.TOOL)
    return Tool(
        str(command.tool),
        description,
        call,
        {p.tool_name: schema(p) for p in params},
        tuple(p.tool_name for p in params if p.tool_required),
        read_only,
        frozenset(p.tool_name for p in params if p.choices and not p.checked),
    )


TOOLS: tuple[Tool, ...] = (
    declared(
        grammar.NEXT,
        """The agent's exact next step (implement, review, fix, arbiter, accept, merge,
        done, wait, blocked) with the commands to run. claim=true atomically claims the
        WP. Same JSON as `kitty next --json`.""",
        "next_step",
    ),
    declared(
        grammar.STATUS,
        """The board: every WP with its lane, agent, review cycles and what it waits
        for. Same JSON as `kitty status --json`.""",
        "status",
        read_only=True,
    ),
    declared(
        grammar.MOVE_TASK,
        """Move a WP to another lane, checked against the transition table. Rejecting a
        WP in review needs review_feedback_file or note. Same JSON as
        `kitty move --json`.""",
        "move",
    ),
    declared(
        grammar.MARK_STATUS,
        """Mark subtasks (T001, T002, …) done, planned or in_progress. Same JSON as
        `kitty agent tasks mark-status --json`.""",
        "mark_status",
    ),
    Tool(
        "review_submit",
        """Record a review verdict from findings files (approve, or reject with a
        review cycle). Same JSON as `kitty review submit --json`.""",
        "review_submit",
        {
            "wp_id": WP,
            "findings_files": _list(
                "Findings files (absolute, or relative to the repository); "
                "`kitty review schema` prints their format."
            ),
            "agent": AGENT,
            "mission": MISSION,
            "format": _choice(
                ("kitty", "specdev", "persona", "addon"),
                "The findings' format; default: detected from each file.",
            ),
        },
        ("wp_id", "findings_files"),
    ),
    Tool(
        "implement",
        """Claim a WP (or the one `next` would choose), prepare its lane worktree and
        return the workspace and the implementation prompt (prompt_text). Same JSON as
        `kitty agent action implement --json`, plus prompt_text.""",
        "implement",
        {
            "wp_id": _text("The WP to implement (WP03, WP3 or 3); default: next's choice."),
            "agent": AGENT,
            "mission": MISSION,
        },
    ),
    Tool(
        "review",
        """Claim a WP in for_review for review; return the workspace and the review
        prompt (prompt_text). Same JSON as `kitty agent action review --json`, plus
        prompt_text.""",
        "review",
        {
            "wp_id": _text("The WP to review (WP03, WP3 or 3); default: the next one."),
            "agent": AGENT,
            "mission": MISSION,
            "takeover": _flag("Take over a review another agent left (needs a note)."),
            "note": _text("Why you take the review over."),
        },
    ),
    Tool(
        "wp_add",
        """Add the next work package file (tasks/WPnn-<title>.md) with its objective
        and subtasks; they are the brief an agent gets. Run `finalize` afterwards to
        schedule it. Same JSON as `kitty wp add --json`.""",
        "wp_add",
        {
            "title": _text("What the WP delivers, one line."),
            "objective": _text("The Objectives section: what done looks like."),
            "subtasks": _list("One line per subtask; each gets the next T-id."),
            "body": _text(
                "The whole Markdown body instead of objective and subtasks "
                "(then name the subtask ids in it yourself)."
            ),
            "depends_on": _list('WP ids this WP needs approved first, e.g. ["WP01"].'),
            "owns": _list("Paths or globs this WP writes: its write scope."),
            "mission": MISSION,
        },
        ("title",),
    ),
    Tool(
        "wp_edit",
        """Change a WP's title, objective, owned files, dependencies (the list given
        replaces the old one) or whole body. Refused, writing nothing, when the file
        would not read back or the dependencies would form a cycle. Same JSON as
        `kitty wp edit --json`.""",
        "wp_edit",
        {
            "wp_id": WP,
            "title": _text("A new title, one line."),
            "objective": _text("A new text for the Objectives section."),
            "owns": _list("The new owned files (replacing the old list)."),
            "depends_on": _list("The new dependencies (replacing the old list)."),
            "body": _text("A new Markdown body (under the heading), replacing it all."),
            "subtasks": _list('Subtasks to add ("text") or reword ("T003=text").'),
            "remove_subtasks": _list('Subtask ids to remove, e.g. ["T003"].'),
            "mission": MISSION,
        },
        ("wp_id",),
    ),
    Tool(
        "wp_depend",
        """Add or remove dependencies of a WP; unknown WPs, itself and cycles are
        refused. Same JSON as `kitty wp depend --json`.""",
        "wp_depend",
        {
            "wp_id": WP,
            "add": _list("WP ids to depend on."),
            "remove": _list("WP ids to stop depending on."),
            "mission": MISSION,
        },
        ("wp_id",),
    ),
    Tool(
        "wp_split",
        """Cut a WP nobody works on (not finalized, planned or blocked) in two: a new WP
        takes the subtasks in `move` with their text and the original's dependencies;
        WPs that depended on the original depend on both. Same JSON as
        `kitty wp split --json`.""",
        "wp_split",
        {
            "wp_id": WP,
            "title": _text("The new WP's title."),
            "move": _list('Subtask ids of the original that move, e.g. ["T004"].'),
            "objective": _text("The new WP's objective."),
            "owns": _list("The new WP's owned files; default: the original's."),
            "mission": MISSION,
        },
        ("wp_id", "title"),
    ),
    Tool(
        "wp_show",
        """One WP: title, lane, agent, subtasks with their status, owned files, body,
        and its dependency tree both ways (depends_on_tree, dependents_tree). Same JSON
        as `kitty wp show --json`.""",
        "wp_show",
        {"wp_id": WP, "mission": MISSION},
        ("wp_id",),
        read_only=True,
    ),
    Tool(
        "wp_search",
        """WPs whose id, title, owned files or body hold every word of the query (any
        case), with the matching lines of their files. Same JSON as
        `kitty wp search --json`.""",
        "wp_search",
        {
            "query": _text('Words that must all appear, e.g. "cart discount".'),
            # (a WP is never in `doing`; kitty's own check names the lanes)
            "lane": _choice(_LANES, "Only WPs in this lane."),
            "mission": MISSION,
        },
        ("query",),
        read_only=True,
        lenient=frozenset({"lane"}),
    ),
    Tool(
        "finalize",
        """Validate every WP file (template placeholders included), compute the lanes
        and put new WPs in `planned`; nothing is written when a file is invalid. Same
        JSON as `kitty finalize --json`.""",
        "finalize",
        {
            "mission": MISSION,
            "allow_placeholders": _flag(
                "Finalize even with template text left in a WP (reported as warnings)."
            ),
        },
    ),
)
