"""Sockets a cancel token can interrupt: the slot that holds them, and connecting.

A :class:`SocketSlot` holds the live socket of one request attempt; its
:meth:`SocketSlot.abort` (registered with ``cancel.on_cancel``) shuts the
socket down so a read blocked in another frame returns at once.
:func:`connect` polls in short slices so an abort is noticed while
connecting too, and resolves an ASCII host without the IDNA codec.

Kept apart from :mod:`reasonix.provider.netio` (urllib's handlers) so the
provider's own HTTP path (:mod:`reasonix.provider.h1`) uses them without
importing ``http.client`` or ``urllib.request``.
"""

from __future__ import annotations

import errno
import select
import socket
import threading
import time

from reasonix.errors import Cancelled

__all__ = ["SocketSlot", "connect", "readable", "wire_host"]


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


def readable(sock: socket.socket, wait: float = 0.0) -> bool:
    """True when a read from ``sock`` would not block (within ``wait`` seconds): bytes,
    a TLS socket's already decrypted ones, the end of the stream, or a socket closed
    meanwhile (its reader then says what happened)."""
    pending = getattr(sock, "pending", None)
    if pending is not None and pending():
        return True
    try:
        return bool(select.select([sock], [], [], wait)[0])
    except (OSError, ValueError):
        return True


def wire_host(host: str) -> str | bytes:
    """``host`` as ``getaddrinfo`` takes it without the IDNA codec when it is ASCII.

    A ``str`` host is always run through ``encodings.idna`` (which loads
    ``stringprep`` and ``unicodedata``, a few milliseconds at the first
    connection); an ASCII name is already what that would give.
    """
    return host.encode("ascii") if host.isascii() else host


def connect(address: tuple[str, int], timeout: float, slot: SocketSlot) -> socket.socket:
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
