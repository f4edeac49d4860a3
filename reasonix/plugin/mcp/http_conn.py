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
    """The live exchanges (connection, socket, response) of one transport.

    The socket is captured when the request is sent: for a ``Connection:
    close`` reply http.client hands the socket to the response and forgets it
    on the connection, yet close() and abandon() must still reach it, and the
    response must be closed too or the socket outlives its use.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[
            http.client.HTTPConnection,
            tuple[socket.socket | None, http.client.HTTPResponse | None],
        ] = {}
        self.closed = False

    def add(self, conn: http.client.HTTPConnection) -> None:
        """Track ``conn``; refuse when the transport is already closed."""
        with self._lock:
            if self.closed:
                raise PluginError("connection closed")
            self._open[conn] = (None, None)

    def attach(
        self,
        conn: http.client.HTTPConnection,
        sock: socket.socket | None,
        resp: http.client.HTTPResponse | None,
    ) -> None:
        """Remember the socket (and later the response) of a tracked exchange."""
        with self._lock:
            if conn in self._open:
                self._open[conn] = (sock, resp)

    def discard(self, conn: http.client.HTTPConnection) -> None:
        """Stop tracking ``conn`` and close it with its response."""
        with self._lock:
            _, resp = self._open.pop(conn, (None, None))
        if resp is not None:
            resp.close()
        conn.close()

    def shutdown(self, conn: http.client.HTTPConnection) -> None:
        """Shut ``conn``'s socket down so a thread blocked reading it wakes up.

        Only the socket is shut here; the owning thread closes the objects
        (http.client is not safe to close from two threads at once).
        """
        with self._lock:
            sock, _ = self._open.get(conn, (None, None))
        sock = sock or conn.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close_all(self) -> None:
        """Shut every socket down (wakes blocked readers) and refuse new ones."""
        with self._lock:
            self.closed = True
            conns = list(self._open)
        for conn in conns:
            self.shutdown(conn)


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
    The caller closes both with ``conns.discard(conn)``.
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
        sock = conn.sock
        conns.attach(conn, sock, None)
        resp = conn.getresponse()
        conns.attach(conn, sock, resp)
        if sock is not None:
            sock.settimeout(None)
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
