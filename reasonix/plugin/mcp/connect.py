"""From a server declaration to a connected :class:`McpClient`.

This is the only module that knows which transport a ``type`` means, and the
one place that falls back from streamable HTTP to the legacy SSE transport
when the ``initialize`` POST is refused with 400/404/405.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.cancel import Cancel
from reasonix.config.model import McpServerConfig
from reasonix.errors import PluginError
from reasonix.lazy import dataclass
from reasonix.plugin.mcp.client import McpClient
from reasonix.plugin.mcp.debug import DebugLog, DebugTransport
from reasonix.plugin.mcp.elicit import ElicitHook
from reasonix.plugin.mcp.errors import HttpStatusError
from reasonix.plugin.mcp.httpwire import AuthHook, fallback_to_sse
from reasonix.plugin.mcp.sse_legacy import SseTransport
from reasonix.plugin.mcp.stdio import StdioTransport
from reasonix.plugin.mcp.streamable import StreamableHttpTransport
from reasonix.plugin.mcp.transport import Transport

if TYPE_CHECKING:
    from typing import Any

__all__ = ["ConnectOptions", "build_transport", "open_client"]


@dataclass
class ConnectOptions:
    """Everything besides the declaration that a connection needs."""

    workspace: Path | None = None
    log_dir: Path | None = None
    debug: DebugLog | None = None
    auth: AuthHook | None = None
    on_notice: Callable[[str], None] | None = None
    on_list_changed: Callable[[str], None] | None = None
    on_log: Callable[[dict[str, Any]], None] | None = None
    # "auto" discovers the era; "handshake" skips server/discover (tests, odd servers).
    era: str = "auto"
    # Answers form-mode elicitation (a frontend asking the user, or an opt-in
    # policy such as elicit.accept_defaults); None = elicitation not offered.
    on_elicit: ElicitHook | None = None


def _safe_file_name(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "server"


def build_transport(server: McpServerConfig, opts: ConnectOptions, kind: str = "") -> Transport:
    """The transport for an (already ``${VAR}``-expanded) declaration."""
    kind = kind or server.type or "stdio"
    transport: Transport
    if kind == "stdio":
        log = opts.log_dir / f"{_safe_file_name(server.name)}.stderr.log" if opts.log_dir else None
        transport = StdioTransport(
            server.command, server.args, env=server.env, cwd=opts.workspace, stderr_log=log
        )
    elif kind in ("http", "streamable-http"):
        transport = StreamableHttpTransport(
            server.url, server.headers, server_name=server.name, auth=opts.auth
        )
    elif kind == "sse":
        transport = SseTransport(
            server.url, server.headers, server_name=server.name, auth=opts.auth
        )
    else:
        raise PluginError(f"unknown MCP transport type {kind!r}")
    if opts.debug is not None:
        transport = DebugTransport(transport, opts.debug, server.name)
    return transport


def _client(server: McpServerConfig, opts: ConnectOptions, kind: str = "") -> McpClient:
    roots: Sequence[Path] = [opts.workspace] if opts.workspace is not None else []
    return McpClient(
        build_transport(server, opts, kind),
        roots=roots,
        on_notice=opts.on_notice,
        on_list_changed=opts.on_list_changed,
        on_log=opts.on_log,
        allow_stateless=opts.era != "handshake",
        on_elicit=opts.on_elicit,
        name=server.name,
    )


def open_client(server: McpServerConfig, opts: ConnectOptions, cancel: Cancel) -> McpClient:
    """Connect and complete the start of ``server``; the caller owns the result.

    Raises PluginError (with the client closed) when the server cannot be used.
    """
    client = _client(server, opts)
    try:
        client.connect(cancel)
        return client
    except HttpStatusError as exc:
        client.close()
        if server.type not in ("http", "streamable-http") or not fallback_to_sse(exc.status):
            raise
        # A 2024-11-05 server: its URL is the SSE stream, not a POST endpoint.
        if opts.on_notice is not None:
            opts.on_notice(f"HTTP {exc.status} to initialize; trying the legacy SSE transport")
    except BaseException:
        client.close()
        raise
    client = _client(server, opts, "sse")
    try:
        client.connect(cancel)
    except BaseException:
        client.close()
        raise
    return client
