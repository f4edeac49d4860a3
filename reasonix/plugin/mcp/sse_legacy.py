"""The legacy HTTP+SSE transport of protocol 2024-11-05 (``type = "sse"``).

A long-lived GET stream first announces (``event: endpoint``) where to POST;
every answer and server message then arrives on that stream as ``message``
events, while each POST only gets a 202. The announced endpoint is resolved
against the SSE URL and refused when it lies on another origin, so the
static headers (often an API key) never leave the server they were meant for.
"""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Mapping

from reasonix.cancel import Cancel
from reasonix.errors import PluginError
from reasonix.plugin.mcp.http_conn import Connections, iter_sse, open_request
from reasonix.plugin.mcp.httpwire import AuthHook, media_type, resolve_endpoint
from reasonix.plugin.mcp.jsonrpc import Message, Request, decode, encode
from reasonix.plugin.mcp.transport import Closed, Inbox, Incoming, TransportError
from reasonix.provider.sse import SSEDecoder

__all__ = ["SseTransport"]

DEFAULT_ENDPOINT_WAIT = 30.0  # seconds to wait for the endpoint event without a deadline


class SseTransport:
    """MCP over the 2024-11-05 HTTP+SSE transport."""

    def __init__(
        self,
        url: str,
        headers: Mapping[str, str] | None = None,
        *,
        server_name: str = "",
        auth: AuthHook | None = None,
    ) -> None:
        self.url = url
        self.static_headers = dict(headers or {})
        self.server_name = server_name
        self.auth = auth
        self.label = f"sse: {url}"
        self.endpoint = ""
        self._inbox = Inbox()
        self._conns = Connections()
        self._ready = threading.Event()
        self._error = ""
        self._reader: threading.Thread | None = None
        self._stream: tuple[http.client.HTTPConnection, http.client.HTTPResponse] | None = None

    def _auth_headers(self) -> dict[str, str]:
        return self.auth.headers() if self.auth is not None else {}

    def start(self, cancel: Cancel) -> None:
        """Open the stream and wait for the endpoint announcement."""
        headers = {"Accept": "text/event-stream", **self.static_headers, **self._auth_headers()}
        conn, resp = open_request(self._conns, "GET", self.url, body=None, headers=headers)
        if resp.status != 200 or media_type(resp.getheader("Content-Type")) != "text/event-stream":
            status = resp.status
            self._conns.discard(conn)
            hint = ""
            if status == 401:
                hint = f"; run `reasonix mcp auth {self.server_name or 'SERVER'}`"
            raise PluginError(f"GET {self.url} gave HTTP {status}, not an event stream{hint}")
        self._stream = (conn, resp)
        self._reader = threading.Thread(target=self._read, name="mcp-sse-reader", daemon=True)
        self._reader.start()
        remaining = cancel.remaining()
        wait = DEFAULT_ENDPOINT_WAIT if remaining is None else remaining
        while not self._ready.wait(min(wait, 0.25)):
            wait -= 0.25
            if cancel.cancelled or wait <= 0:
                self.close()
                raise PluginError("the SSE server announced no endpoint in time")
        if self._error:
            self.close()
            raise PluginError(self._error)

    def _read(self) -> None:
        assert self._stream is not None
        conn, resp = self._stream
        reason = "the SSE stream ended"
        try:
            for event in iter_sse(resp, SSEDecoder()):
                if event.event == "endpoint":
                    try:
                        self.endpoint = resolve_endpoint(self.url, event.data)
                    except ValueError as exc:
                        self._error = str(exc)
                        reason = self._error
                        break
                    self._ready.set()
                elif event.event == "message" and event.data.strip():
                    for item in decode(event.data):
                        self._inbox.put(item)
        finally:
            self._ready.set()
            self._conns.discard(conn)
            self._inbox.put(Closed("connection closed" if self._conns.closed else reason))

    def send(self, message: Message) -> None:
        """POST one message to the announced endpoint (the answer comes on the stream)."""
        if not self.endpoint or self._conns.closed:
            raise PluginError("the SSE connection is not open")
        headers = {"Content-Type": "application/json", **self.static_headers}
        headers.update(self._auth_headers())
        body = json.dumps(encode(message), ensure_ascii=False).encode()
        conn, resp = open_request(self._conns, "POST", self.endpoint, body=body, headers=headers)
        try:
            text = resp.read(64 * 1024).decode("utf-8", "replace").strip()
            if resp.status >= 400 and isinstance(message, Request):
                self._inbox.put(
                    TransportError(
                        f"HTTP {resp.status} from {self.endpoint}: {text[:300]}",
                        request_id=message.id,
                        status=resp.status,
                    )
                )
        finally:
            self._conns.discard(conn)

    def receive(self, timeout: float | None = None) -> Incoming | None:
        """The next incoming value."""
        return self._inbox.get(timeout)

    def close(self) -> None:
        """Shut the stream and every POST down."""
        self._conns.close_all()
        if self._reader is not None and self._reader is not threading.current_thread():
            self._reader.join(timeout=5.0)
        self._inbox.put(Closed("connection closed"))
