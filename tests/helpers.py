"""Test helpers: build real git repos and missions, run the CLI in-process."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from filelock import FileLock

from kitty.cli import cli


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout


def once_per_run(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]
) -> Path:
    """A directory that `build(dir)` fills once per test run, however many pytest-xdist
    workers ask for it (the first builds it under a lock, the others wait and reuse it);
    the tests only read it. A build that fails leaves nothing: the next asker retries."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the run's folder, above every worker's own
    target = root / f"once-{name}"
    with FileLock(f"{target}.lock"):
        if not (target / ".built").is_file():
            shutil.rmtree(target, ignore_errors=True)
            target.mkdir()
            build(target)
            (target / ".built").touch()
    return target


def init_repo(path: Path, branch: str = "main") -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", branch)
    (path / "README.md").write_text("project\n")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "initial")
    return path


@dataclass
class Run:
    result: Result

    @property
    def code(self) -> int:
        return self.result.exit_code

    @property
    def out(self) -> str:
        return self.result.stdout

    @property
    def err(self) -> str:
        return self.result.stderr

    def json(self) -> Any:
        return json.loads(self.result.stdout)


def kitty(repo: Path, *args: str, input: str | None = None) -> Run:
    runner = CliRunner()
    result = runner.invoke(cli, ["-C", str(repo), *args], input=input, catch_exceptions=False)
    return Run(result)


def ok(repo: Path, *args: str) -> Run:
    run = kitty(repo, *args)
    assert run.code == 0, f"kitty {' '.join(args)} -> {run.code}\n{run.out}\n{run.err}"
    return run


def write_wp(
    mission_dir: Path,
    wp_id: str,
    title: str = "Thing",
    deps: list[str] | None = None,
    subtasks: list[str] | None = None,
    owned: list[str] | None = None,
    extra: str = "",
    name: str | None = None,
) -> Path:
    tasks = mission_dir / "tasks"
    tasks.mkdir(parents=True, exist_ok=True)
    lines = [
        "---",
        f"work_package_id: {wp_id}",
        f"title: {title}",
        f"dependencies: {json.dumps(deps or [])}",
        f"subtasks: {json.dumps(subtasks or [])}",
        f"owned_files: {json.dumps(owned or [])}",
    ]
    if extra:
        lines.append(extra.rstrip("\n"))
    lines += ["---", "", f"# {wp_id} {title}", ""]
    path = tasks / (name or f"{wp_id}-{title.lower().replace(' ', '-')}.md")
    path.write_text("\n".join(lines))
    return path


def make_mission(
    repo: Path,
    slug: str = "demo-01ABCDEF",
    wps: list[dict[str, Any]] | None = None,
    finalize: bool = True,
    config: str = "agents:\n  available: [claude, codex]\n",
) -> Path:
    """A mission written directly to disk (fast), optionally finalized via the CLI."""
    (repo / ".kittify").mkdir(exist_ok=True)
    (repo / ".kittify" / "config.yaml").write_text(config)
    mission_dir = repo / "kitty-specs" / slug
    mission_dir.mkdir(parents=True, exist_ok=True)
    (mission_dir / "meta.json").write_text(
        json.dumps(
            {
                "mission_id": "01ABCDEFGHJKMNPQRSTVWXYZ00",
                "mission_slug": slug,
                "slug": slug,
                "friendly_name": "Demo",
                "target_branch": "main",
            },
            indent=2,
        )
    )
    for spec in wps or []:
        write_wp(mission_dir, **spec)
    if finalize:
        ok(repo, "finalize", "--mission", slug)
    return mission_dir


def kitty_argv(repo: Path, *args: str) -> list[str]:
    """The command line that runs this kitty in a separate process, in `repo`."""
    return [sys.executable, "-m", "kitty", "-C", str(repo), *args]


