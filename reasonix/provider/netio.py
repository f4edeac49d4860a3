"""Sockets a cancel token can interrupt, plugged into urllib's handlers.

:func:`build_opener` returns a urllib opener whose HTTP and HTTPS
connections use a :class:`~reasonix.provider.sockets.SocketSlot` and
switch from the connect timeout to the idle-read timeout once connected.
Proxies come from the environment as with any urllib opener. (The slot and
the abortable connect live in :mod:`reasonix.provider.sockets`.)
"""

from __future__ import annotations

import functools
import http.client
import socket
import ssl
import urllib.request
from collections.abc import Callable
from typing import TYPE_CHECKING

from reasonix import idle
from reasonix.provider.sockets import SocketSlot, connect, readable, wire_host

if TYPE_CHECKING:
    from typing import Any

__all__ = ["SlotRequest", "SocketSlot", "build_opener", "wire_host"]


class _ConnMixin:
    """Connects through :func:`~reasonix.provider.sockets.connect`, then switches to the
    idle timeout."""

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
        return connect(address, timeout, self._slot)

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
        return sock is None or self._slot.aborted or readable(sock)


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
