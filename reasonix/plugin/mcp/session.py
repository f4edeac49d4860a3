"""The JSON-RPC session: one per connection, whatever the transport.

Owns request-id correlation (``_pending``), the single reader thread, answers
to server→client requests, notification routing (progress by token, the rest
to one callback), timeouts and cancellation (a ``notifications/cancelled`` goes
to the server when a caller gives up). It knows no MCP lifecycle: the client
(:mod:`reasonix.plugin.mcp.client`) builds the handshake on top of it.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Collection

from reasonix.cancel import Cancel
from reasonix.errors import Cancelled, PluginError
from reasonix.plugin.mcp.errors import ConnectionLost, HttpStatusError, McpTimeout, RpcError
from reasonix.plugin.mcp.jsonrpc import (
    INTERNAL_ERROR,
    METHOD_NOT_FOUND,
    ErrorResponse,
    FramingError,
    Notification,
    Request,
    RequestId,
    Response,
)
from reasonix.plugin.mcp.transport import Closed, Transport, TransportError

__all__ = ["ProgressCallback", "Session"]

from typing import TYPE_CHECKING

from reasonix.lazy import dataclass, field

if TYPE_CHECKING:
    from typing import Any

    RequestHandler = Callable[[Request], dict[str, Any]]
ProgressCallback = Callable[[float, "float | None", "str | None"], None]

_READ_TICK = 0.5  # how often the reader re-checks the stop flag while idle


@dataclass
class _Pending:
    method: str
    event: threading.Event = field(default_factory=threading.Event)
    result: dict[str, Any] | None = None
    error: BaseException | None = None

    def settle(
        self, result: dict[str, Any] | None = None, error: BaseException | None = None
    ) -> None:
        if self.event.is_set():
            return
        self.result, self.error = result, error
        self.event.set()


class Session:
    """Request/response correlation and dispatch over one :class:`Transport`."""

    def __init__(
        self,
        transport: Transport,
        *,
        handlers: dict[str, RequestHandler] | None = None,
        on_notification: Callable[[Notification], None] | None = None,
        on_notice: Callable[[str], None] | None = None,
        threaded: Collection[str] = (),
    ) -> None:
        self.transport = transport
        self.handlers = dict(handlers or {})
        self.threaded = frozenset(threaded)  # methods answered on a thread of their own
        self.on_notification = on_notification
        self.on_notice = on_notice
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._pending: dict[RequestId, _Pending] = {}
        self._progress: dict[str, ProgressCallback] = {}
        self._closed_reason = ""
        self._stop = threading.Event()
        self._reader: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------
    def start(self) -> None:
        """Start the reader thread (the transport must already be started)."""
        self._reader = threading.Thread(
            target=self._read_loop, name=f"mcp-reader {self.transport.label}", daemon=True
        )
        self._reader.start()

    @property
    def alive(self) -> bool:
        """False once the connection ended."""
        return not self._closed_reason

    @property
    def closed_reason(self) -> str:
        """Why the connection ended ("" while alive)."""
        return self._closed_reason

    def close(self) -> None:
        """Close the transport, fail every pending request and stop the reader."""
        self._stop.set()
        self.transport.close()
        self._fail_all("connection closed")
        if self._reader is not None and self._reader is not threading.current_thread():
            self._reader.join(timeout=5.0)

    # -- outgoing ----------------------------------------------------------
    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification (no answer expected)."""
        self.transport.send(Notification(method, params))

    def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        cancel: Cancel | None = None,
        timeout: float | None = None,
        progress: ProgressCallback | None = None,
    ) -> dict[str, Any]:
        """Send a request and wait for its result.

        Raises RpcError (an error answer), McpTimeout, Cancelled, ConnectionLost
        or HttpStatusError. On timeout or cancellation the server is told with
        ``notifications/cancelled`` so it can stop work nobody waits for.
        """
        if self._closed_reason:
            raise ConnectionLost(self._closed_reason)
        rid: RequestId = next(self._ids)
        params = dict(params or {})
        token = ""
        if progress is not None:
            token = f"rx-{rid}"
            meta = dict(params.get("_meta") or {})
            meta["progressToken"] = token
            params["_meta"] = meta
        pending = _Pending(method)
        with self._lock:
            self._pending[rid] = pending
            if progress is not None:
                self._progress[token] = progress
        unregister: Callable[[], None] = lambda: None  # noqa: E731 - replaced below when cancellable
        if cancel is not None:
            unregister = cancel.on_cancel(
                lambda: pending.settle(error=Cancelled(cancel.reason or "cancelled"))
            )
        try:
            try:
                self.transport.send(Request(rid, method, params))
            except PluginError as exc:
                pending.settle(error=exc)
            if not pending.event.wait(timeout):
                pending.settle(error=McpTimeout(f"{method} got no answer within {timeout:g}s"))
        finally:
            unregister()
            with self._lock:
                self._pending.pop(rid, None)
                self._progress.pop(token, None)
        if isinstance(pending.error, (Cancelled, McpTimeout)) and method != "initialize":
            # The spec forbids cancelling initialize; everything else is fair game.
            self._send_quietly(
                Notification(
                    "notifications/cancelled",
                    {"requestId": rid, "reason": str(pending.error)},
                )
            )
            # Optional transport capability: drop the reply stream too (HTTP).
            abandon = getattr(self.transport, "abandon", None)
            if callable(abandon):
                abandon(rid)
        if pending.error is not None:
            raise pending.error
        return pending.result or {}

    def _send_quietly(self, message: Notification | Response | ErrorResponse) -> None:
        try:
            self.transport.send(message)
        except PluginError:
            pass  # the connection is gone; the caller already has its outcome

    # -- incoming ----------------------------------------------------------
    def _read_loop(self) -> None:
        while not self._stop.is_set():
            item = self.transport.receive(_READ_TICK)
            if item is None:
                continue
            if isinstance(item, Closed):
                self._fail_all(item.reason or "connection closed")
                return
            try:
                self._dispatch(item)
            except Exception as exc:  # noqa: BLE001 - one bad message must not stop the reader
                self._notice(f"error handling a message: {exc}")

    def _dispatch(self, item: Any) -> None:
        if isinstance(item, Response):
            self._settle(item.id, result=item.result)
        elif isinstance(item, ErrorResponse):
            if item.id is None:
                self._notice(f"server error without request id: {item.message}")
            else:
                self._settle(item.id, error=RpcError(item.code, item.message, item.data))
        elif isinstance(item, Request):
            if item.method in self.threaded and item.method in self.handlers:
                # A slow answer (a person filling a form) must not stop the reader.
                threading.Thread(
                    target=self._answer, args=(item,), name=f"mcp-{item.method}", daemon=True
                ).start()
            else:
                self._answer(item)
        elif isinstance(item, Notification):
            self._route(item)
        elif isinstance(item, TransportError):
            if item.request_id is None:
                self._notice(item.message)
            else:
                err: PluginError = (
                    HttpStatusError(item.status, item.message)
                    if item.status is not None
                    else ConnectionLost(item.message)
                )
                self._settle(item.request_id, error=err)
        elif isinstance(item, FramingError):
            self._notice(f"ignored a non-JSON-RPC line ({item.reason}): {item.excerpt}")

    def _settle(
        self,
        rid: RequestId,
        result: dict[str, Any] | None = None,
        error: BaseException | None = None,
    ) -> None:
        with self._lock:
            pending = self._pending.get(rid)
        if pending is None:
            return  # a late answer to a request that timed out or was cancelled
        pending.settle(result, error)

    def _answer(self, req: Request) -> None:
        handler = self.handlers.get(req.method)
        if handler is None:
            # sampling (and elicitation without a frontend hook): not advertised.
            self._send_quietly(
                ErrorResponse(req.id, METHOD_NOT_FOUND, f"method not supported: {req.method}")
            )
            return
        try:
            result = handler(req)
        except RpcError as exc:
            self._send_quietly(ErrorResponse(req.id, exc.code, exc.rpc_message, exc.data))
            return
        except Exception as exc:  # noqa: BLE001 - the error goes back to the server as a value
            self._send_quietly(ErrorResponse(req.id, INTERNAL_ERROR, str(exc)))
            return
        self._send_quietly(Response(req.id, result))

    def _route(self, note: Notification) -> None:
        params = note.params or {}
        if note.method == "notifications/progress":
            with self._lock:
                callback = self._progress.get(str(params.get("progressToken")))
            if callback is None:
                return  # MCP-13: progress for tokens we did not hand out is ignored
            progress = params.get("progress")
            total = params.get("total")
            message = params.get("message")
            callback(
                float(progress) if isinstance(progress, (int, float)) else 0.0,
                float(total) if isinstance(total, (int, float)) else None,
                message if isinstance(message, str) else None,
            )
            return
        if note.method == "notifications/cancelled":
            return  # the server gave up on one of its own requests; we answer instantly anyway
        if self.on_notification is not None:
            self.on_notification(note)

    def _fail_all(self, reason: str) -> None:
        with self._lock:
            if not self._closed_reason:
                self._closed_reason = reason
            pending = list(self._pending.values())
        for p in pending:
            p.settle(error=ConnectionLost(reason))

    def _notice(self, text: str) -> None:
        if self.on_notice is not None:
            self.on_notice(text)
