"""JSON-RPC 2.0 over NDJSON frames: ids, pending requests and the one error boundary.

:class:`Connection` is shared by the reader thread (which feeds it frames) and
the worker threads that run turns (which send notifications and make
agent→client requests such as ``session/request_permission`` or
``fs/read_text_file`` and block until the answer arrives). It owns

- the outgoing request ids and the table of pending requests, failed all at
  once when the input ends (:meth:`close`);
- the validation of every incoming frame: bad JSON is ``-32700``, a message
  that is not a JSON-RPC 2.0 request, notification or response is ``-32600``;
- :func:`wire_error`, the only place where an exception becomes an error
  object: an :class:`RpcError` keeps its code, a missing provider key is
  "authentication required", a usage error is "invalid params", any other
  Reasonix error is "internal error" with its message, and anything else is
  "internal error" without internals. No traceback ever reaches the wire.

Writes are serialised by a lock and each message is one ``write`` call, so
messages from several threads never interleave.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from reasonix.cancel import Cancel
from reasonix.errors import Cancelled, MissingAPIKey, ReasonixError, UsageError
from reasonix.lazy import dataclass

from .framing import Frame, Oversize, encode

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "AUTH_REQUIRED",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "REQUEST_CANCELLED",
    "RESOURCE_NOT_FOUND",
    "Connection",
    "ConnectionClosed",
    "Incoming",
    "Reply",
    "RpcError",
    "wire_error",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800
AUTH_REQUIRED = -32000
RESOURCE_NOT_FOUND = -32002


class RpcError(Exception):
    """An error with a JSON-RPC code: raised by handlers, or the peer's error answer."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data

    def to_dict(self) -> dict[str, Any]:
        """The wire form of this error."""
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            out["data"] = self.data
        return out


class ConnectionClosed(ReasonixError):
    """The client went away (stdin closed) before answering a request."""


@dataclass(frozen=True)
class Reply:
    """A handler result plus work to do right after the answer is sent.

    ``session/new`` answers with the session id and only then advertises the
    session's commands, so the client knows the session they belong to.
    """

    result: Any
    after: Callable[[], None]


