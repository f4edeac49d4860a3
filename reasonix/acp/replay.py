"""``session/load``: the stored transcript replayed as ``session/update`` notifications.

Every canonical message becomes what the editor saw live: user text as
``user_message_chunk`` (without the instruction files and memory recall the
agent added for the model), thinking as ``agent_thought_chunk``, answers as
``agent_message_chunk``, and each tool call as a ``tool_call`` finished by a
``tool_call_update`` carrying its result. Compaction never rewrites canonical
messages, so the whole conversation is replayed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.agent.prompt import typed_text
from reasonix.provider.types import Message, Role

from .toolcalls import describe, text_content

if TYPE_CHECKING:
    from typing import Any

__all__ = ["replay_updates", "user_text"]

user_text = typed_text  # what the user typed, without the additions made for the model


def _chunk(kind: str, text: str) -> dict[str, Any]:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}}


def _failed(text: str) -> bool:
    return text.startswith(("blocked:", "unknown tool")) or ": internal error " in text[:200]


def replay_updates(messages: list[Message], cwd: Path) -> Iterator[dict[str, Any]]:
    """The ``update`` objects that replay ``messages`` in order."""
    ids: dict[str, str] = {}  # our id -> unique ACP id (providers repeat ids across replies)
    used: set[str] = set()
    for message in messages:
        if message.role is Role.USER:
            text = user_text(message.content)
            if text:
                yield _chunk("user_message_chunk", text)
        elif message.role is Role.ASSISTANT:
            if message.reasoning:
                yield _chunk("agent_thought_chunk", message.reasoning)
            if message.content:
                yield _chunk("agent_message_chunk", message.content)
            for call in message.tool_calls:
                acp, n = call.id, 1
                while acp in used:
                    n += 1
                    acp = f"{call.id}-{n}"
                ids[call.id] = acp
                used.add(acp)
                yield {
                    "sessionUpdate": "tool_call",
                    "toolCallId": acp,
                    "status": "in_progress",
                    **describe(call.name, call.arguments, cwd),
                }
        elif message.role is Role.TOOL and message.tool_call_id in ids:
            yield {
                "sessionUpdate": "tool_call_update",
                "toolCallId": ids[message.tool_call_id],
                "status": "failed" if _failed(message.content) else "completed",
                "content": [text_content(message.content)],
            }
