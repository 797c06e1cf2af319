"""Containment promises, from the user's side: nothing below a repository reaches a file
outside it through a symbolic link, and files kitty reads are read whole.

These run in-process so that `make mutation` can kill the mutants of
kitty/adapters/contain.py (the CLI tests in tests/cli/test_security.py cover the commands).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kitty.adapters import contain
from kitty.errors import UnsafePath


@pytest.fixture
def root(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "kitty-specs" / "m").mkdir(parents=True)
    contain.trust(repo)
    return repo


def test_a_symlinked_folder_anywhere_below_the_repository_is_refused(
    root: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "status.events.jsonl").write_text("secret\n")
    (root / "kitty-specs" / "m" / "tasks").symlink_to(outside)
    target = root / "kitty-specs" / "m" / "tasks" / "status.events.jsonl"
    with pytest.raises(UnsafePath) as caught:
        contain.check(target)
    message = str(caught.value)
    # the user is told which component is the link and where it points
    assert f"refusing to use {root / 'kitty-specs' / 'm' / 'tasks'}, a symbolic link" in message
    assert f"(to {outside})" in message
    assert "replace the link" in caught.value.hint
    with pytest.raises(UnsafePath):
        contain.read_text(target)


def test_a_symlinked_last_component_is_refused_by_every_reader(root: Path, tmp_path: Path) -> None:
    secret = tmp_path / "bashrc"
    secret.write_text("export SECRET=1\n")
    link = root / "kitty-specs" / "m" / "status.events.jsonl"
    link.symlink_to(secret)
    for read in (contain.check, contain.read_bytes, contain.check_final):
        with pytest.raises(UnsafePath) as caught:
            read(link)
        assert str(link) in str(caught.value)
    assert secret.read_text() == "export SECRET=1\n"


def test_dot_dot_is_resolved_before_the_check(root: Path, tmp_path: Path) -> None:
    (root / "kitty-specs" / "m" / "tasks").symlink_to(tmp_path)
    # `tasks/..` is never walked through the link: the path is normalised first
    assert contain.symlink_problem(root / "kitty-specs" / "m" / "tasks" / ".." / "x") is None
    sneaky = root / "kitty-specs" / ".." / ".." / "elsewhere"
    assert contain.check(sneaky) == sneaky  # outside the repository: not its content


def test_paths_outside_every_trusted_root_are_not_checked(root: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "link").symlink_to(tmp_path)
    assert contain.symlink_problem(elsewhere / "link" / "x") is None
    # a sibling whose name merely starts with the repository's name is outside it too
    sibling = tmp_path / "repo-other"
    sibling.mkdir()
    (sibling / "link").symlink_to(tmp_path)
    assert contain.symlink_problem(sibling / "link" / "x") is None


def test_the_repository_root_itself_is_inside(root: Path) -> None:
    assert contain.symlink_problem(root) is None
    assert contain.symlink_problem(root / ".") is None


def test_files_that_do_not_exist_yet_are_allowed_so_kitty_can_create_them(root: Path) -> None:
    new = root / "kitty-specs" / "m" / "new-folder" / "deeper" / "file"
    assert contain.check(new) == new
    with pytest.raises(FileNotFoundError):
        contain.read_bytes(new)


def test_a_path_through_a_regular_file_is_not_a_symlink_problem(root: Path) -> None:
    plain = root / "kitty-specs" / "m" / "plain"
    plain.write_text("x")
    assert contain.symlink_problem(plain / "below") is None


def test_the_innermost_trusted_root_is_the_one_checked(root: Path, tmp_path: Path) -> None:
    inner = root / "inner"
    inner.mkdir()
    contain.trust(inner, inner)  # registering twice keeps one entry
    assert contain._ROOTS.count(os.path.realpath(inner)) == 1
    assert contain._root_of(os.path.realpath(inner / "x")) == os.path.realpath(inner)
    assert contain._root_of(os.path.realpath(root / "x")) == os.path.realpath(root)
    (inner / "link").symlink_to(tmp_path)
    problem = contain.symlink_problem(inner / "link" / "x")
    assert problem is not None and problem.startswith(f"{inner / 'link'}, a symbolic link")


def test_large_files_are_read_whole(root: Path) -> None:
    big = root / "kitty-specs" / "m" / "status.events.jsonl"
    data = os.urandom(1 << 20) + b"tail"
    big.write_bytes(data)
    assert contain.read_bytes(big) == data
    text = root / "kitty-specs" / "m" / "t.md"
    text.write_text("café\n", encoding="utf-8")
    assert contain.read_text(text) == "café\n"


def test_a_folder_where_a_file_should_be_is_reported_as_a_folder(root: Path) -> None:
    folder = root / "kitty-specs" / "m" / "status.json"
    folder.mkdir()
    with pytest.raises(IsADirectoryError):
        contain.read_bytes(folder)


def test_a_fifo_is_refused_without_blocking(root: Path) -> None:
    fifo = root / "kitty-specs" / "m" / "feedback.md"
    os.mkfifo(fifo)
    fd = os.open(fifo, os.O_RDWR)  # a writer, so that opening the fifo cannot block the test
    try:
        with pytest.raises(UnsafePath, match="not a regular file"):
            contain.open_regular(fifo)
    finally:
        os.close(fd)


def test_the_descriptor_handed_out_reads_the_file(root: Path) -> None:
    plain = root / "kitty-specs" / "m" / "plain"
    plain.write_text("hello")
    fd = contain.open_regular(plain)
    try:
        assert os.read(fd, 100) == b"hello"
    finally:
        os.close(fd)
