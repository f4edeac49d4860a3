"""An MCP server (PyPI ``mcp`` SDK) whose tools carry different hints, for the planner:
``peek`` is read-only, ``lookup`` has no hint (authorized, non-destructive) and
``wipe`` is destructive. Run: ``python coord_mcp_server.py`` (stdio)."""

from __future__ import annotations

import warnings

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

warnings.simplefilter("ignore")

app = MCPServer("coord-test")


@app.tool(annotations=ToolAnnotations(readOnlyHint=True))
def peek(key: str) -> str:
    """Read one value."""
    return f"peek {key}: 42"


@app.tool()
def lookup(key: str) -> str:
    """Look a key up in the issue tracker."""
    return f"lookup {key}: open since Monday"


@app.tool(annotations=ToolAnnotations(destructiveHint=True))
def wipe() -> str:
    """Delete every record."""
    return "wiped everything"


if __name__ == "__main__":
    app.run("stdio")
