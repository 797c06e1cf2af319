"""`kitty demo`: a bundled sample mission in a temporary git repository."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from kitty.adapters.git import Git
from kitty.mission.workspace import Mission
from kitty.project.setup import init_project
from kitty.workflow.planning.missions import Content, add_wp, create_mission, finalize

#: The bookshop sample: 8 WPs, a dependency diamond, and WP01/WP06 sharing a file.
SAMPLE: list[dict[str, Any]] = [
    {
        "title": "Catalog model",
        "owns": ["src/shop/catalog.py"],
        "deps": [],
        "objective": "Books with a title, an author and a price, loaded from a CSV file.",
        "tasks": ["The Book record and the CSV loader", "Tests for a good and a broken CSV"],
    },
    {
        "title": "Cart model",
        "owns": ["src/shop/cart.py"],
        "deps": ["WP01"],
        "objective": "A cart that holds catalog books with quantities.",
        "tasks": ["Add, remove and change quantities", "Tests, including unknown books"],
    },
    {
        "title": "Pricing rules",
        "owns": ["src/shop/pricing.py"],
        "deps": ["WP01"],
        "objective": "A cart's total: prices, a 10% discount from three books, VAT.",
        "tasks": ["The pricing function and its tests"],
    },
    {
        "title": "Checkout API",
        "owns": ["src/shop/checkout.py"],
        "deps": ["WP02", "WP03"],
        "objective": "Turn a cart into an order with its priced total.",
        "tasks": ["The checkout function", "Tests: an empty cart is refused"],
    },
    {
        "title": "Inventory sync",
        "owns": ["src/shop/inventory.py"],
        "deps": [],
        "objective": "Stock levels per book, updated from the warehouse feed.",
        "tasks": ["Parse the feed and update the stock, with tests"],
    },
    {
        "title": "Catalog search",
        "owns": ["src/shop/catalog.py", "src/shop/search.py"],
        "deps": ["WP05"],
        "objective": "Find books in stock by words of their title or author.",
        "tasks": ["The search function and its tests"],
    },
    {
        "title": "Receipt emails",
        "owns": ["src/shop/receipts.py"],
        "deps": ["WP04"],
        "objective": "The text of the receipt email for an order.",
        "tasks": ["Render the receipt, with a test per line kind"],
    },
    {
        "title": "User guide",
        "owns": ["docs/**"],
        "deps": ["WP04", "WP07"],
        "objective": "A short guide to ordering from the bookshop.",
        "tasks": ["docs/guide.md from browsing to the receipt"],
    },
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
    Git(repo).run(*args)


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
        content = Content(spec["objective"], tuple(spec["tasks"]))
        add_wp(mission, spec["title"], spec["deps"], spec["owns"], 0, content)
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
