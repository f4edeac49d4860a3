"""One session's event stream: sequence numbers, a replay log and bounded fan-out.

Every event published for a session gets the next sequence number, is
encoded once (``sse.encode``, ``id:`` = the number) and handed to each
subscribed browser tab. A tab that reconnects with ``Last-Event-ID: N`` is
first given every logged event after N, so it misses nothing. Publishing
never blocks: each subscriber has a bounded queue, and one that falls that
far behind (a slow or vanished browser) is dropped; its browser reconnects
and catches up from the log.

Fan-out is coalesced (issue 38): a write per tab per event made 50 tabs cost
almost three times the CPU of one, all of it in ``send`` calls. An event
that comes after a quiet spell of :data:`FLUSH_SECONDS` still goes out at
once, from the publishing thread; the events that follow it within that
window wait for the window's end and then go to each tab as one write (the
hub's flusher thread), each still its own ``id:``/``data:`` block. So a
stream of model deltas costs one write per tab per window, however fast the
model is, and no event waits longer than one window.
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
# At most one write per tab this often: an animation frame at 60 Hz, so a page
# could not show the events sooner anyway, and well inside the 50 ms (p99)
# a tab may wait for an event.
FLUSH_SECONDS = 0.016
IDLE_EXIT_SECONDS = 2.0  # a flusher with nothing to do this long ends (a new one starts)


class Subscriber:
    """One browser tab's stream.

    With a ``sock`` (a non-blocking socket whose response headers are sent),
    :meth:`offer` writes straight to it from the hub's fan-out (the publishing
    thread, or the flusher at the end of a window) while the tab keeps up: no
    hand-off to the tab's thread, so fan-out latency is a few ``send`` calls.
    Bytes the socket does not take at once are queued and written by the
    tab's own thread (:meth:`take` … :meth:`wrote`), and direct
    writes wait until that queue is empty, so bytes never interleave.
    """

    def __init__(self, limit: int, sock: socket.socket | None = None) -> None:
        self._items: deque[bytes] = deque()
        self._queued = 0  # events (not chunks) in _items: what ``limit`` bounds
        self._cond = threading.Condition(threading.Lock())
        self._sock = sock
        self._writing = False  # the tab's thread is writing a batch from take()
        self.limit = limit
        self.seen = 0  # the last sequence number this tab was given (set by the hub)
        self.closed = False
        self.dropped = False  # closed because it fell behind

    def offer(self, data: bytes, events: int = 1) -> bool:
        """Send or queue ``data`` (``events`` whole events, or a ping); False (and the
        subscriber closes) once closed or more than ``limit`` events behind."""
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
            if self._queued + events > self.limit:
                self.dropped = True
                self._close_locked()
                return False
            self._items.append(data)
            self._queued += events
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
            self._queued = 0
            self._writing = bool(batch)
            return batch

    def wrote(self) -> None:
        """The batch from :meth:`take` is written; direct writes may resume."""
        with self._cond:
            self._writing = False

    def _close_locked(self) -> None:
        self.closed = True
        self._items.clear()
        self._queued = 0
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
    """The numbered event stream of one session, shared by all its tabs.

    ``window``: the coalescing window in seconds (see the module docstring).
    """

    def __init__(
        self, keep: int = KEEP_EVENTS, backlog: int = CLIENT_BACKLOG, window: float = FLUSH_SECONDS
    ) -> None:
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)  # the flusher waits on it
        self._sending = threading.Lock()  # one fan-out at a time, so batches keep their order
        self._log: deque[tuple[int, bytes]] = deque(maxlen=keep)
        self._subs: list[Subscriber] = []
        self._pending: list[tuple[int, bytes]] = []  # numbered and logged, not yet sent
        self._backlog = backlog
        self._window = window
        self._last_flush = -window  # monotonic time of the last fan-out
        self._armed = False  # the flusher owes a fan-out at _last_flush + window
        self._flusher: threading.Thread | None = None
        self.head = 0  # the last sequence number given out

    def publish(self, payload: dict[str, Any]) -> int:
        """Number, encode and log one event and send it on; returns its sequence number.

        After a quiet window the event goes out now, from this thread; within
        one it waits (with whatever else comes) for the window's end.
        """
        with self._lock:
            self.head += 1
            seq = self.head
            body = {**payload, "seq": seq, "ts": round(time.time(), 6)}
            text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
            data = encode(SseEvent(text, id=seq))
            self._log.append((seq, data))
            if not self._subs:
                return seq  # nobody to send to: a tab that comes later replays the log
            self._pending.append((seq, data))
            if self._armed:
                return seq
            now = time.monotonic()
            if now - self._last_flush < self._window:
                self._arm_locked()
                return seq
        self.flush()
        return seq

    def _arm_locked(self) -> None:
        """Have the flusher send what is pending at the end of the window (lock held)."""
        self._armed = True
        if self._flusher is None:
            self._flusher = threading.Thread(target=self._flush_loop, name="serve-hub-flush",
                                             daemon=True)  # fmt: skip
            self._flusher.start()
        else:
            self._wake.notify()

    def _flush_loop(self) -> None:
        """The flusher thread: one fan-out per armed window; ends when idle for a while."""
        try:
            while True:
                with self._lock:
                    if not self._armed:
                        self._wake.wait(IDLE_EXIT_SECONDS)
                        if not self._armed:
                            self._flusher = None  # under the lock: a publisher now starts one
                            return
                    due = self._last_flush + self._window
                # the window's rest, without the lock: publishers keep appending meanwhile
                time.sleep(max(0.0, due - time.monotonic()))
                with self._lock:
                    self._armed = False
                self.flush()
        except BaseException:  # a bug: the next window starts a new flusher
            with self._lock:
                self._flusher, self._armed = None, False
            raise

    def flush(self) -> None:
        """Send every pending event to every tab now, one write per tab."""
        with self._sending:
            with self._lock:
                batch, self._pending = self._pending, []
                if not batch:  # an empty flush opens no window
                    return
                subs = list(self._subs)
                self._last_flush = time.monotonic()
            first = batch[0][0]
            last = batch[-1][0]
            whole = b"".join(data for _, data in batch) if len(batch) > 1 else batch[0][1]
            gone: list[Subscriber] = []
            for sub in subs:
                if sub.seen < first:
                    ok = sub.offer(whole, len(batch))
                else:  # subscribed during this batch: its replay already had the start
                    rest = [data for seq, data in batch if seq > sub.seen]
                    ok = not rest or sub.offer(b"".join(rest), len(rest))
                sub.seen = last
                if not ok:
                    gone.append(sub)
            if gone:
                with self._lock:
                    self._subs = [s for s in self._subs if s not in gone]

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
            sub.seen = self.head  # the replay (or nothing, or the reset) covers up to here
            if replay:
                sub.offer(b"".join(replay), len(replay))
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
        """Send what is pending, then close every subscriber (server shutdown)."""
        self.flush()
        with self._lock:
            subs, self._subs = self._subs, []
        for sub in subs:
            sub.close()

    @property
    def subscribers(self) -> int:
        """How many tabs are attached now."""
        with self._lock:
            return len(self._subs)
