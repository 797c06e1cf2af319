"""A value YAML cannot build (a date that does not exist) is a one-line error naming the
file and line, in a WP file or in the config, never an internal error."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import kitty, make_mission


def test_a_wp_file_with_an_impossible_date(repo: Path) -> None:
    mission = make_mission(repo, wps=[{"wp_id": "WP01", "title": "A"}])
    path = mission / "tasks" / "WP01-a.md"
    text = path.read_text()
    line = text.split("\n").index("title: A") + 2  # the line after the title
    path.write_text(text.replace("title: A\n", "title: A\ncreated: 2026-13-45\n", 1))
    # status shows an unreadable WP file as a warning and goes on; doctor fails on it.
    for args, code in ((("status",), 0), (("doctor",), 1)):
        run = kitty(repo, *args)
        assert run.code == code, (args, run.out, run.err)
        expected = f"WP01-a.md:{line}: unreadable YAML: '2026-13-45' cannot be read"
        assert expected in run.out + run.err, (args, run.out, run.err)
        assert "internal error" not in run.out + run.err


def test_a_config_with_an_impossible_date(repo: Path) -> None:
    make_mission(repo, wps=[{"wp_id": "WP01", "title": "A"}])
    config = repo / ".kittify" / "config.yaml"
    config.write_text("agents:\n  available: [claude]\nsince: 2026-02-30\n")
    run = kitty(repo, "status")
    assert run.code == 1, (run.out, run.err)
    assert ".kittify/config.yaml:3: unreadable YAML: '2026-02-30' cannot be read" in run.err
    assert "internal error" not in run.out + run.err
