"""OpenAI Responses request bodies (pure: Request in, dict out).

Stateless replay (D2): ``store`` is false and every turn sends the whole
conversation as input items. An assistant turn goes back as the output items
the model produced, in their order (``reasoning_meta["responses"]["items"]``):
reasoning items (only those carrying ``encrypted_content``: without a stored
response an item id alone cannot be resolved by the server), ``web_search_call``
items of server-side searches, message items with their parts and ``phase``
(without ids, which a stateless server cannot resolve either) and
``function_call`` items filled from the turn's recorded tool calls. A turn
recorded without message items, or whose text no longer matches them, sends its
text as one assistant message.

``web_search = true`` appends the hosted ``{"type": "web_search"}`` tool after
the function tools on every request, and asks for the searched sources
(``include``), so each request still extends the previous one byte for byte.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from reasonix.provider.base import merge_extra
from reasonix.provider.sampling import allowed
from reasonix.provider.types import Message, Request, Role, ToolCall, ToolSchema

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "CORE_FIELDS",
    "META_KEY",
    "WEB_SEARCH_TOOL",
    "encode_body",
    "encode_input",
    "part_text",
    "shown_text",
]

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


def part_text(part: Any) -> str:
    """What a message content part shows: its text, or a refusal's words ("" otherwise)."""
    if not isinstance(part, dict):
        return ""
    value = part.get("refusal" if part.get("type") == "refusal" else "text")
    if part.get("type") not in ("output_text", "refusal"):
        return ""
    return value if isinstance(value, str) else ""


def shown_text(items: list[dict[str, Any]], *, commentary: bool = True) -> str:
    """The text message ``items`` display: non-empty parts joined by a blank line.

    The fold streams exactly this as the answer (commentary excluded), so a
    recorded turn's content tells whether its message items still stand for it.
    """
    texts = [
        part_text(part)
        for item in items
        if item.get("type") == "message" and (commentary or item.get("phase") != "commentary")
        for part in item.get("content") or []
    ]
    return "\n\n".join(t for t in texts if t)


def _call(tc: ToolCall) -> dict[str, Any]:
    return {"type": "function_call", "call_id": tc.id, "name": tc.name, "arguments": tc.arguments}


def _assistant_items(msg: Message) -> list[dict[str, Any]]:
    meta = msg.reasoning_meta.get(META_KEY) or {}
    recorded = [i for i in meta.get("items") or [] if isinstance(i, dict)]
    messages = [i for i in recorded if i.get("type") == "message"]
    # The items stand for the turn only while its text is what they show (the
    # agent may have replaced it, e.g. with a note for an answer that said nothing).
    as_items = bool(messages) and msg.content in (
        shown_text(messages, commentary=False),
        shown_text(messages),
    )
    text = [{"role": "assistant", "content": msg.content}] if msg.content and not as_items else []
    calls: dict[str, list[ToolCall]] = {}
    for tc in msg.tool_calls:
        calls.setdefault(tc.id, []).append(tc)
    items: list[dict[str, Any]] = []
    for rec in recorded:
        kind = rec.get("type")
        if kind in ("message", "function_call"):
            items += text  # a text-only replay sits where the model's first message was
            text = []
        if kind == "message" and as_items:
            items.append(dict(rec))
        elif kind == "function_call":
            same = calls.get(str(rec.get("call_id"))) or []
            if same:  # a call the agent dropped (cut by the output limit) is gone
                items.append(_call(same.pop(0)))
        elif rec.get("encrypted_content") or kind == "web_search_call":
            items.append(dict(rec))
    items += text
    left = [tc for same in calls.values() for tc in same]  # calls no marker placed
    items += [_call(tc) for tc in msg.tool_calls if any(tc is t for t in left)]
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
    request: Request,
    *,
    extra: Mapping[str, Any],
    web_search: bool = False,
    sampling: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """The whole body; stable fields first, input near the end (byte-stable prefix).
    ``sampling`` is the configured temperature/top_p (None: ``request.temperature``)."""
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
    body.update(allowed("responses", request, sampling))  # only what is configured (issue 33)
    merge_extra(body, extra, CORE_FIELDS)
    return body
