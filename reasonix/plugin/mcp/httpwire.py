"""I/O-free rules of MCP over HTTP, shared by the streamable and legacy SSE transports.

Which headers a message gets, what a status means, where an announced
endpoint points — decisions that are easy to get subtly wrong and cheap to
test without a socket.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urljoin, urlsplit

from reasonix.lazy import Pattern
from reasonix.plugin.mcp.jsonrpc import Message, Notification, Request

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "ACCEPT_BOTH",
    "AuthHook",
    "encode_header_value",
    "fallback_to_sse",
    "is_stale_session",
    "media_type",
    "request_headers",
    "resolve_endpoint",
    "same_origin",
]

ACCEPT_BOTH = "application/json, text/event-stream"
PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion"
# 2026-07-28: these methods mirror one body field into the Mcp-Name header.
NAME_BEARING = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}

_HEADER_SAFE = Pattern(r"^[\x20-\x7E]*$")
_B64_SENTINEL = Pattern(r"^=\?base64\?.*\?=$")


class AuthHook(Protocol):
    """The seam for OAuth (``reasonix.plugin.mcp.oauth``): it adds and refreshes credentials."""

    def headers(self) -> dict[str, str]:
        """Extra headers (usually Authorization) for the next request."""
        ...

    def on_status(self, status: int, headers: Mapping[str, str]) -> bool:
        """Told about a 401/403; True asks the transport to retry once with fresh headers."""
        ...


def encode_header_value(value: str) -> str:
    """Printable ASCII passes verbatim; anything else is wrapped as ``=?base64?…?=``."""
    if _HEADER_SAFE.match(value) and value == value.strip() and not _B64_SENTINEL.match(value):
        return value
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


def request_headers(
    message: Message,
    *,
    static: Mapping[str, str],
    session_id: str | None,
    protocol_version: str | None,
) -> dict[str, str]:
    """Headers of the POST that carries ``message``.

    The handshake era sends ``MCP-Protocol-Version`` once a version is agreed
    (never on ``initialize`` itself) and echoes ``Mcp-Session-Id``. A
    2026-07-28 request carries its version in ``_meta``; the same value goes
    into the header, with ``Mcp-Method`` and, for name-bearing methods,
    ``Mcp-Name`` so intermediaries can route without reading the body.
    """
    headers = {"Content-Type": "application/json", "Accept": ACCEPT_BOTH}
    headers.update(static)
    if session_id:
        headers["Mcp-Session-Id"] = session_id
    method = message.method if isinstance(message, (Request, Notification)) else ""
    params: dict[str, Any] = (
        (message.params or {}) if isinstance(message, (Request, Notification)) else {}
    )
    meta = params.get("_meta")
    modern_version = meta.get(PROTOCOL_VERSION_META) if isinstance(meta, dict) else None
    if isinstance(modern_version, str):
        headers["MCP-Protocol-Version"] = modern_version
        headers["Mcp-Method"] = method
        key = NAME_BEARING.get(method)
        if key is not None and isinstance(params.get(key), str):
            headers["Mcp-Name"] = encode_header_value(params[key])
    elif protocol_version and method != "initialize":
        headers["MCP-Protocol-Version"] = protocol_version
    return headers


def media_type(content_type: str | None) -> str:
    """``text/event-stream; charset=utf-8`` → ``text/event-stream``."""
    return (content_type or "").split(";", 1)[0].strip().lower()


def is_stale_session(status: int, body: str, had_session: bool) -> bool:
    """True when the server no longer knows our session and a new one should be made.

    404 is the spec's signal; several servers answer 400 "no valid session"
    instead, so that counts too — but only when we did send a session id.
    """
    if not had_session:
        return False
    if status == 404:
        return True
    return status == 400 and "session" in body.lower()


def fallback_to_sse(status: int) -> bool:
    """An ``initialize`` POST answered with these means: try the 2024-11-05 SSE transport."""
    return status in (400, 404, 405)


def same_origin(a: str, b: str) -> bool:
    """Scheme, host and port equal (default ports filled in)."""
    pa, pb = urlsplit(a), urlsplit(b)

    def port(p: Any) -> int | None:
        if p.port is not None:
            return int(p.port)
        return {"http": 80, "https": 443}.get(p.scheme)

    return (
        pa.scheme == pb.scheme
        and (pa.hostname or "").lower() == (pb.hostname or "").lower()
        and port(pa) == port(pb)
    )


def resolve_endpoint(sse_url: str, announced: str) -> str:
    """The POST URL an ``endpoint`` event announces, resolved against the SSE URL.

    Raises ValueError for an endpoint on another origin: our static headers
    (API keys, say) must never be sent there (MCP-9).
    """
    target = urljoin(sse_url, announced.strip())
    if not same_origin(sse_url, target):
        raise ValueError(f"the server announced an endpoint on another origin: {target}")
    return target
