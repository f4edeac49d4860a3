"""Model Context Protocol client: transports, session, lifecycle, tool adapter.

Layout (each module small and single-purpose):

* ``jsonrpc``    — I/O-free JSON-RPC framing (messages in, values out)
* ``transport``  — the one Transport protocol and its incoming value types
* ``session``    — request-id correlation, reader thread, server requests, progress
* ``stdio`` / ``streamable`` / ``sse_legacy`` — the three transports
* ``httpwire``   — I/O-free HTTP rules (headers, statuses, endpoint origin)
* ``client``     — discovery/handshake eras, input-required rounds, pagination
* ``connect``    — declaration → transport → connected client (SSE fallback)
* ``runtime`` / ``manager`` — per-server start, calls, gates; the session-wide manager
* ``tools`` / ``render`` — ``mcp__server__tool`` adapters, ``use_capability``, text rendering
* ``debug``      — the ``--mcp-debug FILE`` traffic log

The agent layer needs only :class:`McpManager` (see its module docstring).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reasonix.lazy import lazy_exports

if TYPE_CHECKING:
    from reasonix.plugin.mcp.manager import McpManager, PromptInfo, ResourceInfo
    from reasonix.plugin.mcp.runtime import ServerStatus

__all__ = ["McpManager", "PromptInfo", "ResourceInfo", "ServerStatus"]

# Lazy re-exports: a run without MCP servers still registers ``use_capability``
# (from ``.tools``), which must not import the manager, transports and OAuth.
_LAZY = {
    "McpManager": "reasonix.plugin.mcp.manager",
    "PromptInfo": "reasonix.plugin.mcp.manager",
    "ResourceInfo": "reasonix.plugin.mcp.manager",
    "ServerStatus": "reasonix.plugin.mcp.runtime",
}


__getattr__ = lazy_exports(__name__, _LAZY)
