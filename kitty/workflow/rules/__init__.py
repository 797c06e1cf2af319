"""Pure rules of the workflow: the DAG, prompts, the text board, review findings."""
