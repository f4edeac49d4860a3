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
import threading
import time
from collections import deque
from typing import Any

from .sse import SseEvent, encode

__all__ = ["Hub", "Subscriber"]

KEEP_EVENTS = 50_000  # replay log per session (a long turn is a few thousand deltas)
CLIENT_BACKLOG = 4_096  # events a tab may fall behind before it is dropped


class Subscriber:
    """One browser tab's queue of encoded events."""

    def __init__(self, limit: int) -> None:
        self._items: deque[bytes] = deque()
        self._cond = threading.Condition()
        self.limit = limit
        self.closed = False
        self.dropped = False  # closed because it fell behind

    def offer(self, data: bytes) -> bool:
        """Queue ``data``; False (and the subscriber closes) when it is closed or full."""
        with self._cond:
            if self.closed:
                return False
            if len(self._items) >= self.limit:
                self.closed = self.dropped = True
                self._items.clear()
                self._cond.notify_all()
                return False
            self._items.append(data)
            self._cond.notify()
            return True

    def take(self, timeout: float) -> list[bytes] | None:
        """Everything queued (waits up to ``timeout``): [] on timeout, None once closed."""
        with self._cond:
            if not self._items and not self.closed:
                self._cond.wait(timeout)
            if self.closed:
                return None
            batch = list(self._items)
            self._items.clear()
            return batch

    def close(self) -> None:
        """Stop this subscriber; its writer sees None from :meth:`take`."""
        with self._cond:
            self.closed = True
            self._items.clear()
            self._cond.notify_all()


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

    def subscribe(self, after: int | None) -> Subscriber:
        """A new subscriber, preloaded with the logged events after ``after``.

        ``after`` None means "only what comes next". An ``after`` the log
        cannot serve (newer than the head — an id from an earlier launch — or
        older than the oldest logged event) preloads one ``reset`` event: the
        page then reloads the session and reconnects.
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
            sub = Subscriber(len(replay) + self._backlog)
            for data in replay:
                sub.offer(data)
            self._subs.append(sub)
            return sub

    def unsubscribe(self, sub: Subscriber) -> None:
        """Forget ``sub`` (its tab went away)."""
        sub.close()
        with self._lock:
            self._subs = [s for s in self._subs if s is not sub]

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
