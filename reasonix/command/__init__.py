"""Slash-command registry, built-in commands, custom commands and MCP prompts."""
