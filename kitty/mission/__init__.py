"""One mission on disk: open it, replay its log, record events; its worktrees."""
