"""A scripted loopback server speaking one provider wire format.

``FakeServer(kind, script)`` listens on 127.0.0.1 (port 0 = a free port),
answers every POST with the next script step and records every request.
GETs and the metadata POSTs a client sends at start-up (``/api/show``) are
answered from ``meta`` (404 when absent) and never consume the script.
It is a context manager; leaving it stops slow drips and joins the handler
threads, so no socket outlives the ``with`` block.
"""

from __future__ import annotations

import json
import socket
import ssl
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from fakes.script import Fault, Step, Turn
from fakes.wire import KINDS, error_body, error_event, render, request_id_header

__all__ = ["FakeServer", "RecordedRequest"]

_GARBAGE = b"data: {this is not json\n\n"
# POSTs that read server metadata (Ollama's model info): answered from ``meta``.
META_POSTS = frozenset({"/api/show"})


@dataclass
class RecordedRequest:
    """One request as it reached the server, bytes untouched."""

    method: str
    path: str
    headers: dict[str, str]  # keys lower-cased
    body: bytes
    json: Any = None  # the parsed body, or None when it is not JSON
    extra: dict[str, Any] = field(default_factory=dict)

    def header(self, name: str, default: str | None = None) -> str | None:
        """A header value by case-insensitive name."""
        return self.headers.get(name.lower(), default)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients hang up on purpose (cancel tests); that is not a server error.
        pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        # SSE servers flush small writes at once; without this, Nagle plus the
        # client's delayed ACK stalls every other event by ~40 ms.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.server.fake._handle(self)

    def do_GET(self) -> None:
        self.server.fake._handle(self)


