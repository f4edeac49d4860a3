"""The one Transport protocol every MCP connection implements.

A transport moves :mod:`~reasonix.plugin.mcp.jsonrpc` messages and nothing
else: it knows nothing of initialize, tools or progress. What it receives —
messages, garbage, failures of one request, the end of the connection — comes
out of :meth:`Transport.receive` as *values*, in order, so the single reader
thread of the session sees everything that happened and decides what it means.
"""

from __future__ import annotations

import queue
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from reasonix.cancel import Cancel
from reasonix.lazy import dataclass
from reasonix.plugin.mcp.jsonrpc import FramingError, Message, RequestId

if TYPE_CHECKING:
    from typing import TypeAlias

__all__ = ["Closed", "Inbox", "Incoming", "Transport", "TransportError"]


@dataclass(frozen=True)
class TransportError:
    """A failure reported as a value.

    With ``request_id`` set it belongs to that one outgoing request (an HTTP
    status for its POST, say) and the connection lives on; ``status`` is the
    HTTP status when there was one.
    """

    message: str
    request_id: RequestId | None = None
    status: int | None = None


@dataclass(frozen=True)
class Closed:
    """The connection ended; nothing more will arrive."""

    reason: str


Incoming: TypeAlias = "Message | FramingError | TransportError | Closed"


@runtime_checkable
class Transport(Protocol):
    """A bidirectional JSON-RPC pipe to one MCP server."""

    label: str  # "stdio: npx …", "http: https://…" — for notices and logs

    def start(self, cancel: Cancel) -> None:
        """Connect (spawn, open the stream); raise PluginError when that fails."""
        ...

    def send(self, message: Message) -> None:
        """Queue one message; raise PluginError when the connection is gone.

        Never blocks on the server's answer: a reply arrives through receive().
        """
        ...

    def receive(self, timeout: float | None = None) -> Incoming | None:
        """The next incoming value, or None when ``timeout`` passed first."""
        ...

    def close(self) -> None:
        """Shut down and release every process, socket and thread (idempotent)."""
        ...


# Optional capability, looked up with getattr by the session: a transport may
# define ``abandon(request_id)`` to stop reading the reply of a request that
# was cancelled or timed out (the HTTP transport closes that POST's stream).


class Inbox:
    """The FIFO most transports put their incoming values into."""

    def __init__(self) -> None:
        self._queue: queue.Queue[Incoming] = queue.Queue()
        self.closed = False

    def put(self, item: Incoming) -> None:
        """Deliver one value; after a Closed value, further values are dropped."""
        if self.closed:
            return
        if isinstance(item, Closed):
            self.closed = True
        self._queue.put(item)

    def get(self, timeout: float | None = None) -> Incoming | None:
        """The next value, or None after ``timeout`` seconds."""
        try:
            return self._queue.get(timeout=timeout)
        except queue.Empty:
            return None
