"""One session's event stream: sequence numbers, a replay log and bounded fan-out.

Every event published for a session gets the next sequence number, is
encoded once (``sse.encode``, ``id:`` = the number) and handed to each
subscribed browser tab. A tab that reconnects with ``Last-Event-ID: N`` is
first given every logged event after N, so it misses nothing. Publishing
never blocks: each subscriber has a bounded queue, and one that falls that
far behind (a slow or vanished browser) is dropped; its browser reconnects
and catches up from the log.
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from collections import deque
from typing import TYPE_CHECKING

from .sse import SseEvent, encode

if TYPE_CHECKING:
    from typing import Any

__all__ = ["Hub", "Subscriber", "pump"]

KEEP_EVENTS = 50_000  # replay log per session (a long turn is a few thousand deltas)
CLIENT_BACKLOG = 4_096  # events a tab may fall behind before it is dropped


class Subscriber:
    """One browser tab's stream.

    With a ``sock`` (a non-blocking socket whose response headers are sent),
    :meth:`offer` writes straight to it from the publishing thread while the
    tab keeps up: no thread hand-off per event, so fan-out latency is a few
    ``send`` calls. Bytes the socket does not take at once are queued and
    written by the tab's own thread (:meth:`take` … :meth:`wrote`), and direct
    writes wait until that queue is empty, so bytes never interleave.
    """

    def __init__(self, limit: int, sock: socket.socket | None = None) -> None:
        self._items: deque[bytes] = deque()
        self._cond = threading.Condition()
        self._sock = sock
        self._writing = False  # the tab's thread is writing a batch from take()
        self.limit = limit
        self.closed = False
        self.dropped = False  # closed because it fell behind

    def offer(self, data: bytes) -> bool:
        """Send or queue ``data``; False (and the subscriber closes) once closed or full."""
        with self._cond:
            if self.closed:
                return False
            if self._sock is not None and not self._items and not self._writing:
                try:
                    sent = self._sock.send(data)
                except BlockingIOError:
                    sent = 0
                except OSError:  # the browser went away
                    self._close_locked()
                    return False
                if sent == len(data):
                    return True
                data = data[sent:]
            if len(self._items) >= self.limit:
                self.dropped = True
                self._close_locked()
                return False
            self._items.append(data)
            self._cond.notify()
            return True

    def take(self, timeout: float) -> list[bytes] | None:
        """Everything queued (waits up to ``timeout``): [] on timeout, None once closed.

        A non-empty batch must be followed by :meth:`wrote` once it is on the wire.
        """
        with self._cond:
            if not self._items and not self.closed:
                self._cond.wait(timeout)
            if self.closed:
                return None
            batch = list(self._items)
            self._items.clear()
            self._writing = bool(batch)
            return batch

    def wrote(self) -> None:
        """The batch from :meth:`take` is written; direct writes may resume."""
        with self._cond:
            self._writing = False

    def _close_locked(self) -> None:
        self.closed = True
        self._items.clear()
        self._cond.notify_all()

    def close(self) -> None:
        """Stop this subscriber; its writer sees None from :meth:`take`."""
        with self._cond:
            self._close_locked()


def pump(
    sub: Subscriber, sock: socket.socket, *, ping: bytes, every: float, write_timeout: float
) -> None:
    """The tab's own thread: write what direct sends left queued, ping when idle.

    Returns when the subscriber closes; raises OSError (TimeoutError) when the
    browser took nothing for ``write_timeout`` seconds.
    """
    while True:
        batch = sub.take(every)
        if batch is None:
            return
        if not batch:
            sub.offer(ping)  # through offer: never in the middle of a direct write
            continue
        view = memoryview(b"".join(batch))
        deadline = time.monotonic() + write_timeout
        while view:
            try:
                view = view[sock.send(view) :]
                continue
            except BlockingIOError:
                pass
            if sub.closed or time.monotonic() > deadline:
                raise TimeoutError("the browser stopped reading")
            select.select([], [sock], [], 1.0)
        sub.wrote()


class Hub:
    """The numbered event stream of one session, shared by all its tabs."""

    def __init__(self, keep: int = KEEP_EVENTS, backlog: int = CLIENT_BACKLOG) -> None:
        self._lock = threading.Lock()
        self._log: deque[tuple[int, bytes]] = deque(maxlen=keep)
        self._subs: list[Subscriber] = []
        self._backlog = backlog
        self.head = 0  # the last sequence number given out

    def publish(self, payload: dict[str, Any]) -> int:
        """Number, encode, log and fan out one event; returns its sequence number."""
        with self._lock:
            self.head += 1
            seq = self.head
            body = {**payload, "seq": seq, "ts": round(time.time(), 6)}
            text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
            data = encode(SseEvent(text, id=seq))
            self._log.append((seq, data))
            self._subs = [s for s in self._subs if s.offer(data)]
            return seq

    def subscribe(self, after: int | None, sock: socket.socket | None = None) -> Subscriber:
        """A new subscriber, preloaded with the logged events after ``after``.

        ``after`` None means "only what comes next". An ``after`` the log
        cannot serve (newer than the head — an id from an earlier launch — or
        older than the oldest logged event) preloads one ``reset`` event: the
        page then reloads the session and reconnects. ``sock``: see
        :class:`Subscriber`.
        """
        with self._lock:
            replay: list[bytes] = []
            if after is not None:
                oldest = self._log[0][0] if self._log else self.head + 1
                if after > self.head or after < oldest - 1:
                    reset = json.dumps({"type": "reset", "seq": self.head, "ts": time.time()})
                    replay = [encode(SseEvent(reset, id=self.head))]
                else:
                    replay = [data for seq, data in self._log if seq > after]
            sub = Subscriber(len(replay) + self._backlog, sock)
            for data in replay:
                sub.offer(data)
            self._subs.append(sub)
            return sub

    def unsubscribe(self, sub: Subscriber) -> None:
        """Forget ``sub`` (its tab went away)."""
        sub.close()
        with self._lock:
            self._subs = [s for s in self._subs if s is not sub]

    def forget(self) -> None:
        """Drop the replay log (an idle, released session); numbering goes on.

        A tab that reconnects with an older id then gets a ``reset`` and reloads
        the session from its transcript, which by then holds everything.
        """
        with self._lock:
            self._log.clear()

    def close(self) -> None:
        """Close every subscriber (server shutdown)."""
        with self._lock:
            subs, self._subs = self._subs, []
        for sub in subs:
            sub.close()

    @property
    def subscribers(self) -> int:
        """How many tabs are attached now."""
        with self._lock:
            return len(self._subs)
