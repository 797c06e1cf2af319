"""Agent CLIs: the command line each one accepts, runs, versions, keep-awake."""
