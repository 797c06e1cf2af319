"""The review panel: rounds of reviewer personas until CONVERGED or HALT."""
