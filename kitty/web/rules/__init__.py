"""Pure rules of the web board: SVG pictures of the DAG and the flow."""
