"""I/O-free JSON-RPC framing and HTTP rules."""

from __future__ import annotations

import json

import pytest

from reasonix.plugin.mcp.httpwire import (
    encode_header_value,
    fallback_to_sse,
    is_stale_session,
    media_type,
    request_headers,
    resolve_endpoint,
    same_origin,
)
from reasonix.plugin.mcp.jsonrpc import (
    ErrorResponse,
    FramingError,
    Notification,
    Request,
    Response,
    decode,
    decode_line,
    encode,
    encode_line,
    parse,
)

CASES = [
    ({"jsonrpc": "2.0", "id": 1, "method": "ping"}, Request(1, "ping")),
    ({"jsonrpc": "2.0", "id": "a", "method": "x", "params": {"k": 1}}, Request("a", "x", {"k": 1})),
    ({"jsonrpc": "2.0", "method": "notifications/x"}, Notification("notifications/x")),
    ({"jsonrpc": "2.0", "id": 2, "result": {"ok": True}}, Response(2, {"ok": True})),
    (
        {"jsonrpc": "2.0", "id": 3, "error": {"code": -32601, "message": "nope"}},
        ErrorResponse(3, -32601, "nope"),
    ),
    (
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse"}},
        ErrorResponse(None, -32700, "parse"),
    ),
]


@pytest.mark.parametrize(("wire", "message"), CASES)
def test_parse_and_encode_round_trip(wire: dict[str, object], message: object) -> None:
    assert parse(wire) == message
    assert encode(message) == wire  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "bad",
    [
        [1, 2],
        {"id": 1, "method": "x"},  # no jsonrpc marker
        {"jsonrpc": "2.0", "id": 1, "method": "x", "params": [1]},  # positional params
        {"jsonrpc": "2.0", "id": True, "method": "x"},  # a bool is no id
        {"jsonrpc": "2.0", "id": 1},  # neither result nor error
        {"jsonrpc": "2.0", "method": 5},
    ],
)
def test_invalid_messages_are_values(bad: object) -> None:
    assert isinstance(parse(bad), FramingError)


def test_decode_line_garbage_blank_batch_and_utf8() -> None:
    assert decode_line(b"   \n") == []
    (garbage,) = decode_line(b"Starting server...\n")
    assert isinstance(garbage, FramingError) and "Starting" in garbage.excerpt
    assert isinstance(decode(b"\xff\xfe")[0], FramingError)
    batch = decode('[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","id":1,"result":{}}]')
    assert batch == [Notification("a"), Response(1, {})]
    assert decode_line('{"jsonrpc":"2.0","method":"ü"}\r\n') == [Notification("ü")]


def test_encode_line_is_one_line_even_with_newlines_in_strings() -> None:
    line = encode_line(Request(7, "tools/call", {"text": "a\nb"}))
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line) == {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"text": "a\nb"},
    }


def test_handshake_headers() -> None:
    init = Request(1, "initialize", {"protocolVersion": "2025-11-25"})
    h = request_headers(init, static={"X-Key": "k"}, session_id=None, protocol_version="2025-06-18")
    assert h["Accept"] == "application/json, text/event-stream"
    assert h["X-Key"] == "k"
    assert "MCP-Protocol-Version" not in h and "Mcp-Session-Id" not in h
    call = Request(2, "tools/call", {"name": "t"})
    h = request_headers(call, static={}, session_id="s1", protocol_version="2025-06-18")
    assert h["Mcp-Session-Id"] == "s1"
    assert h["MCP-Protocol-Version"] == "2025-06-18"
    assert "Mcp-Method" not in h


def test_stateless_headers_mirror_meta_method_and_name() -> None:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    call = Request(1, "tools/call", {"name": "wörk", "_meta": meta})
    h = request_headers(call, static={}, session_id=None, protocol_version=None)
    assert h["MCP-Protocol-Version"] == "2026-07-28"
    assert h["Mcp-Method"] == "tools/call"
    assert h["Mcp-Name"] == encode_header_value("wörk") != "wörk"
    read = Request(2, "resources/read", {"uri": "test://a", "_meta": meta})
    assert (
        request_headers(read, static={}, session_id=None, protocol_version=None)["Mcp-Name"]
        == "test://a"
    )
    lst = Request(3, "tools/list", {"_meta": meta})
    assert "Mcp-Name" not in request_headers(lst, static={}, session_id=None, protocol_version=None)


def test_header_value_encoding() -> None:
    assert encode_header_value("plain-name") == "plain-name"
    assert encode_header_value(" padded").startswith("=?base64?")
    assert encode_header_value("=?base64?abc?=").startswith("=?base64?")


def test_status_rules() -> None:
    assert is_stale_session(404, "", had_session=True)
    assert is_stale_session(400, "Bad Request: No valid session ID", had_session=True)
    assert not is_stale_session(400, "bad params", had_session=True)
    assert not is_stale_session(404, "", had_session=False)
    assert all(fallback_to_sse(s) for s in (400, 404, 405))
    assert not fallback_to_sse(401) and not fallback_to_sse(500)
    assert media_type("text/event-stream; charset=utf-8") == "text/event-stream"
    assert media_type(None) == ""


def test_endpoint_resolution_and_origin_check() -> None:
    base = "http://127.0.0.1:8000/mcp/sse"
    assert resolve_endpoint(base, "/messages?session_id=1") == (
        "http://127.0.0.1:8000/messages?session_id=1"
    )
    assert resolve_endpoint(base, "messages") == "http://127.0.0.1:8000/mcp/messages"
    assert resolve_endpoint("https://h/sse", "https://h:443/m") == "https://h:443/m"
    for evil in ("http://evil.example/m", "https://127.0.0.1:8000/m", "//other:8000/m"):
        with pytest.raises(ValueError, match="another origin"):
            resolve_endpoint(base, evil)
    assert same_origin("http://A:80/x", "http://a/y")
