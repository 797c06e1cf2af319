"""kitty: a git-native kanban tracker for the work packages of a mission."""

__version__ = "0.1.0"
