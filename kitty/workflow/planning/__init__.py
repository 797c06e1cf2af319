"""A mission's plan: create missions, `kitty wp add`, edit/depend/split, show/search."""
