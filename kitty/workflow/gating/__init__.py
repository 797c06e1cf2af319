"""Verified work: the test gate (gate.py) and the merge queue (queue.py) that moves a
target branch only to a tree whose gate passed. Their rules are pure, in
kitty.workflow.rules.gate and kitty.workflow.rules.queue."""
