"""The web board: a live board over SSE, and its pictures."""
