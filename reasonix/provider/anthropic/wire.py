"""Anthropic Messages request bodies (pure: Request in, dict out).

Shape rules the API enforces, handled here: the system prompt is a top-level
field; tool results travel as ``tool_result`` blocks in a *user* message, and
consecutive user-side messages are merged into one (roles must alternate);
empty text blocks are not allowed. Thinking blocks are replayed only with
their signature, exactly as received.

Prompt caching (D2): ``cache_control`` breakpoints mark the stable prefix —
the system prompt, the last tool definition, and the last block of the last
user turn — three of the four breakpoints the API allows.

Server-side web search (``web_search = true``): the versioned server tool is
appended after the function tools on every request of the session, so the
tool list is the same bytes each turn. Its blocks (``server_tool_use`` and
``web_search_tool_result``) are replayed like thinking blocks, as received.
"""

from __future__ import annotations

from collections.abc import Mapping

from reasonix.provider.base import merge_extra, parse_arguments
from reasonix.provider.types import Message, Request, Role, ToolSchema

TYPE_CHECKING = False  # typing is not imported at run time (it costs a start 2-3 ms)
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "CORE_FIELDS",
    "META_KEY",
    "THINKING_BUDGETS",
    "WEB_SEARCH_TOOL",
    "encode_body",
    "encode_messages",
]

CORE_FIELDS = frozenset({"model", "messages", "system", "stream", "tools"})
META_KEY = "anthropic"  # Message.reasoning_meta["anthropic"] = {"blocks": [...]}
THINKING_BUDGETS = {"low": 4096, "medium": 16384, "high": 32768}
_EPHEMERAL = {"type": "ephemeral"}
# The Messages API server tool (DeepSeek's Anthropic-compatible endpoint takes it too).
WEB_SEARCH_TOOL: dict[str, Any] = {"type": "web_search_20250305", "name": "web_search"}


def _tool(tool: ToolSchema) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}


def _assistant_blocks(msg: Message) -> list[dict[str, Any]]:
    meta = msg.reasoning_meta.get(META_KEY) or {}
    blocks: list[dict[str, Any]] = [dict(b) for b in meta.get("blocks") or []]
    if msg.content:
        blocks.append({"type": "text", "text": msg.content})
    for tc in msg.tool_calls:
        blocks.append(
            {
                "type": "tool_use",
                "id": tc.id,
                "name": tc.name,
                "input": parse_arguments(tc.arguments),
            }
        )
    return blocks


def _user_blocks(msg: Message) -> list[dict[str, Any]]:
    if msg.role is Role.TOOL:
        return [{"type": "tool_result", "tool_use_id": msg.tool_call_id, "content": msg.content}]
    return [{"type": "text", "text": msg.content}] if msg.content else []


def encode_messages(messages: list[Message]) -> tuple[list[dict[str, Any]], list[str]]:
    """Conversation messages in Messages-API form, plus any mid-conversation system text."""
    out: list[dict[str, Any]] = []
    system: list[str] = []
    for msg in messages:
        if msg.role is Role.SYSTEM:
            system.append(msg.content)
            continue
        role = "assistant" if msg.role is Role.ASSISTANT else "user"
        blocks = _assistant_blocks(msg) if role == "assistant" else _user_blocks(msg)
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return out, system


def _mark_last_user_turn(messages: list[dict[str, Any]]) -> None:
    for m in reversed(messages):
        if m["role"] == "user" and m["content"]:
            m["content"][-1] = {**m["content"][-1], "cache_control": _EPHEMERAL}
            return


def encode_body(
    request: Request, *, max_tokens: int, extra: Mapping[str, Any], web_search: bool = False
) -> dict[str, Any]:
    """The whole body; ``max_tokens`` is mandatory on this API (PROV-13)."""
    messages, extra_system = encode_messages(request.messages)
    body: dict[str, Any] = {"model": request.model, "stream": True}
    tools = [_tool(t) for t in request.tools]
    if tools:
        tools[-1]["cache_control"] = _EPHEMERAL
    if web_search:
        tools.append(dict(WEB_SEARCH_TOOL))
    if tools:
        body["tools"] = tools
    system_text = "\n\n".join([s for s in [request.system, *extra_system] if s])
    if system_text:
        body["system"] = [{"type": "text", "text": system_text, "cache_control": _EPHEMERAL}]
    _mark_last_user_turn(messages)
    body["messages"] = messages
    body["max_tokens"] = max_tokens
    budget = THINKING_BUDGETS.get(request.effort, 0)
    budget = min(budget, max_tokens - 1)
    if budget >= 1024:  # the API's minimum thinking budget
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
    elif request.temperature is not None:  # temperature is refused alongside thinking
        body["temperature"] = request.temperature
    merge_extra(body, extra, CORE_FIELDS)
    return body
