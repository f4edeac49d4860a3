"""OpenAI Responses request bodies (pure: Request in, dict out).

Stateless replay (D2): ``store`` is false and every turn sends the whole
conversation as input items — messages, ``function_call`` and
``function_call_output`` items, and the reasoning items received earlier
(only those carrying ``encrypted_content``: without a stored response an
item id alone cannot be resolved by the server), and the ``web_search_call``
items of server-side searches.

``web_search = true`` appends the hosted ``{"type": "web_search"}`` tool after
the function tools on every request, and asks for the searched sources
(``include``), so each request still extends the previous one byte for byte.
"""

from __future__ import annotations

from collections.abc import Mapping

from reasonix.provider.base import merge_extra
from reasonix.provider.types import Message, Request, Role, ToolSchema

TYPE_CHECKING = False  # typing is not imported at run time (it costs a start 2-3 ms)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["CORE_FIELDS", "META_KEY", "WEB_SEARCH_TOOL", "encode_body", "encode_input"]

CORE_FIELDS = frozenset({"model", "input", "instructions", "stream", "store", "tools"})
META_KEY = "responses"  # Message.reasoning_meta["responses"] = {"items": [output items]}
WEB_SEARCH_TOOL: dict[str, Any] = {"type": "web_search"}
_SOURCES = "web_search_call.action.sources"  # the URLs a search consulted


def _tool(tool: ToolSchema) -> dict[str, Any]:
    return {
        "type": "function",
        "name": tool.name,
        "description": tool.description,
        "parameters": tool.parameters,
    }


def _assistant_items(msg: Message) -> list[dict[str, Any]]:
    meta = msg.reasoning_meta.get(META_KEY) or {}
    items = [
        dict(i)
        for i in meta.get("items") or []
        if i.get("encrypted_content") or i.get("type") == "web_search_call"
    ]
    if msg.content:
        items.append({"role": "assistant", "content": msg.content})
    for tc in msg.tool_calls:
        items.append(
            {"type": "function_call", "call_id": tc.id, "name": tc.name, "arguments": tc.arguments}
        )
    return items


def encode_input(messages: list[Message]) -> list[dict[str, Any]]:
    """The conversation as Responses input items."""
    items: list[dict[str, Any]] = []
    for msg in messages:
        if msg.role is Role.ASSISTANT:
            items += _assistant_items(msg)
        elif msg.role is Role.TOOL:
            items.append(
                {"type": "function_call_output", "call_id": msg.tool_call_id, "output": msg.content}
            )
        elif msg.role is Role.SYSTEM:
            items.append({"role": "developer", "content": msg.content})
        else:
            items.append({"role": "user", "content": msg.content})
    return items


def encode_body(
    request: Request, *, extra: Mapping[str, Any], web_search: bool = False
) -> dict[str, Any]:
    """The whole body; stable fields first, input near the end (byte-stable prefix)."""
    body: dict[str, Any] = {"model": request.model, "stream": True, "store": False}
    tools = [_tool(t) for t in request.tools]
    if web_search:
        tools.append(dict(WEB_SEARCH_TOOL))
    if tools:
        body["tools"] = tools
    if request.system:
        body["instructions"] = request.system
    body["input"] = encode_input(request.messages)
    include: list[str] = []
    if request.effort:
        # Summaries make reasoning visible; encrypted content makes it replayable
        # without server-side storage.
        body["reasoning"] = {"effort": request.effort, "summary": "auto"}
        include.append("reasoning.encrypted_content")
    if web_search:
        include.append(_SOURCES)
    if include:
        body["include"] = include
    if request.max_tokens is not None:
        body["max_output_tokens"] = request.max_tokens
    if request.temperature is not None:
        body["temperature"] = request.temperature
    merge_extra(body, extra, CORE_FIELDS)
    return body
