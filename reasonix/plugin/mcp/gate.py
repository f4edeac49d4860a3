"""Per-server call gate: ``serial`` (one call in flight) or ``parallel`` (MCP-17/18, D21)."""

from __future__ import annotations

import threading

from reasonix.cancel import Cancel
from reasonix.errors import Cancelled

__all__ = ["SERIAL_NAME_HINTS", "Gate", "default_concurrency"]

# D21: servers whose names contain one of these (case-insensitively) drive one
# stateful browser; concurrent calls would trample each other's page.
SERIAL_NAME_HINTS = ("browser", "playwright", "puppeteer", "chrome", "chromium", "selenium")


def default_concurrency(name: str, configured: str = "") -> str:
    """The effective mode: an explicit value wins, else ``serial`` for browser-ish names."""
    if configured in ("serial", "parallel"):
        return configured
    low = name.lower()
    return "serial" if any(h in low for h in SERIAL_NAME_HINTS) else "parallel"


class Gate:
    """Admit calls; in serial mode one at a time, in arrival order of wake-ups.

    A queued caller is woken by its own cancel token, so a cancelled call
    leaves the queue at once instead of waiting for the one in flight.
    """

    def __init__(self, mode: str) -> None:
        self.serial = mode == "serial"
        self._cond = threading.Condition()
        self._busy = False

    def acquire(self, cancel: Cancel) -> None:
        """Wait for a slot; raise Cancelled when ``cancel`` fires first."""
        if not self.serial:
            cancel.raise_if_cancelled()
            return

        def wake() -> None:
            with self._cond:
                self._cond.notify_all()

        unregister = cancel.on_cancel(wake)
        try:
            with self._cond:
                while self._busy:
                    if cancel.cancelled:
                        raise Cancelled(cancel.reason or "cancelled")
                    # The cancel callback notifies; the bound only guards a missed wake-up.
                    self._cond.wait(timeout=1.0)
                if cancel.cancelled:
                    raise Cancelled(cancel.reason or "cancelled")
                self._busy = True
        finally:
            unregister()

    def release(self) -> None:
        """Free the slot taken by acquire()."""
        if not self.serial:
            return
        with self._cond:
            self._busy = False
            self._cond.notify_all()
