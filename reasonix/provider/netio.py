"""Sockets a cancel token can interrupt, plugged into urllib's handlers.

A :class:`SocketSlot` holds the live socket of one request attempt; its
:meth:`SocketSlot.abort` (registered with ``cancel.on_cancel``) shuts the
socket down so a read blocked in another frame returns at once. Connecting
polls in short slices so an abort is noticed there too. :func:`build_opener`
returns a urllib opener whose HTTP and HTTPS connections use the slot and
switch from the connect timeout to the idle-read timeout once connected.
Proxies come from the environment as with any urllib opener.
"""

from __future__ import annotations

import errno
import functools
import http.client
import select
import socket
import ssl
import threading
import time
import urllib.request
from collections.abc import Callable
from typing import Any

from reasonix import idle
from reasonix.errors import Cancelled

__all__ = ["SlotRequest", "SocketSlot", "build_opener", "wire_host"]


class SocketSlot:
    """Holds the attempt's live socket so a cancel callback can shut it down."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sock: socket.socket | None = None
        self.aborted = False
        self.connected = False  # TCP connect and TLS handshake both done

    def attach(self, sock: socket.socket) -> None:
        """Track ``sock``; shut it down at once if the slot was already aborted."""
        with self._lock:
            self._sock = sock
            aborted = self.aborted
        if aborted:
            _shutdown(sock)

    def abort(self) -> None:
        """Shut the tracked socket down (safe from any thread, idempotent)."""
        with self._lock:
            self.aborted = True
            sock = self._sock
        if sock is not None:
            _shutdown(sock)


def _shutdown(sock: socket.socket) -> None:
    # The base-class shutdown on the fd wakes a blocked recv in another thread
    # without closing the fd under it (the owner closes) and, for an SSLSocket,
    # without tearing down its SSL object mid-read.
    try:
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass


_IN_PROGRESS = {errno.EINPROGRESS, errno.EWOULDBLOCK, errno.EAGAIN, 10035}  # 10035: WSAEWOULDBLOCK
_POLL = 0.05  # seconds between cancel checks while a connect is pending


def wire_host(host: str) -> str | bytes:
    """``host`` as ``getaddrinfo`` takes it without the IDNA codec when it is ASCII.

    A ``str`` host is always run through ``encodings.idna`` (which loads
    ``stringprep`` and ``unicodedata``, a few milliseconds at the first
    connection); an ASCII name is already what that would give.
    """
    return host.encode("ascii") if host.isascii() else host


def _connect(address: tuple[str, int], timeout: float, slot: SocketSlot) -> socket.socket:
    """socket.create_connection, but abortable by the slot while connecting."""
    host, port = address
    last: OSError | None = None
    deadline = time.monotonic() + timeout
    for family, kind, proto, _, addr in socket.getaddrinfo(
        wire_host(host), port, 0, socket.SOCK_STREAM
    ):
        sock = socket.socket(family, kind, proto)
        try:
            sock.setblocking(False)
            rc = sock.connect_ex(addr)
            while rc != 0:
                if rc not in _IN_PROGRESS:
                    raise OSError(rc, errno.errorcode.get(rc, "connect failed"))
                if slot.aborted:
                    raise Cancelled("cancelled while connecting")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"connect to {host}:{port} timed out")
                _, writable, failed = select.select([], [sock], [sock], min(_POLL, left))
                if writable or failed:
                    rc = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                    if rc == 0:
                        break
                    raise OSError(rc, errno.errorcode.get(rc, "connect failed"))
            sock.settimeout(timeout)
            slot.attach(sock)
            return sock
        except TimeoutError:
            sock.close()
            raise
        except OSError as e:
            sock.close()
            last = e
        except BaseException:
            sock.close()
            raise
    raise last or OSError(f"cannot resolve {host}")


class _ConnMixin:
    """Connects through :func:`_connect`, then switches to the idle timeout."""

    sock: Any

    def __init__(self, *args: Any, slot: SocketSlot, idle: float, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self._slot = slot
        self._idle = idle
        # http.client looks this attribute up in connect(); it is the documented-by-
        # source hook for swapping socket.create_connection.
        self._create_connection = self._open

    def _open(
        self, address: tuple[str, int], timeout: float = 30.0, source: Any = None
    ) -> socket.socket:
        return _connect(address, timeout, self._slot)

    def connect(self) -> None:
        super().connect()  # type: ignore[misc]
        self._slot.attach(self.sock)  # an SSLSocket replaces the plain one
        self._slot.connected = True
        self.sock.settimeout(self._idle)

    def getresponse(self) -> http.client.HTTPResponse:
        # The request is sent: until the answer's first byte, the wait can import
        # what the turn's tools will need (reasonix.idle; the main thread only).
        if self.sock is not None:
            idle.run_until(self._answered)
        return super().getresponse()  # type: ignore[misc, no-any-return]

    def _answered(self) -> bool:
        sock = self.sock
        if sock is None or self._slot.aborted:
            return True
        if isinstance(sock, ssl.SSLSocket) and sock.pending():
            return True
        try:
            return bool(select.select([sock], [], [], 0)[0])
        except (OSError, ValueError):  # closed meanwhile: let getresponse say so
            return True


class _Conn(_ConnMixin, http.client.HTTPConnection):
    pass


class _TLSConn(_ConnMixin, http.client.HTTPSConnection):
    pass


class SlotRequest(urllib.request.Request):
    """A request whose connection is interruptible through ``slot`` (see :func:`build_opener`)."""

    def __init__(self, *args: Any, slot: SocketSlot, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.slot = slot


def _slot_of(req: urllib.request.Request) -> SocketSlot:
    slot = getattr(req, "slot", None)
    return slot if isinstance(slot, SocketSlot) else SocketSlot()


class _HTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, idle: float) -> None:
        super().__init__()
        self._idle = idle

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        make = functools.partial(_Conn, slot=_slot_of(req), idle=self._idle)
        return self.do_open(make, req)  # type: ignore[arg-type]


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, idle: float, tls: Callable[[], ssl.SSLContext]) -> None:
        # Not HTTPSHandler.__init__: from Python 3.12 it builds a default TLS
        # context (loading the CA store) when given none. Ours comes from
        # ``tls`` when an https request is actually opened.
        urllib.request.AbstractHTTPHandler.__init__(self)
        self._tls = tls
        self._idle = idle

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        make = functools.partial(_TLSConn, slot=_slot_of(req), idle=self._idle)
        return self.do_open(make, req, context=self._tls())  # type: ignore[arg-type]


class _SlotRedirects(urllib.request.HTTPRedirectHandler):
    """Redirects as urllib follows them, the new request keeping the old one's slot
    (so a cancel still reaches the connection the redirect opens)."""

    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any,
                         newurl: str) -> urllib.request.Request | None:  # fmt: skip
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and isinstance(getattr(req, "slot", None), SocketSlot):
            new.slot = req.slot  # type: ignore[attr-defined]
        return new


def build_opener(idle: float, tls: Callable[[], ssl.SSLContext]) -> urllib.request.OpenerDirector:
    """A urllib opener whose connections are interruptible through the ``slot`` of each
    :class:`SlotRequest` it opens (a plain request gets a slot of its own).

    Built once per client and shared by its requests, threads included: what
    differs per request travels on the request. ``tls`` returns the TLS
    context; it is called only for https requests.
    """
    return urllib.request.build_opener(
        _HTTPHandler(idle), _HTTPSHandler(idle, tls), _SlotRedirects()
    )
