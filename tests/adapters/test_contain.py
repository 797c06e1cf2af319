"""Containment promises, from the user's side: nothing below a repository reaches a file
outside it through a symbolic link, and files kitty reads are read whole.

These run in-process so that `make mutation` can kill the mutants of
kitty/adapters/contain.py (the CLI tests in tests/e2e/test_security.py cover the commands).
"""

from __future__ import annotations

import errno
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
    # the user is told which component is the link, where it points, and what to do
    link = root / "kitty-specs" / "m" / "tasks"
    assert str(caught.value) == f"refusing to use {link}, a symbolic link (to {outside})"
    assert caught.value.hint == (
        "kitty never reads or writes mission state through symbolic links; "
        "replace the link with a regular file or directory (see `kitty doctor`)"
    )
    with pytest.raises(UnsafePath):
        contain.read_text(target)


def test_a_symlinked_last_component_is_refused_by_every_reader(root: Path, tmp_path: Path) -> None:
    secret = tmp_path / "bashrc"
    secret.write_text("export SECRET=1\n")
    link = root / "kitty-specs" / "m" / "status.events.jsonl"
    link.symlink_to(secret)
    never = "kitty never reads or writes mission state through symbolic links; "
    for read, replace in [
        (contain.check, "a regular file or directory"),
        (contain.read_bytes, "a regular file or directory"),
        (contain.check_final, "a regular file"),
    ]:
        with pytest.raises(UnsafePath) as caught:
            read(link)
        assert str(caught.value) == f"refusing to use {link}, a symbolic link (to {secret})"
        assert caught.value.hint == f"{never}replace the link with {replace} (see `kitty doctor`)"
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
    with pytest.raises(IsADirectoryError) as caught:
        contain.read_bytes(folder)
    # callers report it like any OS error: errno, "Is a directory", the file
    assert (caught.value.errno, caught.value.strerror, caught.value.filename) == (
        errno.EISDIR,
        "Is a directory",
        str(folder),
    )


def test_a_fifo_is_refused_without_blocking(root: Path) -> None:
    fifo = root / "kitty-specs" / "m" / "feedback.md"
    os.mkfifo(fifo)
    fd = os.open(fifo, os.O_RDWR)  # a writer, so that opening the fifo cannot block the test
    try:
        with pytest.raises(UnsafePath) as caught:
            contain.open_regular(fifo)
        assert str(caught.value) == f"refusing to read {fifo}: not a regular file"
        assert caught.value.hint == "mission files must be regular files; replace it"
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


def test_a_final_symlink_outside_the_repository_is_not_followed_either(tmp_path: Path) -> None:
    """Files outside every trusted root (a feedback file in /tmp) are still opened without
    following a final symlink: the link is refused, its target never read."""
    secret = tmp_path / "secret"
    secret.write_text("key\n")
    link = tmp_path / "feedback.md"
    link.symlink_to(secret)
    assert contain.symlink_problem(link) is None  # not repository content
    with pytest.raises(UnsafePath) as caught:
        contain.read_bytes(link)
    assert str(caught.value) == f"refusing to use {link}, a symbolic link"
    assert caught.value.hint == "replace the link with a regular file (see `kitty doctor`)"
    dangling = tmp_path / "dangling.md"
    dangling.symlink_to(tmp_path / "nowhere")
    with pytest.raises(UnsafePath):
        contain.read_bytes(dangling)
    with pytest.raises(FileNotFoundError):  # a missing file is not a link problem
        contain.read_bytes(tmp_path / "missing.md")


def test_a_loop_of_links_in_a_folder_is_the_os_error_not_a_link_claim(tmp_path: Path) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(OSError) as caught:
        contain.read_bytes(loop / "file.md")
    assert caught.value.errno == errno.ELOOP
    assert not isinstance(caught.value, UnsafePath)


