"""`kitty init`: make a git repository a kitty project (idempotent)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kitty.adapters import config as config_adapter
from kitty.adapters import contain, layout
from kitty.adapters.files import atomic_write, check_writable
from kitty.adapters.git import initial_commit, unborn_branch
from kitty.project import verify_setup
from kitty.project.rules.verify import as_config

ATTRIBUTES_RULE = "kitty-specs/**/status.events.jsonl merge=union"
IGNORES = (".worktrees/", ".kittify/prompts/", ".kittify/runs/")
#: Derived from the log on every write, so never tracked: concurrent pulls cannot conflict.
DERIVED = "kitty-specs/*/status.json"
IGNORE_HEADER = "# kitty runtime files (never committed)"


def _ensure_lines(path: Path, header: str | None, lines: tuple[str, ...]) -> bool:
    check_writable(path)  # never read (or write) through a symlink
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    present = {line.strip() for line in text.splitlines()}
    missing = [line for line in lines if line not in present]
    if not missing:
        return False
    if text and not text.endswith("\n"):
        text += "\n"
    if header and header not in present:
        text += ("\n" if text else "") + header + "\n"
    text += "".join(line + "\n" for line in missing)
    atomic_write(path, text)
    return True


def _untrack_derived(root: Path) -> list[str]:
    """`git rm --cached` every tracked status.json; the files stay on disk."""
    from kitty.adapters.git import Git

    git = Git(root)
    tracked = git.tracked([DERIVED])
    if tracked:
        git.run("rm", "--cached", "--quiet", "--", *tracked)
    return tracked


def init_project(
    cwd: Path, agents: list[str] | None, agent_files: bool = True, commit: bool = False
) -> dict[str, Any]:
    from kitty.project.onboarding import plan_agent_files, write_agent_files

    project = layout.find_project(cwd)
    root = project.root
    # Everything init writes is checked first (no symlink on the way, AGENTS.md & co.'s
    # markers balanced): a refusal leaves the repository as it was.
    for path in (project.config_path, root / ".gitattributes", root / ".gitignore"):
        check_writable(path)
    contain.check(project.specs_dir)
    onboarding = plan_agent_files(root, project.git_common_dir) if agent_files else []
    changed = []
    found = verify_setup.proposals(root, config_adapter.load(project.config_path).raw)
    if config_adapter.update(project.config_path, agents, verify=as_config(found)):
        changed.append(".kittify/config.yaml")
    if _ensure_lines(root / ".gitattributes", None, (ATTRIBUTES_RULE,)):
        changed.append(".gitattributes")
    if _ensure_lines(root / ".gitignore", IGNORE_HEADER, (*IGNORES, DERIVED)):
        changed.append(".gitignore")
    untracked = _untrack_derived(root)
    if untracked:
        changed.append(f"stopped tracking {len(untracked)} status.json (commit the change)")
    changed += write_agent_files(onboarding)
    project.specs_dir.mkdir(exist_ok=True)
    config = config_adapter.load(project.config_path)
    committed = initial_commit(project) if commit else None
    if committed:
        changed.append(f"made the first commit on {committed} (empty: `init`)")
    return {
        "unborn_branch": unborn_branch(project),
        "root": str(root),
        "changed": changed,
        "untracked": untracked,
        "agents": list(config.agents),
        "auto_commit": config.auto_commit,
        "verify": verify_setup.report(found, config.raw),
    }
