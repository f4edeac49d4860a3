"""Folding one streamed model answer into an assistant Message, yielding events.

Pure of session state: the loop decides what to do with the message (append
it, retry an empty one) and with a cancellation (keep the partial text).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import TYPE_CHECKING

from reasonix.cancel import Cancel
from reasonix.errors import Cancelled, ProviderStreamError
from reasonix.provider import Provider
from reasonix.provider.types import (
    ChunkKind,
    Message,
    Request,
    Role,
    ToolCall,
    Usage,
    WebSearchCall,
)

from .events import Event, ReasoningDelta, TextDelta, UsageReport, WebSearch

if TYPE_CHECKING:
    from typing import Any

__all__ = ["StreamCancelled", "stream_reply"]


class StreamCancelled(Cancelled):
    """The turn was cancelled mid-answer; ``partial`` holds what had been streamed."""

    def __init__(self, reason: str, partial: Message | None) -> None:
        super().__init__(reason)
        self.partial = partial


def stream_reply(
    provider: Provider,
    request: Request,
    cancel: Cancel,
    step: int,
    observe: Callable[[Usage], None],
    on_first: Callable[[], None] | None = None,
    searched: Callable[[WebSearchCall], None] | None = None,
    finished: Callable[[str, str], None] | None = None,
) -> Generator[Event, None, Message]:
    """Stream ``request``; yield deltas, server-side searches and usage; return the message.

    ``on_first`` is called once, before the first chunk is handled: the
    server has taken the request (a refusal arrives before any chunk).
    ``searched`` sees each provider-side web search as it arrives (the agent records it).
    ``finished`` gets the answer's finish reason (``FINISH_REASONS``) and the
    vendor's explanation, when the stream ends.
    """
    text: list[str] = []
    reasoning: list[str] = []
    calls: list[ToolCall] = []
    meta: dict[str, Any] = {}
    try:
        for chunk in provider.stream(request, cancel):
            if on_first is not None:
                on_first()
                on_first = None
            if chunk.kind is ChunkKind.TEXT:
                text.append(chunk.text)
                yield TextDelta(chunk.text)
            elif chunk.kind is ChunkKind.REASONING:
                reasoning.append(chunk.text)
                yield ReasoningDelta(chunk.text)
            elif chunk.kind is ChunkKind.TOOL_CALL and chunk.tool_call is not None:
                calls.append(chunk.tool_call)
            elif chunk.kind is ChunkKind.WEB_SEARCH and chunk.search is not None:
                found = chunk.search
                if searched is not None:
                    searched(found)
                yield WebSearch(found.id, found.query, found.results, found.error)
            elif chunk.kind is ChunkKind.USAGE and chunk.usage is not None:
                observe(chunk.usage)
                yield UsageReport(step, chunk.usage)
            elif chunk.kind is ChunkKind.DONE:
                meta = chunk.reasoning_meta
                if finished is not None:
                    finished(chunk.finish_reason, chunk.detail)
            elif chunk.kind is ChunkKind.ERROR:
                raise chunk.error or ProviderStreamError("the stream reported an error")
        cancel.raise_if_cancelled()
    except Cancelled as err:
        partial = None
        if text or reasoning:  # keep what the user saw, so the history matches the screen
            partial = Message(
                Role.ASSISTANT,
                "".join(text) + "\n[cancelled by the user]",
                reasoning="".join(reasoning),
            )
        raise StreamCancelled(str(err), partial) from err
    return Message(
        Role.ASSISTANT, "".join(text), calls, reasoning="".join(reasoning), reasoning_meta=meta
    )
