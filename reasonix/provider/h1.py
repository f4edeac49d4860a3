"""HTTP/1.1 on a socket: the part a model request speaks, without ``http.client``.

``http.client`` brings ``ssl`` and a dozen ``email`` modules with it, and
``urllib.request`` adds ``hashlib``: together about 25 ms of every run's
start-up on the development machine, all of it before the first request.
A model request needs little of that: a request on a fresh or a kept-alive
connection (:meth:`Response.release` hands a finished one back), an answer
whose body is framed by ``Content-Length``, by chunked transfer coding or by
the connection's close. Redirects and proxies are not spoken here; the
callers send those requests through urllib, as before (:func:`direct_ok`).

The exceptions are the ones ``http.client`` would give the callers' error
translation, or subclasses of the same built-in ones: a silent socket raises
``TimeoutError``, a reset ``ConnectionResetError``; :class:`NoResponse` (a
close before any status line) is a ``ConnectionResetError``,
:class:`BadResponse` and :class:`IncompleteBody` are ``ConnectionError``.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from reasonix import idle
from reasonix.provider.sockets import SocketSlot, connect, readable

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "BadResponse",
    "Headers",
    "IncompleteBody",
    "NoResponse",
    "Response",
    "direct_ok",
    "open_socket",
    "send_request",
]

_HEAD_LIMIT = 256 * 1024  # bytes of status line and headers: more is not an HTTP server
_LINE_LIMIT = 65536  # one chunk-size line
_RECV = 65536
_DRAIN = 65536  # body bytes :meth:`Response.release` reads to keep a connection
_DRAIN_WAIT = 0.02  # seconds it waits for them (the last chunk follows the last event)


class BadResponse(ConnectionError):
    """The answer is not HTTP/1.x (a garbled status line, headers, or chunk size)."""


class NoResponse(ConnectionResetError):
    """The server closed the connection before sending a status line."""


class IncompleteBody(ConnectionError):
    """The body ended before its ``Content-Length`` or its last chunk."""


def direct_ok(scheme: str) -> bool:
    """True when a request may go straight to its server: http or https, and no proxy.

    urllib proxies an http or https request when ``http_proxy`` or
    ``https_proxy`` (either case) has a value, and, on macOS and Windows, when
    the system settings name one; then the caller keeps urllib, which also
    applies ``no_proxy``. (``all_proxy`` and the other schemes' variables are
    not used by urllib for these requests.)
    """
    if scheme not in ("http", "https") or sys.platform in ("darwin", "win32"):
        return False
    used = ("http_proxy", "https_proxy")
    return not any(value and name.lower() in used for name, value in os.environ.items())


def open_socket(
    host: str,
    port: int,
    *,
    timeout: float,
    idle_timeout: float,
    slot: SocketSlot,
    tls: Callable[[], Any] | None = None,
) -> socket.socket:
    """A connected socket (TLS when ``tls`` gives a context), tracked by ``slot``.

    ``timeout`` bounds the TCP connect and the TLS handshake; afterwards each
    read may wait ``idle_timeout``. ``slot.connected`` is set once both are done.
    """
    sock = connect((host, port), timeout, slot)
    if tls is not None:
        try:
            sock = tls().wrap_socket(sock, server_hostname=host)
        except BaseException:
            sock.close()
            raise
        slot.attach(sock)  # the TLS socket replaces the plain one
    slot.connected = True
    sock.settimeout(idle_timeout)
    return sock


def host_header(host: str, port: int | None, scheme: str) -> str:
    """The ``Host`` value: an IPv6 literal in brackets, a port only when not the default."""
    if not host.isascii():
        host = host.encode("idna").decode("ascii")  # as http.client sends it
    name = f"[{host}]" if ":" in host else host
    default = 443 if scheme == "https" else 80
    return name if port in (None, default) else f"{name}:{port}"


def send_request(
    sock: socket.socket,
    method: str,
    target: str,
    headers: Mapping[str, str],
    body: bytes | None,
    *,
    host: str,
    keep_alive: bool = False,
) -> None:
    """Write one request: ``Host``, ``Content-Length`` and ``Connection`` are added.

    A target with a space or a control character, and a header name or value
    that could end its line, are refused with ``ValueError`` (as ``http.client``
    refuses them): nothing from a config file may add a header or a request.
    """
    if any(ch <= " " or ch == "\x7f" for ch in target):
        raise ValueError(f"the URL path may not contain spaces or control characters: {target!r}")
    lines = [f"{method} {target} HTTP/1.1", f"Host: {host}", "Accept-Encoding: identity"]
    for name, value in headers.items():
        text = str(value)
        if not name or any(ch in name for ch in ": \t\r\n") or "\r" in text or "\n" in text:
            raise ValueError(f"invalid HTTP header {name!r}")
        lines.append(f"{name}: {text}")
    if body is not None or method == "POST":
        lines.append(f"Content-Length: {len(body or b'')}")
    if not keep_alive:
        lines.append("Connection: close")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    data = head + body if body else head
    sys.audit("reasonix.h1.send", sock, data)  # as http.client raises "http.client.send"
    sock.sendall(data)


class Headers:
    """Response headers: case-insensitive :meth:`get`, repeated names joined by ", "."""

    def __init__(self, pairs: Iterable[tuple[str, str]]) -> None:
        self._pairs = list(pairs)
        self._by_name: dict[str, str] = {}
        for name, value in self._pairs:
            key = name.lower()
            seen = self._by_name.get(key)
            self._by_name[key] = value if seen is None else f"{seen}, {value}"

    def get(self, name: str, default: Any = None) -> Any:
        """The value of ``name`` (any case), or ``default``."""
        return self._by_name.get(name.lower(), default)

    def __getitem__(self, name: str) -> str | None:
        return self._by_name.get(name.lower())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._by_name

    def items(self) -> list[tuple[str, str]]:
        """Every header as sent, in order."""
        return list(self._pairs)


class Response:
    """The answer on ``sock``: its head is read on construction, its body on demand.

    ``wait`` (the main thread's wait for a model) lets :mod:`reasonix.idle`
    import queued modules until the first byte of the answer is there.
    """

    def __init__(self, sock: socket.socket, method: str, *, wait: bool = False) -> None:
        self._sock: socket.socket | None = sock
        self._buf = b""
        # Set by the caller for a connection it would reuse (see :meth:`release`).
        self.keep: Callable[[socket.socket], None] | None = None
        if wait:
            idle.run_until(self._readable)
        while True:  # 1xx answers (100 Continue, 103 Early Hints) come before the real one
            status, reason, version, pairs = self._head()
            if not 100 <= status < 200 or status == 101:
                break
        self.status, self.reason, self.version = status, reason, version
        self.headers = Headers(pairs)
        connection = str(self.headers.get("connection", "")).lower()
        self.will_close = "close" in connection or (
            version == "HTTP/1.0" and "keep-alive" not in connection
        )
        self._chunked = False
        self._crlf = False  # a chunk's closing CRLF is still to come
        self._left: int | None = None  # body bytes still to come (None: until close)
        self._done = False
        coding = str(self.headers.get("transfer-encoding", "")).lower()
        if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
            self._done = True
        elif "chunked" in coding:
            self._chunked, self._left = True, 0
        elif self.headers.get("content-length") is not None:
            self._left = self._length(self.headers.get("content-length"))
            self._done = self._left == 0
        else:
            self.will_close = True  # the body ends when the connection does

    # -- the head ------------------------------------------------------------------
    def _readable(self) -> bool:
        sock = self._sock
        return sock is None or bool(self._buf) or readable(sock)

    def _ready_within(self, deadline: float) -> bool:
        """True once bytes are here to read, waiting until ``deadline`` at most."""
        sock = self._sock
        if sock is None:
            return False
        return bool(self._buf) or readable(sock, max(0.0, deadline - time.monotonic()))

    def _head(self) -> tuple[int, str, str, list[tuple[str, str]]]:
        while b"\r\n\r\n" not in self._buf and b"\n\n" not in self._buf:
            if len(self._buf) > _HEAD_LIMIT:
                raise BadResponse("the response headers are too long")
            if not self._recv():
                if not self._buf:
                    raise NoResponse("the server closed the connection without a response")
                raise BadResponse("the connection closed inside the response headers")
        cut = self._buf.find(b"\r\n\r\n")
        end, skip = (cut, 4) if cut >= 0 else (self._buf.find(b"\n\n"), 2)
        head, self._buf = self._buf[:end], self._buf[end + skip :]
        lines = head.decode("latin-1").replace("\r\n", "\n").split("\n")
        version, _, rest = lines[0].partition(" ")
        code, _, reason = rest.strip().partition(" ")
        if not version.startswith("HTTP/1.") or len(code) != 3 or not code.isdigit():
            raise BadResponse(f"not an HTTP/1.x status line: {lines[0][:80]!r}")
        pairs: list[tuple[str, str]] = []
        for line in lines[1:]:
            if line[:1] in (" ", "\t") and pairs:  # an obsolete folded continuation
                name, value = pairs[-1]
                pairs[-1] = (name, f"{value} {line.strip()}")
                continue
            name, colon, value = line.partition(":")
            if not colon or not name or name != name.strip():
                raise BadResponse(f"not a header line: {line[:80]!r}")
            pairs.append((name, value.strip()))
        return int(code), reason.strip(), version, pairs

    @staticmethod
    def _length(value: Any) -> int:
        text = str(value).split(",")[0].strip()  # a repeated identical header joins as "n, n"
        if not text.isdigit():
            raise BadResponse(f"bad Content-Length: {str(value)[:40]!r}")
        return int(text)

    # -- the body ------------------------------------------------------------------
    def _recv(self, size: int = _RECV) -> bool:
        """Read more into the buffer; False at the end of the stream."""
        if self._sock is None:
            raise ValueError("I/O operation on a closed response")
        data = self._sock.recv(size)
        if not data:
            return False
        self._buf += data
        return True

    def _take(self, n: int) -> bytes:
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def _line(self) -> bytes:
        while b"\n" not in self._buf:
            if len(self._buf) > _LINE_LIMIT:
                raise BadResponse("a chunk-size line is too long")
            if not self._recv():
                raise IncompleteBody("the stream ended inside the chunked framing")
        line, _, self._buf = self._buf.partition(b"\n")
        return line.rstrip(b"\r")

    def _next_chunk(self) -> None:
        """Past the end of a chunk: read the next size (and the trailers after the last)."""
        line = self._line()
        if self._crlf:  # the end of the last chunk's data came late
            self._crlf = False
            if line:
                raise BadResponse("a chunk is longer than its size")
            line = self._line()
        size = line.split(b";", 1)[0].strip()
        try:
            left = int(size, 16)
        except ValueError:
            raise BadResponse(f"bad chunk size: {size[:20]!r}") from None
        if left < 0:
            raise BadResponse(f"bad chunk size: {size[:20]!r}")
        if left == 0:
            while self._line():  # trailers, up to the empty line
                pass
            self._done = True
        self._left = left

    def read1(self, n: int = _RECV) -> bytes:
        """Up to ``n`` body bytes with at most one read from the socket; b"" at the end."""
        if self._done or self._sock is None or n <= 0:
            return b""
        if self._chunked:
            if self._left == 0:
                self._next_chunk()
                if self._done:
                    return b""
            assert self._left is not None
            if not self._buf and not self._recv(min(n, self._left, _RECV)):
                raise IncompleteBody("the stream ended inside a chunk")
            out = self._take(min(n, self._left))
            self._left -= len(out)
            if self._left == 0:
                self._chunk_end()
            return out
        if self._left is None:  # until the server closes
            if not self._buf and not self._recv(min(n, _RECV)):
                self._done = True
                return b""
            return self._take(n)
        if not self._buf and not self._recv(min(n, self._left, _RECV)):
            raise IncompleteBody(f"the body ended {self._left} bytes short")
        out = self._take(min(n, self._left))
        self._left -= len(out)
        self._done = self._left == 0
        return out

    def _chunk_end(self) -> None:
        """Past a chunk's data: its CRLF, now if it is here, else before the next size
        (waiting for it here would hold back the data just read)."""
        if self._buf.startswith(b"\r\n"):
            self._buf = self._buf[2:]
        elif self._buf.startswith(b"\n"):
            self._buf = self._buf[1:]
        elif self._buf and self._buf != b"\r":
            raise BadResponse("a chunk is longer than its size")
        else:
            self._crlf = True

    def read(self, n: int = -1) -> bytes:
        """The body (or its first ``n`` bytes), reading until it ends."""
        parts: list[bytes] = []
        got = 0
        while n < 0 or got < n:
            data = self.read1(_RECV if n < 0 else min(_RECV, n - got))
            if not data:
                break
            parts.append(data)
            got += len(data)
        return b"".join(parts)

    @property
    def done(self) -> bool:
        """True once the whole body has been read (the connection may carry another)."""
        return self._done

    def detach(self) -> socket.socket | None:
        """The socket, for another request after a fully read answer (else None)."""
        sock = self._sock
        if sock is None or not self._done or self.will_close or self._buf:
            return None
        self._sock = None
        return sock

    def release(self) -> socket.socket | None:
        """The socket for the next request, or None (then the connection is closed).

        A stream's reader stops at its last event, usually just before the body's
        last chunk: the rest of the body (at most :data:`_DRAIN` bytes) is read
        first, if it comes within :data:`_DRAIN_WAIT` seconds; else the connection
        is closed rather than kept waiting for.
        """
        drained = 0
        deadline = time.monotonic() + _DRAIN_WAIT
        try:
            while not self._done and drained <= _DRAIN and self._ready_within(deadline):
                data = self.read1()
                if not data and not self._done:
                    break
                drained += len(data)
        except (OSError, ValueError):
            pass  # the connection is broken: nothing to keep
        sock = self.detach()
        if sock is None:
            self.close()
        return sock

    def close(self) -> None:
        """Close the connection (idempotent)."""
        sock, self._sock = self._sock, None
        if sock is not None:
            sock.close()

    def __enter__(self) -> Response:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
