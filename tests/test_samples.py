"""Real missions written by Spec Kitty (../shared/samples, when present) read identically.

The samples are not copied into this repository; the test skips when they are absent.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from kitty.mission.workspace import Mission
from kitty.workflow.rules.dag import compute_lanes
from tests.helpers import init_repo, ok

SAMPLES = Path(
    os.environ.get("KITTY_SAMPLES", Path(__file__).resolve().parents[2] / "shared" / "samples")
)
NAMES = (
    sorted(p.name for p in SAMPLES.iterdir() if (p / "status.json").is_file())
    if SAMPLES.is_dir()
    else []
)


@pytest.fixture(params=NAMES or [pytest.param(None, marks=pytest.mark.skip("no samples"))])
def sample_repo(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, str]:
    repo = init_repo(tmp_path / "repo")
    shutil.copytree(SAMPLES / request.param, repo / "kitty-specs" / request.param)
    return repo, request.param


def test_status_matches_the_samples_own_status_json(sample_repo: tuple[Path, str]) -> None:
    repo, name = sample_repo
    expected = json.loads((SAMPLES / name / "status.json").read_text())
    view = ok(repo, "status", "--mission", name, "--json").json()
    lanes = {wp["id"]: wp["lane"] for wp in view["work_packages"]}
    assert lanes == {wp: data["lane"] for wp, data in expected["work_packages"].items()}
    assert view["warnings"] == []
    assert view["summary"] == {k: v for k, v in expected["summary"].items() if k in view["summary"]}


def test_lanes_match_the_samples_lanes_json(sample_repo: tuple[Path, str]) -> None:
    repo, name = sample_repo
    expected = json.loads((SAMPLES / name / "lanes.json").read_text())
    mission = Mission.open(repo, name)
    assert not mission.specset.errors
    plan = compute_lanes(mission.wps)
    keys = ("lane_id", "wp_ids", "depends_on_lanes", "parallel_group", "write_scope")
    assert [{k: lane[k] for k in keys} for lane in plan.lanes] == [
        {k: lane[k] for k in keys} for lane in expected["lanes"]
    ]


def test_next_and_doctor_run_on_the_samples(sample_repo: tuple[Path, str]) -> None:
    repo, name = sample_repo
    decision = ok(repo, "next", "--agent", "claude", "--mission", name, "--json").json()
    assert decision["action"] in ("accept", "merge", "done")
