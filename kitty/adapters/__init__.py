"""Adapters: one outside thing each (files, git, config, agent CLIs, the clock)."""
