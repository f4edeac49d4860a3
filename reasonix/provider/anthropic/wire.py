"""Anthropic Messages request bodies (pure: Request in, dict out).

Shape rules the API enforces, handled here: the system prompt is a top-level
field; tool results travel as ``tool_result`` blocks in a *user* message, and
consecutive user-side messages are merged into one (roles must alternate);
empty text blocks are not allowed. Thinking blocks are replayed only with
their signature, exactly as received.

An answer of several blocks is replayed as those blocks, in order: the fold
stores each text block's length (and the paragraph break it showed before it)
among the thinking and search blocks, and the message text is cut back along
those marks. When the text no longer matches them it goes out as one block
after the others, as it did before marks existed. ``tool_use`` blocks come
last, as the model sends them.

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
from typing import TYPE_CHECKING

from reasonix.provider.base import merge_extra, parse_arguments
from reasonix.provider.sampling import allowed
from reasonix.provider.types import Message, Request, Role, ToolSchema

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "CORE_FIELDS",
    "META_KEY",
    "PARAGRAPH",
    "THINKING_BUDGETS",
    "WEB_SEARCH_TOOL",
    "encode_body",
    "encode_messages",
]

CORE_FIELDS = frozenset({"model", "messages", "system", "stream", "tools"})
META_KEY = "anthropic"  # Message.reasoning_meta["anthropic"] = {"blocks": [...]}
PARAGRAPH = "\n\n"  # shown between two text blocks the model did not separate itself
THINKING_BUDGETS = {"low": 4096, "medium": 16384, "high": 32768}
_EPHEMERAL = {"type": "ephemeral"}
# The Messages API server tool (DeepSeek's Anthropic-compatible endpoint takes it too).
WEB_SEARCH_TOOL: dict[str, Any] = {"type": "web_search_20250305", "name": "web_search"}


def _tool(tool: ToolSchema) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}


def _split_text(content: str, marks: list[dict[str, Any]]) -> list[str] | None:
    """``content`` cut back into the text blocks ``marks`` describe, or None if it was changed.

    A mark is ``{"type": "text", "chars": n}`` plus ``"sep"``, the break the fold
    showed before that block; the pieces must cover ``content`` exactly.
    """
    pieces: list[str] = []
    pos = 0
    for mark in marks:
        sep, n = mark.get("sep", ""), mark.get("chars")
        if not isinstance(sep, str) or not isinstance(n, int) or n <= 0:
            return None
        if not content.startswith(sep, pos) or pos + len(sep) + n > len(content):
            return None
        pos += len(sep)
        pieces.append(content[pos : pos + n])
        pos += n
    return pieces if pieces and pos == len(content) else None


def _assistant_blocks(msg: Message) -> list[dict[str, Any]]:
    meta = msg.reasoning_meta.get(META_KEY) or {}
    stored = [b for b in meta.get("blocks") or [] if isinstance(b, dict)]
    pieces = _split_text(msg.content, [b for b in stored if b.get("type") == "text"])
    blocks: list[dict[str, Any]] = []
    if pieces is None:  # one text block after the replay blocks (older data, or an edited text)
        blocks = [dict(b) for b in stored if b.get("type") != "text"]
        if msg.content:
            blocks.append({"type": "text", "text": msg.content})
    else:  # the text blocks as the model produced them, in place among the others
        texts = iter(pieces)
        for b in stored:
            is_text = b.get("type") == "text"
            blocks.append({"type": "text", "text": next(texts)} if is_text else dict(b))
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
    request: Request,
    *,
    max_tokens: int,
    extra: Mapping[str, Any],
    web_search: bool = False,
    sampling: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """The whole body; ``max_tokens`` is mandatory on this API (PROV-13).
    ``sampling`` is the configured temperature/top_p (None: ``request.temperature``)."""
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
    thinking = budget >= 1024  # the API's minimum thinking budget
    if thinking:
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
    # only what is configured; temperature is refused alongside thinking (issue 33)
    body.update(allowed("anthropic", request, sampling, thinking=thinking))
    merge_extra(body, extra, CORE_FIELDS)
    return body
