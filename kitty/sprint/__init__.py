"""Many agents in parallel, unattended, on one machine or a team."""
