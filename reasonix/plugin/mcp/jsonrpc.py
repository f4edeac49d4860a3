"""JSON-RPC 2.0 framing for MCP, with no I/O.

Bytes or decoded JSON go in, typed messages come out. Anything that is not a
valid message comes out as a :class:`FramingError` *value* (never raised), so a
transport can hand it to the session, which reports it and carries on — a
server that prints a stray line on stdout must not kill the connection.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from reasonix.lazy import dataclass, field

if TYPE_CHECKING:
    from typing import Any, TypeAlias

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "ErrorResponse",
    "FramingError",
    "Message",
    "Notification",
    "Request",
    "RequestId",
    "Response",
    "decode",
    "decode_line",
    "encode",
    "encode_line",
    "parse",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# 2026-07-28: the server does not speak the protocolVersion named in _meta
# (error data: {"supported": [...], "requested": ...}).
UNSUPPORTED_PROTOCOL_VERSION = -32022

RequestId: TypeAlias = "int | str"


@dataclass(frozen=True)
class Request:
    """A call that expects a response with the same ``id``."""

    id: RequestId
    method: str
    params: dict[str, Any] | None = None


@dataclass(frozen=True)
class Notification:
    """A one-way message (no ``id``, no response)."""

    method: str
    params: dict[str, Any] | None = None


@dataclass(frozen=True)
class Response:
    """A successful reply to the request with ``id``."""

    id: RequestId
    result: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ErrorResponse:
    """A failed reply; ``id`` is None when the peer could not read the request id."""

    id: RequestId | None
    code: int
    message: str
    data: Any = None


@dataclass(frozen=True)
class FramingError:
    """Input that was not a JSON-RPC message, carried as a value (with a short excerpt)."""

    reason: str
    excerpt: str = ""


Message: TypeAlias = "Request | Notification | Response | ErrorResponse"

_EXCERPT = 200  # enough of a garbage line to recognise it in a notice, not a flood


def _excerpt(text: str) -> str:
    return text if len(text) <= _EXCERPT else text[:_EXCERPT] + "…"


def _valid_id(value: Any) -> bool:
    # bool is an int subclass, but `true` is not a usable request id.
    return isinstance(value, (int, str)) and not isinstance(value, bool)


def parse(obj: Any) -> Message | FramingError:
    """Classify one decoded JSON value as a message (or a FramingError)."""
    if not isinstance(obj, dict):
        return FramingError("not a JSON object", _excerpt(json.dumps(obj)[:_EXCERPT]))
    if obj.get("jsonrpc") != "2.0":
        return FramingError("missing jsonrpc 2.0 marker", _excerpt(json.dumps(obj)))
    params = obj.get("params")
    if params is not None and not isinstance(params, dict):
        # MCP only uses by-name params; positional ones are a protocol error.
        return FramingError("params must be an object", _excerpt(json.dumps(obj)))
    if "method" in obj:
        method = obj["method"]
        if not isinstance(method, str):
            return FramingError("method must be a string", _excerpt(json.dumps(obj)))
        if "id" in obj and obj["id"] is not None:
            if not _valid_id(obj["id"]):
                return FramingError("bad request id", _excerpt(json.dumps(obj)))
            return Request(obj["id"], method, params)
        return Notification(method, params)
    rid = obj.get("id")
    if "error" in obj:
        err = obj["error"]
        if not isinstance(err, dict):
            return FramingError("error must be an object", _excerpt(json.dumps(obj)))
        code = err.get("code")
        return ErrorResponse(
            rid if _valid_id(rid) else None,
            code if isinstance(code, int) and not isinstance(code, bool) else INTERNAL_ERROR,
            str(err.get("message", "")),
            err.get("data"),
        )
    if "result" in obj and isinstance(rid, (int, str)) and not isinstance(rid, bool):
        result = obj["result"]
        return Response(rid, result if isinstance(result, dict) else {"value": result})
    return FramingError("neither request, notification nor response", _excerpt(json.dumps(obj)))


def decode(text: str | bytes) -> list[Message | FramingError]:
    """Decode one JSON text (a message or a batch array) into messages."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            return [FramingError("not UTF-8", _excerpt(repr(text[:_EXCERPT])))]
    try:
        obj = json.loads(text)
    except ValueError:
        return [FramingError("not JSON", _excerpt(text.strip()))]
    if isinstance(obj, list):
        # 2025-03-26 allowed batches; later revisions dropped them, but reading one is harmless.
        return [parse(item) for item in obj] or [FramingError("empty batch")]
    return [parse(obj)]


def decode_line(line: str | bytes) -> list[Message | FramingError]:
    """Decode one newline-delimited stdio line; a blank line yields nothing."""
    stripped = line.strip()
    if not stripped:
        return []
    return decode(stripped)


def encode(msg: Message) -> dict[str, Any]:
    """The wire dict of ``msg``."""
    out: dict[str, Any] = {"jsonrpc": "2.0"}
    if isinstance(msg, Request):
        out["id"] = msg.id
        out["method"] = msg.method
        if msg.params is not None:
            out["params"] = msg.params
    elif isinstance(msg, Notification):
        out["method"] = msg.method
        if msg.params is not None:
            out["params"] = msg.params
    elif isinstance(msg, Response):
        out["id"] = msg.id
        out["result"] = msg.result
    else:
        out["id"] = msg.id
        error: dict[str, Any] = {"code": msg.code, "message": msg.message}
        if msg.data is not None:
            error["data"] = msg.data
        out["error"] = error
    return out


def encode_line(msg: Message) -> bytes:
    """One compact JSON line (UTF-8, newline-terminated) for the stdio transport.

    ``json.dumps`` escapes control characters, so the text never contains a raw
    newline and one message is always exactly one line.
    """
    return (json.dumps(encode(msg), ensure_ascii=False, separators=(",", ":")) + "\n").encode()
