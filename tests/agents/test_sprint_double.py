"""End to end: `kitty sprint` drives the REAL claude and codex processes (installed by
`make test` from the npm registry) against the scripted model double on 127.0.0.1.

A 3-WP mission goes implement → review → rejection (WP02, once) → fix → approve →
merge. The double answers from the prompts kitty wrote, so the assertions check what
an agent is told: its workspace, and the exact kitty commands it must run (the double
runs those lines, as printed, through each CLI's own shell tool). Skips without the
CLIs on a developer's machine; fails in CI with npm (make test installs them).
"""

from __future__ import annotations

import json
import resource
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.agents.clis import environment, require
from tests.agents.double import Script, anthropic, chat, responses
from tests.agents.loopback import serve
from tests.helpers import git, kitty_argv, make_mission, ok

#: Spec Kitty 3.2.7 reads every mission these sprints leave behind (issue 21).
pytestmark = pytest.mark.usefixtures("spec_kitty_reads_what_is_left")

SLUG = "demo-01ABCDEF"
WPS = [{"wp_id": f"WP0{i}", "owned": [f"src/wp0{i}.txt"]} for i in (1, 2, 3)]


def events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    ("implementer", "reviewer"),
    [("claude", "codex"), ("codex", "claude"), ("qwen", "claude"), ("opencode", "codex")],
)
def test_sprint_with_real_clis_rejects_fixes_approves_and_merges(
    repo: Path, tmp_path: Path, implementer: str, reviewer: str
) -> None:
    require(implementer)
    require(reviewer)
    make_mission(repo, wps=WPS)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plan")
    script = Script(feedback_dir=tmp_path, reject=frozenset({"WP02"}))
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    with serve() as double:
        double.responders += [anthropic(script), responses(script), chat(script)]
        home = tmp_path / "agent-home"
        env: dict[str, str] = {}
        for name in {"claude", "codex", implementer, reviewer}:
            env.update(environment(name, home, double.url))
        done = subprocess.run(
            kitty_argv(repo, "sprint", "--no-caffeinate", "--json", "--implementer", implementer,
                       "--reviewer", reviewer, "--merge", "--parallel", "2", "--timeout", "120"),
            capture_output=True, text=True, timeout=280, env=env,
        )  # fmt: skip
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu1.ru_utime + cpu1.ru_stime) - (cpu0.ru_utime + cpu0.ru_stime)
    logs = "\n".join(
        f"--- {p.name}\n{p.read_text()[-1500:]}"
        for p in sorted(repo.rglob(".kittify/runs/*/*.log"))
    )
    stream = events(done.stdout)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:] + logs
    end = stream[-1]
    assert end["event"] == "end" and end["ok"] and end["merged"], end

    # who did what: the implementer did all three and fixed WP02; the other reviewed
    runs = [(e["wp_id"], e["role"], e["agent"]) for e in stream if e["event"] == "dispatch"]
    assert sorted(runs) == sorted(
        [(w, "implement", implementer) for w in ("WP01", "WP02", "WP02", "WP03")]
        + [(w, "review", reviewer) for w in ("WP01", "WP02", "WP02", "WP03")]
    )
    # the prompts the double received: the workspace and the exact commands
    implements = [p for p in script.prompts if p.startswith("# Implement")]
    assert len(implements) == 3 and len([p for p in script.prompts if p.startswith("# Fix")]) == 1
    for wp in ("WP01", "WP02", "WP03"):
        (prompt,) = [p for p in implements if p.startswith(f"# Implement {wp}")]
        lane = next(line.split("`")[1] for line in prompt.splitlines() if "Work only in" in line)
        assert lane.startswith(str(repo / ".worktrees" / SLUG)), lane
        assert f"    cd {lane}\n" in prompt
        move = (
            f"kitty agent tasks move-task {wp} --mission {SLUG} --to for_review "
            f"--agent {implementer} "
            f'--note "Ready for review: {wp} done"'
        )
        assert move in script.commands
        assert f'kitty safe-commit src/{wp.lower()}.txt -m "feat({wp}): {wp}"' in script.commands
    reviews = [p for p in script.prompts if p.startswith("IMPORTANT: After reviewing")]
    assert len(reviews) == 4
    assert [p.splitlines()[2] for p in reviews if "WP02" in p.splitlines()[2]] == [
        "# Review WP02 – Thing",
        "# Review WP02 – Thing (cycle 1/3)",
    ]
    assert any(f"--mission {SLUG} --to planned --agent {reviewer}" in c for c in script.commands)
    assert (tmp_path / "WP02-feedback.md").is_file()

    # the merged result holds each WP's file, WP02 with its fix
    for wp in ("wp01", "wp02", "wp03"):
        assert git(repo, "show", f"main:src/{wp}.txt").startswith(f"{wp.upper()} implemented")
    assert "fixed after review" in git(repo, "show", "main:src/wp02.txt")
    status = ok(repo, "status", "--json").json()["work_packages"]
    assert {w["id"]: w["lane"] for w in status} == {w["wp_id"]: "done" for w in WPS}
    assert cpu < 60, f"{cpu:.1f} s of CPU"
    print(f"end-to-end sprint {implementer}/{reviewer}: {cpu:.1f} s CPU, {end['timing']}")