def wire_error(exc: BaseException, log: Callable[[str], None] | None = None) -> RpcError:
    """The error object an exception is sent as (the single exception→wire mapping).

    Unexpected exceptions are logged (with a traceback when REASONIX_DEBUG is
    set, on the log stream only) and reach the wire as a bare internal error.
    """
    if isinstance(exc, RpcError):
        return exc
    if isinstance(exc, MissingAPIKey):
        return RpcError(AUTH_REQUIRED, str(exc))
    if isinstance(exc, UsageError):
        return RpcError(INVALID_PARAMS, str(exc))
    if isinstance(exc, Cancelled):
        return RpcError(REQUEST_CANCELLED, str(exc) or "cancelled")
    if isinstance(exc, ReasonixError):
        return RpcError(INTERNAL_ERROR, str(exc))
    if log is not None:
        log(f"internal error: {type(exc).__name__}: {exc}")
        if os.environ.get("REASONIX_DEBUG"):
            import traceback

            log("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
    return RpcError(INTERNAL_ERROR, f"internal error ({type(exc).__name__})")


@dataclass(frozen=True)
class Incoming:
    """A valid request (``is_request``) or notification from the client."""

    method: str
    params: Any
    id: Any = None
    is_request: bool = True


def _valid_id(value: Any) -> bool:
    """JSON-RPC ids are strings, numbers or null (a boolean is no number; inf is no JSON)."""
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or (isinstance(value, (str, int)) and not isinstance(value, bool))


class _Pending:
    """One agent→client request waiting for its answer."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.result: Any = None
        self.error: RpcError | ConnectionClosed | None = None


class Connection:
    """One JSON-RPC peer over a byte sink (the client's stdin is our stdout)."""

    def __init__(self, write: Callable[[bytes], Any], log: Callable[[str], None]) -> None:
        self._write, self.log = write, log
        self._lock = threading.Lock()
        self._ids = itertools.count()
        self._pending: dict[int, _Pending] = {}
        self._closed = threading.Event()

    @property
    def closed(self) -> bool:
        """True once the input ended or the output broke."""
        return self._closed.is_set()

    # -- sending ----------------------------------------------------------------
    def _send(self, message: dict[str, Any]) -> None:
        try:
            data = encode({"jsonrpc": "2.0", **message})
        except ValueError as err:  # NaN/inf: never put invalid JSON on the wire
            if "id" not in message or "method" in message:
                self.log(f"dropped an unencodable message: {err}")
                return
            error = {"code": INTERNAL_ERROR, "message": "internal error (unencodable result)"}
            data = encode({"jsonrpc": "2.0", "id": message["id"], "error": error})
        with self._lock:
            if self._closed.is_set() and "method" in message:
                return  # nobody listens for new messages any more
            try:
                self._write(data)
            except (OSError, ValueError):  # the client closed its end
                self._closed.set()

    def notify(self, method: str, params: dict[str, Any]) -> None:
        """Send a notification (no answer expected)."""
        self._send({"method": method, "params": params})

    def respond(self, request_id: Any, result: Any) -> None:
        """Answer a request with ``result`` (None is sent as JSON null)."""
        self._send({"id": request_id, "result": result})

    def respond_error(self, request_id: Any, error: RpcError) -> None:
        """Answer a request (or an unreadable message, ``request_id`` None) with an error."""
        self._send({"id": request_id, "error": error.to_dict()})

    def request(self, method: str, params: dict[str, Any], cancel: Cancel | None = None) -> Any:
        """Ask the client and wait for the result.

        Raises the client's :class:`RpcError`, :class:`ConnectionClosed` when
        the input ends first, or :class:`Cancelled` when ``cancel`` fires (the
        client is then told with ``$/cancel_request``).
        """
        if self._closed.is_set():
            raise ConnectionClosed(f"the client is gone; {method} was not sent")
        request_id = next(self._ids)
        pending = _Pending()
        self._pending[request_id] = pending
        try:
            self._send({"id": request_id, "method": method, "params": params})
            while not pending.done.wait(0.05):
                if cancel is not None and cancel.cancelled:
                    self.notify("$/cancel_request", {"requestId": request_id})
                    raise Cancelled(f"{method} was cancelled")
                if self._closed.is_set():
                    raise ConnectionClosed(f"the client is gone; {method} got no answer")
        finally:
            self._pending.pop(request_id, None)
        if pending.error is not None:
            raise pending.error
        return pending.result

    def close(self) -> None:
        """The input ended: fail every pending request now."""
        self._closed.set()
        for pending in list(self._pending.values()):
            pending.error = ConnectionClosed("the client closed the connection")
            pending.done.set()

    # -- receiving ---------------------------------------------------------------
    def receive(self, frame: Frame) -> Incoming | None:
        """Parse one frame: a request or notification to dispatch, or None.

        Answers to our own requests are delivered here; malformed frames are
        answered with an error at once.
        """
        if isinstance(frame, Oversize):
            self.respond_error(
                None, RpcError(PARSE_ERROR, f"message too large ({frame.size} bytes)")
            )
            return None
        try:
            message = json.loads(frame.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as err:
            reason = "not UTF-8" if isinstance(err, UnicodeDecodeError) else "invalid JSON"
            self.respond_error(None, RpcError(PARSE_ERROR, f"parse error: {reason}"))
            return None
        if not isinstance(message, dict):
            what = (
                "a batch (ACP does not use batches)" if isinstance(message, list) else "no object"
            )
            self.respond_error(None, RpcError(INVALID_REQUEST, f"invalid request: {what}"))
            return None
        return self._classify(message)

    def _classify(self, message: dict[str, Any]) -> Incoming | None:
        has_id = "id" in message
        request_id = message.get("id")
        reply_id = request_id if _valid_id(request_id) else None
        if message.get("jsonrpc") != "2.0":
            return self._invalid(reply_id, 'jsonrpc must be "2.0"')
        if "method" not in message:
            if "result" in message or "error" in message:
                self._deliver(message)
                return None
            return self._invalid(reply_id, "neither a request nor a response")
        method = message["method"]
        if not isinstance(method, str):
            return self._invalid(reply_id, "method must be a string")
        if has_id and not _valid_id(request_id):
            return self._invalid(None, "id must be a string, a number or null")
        params = message.get("params", {})
        if params is None:
            params = {}
        if not isinstance(params, (dict, list)):
            if not has_id:
                return None  # a notification never gets an answer, not even an error
            return self._invalid(request_id, "params must be an object")
        return Incoming(method, params, request_id, has_id)

    def _invalid(self, reply_id: Any, why: str) -> Incoming | None:
        """Answer an invalid message; there is nothing to dispatch (always None)."""
        self.respond_error(reply_id, RpcError(INVALID_REQUEST, f"invalid request: {why}"))
        return None

    def _deliver(self, message: dict[str, Any]) -> None:
        request_id = message.get("id")
        pending = None
        if isinstance(request_id, int) and not isinstance(request_id, bool):
            pending = self._pending.get(request_id)
        if pending is None:
            self.log(f"ignored an answer to unknown request id {request_id!r}")
            return
        if pending.done.is_set():  # the first answer stands, even before its waiter wakes
            self.log(f"ignored a second answer to request id {request_id!r}")
            return
        if "error" in message:
            err = message["error"]
            if isinstance(err, dict) and isinstance(err.get("code"), int):
                pending.error = RpcError(err["code"], str(err.get("message", "")), err.get("data"))
            else:
                pending.error = RpcError(INTERNAL_ERROR, "the client sent a malformed error")
        else:
            pending.result = message.get("result")
        pending.done.set()

    # -- the boundary ------------------------------------------------------------
    def answer(self, incoming: Incoming, handler: Callable[[Any], Any]) -> None:
        """Run ``handler(params)`` and send its result or its error (requests only).

        A notification's failure is only logged: notifications never get answers.
        """
        try:
            result = handler(incoming.params)
        except Exception as exc:  # noqa: BLE001 - the one place errors become wire errors
            if incoming.is_request:
                self.respond_error(incoming.id, wire_error(exc, self.log))
            else:
                self.log(f"{incoming.method}: {wire_error(exc, self.log).message}")
            return
        after = None
        if isinstance(result, Reply):
            result, after = result.result, result.after
        if incoming.is_request:
            self.respond(incoming.id, result)
        if after is not None:
            try:
                after()
            except Exception as exc:  # noqa: BLE001 - follow-up work must not kill the reader
                self.log(f"{incoming.method}: {wire_error(exc, self.log).message}")
