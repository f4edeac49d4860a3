"""Anthropic Messages stream events, built the way docs.anthropic.com shows them.

Builders for tests/provider/test_traffic_anthropic.py: ``start`` (message_start),
``block`` (a content block: start, deltas, stop), ``text``, ``tool_use``, ``end``
(message_delta with the stop reason), ``stream`` (the named-event SSE body), and
readers of the request the product sent next. Values such as signatures and
encrypted contents are copied in form (not in meaning) from the docs' examples.
"""

from __future__ import annotations

from typing import Any

from traffic_kit import Replayed, sse

MODEL = "claude-sonnet-4-5-20250929"
SIG = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds..."
PING: dict[str, Any] = {"type": "ping"}
STOP: dict[str, Any] = {"type": "message_stop"}


def start(**usage: int) -> dict[str, Any]:
    """message_start: the message shell with empty content and the first usage."""
    message: dict[str, Any] = {
        "id": "msg_01G7ZfVw1v2Hc4x7D1Yb3c9A",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage or {"input_tokens": 25, "output_tokens": 1},
    }
    return {"type": "message_start", "message": message}


def block(index: int, content_block: dict[str, Any], *deltas: dict[str, Any]) -> list[Any]:
    """content_block_start, its deltas, content_block_stop."""
    return [
        {"type": "content_block_start", "index": index, "content_block": content_block},
        *({"type": "content_block_delta", "index": index, "delta": d} for d in deltas),
        {"type": "content_block_stop", "index": index},
    ]


def text(index: int, *pieces: str) -> list[Any]:
    """A text block streamed as ``pieces``."""
    return block(index, {"type": "text", "text": ""}, *(t(p) for p in pieces))


def t(piece: str) -> dict[str, Any]:
    return {"type": "text_delta", "text": piece}


def tool_use(index: int, tid: str, name: str, *parts: str, close: bool = True) -> list[Any]:
    """A tool_use block whose input streams as ``input_json_delta`` parts."""
    out = block(
        index,
        {"type": "tool_use", "id": tid, "name": name, "input": {}},
        *({"type": "input_json_delta", "partial_json": p} for p in ("", *parts)),
    )
    return out if close else out[:-1]


def end(reason: str, output_tokens: int = 15, **delta: Any) -> dict[str, Any]:
    """message_delta with the stop reason and the cumulative usage."""
    return {
        "type": "message_delta",
        "delta": {"stop_reason": reason, "stop_sequence": None, **delta},
        "usage": {"output_tokens": output_tokens},
    }


def stream(*parts: Any) -> str:
    """An event stream (``event:`` lines named after each type) from events and lists of them."""
    flat: list[Any] = []
    for p in parts:
        flat.extend(p if isinstance(p, list) else [p])
    return sse(*flat, named=True)


def assistant(got: Replayed) -> list[dict[str, Any]]:
    """The content blocks of the assistant message the second request replays."""
    msgs = got.next_body()["messages"]
    last: dict[str, Any] = next(m for m in reversed(msgs) if m["role"] == "assistant")
    content: list[dict[str, Any]] = last["content"]
    return content


def results(got: Replayed) -> list[dict[str, Any]]:
    """The tool_result blocks of the second request's last user message."""
    last = got.next_body()["messages"][-1]
    return [b for b in last["content"] if b.get("type") == "tool_result"]


THOUGHT = "The user wants the folder.\n\n1. List it\n2. Read the notes"
REDACTED = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ"
SEARCH_RESULT = {
    "type": "web_search_tool_result",
    "tool_use_id": "srvtoolu_014hJH82Qum7Td6UV8gDXThB",
    "content": [
        {
            "type": "web_search_result",
            "title": "Weather in New York City in May 2025 (New York)",
            "url": "https://world-weather.info/forecast/usa/new_york/may-2025/",
            "encrypted_content": "Ev0DCioIAxgCIiQ3NmU4ZmI4OC1k...",
            "page_age": None,
        }
    ],
}
CITATION = {
    "type": "citations_delta",
    "citation": {
        "type": "web_search_result_location",
        "url": "https://world-weather.info/forecast/usa/new_york/may-2025/",
        "title": "Weather in New York City in May 2025 (New York)",
        "encrypted_index": "EpMBCioIAxgCIiQ4ODk4YTFkYy0yMTNkLTRhNjYtOTljNi1mMzA0ZjA3MzY",
        "cited_text": "Sunny, 72°F, light wind from the west",
    },
}
MCP_USE = {
    "type": "mcp_tool_use",
    "id": "mcptoolu_014Q35RayjACSWkSj4X2yov1",
    "name": "echo",
    "server_name": "example-mcp",
    "input": {},
}
MCP_RESULT = {
    "type": "mcp_tool_result",
    "tool_use_id": "mcptoolu_014Q35RayjACSWkSj4X2yov1",
    "is_error": False,
    "content": [{"type": "text", "text": "Hello"}],
}
