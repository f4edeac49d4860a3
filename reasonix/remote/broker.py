"""The key broker: the remote agent's provider requests arrive here and leave with the key.

It listens on the LOCAL loopback; a reverse forward (``-R``) makes it reachable
from the remote loopback. The remote agent authenticates with a per-connection
token (never the API key); the broker checks it, drops it, adds the real
credential headers and relays to the one configured upstream, streaming the
answer back chunk by chunk (SSE stays live). The key never leaves this process
except towards the provider.
"""

from __future__ import annotations

import hmac
import http.client
import secrets
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

__all__ = ["Broker"]

_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
        "proxy-authorization", "proxy-connection", "host", "content-length"}  # fmt: skip
_CREDENTIALS = {"authorization", "x-api-key", "api-key"}


class Broker:
    """A relay to ``upstream`` (scheme://host[:port]) adding ``auth_headers``."""

    def __init__(
        self, upstream: str, auth_headers: dict[str, str], *, timeout: float = 600
    ) -> None:
        parts = urlsplit(upstream)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"broker upstream must be an http(s) URL, not {upstream!r}")
        self.scheme = parts.scheme
        self.upstream_host = parts.hostname
        self.upstream_port = parts.port or (443 if parts.scheme == "https" else 80)
        self.auth_headers = dict(auth_headers)
        self.token = secrets.token_urlsafe(24)
        self.timeout = timeout
        self.relayed = 0
        self.refused = 0
        broker = self

        class Handler(_Relay):
            owner = broker

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="broker", daemon=True
        )

    def start(self) -> Broker:
        """Serve in a background thread."""
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and close the socket."""
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join(timeout=5)
        self._server.server_close()

    def __enter__(self) -> Broker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def authorised(self, headers: dict[str, str]) -> bool:
        """True when the request carries this broker's token in a credential header."""
        for name in _CREDENTIALS:
            value = headers.get(name, "")
            if value.lower().startswith("bearer "):
                value = value[7:]
            if value and hmac.compare_digest(value.encode(), self.token.encode()):
                return True
        return False

    def connect(self) -> http.client.HTTPConnection:
        """A fresh connection to the upstream."""
        if self.scheme == "https":
            return http.client.HTTPSConnection(
                self.upstream_host, self.upstream_port, timeout=self.timeout,
                context=ssl.create_default_context(),
            )  # fmt: skip
        return http.client.HTTPConnection(
            self.upstream_host, self.upstream_port, timeout=self.timeout
        )


class _Relay(BaseHTTPRequestHandler):
    owner: Broker
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        """Silent: request lines would go to the terminal of the chat."""

    def _relay(self) -> None:
        broker = self.owner
        headers = {k.lower(): v for k, v in self.headers.items()}
        length = int(headers.get("content-length", "0") or 0)
        body = self.rfile.read(length) if length else b""
        if not broker.authorised(headers):
            broker.refused += 1
            msg = b'{"error":{"message":"reasonix broker: missing or wrong token"}}'
            self.send_response(401)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(msg)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(msg)
            return
        out = {k: v for k, v in self.headers.items() if k.lower() not in _HOP | _CREDENTIALS}
        out.update(broker.auth_headers)
        out["Content-Length"] = str(len(body))
        conn = broker.connect()
        try:
            conn.request(self.command, self.path, body=body, headers=out)
            resp = conn.getresponse()
        except OSError as err:
            import json

            why = f"reasonix broker: upstream unreachable: {err}"
            data = json.dumps({"error": {"message": why}}).encode()
            self.send_response(502)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)
            conn.close()
            return
        broker.relayed += 1
        try:
            self.send_response(resp.status, resp.reason)
            for name, value in resp.getheaders():
                if name.lower() not in _HOP:
                    self.send_header(name, value)
            # The body length is unknown while streaming: close delimits it.
            self.send_header("Connection", "close")
            self.end_headers()
            while True:
                chunk = resp.read1(65536)
                if not chunk:
                    break
                self.wfile.write(chunk)
                self.wfile.flush()
        except OSError:
            pass  # the remote side hung up (cancelled turn): drop the upstream too
        finally:
            conn.close()
            self.close_connection = True

    do_POST = _relay
    do_GET = _relay
    do_PUT = _relay
    do_DELETE = _relay
