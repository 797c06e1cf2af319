"""The event log as data: decode, dedupe, fold, holders, forks, Spec Kitty's history."""
