"""What `kitty next` decides, from data alone: the input and the per-WP facts
(context), the answer (decision), the priority order of the steps (steps), and the
arbiter, wait and blocked answers (waiting)."""
