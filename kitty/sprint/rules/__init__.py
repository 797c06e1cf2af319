"""Pure rules of the sprint: the plan of dispatches."""
