"""The WP loop: next, moves, implement/review, accept, merge, missions, planning."""
