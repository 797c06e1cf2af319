"""Kitty's own commits: auto-commit after a command (now, or deferred to one background
committer), the files pending, `kitty safe-commit`, and what git has not committed yet."""
