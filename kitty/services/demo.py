"""`kitty demo`: a bundled sample mission in a temporary git repository."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path
from typing import Any

from kitty.services.missions import add_wp, create_mission, finalize
from kitty.services.project import init_project
from kitty.services.workspace import Mission

#: The bookshop sample: 8 WPs, a dependency diamond, and WP01/WP06 sharing a file.
SAMPLE: list[dict[str, Any]] = [
    {"title": "Catalog model", "owns": ["src/shop/catalog.py"], "deps": [], "subtasks": 2},
    {"title": "Cart model", "owns": ["src/shop/cart.py"], "deps": ["WP01"], "subtasks": 2},
    {"title": "Pricing rules", "owns": ["src/shop/pricing.py"], "deps": ["WP01"], "subtasks": 1},
    {
        "title": "Checkout API",
        "owns": ["src/shop/checkout.py"],
        "deps": ["WP02", "WP03"],
        "subtasks": 2,
    },
    {"title": "Inventory sync", "owns": ["src/shop/inventory.py"], "deps": [], "subtasks": 1},
    {
        "title": "Catalog search",
        "owns": ["src/shop/catalog.py", "src/shop/search.py"],
        "deps": ["WP05"],
        "subtasks": 1,
    },
    {"title": "Receipt emails", "owns": ["src/shop/receipts.py"], "deps": ["WP04"], "subtasks": 1},
    {"title": "User guide", "owns": ["docs/**"], "deps": ["WP04", "WP07"], "subtasks": 1},
]


SIM_COMMAND = [
    "{python}",
    "-m",
    "kitty.sim",
    "--role",
    "{role}",
    "--agent",
    "{agent}",
    "--wp",
    "{wp}",
    "--mission",
    "{mission}",
    "--workspace",
    "{workspace}",
    "--repo",
    "{repo}",
]
SIM_AGENTS = ("sim-coder", "sim-reviewer")
#: The simulated reviewer rejects this WP once, so the demo shows a fix cycle.
REJECT_ONCE = "WP03"


def kitty_command() -> str:
    """How a new shell runs this kitty: `kitty` when PATH already finds this installation,
    else its script's full path (`make demo` runs .venv/bin/kitty, rarely on PATH), else
    this interpreter with `-m kitty`; quoted for the shell."""
    import shlex
    import sys

    from kitty.adapters.install import COMMAND, own_bin_dir, path_warnings

    here = own_bin_dir()
    if here is not None and not path_warnings():
        return COMMAND
    if here is not None:
        return shlex.quote(str(here / COMMAND))
    return f"{shlex.quote(sys.executable)} -m kitty"


def try_line(repo: Path) -> str:
    """The demo's last line: commands to look around, which run as printed in a new shell."""
    import shlex

    kitty = kitty_command()
    return (
        f"try: cd {shlex.quote(str(repo))} && git log --oneline --graph && "
        f"{kitty} status && {kitty} review show WP03"
    )


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def create_sample_repo(parent: Path | None = None) -> tuple[Path, str]:
    """A git repo with kitty initialized and the sample mission finalized."""
    repo = Path(tempfile.mkdtemp(prefix="kitty-demo-", dir=parent))
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "demo@kitty.invalid")
    _git(repo, "config", "user.name", "kitty demo")
    (repo / "README.md").write_text("# Bookshop\n\nA sample project for the kitty demo.\n")
    _git(repo, "add", "README.md")
    _git(repo, "commit", "-q", "-m", "Bookshop")  # missions need a commit to branch from
    init_project(repo, list(SIM_AGENTS))
    _add_sim_commands(repo)
    slug = create_mission(repo, "bookshop", "Bookshop checkout", "main")["mission"]
    mission = Mission.open(repo, slug)
    for spec in SAMPLE:
        add_wp(mission, spec["title"], spec["deps"], spec["owns"], spec["subtasks"])
    finalize(Mission.open(repo, slug))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "Plan the bookshop mission")
    return repo, slug


def _add_sim_commands(repo: Path) -> None:
    """Register the simulated agents as `agents.commands` (the generic command backend)."""
    import yaml

    path = repo / ".kittify" / "config.yaml"
    config = yaml.safe_load(path.read_text()) or {}
    config.setdefault("agents", {})["commands"] = {name: SIM_COMMAND for name in SIM_AGENTS}
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    # kitty wrote these commands itself, into a repository it just created: trust them.
    from kitty.adapters import trust

    trust.record(repo, config)
