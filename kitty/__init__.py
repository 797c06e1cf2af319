"""kitty: a git-native kanban tracker for the work packages of a mission."""

__version__ = "0.1.0"

#: Version of every JSON document kitty prints (`"schema": 1`).
SCHEMA = 1
