"""``--mcp-debug FILE``: a transport wrapper that logs every JSON-RPC message.

Each line is ``<UTC time> <server> <direction> <json>`` with ``->`` for what
we send and ``<-`` for what arrives (``!!`` for transport events such as a
garbage line or the end of the connection). The wrapper changes nothing about
the traffic, so it can sit around any transport.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.cancel import Cancel
from reasonix.plugin.mcp.jsonrpc import FramingError, Message, RequestId, encode
from reasonix.plugin.mcp.transport import Closed, Incoming, Transport, TransportError

if TYPE_CHECKING:
    from typing import IO

__all__ = ["DebugLog", "DebugTransport"]


class DebugLog:
    """An append-only traffic log shared by every server of one run."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fh: IO[str] | None = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed by close()
        self._lock = threading.Lock()

    def write(self, server: str, direction: str, text: str) -> None:
        """Append one line (no-op after close)."""
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
        with self._lock:
            if self._fh is None:
                return
            self._fh.write(f"{stamp} {server} {direction} {text}\n")
            self._fh.flush()

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            if self._fh is not None:
                self._fh.close()
                self._fh = None


class DebugTransport:
    """Wrap ``inner`` and copy its traffic into ``log``."""

    def __init__(self, inner: Transport, log: DebugLog, server: str) -> None:
        self.inner = inner
        self.log = log
        self.server = server
        self.label = inner.label

    def start(self, cancel: Cancel) -> None:
        """Start the wrapped transport."""
        self.log.write(self.server, "!!", f"start {self.inner.label}")
        self.inner.start(cancel)

    def send(self, message: Message) -> None:
        """Log, then send."""
        self.log.write(self.server, "->", json.dumps(encode(message), ensure_ascii=False))
        self.inner.send(message)

    def receive(self, timeout: float | None = None) -> Incoming | None:
        """Receive, then log."""
        item = self.inner.receive(timeout)
        if item is None:
            return None
        if isinstance(item, (Closed, TransportError, FramingError)):
            self.log.write(self.server, "!!", repr(item))
        else:
            self.log.write(self.server, "<-", json.dumps(encode(item), ensure_ascii=False))
        return item

    def abandon(self, request_id: RequestId) -> None:
        """Pass the optional abandon() on to the wrapped transport."""
        abandon = getattr(self.inner, "abandon", None)
        if callable(abandon):
            self.log.write(self.server, "!!", f"abandon {request_id}")
            abandon(request_id)

    def close(self) -> None:
        """Close the wrapped transport."""
        self.log.write(self.server, "!!", "close")
        self.inner.close()
