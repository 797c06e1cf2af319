"""Pure rules of the review panel: personas, and what a round does next."""
