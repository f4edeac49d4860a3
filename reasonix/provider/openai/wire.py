"""OpenAI chat-completions request bodies (pure: Request in, dict out)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from reasonix.provider.base import merge_extra
from reasonix.provider.sampling import allowed
from reasonix.provider.types import Message, Request, Role, ToolSchema

if TYPE_CHECKING:
    from typing import Any

__all__ = ["CORE_FIELDS", "encode_body", "encode_message", "encode_tool"]

# extra_body may add to a request but never replace these.
CORE_FIELDS = frozenset({"model", "messages", "stream", "stream_options", "tools"})


def encode_tool(tool: ToolSchema) -> dict[str, Any]:
    """A tool as a chat-completions function definition."""
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        },
    }


def encode_message(msg: Message, *, reasoning_on_tool_calls: bool = False) -> dict[str, Any]:
    """One message in chat-completions form.

    ``reasoning_on_tool_calls`` (a provider's ``reasoning_content_on_tool_calls``):
    every assistant message with tool calls carries ``reasoning_content``, ""
    when the model produced none. Moonshot/Kimi thinking models answer 400
    "reasoning_content is missing in assistant tool call message" without it.
    """
    if msg.role is Role.TOOL:
        return {"role": "tool", "tool_call_id": msg.tool_call_id, "content": msg.content}
    out: dict[str, Any] = {"role": msg.role.value, "content": msg.content}
    if msg.role is Role.ASSISTANT:
        if msg.reasoning:
            # DeepSeek (and other reasoning_content servers) want the thinking
            # replayed on assistant turns inside a tool loop; sending it on every
            # turn keeps the body prefix byte-stable across turns.
            out["reasoning_content"] = msg.reasoning
        if msg.tool_calls and reasoning_on_tool_calls and not msg.reasoning:
            out["reasoning_content"] = ""
        if msg.tool_calls:
            out["content"] = msg.content or None
            out["tool_calls"] = [
                {
                    "id": tc.id,
                    "type": "function",
                    "function": {"name": tc.name, "arguments": tc.arguments},
                }
                for tc in msg.tool_calls
            ]
    if msg.name and msg.role is not Role.ASSISTANT:
        out["name"] = msg.name
    return out


def encode_body(
    request: Request,
    *,
    extra: Mapping[str, Any],
    max_tokens_field: str = "max_tokens",
    reasoning_on_tool_calls: bool = False,
    sampling: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """The whole body. Stable fields first and ``messages`` near the end, so the
    bytes of one turn's body are a prefix of the next turn's up to its new messages.
    ``reasoning_on_tool_calls`` is passed to :func:`encode_message`; ``sampling`` is
    the configured temperature/top_p (None: ``request.temperature``)."""
    body: dict[str, Any] = {
        "model": request.model,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if request.tools:
        body["tools"] = [encode_tool(t) for t in request.tools]
    messages = [{"role": "system", "content": request.system}] if request.system else []
    messages += [
        encode_message(m, reasoning_on_tool_calls=reasoning_on_tool_calls) for m in request.messages
    ]
    body["messages"] = messages
    if request.max_tokens is not None:
        body[max_tokens_field] = request.max_tokens
    body.update(allowed("openai", request, sampling))  # only what is configured (issue 33)
    if request.effort:
        body["reasoning_effort"] = request.effort
    merge_extra(body, extra, CORE_FIELDS)
    return body