def test_a_link_whose_target_cannot_be_read_is_still_refused(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The link vanished or changed between kitty seeing it and reading where it points:
    still refused, and the message says the target is unknown rather than inventing one."""
    link = root / "kitty-specs" / "m" / "status.events.jsonl"
    link.symlink_to(tmp_path)

    def unreadable(path: object) -> str:
        raise OSError(errno.ENOENT, "gone")

    monkeypatch.setattr(os, "readlink", unreadable)
    with pytest.raises(UnsafePath) as caught:
        contain.check(link)
    assert str(caught.value) == f"refusing to use {link}, a symbolic link (to ?)"


OUTSIDE_HINT = (
    "kitty writes only files inside the repository; replace the link with a regular "
    "file (e.g. `git rm` it), or point it at a file in the repository"
)


def test_a_file_linked_to_another_file_of_the_work_tree_is_written_through_the_link(
    root: Path,
) -> None:
    """`CLAUDE.md -> AGENTS.md`: kitty writes AGENTS.md, even with the git directory
    forbidden; a regular file is written as itself."""
    agents = root / "AGENTS.md"
    agents.write_text("# agents\n")
    claude = root / "CLAUDE.md"
    claude.symlink_to("AGENTS.md")
    forbidden = (root / ".git",)
    assert contain.check_link_inside(claude, root, forbidden) == Path(os.path.realpath(agents))
    assert contain.check_link_inside(claude, root) == Path(os.path.realpath(agents))
    # a link into a folder whose name merely starts with `.git` is not the git directory
    (root / ".github").mkdir()
    workflow = root / ".github" / "AGENTS.md"
    workflow.write_text("x\n")
    gemini = root / "GEMINI.md"
    gemini.symlink_to(workflow)
    assert contain.check_link_inside(gemini, root, forbidden) == Path(os.path.realpath(workflow))
    # a regular file is the file to write, as given (not resolved)
    assert contain.check_link_inside(agents, root, forbidden) == agents
    assert agents.read_text() == "# agents\n"


def test_a_link_leaving_the_work_tree_is_refused_naming_the_link_and_its_target(
    root: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "gitconfig"
    secret.write_text("[user]\n")
    sibling = tmp_path / "repo-other"  # its name merely starts with the repository's name
    sibling.mkdir()
    (sibling / "AGENTS.md").write_text("x\n")
    link = root / "AGENTS.md"
    for target in (secret, sibling / "AGENTS.md", root):
        link.unlink(missing_ok=True)
        link.symlink_to(target)
        for forbidden in [(), (root / ".git",)]:
            with pytest.raises(UnsafePath) as caught:
                contain.check_link_inside(link, root, forbidden)
            real = os.path.realpath(target)
            assert str(caught.value) == (
                f"refusing to write {link}, a symbolic link to {real}, outside the "
                "repository's work tree"
            )
            assert caught.value.hint == OUTSIDE_HINT
    assert secret.read_text() == "[user]\n"


def test_a_link_into_the_git_directory_is_refused(root: Path) -> None:
    """`AGENTS.md -> .git/config` (or -> .git itself) is inside the folder but would let a
    committed link make kitty rewrite git's own files: refused."""
    git = root / ".git"
    git.mkdir(exist_ok=True)
    (git / "config").write_text("[core]\n")
    link = root / "AGENTS.md"
    for target in (git / "config", git):
        link.unlink(missing_ok=True)
        link.symlink_to(target)
        with pytest.raises(UnsafePath) as caught:
            contain.check_link_inside(link, root, (root / "elsewhere", git))
        real = os.path.realpath(target)
        assert str(caught.value).startswith(f"refusing to write {link}, a symbolic link to {real},")
        assert caught.value.hint == OUTSIDE_HINT
    assert (git / "config").read_text() == "[core]\n"


def test_a_final_symlink_is_named_on_systems_where_eloop_is_not_40(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """macOS reports O_NOFOLLOW on a link as ELOOP = 62 (Linux: 40): the user still gets the
    link named with the hint, not a bare 'Too many levels of symbolic links'."""
    secret = tmp_path / "secret"
    secret.write_text("key\n")
    link = tmp_path / "feedback.md"
    link.symlink_to(secret)

    def open_as_on_macos(path: object, flags: int, *args: object) -> int:
        raise OSError(62, "Too many levels of symbolic links", str(path))

    monkeypatch.setattr(errno, "ELOOP", 62)
    monkeypatch.setattr(os, "open", open_as_on_macos)
    with pytest.raises(UnsafePath) as caught:
        contain.read_bytes(link)
    assert str(caught.value) == f"refusing to use {link}, a symbolic link"
