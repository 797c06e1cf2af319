"""kitty as an MCP server over stdio."""
