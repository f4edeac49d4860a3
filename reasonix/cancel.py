"""Cancel token: the Python stand-in for Go's ``context.Context``.

A token wraps a ``threading.Event`` plus an optional deadline. Children made
with :meth:`Cancel.child` fire when their parent fires. Code that blocks on a
socket or a process registers a callback with :meth:`on_cancel` so that the
blocking call is interrupted promptly (closing the socket, killing the group).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from reasonix.errors import Cancelled

__all__ = ["Cancel"]


class Cancel:
    """A thread-safe, one-shot cancellation signal with an optional deadline."""

    def __init__(self, deadline: float | None = None, parent: Cancel | None = None) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], None]] = []
        self._reason = ""
        self._timer: threading.Timer | None = None
        self.deadline = deadline  # time.monotonic() value, or None
        if parent is not None:
            if parent.deadline is not None:
                self.deadline = (
                    parent.deadline if deadline is None else min(deadline, parent.deadline)
                )
            parent.on_cancel(lambda: self.cancel(parent.reason))

    @classmethod
    def with_timeout(cls, seconds: float, parent: Cancel | None = None) -> Cancel:
        """A token that counts as cancelled ``seconds`` from now."""
        return cls(deadline=time.monotonic() + seconds, parent=parent)

    def child(self, timeout: float | None = None) -> Cancel:
        """A token that fires with this one, or earlier at its own timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        return Cancel(deadline=deadline, parent=self)

    @property
    def reason(self) -> str:
        """Why the token fired ("" while it has not)."""
        if not self._reason and self._expired():
            return "deadline exceeded"
        return self._reason

    def _expired(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline

    def cancel(self, reason: str = "cancelled") -> None:
        """Fire the token and run every registered callback exactly once."""
        with self._lock:
            if self._event.is_set():
                return
            self._reason = reason or "cancelled"
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            try:
                cb()
            except Exception:  # noqa: BLE001 - a failing callback must not block the others
                pass

    def _arm_deadline_timer(self) -> None:
        # Callbacks interrupt blocking I/O, so a deadline must fire them too;
        # the timer is only started once somebody is listening.
        if self.deadline is None or self._timer is not None:
            return
        delay = max(0.0, self.deadline - time.monotonic())
        self._timer = threading.Timer(delay, self.cancel, ("deadline exceeded",))
        self._timer.daemon = True
        self._timer.start()

    @property
    def cancelled(self) -> bool:
        """True once cancel() ran or the deadline passed."""
        return self._event.is_set() or self._expired()

    def remaining(self) -> float | None:
        """Seconds until the deadline, or None without one."""
        if self.deadline is None:
            return None
        return max(0.0, self.deadline - time.monotonic())

    def raise_if_cancelled(self) -> None:
        """Raise :class:`Cancelled` when the token has fired."""
        if self.cancelled:
            raise Cancelled(self.reason or "cancelled")

    def wait(self, timeout: float | None = None) -> bool:
        """Sleep up to ``timeout`` seconds (capped by the deadline); True if cancelled."""
        rem = self.remaining()
        if rem is not None:
            timeout = rem if timeout is None else min(timeout, rem)
        self._event.wait(timeout)
        return self.cancelled

    def on_cancel(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Run ``callback`` when the token fires (at once if it already has).

        Returns a function that unregisters the callback.
        """
        with self._lock:
            fired = self._event.is_set()
            if not fired:
                self._callbacks.append(callback)
                self._arm_deadline_timer()
        if fired:
            callback()

        def remove() -> None:
            with self._lock:
                if callback in self._callbacks:
                    self._callbacks.remove(callback)

        return remove
