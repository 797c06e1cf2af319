"""What a killed git commit or merge leaves in the index and the work tree, and its repair.

* **The index behind HEAD.** `git commit` moves the branch, then renames `index.lock`
  over the index: killed in between, the index still holds the files of the commit
  before, so each of kitty's files it committed looks staged back to its old version
  while the work tree equals HEAD. `git commit --only` of such a file then finds
  "nothing to commit". Repair: reset those files' index entries to HEAD (their work
  tree content is HEAD's: nothing is lost).
* **A merge's checkout half done.** `git merge` writes the incoming files before the
  index: killed in between, a teammate's new files are left untracked, and every later
  merge refuses to overwrite them. Repair: delete an untracked file only when it is
  byte for byte the upstream's version of a file HEAD lacks (the merge brings it back).
* **A fast-forward's checkout half done.** `git merge --ff-only` writes the work tree
  and the index before it moves the branch: killed in between, some of the new
  commit's files are written (and maybe the index) while HEAD is still the old commit.
  Repair: when every file the two commits differ on holds the old or the new version
  (or is missing), put them back at the old one (the fast-forward writes them again).
* **A kitty commit killed with its git.** kitty records its pid in `.git/kitty/commit.pid`
  for the length of each auto-commit; the record left by a dead pid means the git locks
  in the repository are that commit's (once no git process runs here), whatever their age.

Only `os` and kitty's git adapter are used: sync, the auto-commit and doctor call this.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kitty.adapters import contain, gitlocks
from kitty.adapters.git import Git

#: kitty's own files in every mission (git pathspecs): the only files repaired here.
KITTY_FILES = tuple(
    f":(glob)kitty-specs/*/{name}"
    for name in (
        "status.events.jsonl",
        "status.json",
        "lanes.json",
        "meta.json",
        "tasks/*/review-cycle-*",
    )
)
OWNER = "commit.pid"


def _names(out: str) -> list[str]:
    return [p for p in out.split("\0") if p]


def _literal(paths: list[str]) -> list[str]:
    return [f":(literal){p}" for p in paths]


def index_behind(git: Git) -> list[str]:
    """kitty's files whose index entry differs from HEAD while the work tree equals HEAD:
    what a commit killed before writing the index leaves."""
    code, out, _ = git.status("diff", "--cached", "--name-only", "-z", "--", *KITTY_FILES)
    staged = _names(out) if code == 0 else []
    if not staged:
        return []
    code, out, _ = git.status("diff", "--name-only", "-z", "HEAD", "--", *_literal(staged))
    if code != 0:
        return []
    changed = set(_names(out))
    return [p for p in staged if p not in changed]


def reset_index(git: Git, paths: list[str]) -> list[str]:
    """Put the index entries of `paths` back at HEAD's (the work tree is not touched)."""
    if paths:
        git.run("reset", "--quiet", "--", *_literal(paths))
    return paths


def upstreams(git: Git) -> list[str]:
    """The commits a sync or pull merges: the branch's upstream and FETCH_HEAD."""
    found = [git.rev("@{upstream}"), git.rev("FETCH_HEAD")]
    return list(dict.fromkeys(rev for rev in found if rev))


def merge_leftovers(git: Git, upstream: str) -> list[str]:
    """Untracked files that are exactly `upstream`'s version of a file HEAD lacks."""
    code, out, _ = git.status("ls-files", "--others", "--exclude-standard", "-z")
    untracked = _names(out) if code == 0 else []
    if not untracked:
        return []
    code, out, _ = git.status("ls-tree", "-r", "-z", upstream, "--", *_literal(untracked))
    theirs: dict[str, str] = {}
    for entry in _names(out) if code == 0 else []:
        meta, _, path = entry.partition("\t")
        fields = meta.split()
        if len(fields) == 3 and fields[1] == "blob":
            theirs[path] = fields[2]
    candidates = [p for p in untracked if p in theirs and not os.path.islink(git.path / p)]
    if not candidates:
        return []
    code, out, _ = git.status("hash-object", "--", *candidates)
    if code != 0:
        return []
    ours = out.split()
    in_head = set(_names(git.status("ls-tree", "-r", "-z", "--name-only", "HEAD", "--",
                                    *_literal(candidates))[1]))  # fmt: skip
    return [
        p for p, sha in zip(candidates, ours, strict=False) if theirs[p] == sha and p not in in_head
    ]