class FakeServer:
    """Scripted fake of one vendor API (``kind`` = openai | anthropic | responses).

    ``chunked`` (default True) frames the stream with chunked transfer coding
    like real vendors; False sends ``Connection: close`` and lets EOF end it.
    ``fragment`` splits every write into pieces of that many bytes, flushed
    separately, so clients see events and UTF-8 sequences cut across reads.
    ``tls`` (a server-side ``ssl.SSLContext``) serves HTTPS; :attr:`url` then
    starts with ``https://``. ``meta`` maps ``"GET /props"`` (method, path
    without the query) to a JSON-ready answer, or to ``(status, answer)``;
    those requests are recorded in :attr:`meta_requests`, not :attr:`requests`.
    ``responder`` (optional) answers each model POST from the request itself
    (a step, or None for the next script step), for sessions whose requests
    a fixed script cannot foresee (when compaction asks for a summary).
    """

    def __init__(
        self,
        kind: str,
        script: list[Step] | None = None,
        *,
        chunked: bool = True,
        fragment: int | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        tls: ssl.SSLContext | None = None,
        meta: dict[str, Any] | None = None,
        responder: Callable[[RecordedRequest], Step | None] | None = None,
    ) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown fake kind {kind!r}")
        self.kind = kind
        self.script: list[Step] = list(script or [])
        self.meta: dict[str, Any] = dict(meta or {})
        self.responder = responder
        self.meta_requests: list[RecordedRequest] = []
        self.chunked = chunked
        self.fragment = fragment
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._next = 0
        self._active = 0  # requests being answered right now
        self._idle = threading.Condition(self._lock)
        self._stop = threading.Event()
        self._httpd = _HTTPServer((host, port), _Handler)
        self._httpd.fake = self
        self.scheme = "https" if tls else "http"
        if tls is not None:
            # The handshake runs lazily in the handler thread, not in accept().
            self._httpd.socket = tls.wrap_socket(
                self._httpd.socket, server_side=True, do_handshake_on_connect=False
            )
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------
    def start(self) -> FakeServer:
        """Serve in a daemon thread."""
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop drips and stalls, stop serving, join handler threads, close the socket."""
        self._stop.set()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join()
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- public view -----------------------------------------------------------
    @property
    def port(self) -> int:
        """The bound TCP port."""
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (no trailing slash): use it as a base_url."""
        return f"{self.scheme}://127.0.0.1:{self.port}"

    def extensions(self, **kw: Any) -> list[Any]:
        """How far each request of a lane extends the one before it (``fakes.lanes``)."""
        from fakes.lanes import extensions

        return extensions([r.json for r in self.requests if isinstance(r.json, dict)], **kw)

    def add(self, *steps: Step) -> None:
        """Append steps to the script."""
        with self._lock:
            self.script.extend(steps)

    @property
    def active(self) -> int:
        """Requests whose answer is still being written."""
        with self._lock:
            return self._active

    def wait_idle(self, timeout: float = 5.0) -> bool:
        """Wait until no answer is being written; True if that happened in time.

        A drip stops when its client hangs up (the next write fails), so this
        tells a test the client really closed its socket.
        """
        with self._idle:
            return self._idle.wait_for(lambda: self._active == 0, timeout)

    @property
    def remaining(self) -> int:
        """Script steps not consumed yet."""
        with self._lock:
            return len(self.script) - self._next

    # -- serving ---------------------------------------------------------------
    def _handle(self, h: _Handler) -> None:
        with self._lock:
            self._active += 1
        try:
            self._answer(h)
        finally:
            with self._idle:
                self._active -= 1
                self._idle.notify_all()

    def _answer(self, h: _Handler) -> None:
        length = int(h.headers.get("Content-Length") or 0)
        body = h.rfile.read(length) if length else b""
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = None
        rec = RecordedRequest(
            method=h.command,
            path=h.path,
            headers={k.lower(): v for k, v in h.headers.items()},
            body=body,
            json=parsed,
        )
        key = f"{h.command} {h.path.split('?', 1)[0]}"
        if h.command != "POST" or key in self.meta or key.split(" ", 1)[1] in META_POSTS:
            with self._lock:
                self.meta_requests.append(rec)
                answer = self.meta.get(key)
            h.close_connection = True
            self._send_meta(h, answer)
            return
        chosen = self.responder(rec) if self.responder is not None else None
        with self._lock:
            self.requests.append(rec)
            n = len(self.requests)
            step: Step | None = chosen
            if step is None:
                step = self.script[self._next] if self._next < len(self.script) else None
                self._next += 1
        h.close_connection = True  # one request per connection keeps faults simple
        rid = f"req_fake_{n}"
        if step is None:
            msg = f"fake {self.kind} server: script exhausted at request {n}"
            self._send_error(h, Fault.status(400, message=msg), rid)
        elif isinstance(step, Fault):
            self._fault(h, step, rid)
        else:
            self._stream(h, step, rid)

    def _send_meta(self, h: _Handler, answer: Any) -> None:
        status, obj = answer if isinstance(answer, tuple) else (200, answer)
        if answer is None:
            status, obj = 404, {"error": "not found"}
        data = json.dumps(obj).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        h.send_header("Connection", "close")
        h.end_headers()
        h.wfile.write(data)

    def _send_error(self, h: _Handler, f: Fault, rid: str) -> None:
        data = error_body(self.kind, f)
        h.send_response(f.code)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        h.send_header(request_id_header(self.kind), rid)
        if f.retry_after is not None:
            h.send_header("Retry-After", f.retry_after)
        for name, value in f.headers.items():  # e.g. rate-limit reset headers
            h.send_header(name, value)
        h.send_header("Connection", "close")
        h.end_headers()
        h.wfile.write(data)

    def _fault(self, h: _Handler, f: Fault, rid: str) -> None:
        if f.kind == "status":
            self._send_error(h, f, rid)
        elif f.kind == "reset":
            # SO_LINGER 0 turns close() into an RST instead of a FIN.
            h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            h.connection.close()
        elif f.kind == "stall":
            self._stop.wait(f.seconds)
        elif f.kind == "sse":
            self._raw_stream(h, (f.body or "").encode(), rid)
        else:
            raise ValueError(f"unknown fault kind {f.kind!r}")

    def _events(self, t: Turn) -> tuple[list[bytes], bool]:
        events = render(self.kind, t)
        cut = False
        if t.malformed_after is not None:
            bad = b"event: content_block_delta\n" + _GARBAGE if self.kind != "openai" else _GARBAGE
            events.insert(t.malformed_after, bad)
        if t.error_after is not None:
            events = [*events[: t.error_after], error_event(self.kind, t.error_message)]
        if t.cut_after is not None:
            events, cut = events[: t.cut_after], True
        return events, cut

    def _raw_stream(self, h: _Handler, data: bytes, rid: str) -> None:
        """A 200 event stream carrying ``data`` verbatim (a server's own error event)."""
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header(request_id_header(self.kind), rid)
        h.send_header("Content-Length", str(len(data)))
        h.send_header("Connection", "close")
        h.end_headers()
        h.wfile.write(data)

    def _stream(self, h: _Handler, t: Turn, rid: str) -> None:
        events, cut = self._events(t)
        if t.think and self._stop.wait(t.think):
            return
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream; charset=utf-8")
        h.send_header("Cache-Control", "no-cache")
        h.send_header(request_id_header(self.kind), rid)
        if self.chunked:
            h.send_header("Transfer-Encoding", "chunked")
        else:
            h.send_header("Connection", "close")
        h.end_headers()
        try:
            h.wfile.flush()
            for ev in events:
                if t.delay and self._stop.wait(t.delay):
                    return
                self._write(h, ev)
            if cut:
                # An abrupt close: no chunked terminator, no final event.
                return
            if self.chunked:
                h.wfile.write(b"0\r\n\r\n")
        except OSError:
            return  # the client went away (cancel tests)

    def _write(self, h: _Handler, data: bytes) -> None:
        pieces = [data]
        if self.fragment:
            pieces = [data[i : i + self.fragment] for i in range(0, len(data), self.fragment)]
        for p in pieces:
            frame = b"%x\r\n%s\r\n" % (len(p), p) if self.chunked else p
            h.wfile.write(frame)
            h.wfile.flush()
