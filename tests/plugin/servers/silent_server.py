"""A broken MCP server: reads stdin and never answers anything (not even initialize)."""

from __future__ import annotations

import sys

for _line in sys.stdin:
    pass
