"""An agent that speaks only MCP (the SDK's own client) takes an empty git repository to a
merged mission with kitty's tools alone, following `next`'s `tool_calls`; over MCP, hints
name tools and their parameters, not shell commands."""

from __future__ import annotations

import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from kitty.mcp.hints import call, for_mcp
from tests import mcpclient
from tests.mcpclient import payload

mcp = pytest.importorskip("mcp")

Call = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


def drive(repo: Path, script: Callable[[Call], Awaitable[Any]]) -> Any:
    """Run `script(call)` against `kitty -C repo mcp`; `call(tool, args)` answers the JSON."""

    async def run(client: Any) -> Any:
        async def tool(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            result = await client.call_tool(name, arguments)
            doc = payload(result)
            doc["_is_error"] = bool(result.is_error)
            return doc

        return await script(tool)

    return mcpclient.drive(repo, run)


def _ok(doc: dict[str, Any]) -> dict[str, Any]:
    assert not doc["_is_error"], doc
    return doc


@pytest.mark.timeout(300)
def test_an_mcp_only_agent_takes_an_empty_repository_to_a_merged_mission(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "empty"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    seen: list[str] = []

    async def script(tool: Call) -> dict[str, Any]:
        _ok(await tool("init", {"agents": ["claude", "codex"], "initial_commit": True}))
        created = _ok(await tool("mission_create", {"name": "shop", "title": "Shop"}))
        slug = created["mission"]
        for title, path in (("Cart", "src/cart.py"), ("Pay", "src/pay.py")):
            _ok(await tool("wp_add", {"title": title, "objective": f"The {title.lower()}",
                                      "subtasks": [f"Write {path}"], "owns": [path]}))  # fmt: skip
        _ok(await tool("finalize", {}))
        turn = 0
        while True:
            agent = ("claude", "codex")[turn % 2]
            turn += 1
            assert turn < 40, seen
            step = _ok(await tool("next", {"agent": agent, "claim": True}))
            seen.append(f"{agent}: {step['action']} {step['wp_id'] or ''}")
            if step["action"] == "done":
                return step
            if step["action"] == "wait":
                continue
            assert step["action"] != "blocked", step
            for made in step["tool_calls"]:
                assert made["tool"] is not None, made  # every step is a tool
                answer = _ok(await tool(made["tool"], made["arguments"]))
                if made["tool"] == "implement":
                    await implement(tool, answer, agent)
                elif made["tool"] == "review":
                    wp = answer["wp_id"]
                    _ok(await tool("move", {"wp_id": wp, "to": "approved", "agent": agent,
                                            "note": "Review passed: it works"}))  # fmt: skip
            assert slug

    async def implement(tool: Call, answer: dict[str, Any], agent: str) -> None:
        wp, ws = answer["wp_id"], Path(answer["workspace"])
        shown = _ok(await tool("wp_show", {"wp_id": wp}))
        (path,) = shown["owned_files"]
        (ws / path).parent.mkdir(parents=True, exist_ok=True)
        (ws / path).write_text(f"# {wp}\n")
        _ok(await tool("safe_commit", {"paths": [path], "message": f"feat({wp}): {path}",
                                       "workspace": str(ws)}))  # fmt: skip
        _ok(await tool("mark_status", {"task_ids": list(shown["subtask_status"]),
                                       "status": "done", "agent": agent}))  # fmt: skip
        _ok(await tool("move", {"wp_id": wp, "to": "for_review", "agent": agent,
                                "note": "Ready for review: done"}))  # fmt: skip

    done = drive(repo, script)
    assert done["action"] == "done", seen
    assert any("accept" in s for s in seen) and any("merge" in s for s in seen), seen
    log = subprocess.run(
        ["git", "log", "--oneline", "main"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout
    assert "feat(WP01)" in log and "feat(WP02)" in log
    assert (repo / "src" / "cart.py").is_file() and (repo / "src" / "pay.py").is_file()


def test_over_mcp_a_hint_names_the_tool_and_its_parameters(tmp_path: Path) -> None:
    from tests.helpers import init_repo, lane_commit, make_mission

    fresh = init_repo(tmp_path / "fresh")
    planned = init_repo(tmp_path / "planned")
    make_mission(planned, wps=[{"wp_id": "WP01", "title": "Cart"}])

    async def in_fresh(tool: Call) -> dict[str, Any]:
        return await tool("wp_add", {"title": "Cart"})

    refused = drive(fresh, in_fresh)
    assert refused["_is_error"]
    assert 'mission_create(name="NAME")' in refused["error"]["hint"], refused

    async def in_planned(tool: Call) -> list[dict[str, Any]]:
        for lane in ("claimed", "in_progress", "for_review"):
            if lane == "for_review":
                lane_commit(planned, "WP01")  # work of its own before review (issue 41)
            _ok(await tool("move", {"wp_id": "WP01", "to": lane, "agent": "claude"}))
        waiting = _ok(await tool("next", {"agent": "claude"}))
        _ok(await tool("move", {"wp_id": "WP01", "to": "in_review", "agent": "codex"}))
        bare = await tool("move", {"wp_id": "WP01", "to": "planned", "agent": "codex"})
        return [waiting, bare]

    waiting, bare = drive(planned, in_planned)
    assert bare["_is_error"]
    hint = bare["error"]["hint"]
    assert "review_feedback_file=" in hint and "--" not in hint, hint
    # `next` names tools: its steps as tool_calls, its blockers' commands as calls
    assert waiting["tool_calls"][0] == {"tool": "status", "arguments": {"mission": "demo-01ABCDEF"}}
    alone = " ".join(waiting["blocked_by"])
    assert 'review(wp_id="WP01", mission="demo-01ABCDEF", agent="claude:reviewer")' in alone
    assert "kitty agent" not in alone and "--self-review-fallback" not in alone
    assert call("kitty next --agent claude --claim") == {
        "tool": "next", "arguments": {"agent": "claude", "claim": True}
    }  # fmt: skip
    assert for_mcp("pass --agent NAME") == "pass agent=NAME"
