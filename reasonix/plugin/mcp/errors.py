"""MCP failure types (all :class:`~reasonix.errors.PluginError`).

PluginError
├── RpcError         the server answered a request with a JSON-RPC error
├── HttpStatusError  an HTTP transport got a non-success status for a request
├── McpTimeout       no answer within the call or startup timeout
└── ConnectionLost   the server process or stream is gone
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reasonix.errors import PluginError

if TYPE_CHECKING:
    from typing import Any

__all__ = ["ConnectionLost", "HttpStatusError", "McpTimeout", "RpcError"]


class RpcError(PluginError):
    """A JSON-RPC error response (``code``, ``message``, optional ``data``)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        self.code = code
        self.rpc_message = message
        self.data = data
        super().__init__(f"{message} (JSON-RPC error {code})")


class HttpStatusError(PluginError):
    """The HTTP request carrying a message failed with ``status``."""

    def __init__(self, status: int, message: str) -> None:
        self.status = status
        super().__init__(message)


class McpTimeout(PluginError):
    """The server did not answer in time."""


class ConnectionLost(PluginError):
    """The connection to the server ended."""
