"""Saved ``-L`` forwards, kept in step with the user config while a connection is held.

``reasonix remote forward add|rm`` edits the host's saved list; every command
that holds a connection to the host (``connect``, ``run``, ``open``) runs a
``ForwardSync``, which starts the saved forwards and, about once a second,
starts newly added ones and cancels removed ones. So ``forward add`` takes
effect at once in a running session and ``forward rm`` closes the port, and
no forward outlives the connection that carries it.
"""

from __future__ import annotations

import sys
import threading

from reasonix.cli.remote_hosts import find_host
from reasonix.cli.safe_text import printable
from reasonix.errors import ReasonixError
from reasonix.remote.connection import Connection
from reasonix.remote.forward import Forward, parse_spec

__all__ = ["ForwardSync"]


class ForwardSync:
    """The live forwards of one held connection to host ``name``."""

    def __init__(
        self, conn: Connection, name: str, *, interval: float = 1.0, quiet: bool = False
    ) -> None:
        self.conn = conn
        self.name = name
        self.interval = interval
        # quiet: after start() a full-screen chat owns the terminal; keep off it.
        self.quiet = quiet
        self._started = False
        self.active: dict[str, Forward] = {}
        self._failed: set[str] = set()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def _say(self, text: str) -> None:
        if self.quiet and self._started:
            return
        print(printable(f"reasonix: {self.name}: {text}"), file=sys.stderr, flush=True)

    def sync(self) -> None:
        """Make the live forwards equal to the saved ones."""
        try:
            _, saved = find_host(self.name)
        except ReasonixError:
            saved = []  # the host was removed meanwhile: close everything
        with self._lock:
            for spec in [s for s in self.active if s not in saved]:
                self.active.pop(spec).stop()
                self._say(f"forward {spec} closed")
            for spec in saved:
                if spec in self.active or spec in self._failed:
                    continue
                try:
                    fwd = Forward.local(self.conn, parse_spec(spec)).start()
                except ReasonixError as err:
                    self._failed.add(spec)  # reported once, not every second
                    self._say(f"forward {spec} not started: {err}")
                    continue
                self.active[spec] = fwd
            self._failed &= set(saved)

    def start(self) -> ForwardSync:
        """Start the saved forwards now and follow later edits in a background thread."""
        self.sync()
        self._started = True
        self._thread = threading.Thread(target=self._follow, name="forward-sync", daemon=True)
        self._thread.start()
        return self

    def _follow(self) -> None:
        while not self._stop.wait(self.interval):
            if not self.conn.alive:
                return
            self.sync()

    def stop(self) -> None:
        """Stop following and cancel every forward this sync started."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        with self._lock:
            for fwd in self.active.values():
                fwd.stop()
            self.active.clear()