def _worktree_blobs(git: Git, paths: list[str]) -> dict[str, str | None]:
    """The blob id each path's work-tree file would have (None: no file)."""
    found: dict[str, str | None] = {}
    files = []
    for path in paths:
        full = git.path / path
        if os.path.islink(full):
            target = os.fsencode(os.readlink(full))
            found[path] = git.status("hash-object", "--stdin", stdin=target)[1].strip()
        elif full.is_file():
            files.append(path)
        else:
            found[path] = None
    if files:
        code, out, _ = git.status("hash-object", "--", *files)
        found.update(zip(files, out.split() if code == 0 else [""] * len(files), strict=False))
    return found


def _tree_blobs(git: Git, rev: str, paths: list[str]) -> dict[str, str]:
    code, out, _ = git.status("ls-tree", "-r", "-z", rev, "--", *_literal(paths))
    found = {}
    for entry in _names(out) if code == 0 else []:
        meta, _, path = entry.partition("\t")
        found[path] = meta.split()[-1]
    return found


def undo_checkout(git: Git, start: str, to: str) -> list[str]:
    """Put the files `start` and `to` differ on back at `start` (work tree and index),
    when each holds `start`'s version, `to`'s or nothing: what a `git merge --ff-only
    start..to` killed before it moved HEAD left. When any holds something else
    (someone's change) nothing is touched. The paths put back."""
    code, out, _ = git.status("diff", "--name-only", "-z", "--no-renames", start, to)
    paths = _names(out) if code == 0 else []
    if not paths:
        return []
    old, new = _tree_blobs(git, start, paths), _tree_blobs(git, to, paths)
    now = _worktree_blobs(git, paths)
    if any(now[p] not in (old.get(p), new.get(p), None) for p in paths):
        return []
    staged = not git.ok("diff", "--cached", "--quiet", start, "--", *_literal(paths))
    written = [p for p in paths if now[p] != old.get(p)]
    if not (staged or written):
        return []
    kept = [p for p in paths if p in old]
    if kept:
        git.run("checkout", start, "--", *_literal(kept))
    added = [p for p in paths if p not in old]
    if added:
        git.run("rm", "--cached", "--quiet", "--ignore-unmatch", "--", *_literal(added))
        remove_files(git.path, added)
    return paths


def remove_files(root: Path, paths: list[str]) -> list[str]:
    removed = []
    for path in paths:
        try:
            (root / path).unlink()
        except FileNotFoundError:
            continue
        removed.append(path)
    return removed


def pid_alive(pid: object) -> bool:
    try:
        os.kill(int(pid), 0)  # type: ignore[call-overload]
    except (OSError, ValueError, TypeError):
        return False
    return True


def dead_committer(common_dir: Path) -> bool:
    """Whether a kitty auto-commit was killed here (its pid record is left, its pid gone)."""
    try:
        text = (common_dir / "kitty" / OWNER).read_text(encoding="ascii").strip()
    except (OSError, ValueError):
        return False
    return not pid_alive(text) or int(text) == os.getpid()


def clear_dead_committer(git: Git, common_dir: Path, places: list[Path]) -> list[str] | None:
    """After a kitty commit that was killed (None when none was, or git runs here now):
    the git locks it left removed, its index repaired, its pid record deleted. Returns
    what was done, one line each (repository-relative)."""
    if not dead_committer(common_dir) or not gitlocks.wait_for_git(places):
        return None
    removed = gitlocks.remove(gitlocks.stale_locks(common_dir, places, min_age=0.0))
    done = [f"removed {_shown(git.path, p)}, left by a killed kitty auto-commit" for p in removed]
    reset = reset_index(git, index_behind(git))
    done += [f"reset {p} in the index to HEAD (a killed commit left it behind)" for p in reset]
    (common_dir / "kitty" / OWNER).unlink(missing_ok=True)
    return done


def _shown(root: Path, path: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


@contextmanager
def committing(common_dir: Path) -> Iterator[None]:
    """Record this process as the one committing for as long as the block runs (call
    under kitty's commit lock: one kitty commit at a time)."""
    record = common_dir / "kitty" / OWNER
    record.parent.mkdir(parents=True, exist_ok=True)
    contain.check(record.parent)
    fd = os.open(record, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | contain.NOFOLLOW, 0o644)
    try:
        os.write(fd, str(os.getpid()).encode("ascii"))
    finally:
        os.close(fd)
    try:
        yield
    finally:
        record.unlink(missing_ok=True)
