"""Small blocking HTTP helpers over ``http.client`` shared by the HTTP transports.

Each exchange gets its own connection so a long SSE response never blocks
another request, and every open connection is tracked so ``close()`` can shut
its socket from another thread — that is what unblocks a reader stuck in
``read()`` promptly.
"""

from __future__ import annotations

import http.client
import socket
import threading
from collections.abc import Iterator, Mapping
from urllib.parse import urlsplit

from reasonix.errors import PluginError
from reasonix.provider.sse import ServerSentEvent, SSEDecoder

__all__ = ["Connections", "iter_sse", "open_request"]

CONNECT_TIMEOUT = 30.0  # seconds to connect and get response headers
_READ_CHUNK = 65536


class Connections:
    """The set of live connections of one transport."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: set[http.client.HTTPConnection] = set()
        self.closed = False

    def add(self, conn: http.client.HTTPConnection) -> None:
        """Track ``conn``; refuse when the transport is already closed."""
        with self._lock:
            if self.closed:
                raise PluginError("connection closed")
            self._open.add(conn)

    def discard(self, conn: http.client.HTTPConnection) -> None:
        """Stop tracking and close ``conn``."""
        with self._lock:
            self._open.discard(conn)
        conn.close()

    def close_all(self) -> None:
        """Shut every socket down (wakes blocked readers) and refuse new ones.

        Only the sockets are shut here; each connection is closed by the thread
        that owns it (http.client objects are not safe to close concurrently).
        """
        with self._lock:
            self.closed = True
            conns = list(self._open)
        for conn in conns:
            self.shutdown(conn)

    @staticmethod
    def shutdown(conn: http.client.HTTPConnection) -> None:
        """Shut ``conn``'s socket down so a thread blocked reading it wakes up."""
        sock = conn.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def open_request(
    conns: Connections,
    method: str,
    url: str,
    *,
    body: bytes | None,
    headers: Mapping[str, str],
    timeout: float = CONNECT_TIMEOUT,
) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
    """Send one request; return the (tracked) connection and its response.

    The socket timeout is cleared once headers arrived: an SSE stream may be
    quiet for minutes, and the session's own timeouts bound the wait instead.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise PluginError(f"not an http(s) URL: {url}")
    cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = cls(parts.hostname, parts.port, timeout=timeout)
    conns.add(conn)
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    try:
        conn.request(method, path, body=body, headers=dict(headers))
        resp = conn.getresponse()
        if conn.sock is not None:
            conn.sock.settimeout(None)
    except (OSError, http.client.HTTPException) as exc:
        conns.discard(conn)
        raise PluginError(f"{method} {url} failed: {exc}") from exc
    return conn, resp


def iter_sse(resp: http.client.HTTPResponse, decoder: SSEDecoder) -> Iterator[ServerSentEvent]:
    """Events of an SSE response until it ends (or its socket is shut down)."""
    while True:
        try:
            chunk = resp.read1(_READ_CHUNK)
        except (OSError, ValueError, AttributeError, http.client.HTTPException):
            # AttributeError: http.client trips over a socket shut down under it.
            return
        if not chunk:
            decoder.close()
            return
        yield from decoder.feed(chunk)
