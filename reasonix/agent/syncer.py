"""fsync off the caller's thread: one thread per descriptor, asks coalesced.

A transcript is made durable at every turn boundary. Every byte is already
with the OS when the boundary comes (a killed process loses nothing), so the
loop need not wait while the disk confirms it: :class:`Syncer` does the
fsync on a thread of its own, and closing waits for it.
"""

from __future__ import annotations

import os
import threading

__all__ = ["Syncer"]


class Syncer:
    """One thread that fsyncs a transcript's descriptor whenever asked (coalescing asks)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._cond = threading.Condition()
        self._asked = self._done = 0  # asks made / asks covered by a finished fsync
        self._failed = False
        self._closing = False
        self._thread = threading.Thread(target=self._run, name="reasonix-fsync", daemon=True)
        self._thread.start()

    def request(self) -> None:
        """Ask for an fsync of everything written so far (returns at once)."""
        with self._cond:
            self._asked += 1
            self._cond.notify()

    def finish(self) -> bool:
        """Stop the thread after its pending fsync; True when every ask was covered."""
        with self._cond:
            self._closing = True
            self._cond.notify()
        self._thread.join()
        return self._done == self._asked and not self._failed

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._done == self._asked and not self._closing:
                    self._cond.wait()
                if self._done == self._asked:
                    return
                upto = self._asked
            try:
                os.fsync(self._fd)
            except OSError:
                self._failed = True  # close() fsyncs again and reports nothing: as before
            with self._cond:
                self._done = upto
