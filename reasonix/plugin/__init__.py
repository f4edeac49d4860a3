"""External plugins (MCP servers) adapted into tools."""