def install_fakes(bin_dir: Path, names: tuple[str, ...], text: str, monkeypatch: Any) -> Path:
    """Write `text` as executables `names` in `bin_dir`, first on PATH."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name in names:
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return bin_dir


#: A scripted agent CLI: it logs each call (argv, stdin) as a JSON line, then acts.
FAKE_AGENT = Path(__file__).resolve().parent / "fakes" / "agent.py"


def fake_agents(tmp_path: Path, names: tuple[str, ...], monkeypatch: Any) -> Path:
    """tests/fakes/agent.py as each of `names`, first on PATH; returns the log it writes."""
    script = f"#!{sys.executable}\n{FAKE_AGENT.read_text()}"
    install_fakes(tmp_path / "bin", names, script, monkeypatch)
    log = tmp_path / "agents.jsonl"
    log.touch()
    monkeypatch.setenv("FAKE_AGENT_LOG", str(log))
    monkeypatch.setenv("PYTHONPATH", str(FAKE_AGENT.parents[2]))
    return log


def agent_calls(log: Path) -> list[dict[str, Any]]:
    """The calls the fake agents logged, in order."""
    return [json.loads(line) for line in log.read_text().splitlines()]


def spec_kitty_move(slug: str, wp: str, frm: str, to: str, at: str, eid: str, **extra: Any) -> str:
    """A log line as Spec Kitty 3.2.7 writes a move (every key it writes, `extra` on top)."""
    record = {
        "actor": "user",
        "at": at,
        "event_id": eid,
        "evidence": None,
        "execution_mode": "worktree",
        "force": False,
        "from_lane": frm,
        "mission_slug": slug,
        "policy_metadata": None,
        "reason": None,
        "review_ref": None,
        "to_lane": to,
        "wp_id": wp,
    }
    record.update(extra)
    return json.dumps(record, sort_keys=True)


def trust(repo: Path) -> Run:
    """`kitty trust` in `repo`: the user trusts the commands its config defines (hermetic HOME)."""
    return ok(repo, "trust")


#: Runs kitty's entry point and prints, on its last stderr line, every module it imported.
_MODULES_PROBE = (
    "import sys\n"
    "from kitty.entry import main\n"
    "try:\n"
    "    main()\n"
    "except SystemExit:\n"
    "    print('MODULES=' + ','.join(sorted(sys.modules)), file=sys.stderr)\n"
    "    raise\n"
)


def imported_by(repo: Path, *args: str) -> tuple[str, set[str]]:
    """(stdout, the modules imported) of `kitty -C repo ARGS` in a new interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", _MODULES_PROBE, "-C", str(repo), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    line = done.stderr.splitlines()[-1].removeprefix("MODULES=")
    return done.stdout, set(line.split(","))


def lane_commit(
    repo: Path, wp_id: str, slug: str | None = None, name: str | None = None, text: str = ""
) -> str:
    """Commit a file of `wp_id`'s own on its lane branch (in its lane worktree when it
    exists, else straight onto the branch, created from the mission or target branch):
    the work a WP needs before it may enter for_review (issue 41). Returns the commit."""
    specs = repo / "kitty-specs"
    slug = slug or next(p.name for p in sorted(specs.iterdir()) if (p / "lanes.json").is_file())
    doc = json.loads((specs / slug / "lanes.json").read_text())
    lane = next(x["lane_id"] for x in doc["lanes"] if wp_id in x["wp_ids"])
    name = name or f"src/{wp_id.lower()}_work.py"
    content = text or f"# {wp_id} {len(git(repo, 'rev-list', '--all').split())}\n"
    worktree = repo / ".worktrees" / f"{slug}-{lane}"
    if worktree.is_dir():
        (worktree / name).parent.mkdir(parents=True, exist_ok=True)
        (worktree / name).write_text(content)
        git(worktree, "add", name)
        git(worktree, "commit", "-qm", f"feat({wp_id}): work")
        return git(worktree, "rev-parse", "HEAD").strip()
    branch = f"refs/heads/kitty/mission-{slug}-{lane}"
    meta = json.loads((specs / slug / "meta.json").read_text())
    parents = [
        branch,
        f"refs/heads/kitty/mission-{slug}",
        f"refs/heads/{meta.get('target_branch') or 'main'}",
    ]
    parent = next(
        out.strip()
        for ref in parents
        if (
            out := subprocess.run(
                ["git", "rev-parse", "--verify", "-q", ref],
                cwd=repo,
                capture_output=True,
                text=True,
            ).stdout
        )
    )
    blob = subprocess.run(
        ["git", "hash-object", "-w", "--stdin"],
        cwd=repo,
        input=content,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    env = {**os.environ, "GIT_INDEX_FILE": str(repo / ".git" / f"kitty-test-index-{wp_id}")}
    subprocess.run(["git", "read-tree", parent], cwd=repo, env=env, check=True)
    subprocess.run(
        ["git", "update-index", "--add", "--cacheinfo", f"100644,{blob},{name}"],
        cwd=repo,
        env=env,
        check=True,
    )
    tree = subprocess.run(
        ["git", "write-tree"], cwd=repo, env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    Path(env["GIT_INDEX_FILE"]).unlink()
    sha = git(repo, "commit-tree", tree, "-p", parent, "-m", f"feat({wp_id}): work").strip()
    git(repo, "update-ref", branch, sha)
    return sha
