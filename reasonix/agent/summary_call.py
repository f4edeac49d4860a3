"""The summary model call: one streamed request, its text or a typed reason why not.

:class:`~reasonix.agent.context.ContextManager` plans the request; this sends
it and reads the answer. Nothing here turns a bad answer into a digest
(CTX-12): a timeout, an error, an empty answer, a tool call instead of text
or an answer cut by the output cap is a :class:`SummaryFailed`; a refusal
because the request is too long for the window is a :class:`SummaryRefused`,
which the planner answers with a smaller request.
"""

from __future__ import annotations

from collections.abc import Sequence

from reasonix.cancel import Cancel
from reasonix.errors import Cancelled, ProviderAPIError, ProviderError
from reasonix.provider import Provider
from reasonix.provider.types import ChunkKind, Request, Usage

__all__ = ["CALLED_TOOL", "SummaryFailed", "SummaryRefused", "call_summary"]

_CAP_REASONS = frozenset({"length", "max_tokens", "max_output_tokens", "model_length"})
CALLED_TOOL = "the model called a tool instead of writing the summary"


class SummaryFailed(Exception):
    """A summary attempt gave nothing usable (never turned into a digest).

    ``args``: ``(status, reason, blocks)`` — status ``failed`` or ``blocked``,
    the reason in words, and whether the failure is recorded for the digest
    generation (so automatic maintenance does not pay for it again).
    """


class SummaryRefused(Exception):
    """The server refused the summary request as longer than its context window."""

    def __init__(self, error: ProviderAPIError) -> None:
        super().__init__(str(error))
        self.error = error


def call_summary(
    provider: Provider,
    request: Request,
    cancel: Cancel,
    *,
    timeout: float,
    spent: list[Usage],
) -> str:
    """Stream ``request`` and return the summary text; usage reports go to ``spent``."""
    child = cancel.child(timeout=timeout)
    parts: list[str] = []
    finish = ""
    called = False
    stream = None
    try:
        stream = provider.stream(request, child)
        for chunk in stream:
            if chunk.kind is ChunkKind.TEXT:
                parts.append(chunk.text)
            elif chunk.kind is ChunkKind.TOOL_CALL:
                called = True
            elif chunk.kind is ChunkKind.DONE:
                finish = chunk.finish_reason
            elif chunk.kind is ChunkKind.USAGE and chunk.usage is not None:
                spent.append(chunk.usage)
            elif chunk.kind is ChunkKind.ERROR:
                raise SummaryFailed("failed", f"summary stream error: {chunk.error}", True)
            if child.cancelled:
                break
    except Cancelled as err:
        if cancel.cancelled:
            raise
        raise SummaryFailed("failed", "summary timed out", True) from err
    except ProviderAPIError as err:
        if err.is_context_overflow:
            raise SummaryRefused(err) from err
        raise SummaryFailed("failed", f"summary request failed: {err}", True) from err
    except ProviderError as err:
        raise SummaryFailed("failed", f"summary request failed: {err}", True) from err
    finally:
        close = getattr(stream, "close", None)
        if callable(close):
            close()
    return _text(parts, finish, called, cancel, child)


def _text(parts: Sequence[str], finish: str, called: bool, cancel: Cancel, child: Cancel) -> str:
    if cancel.cancelled:
        raise Cancelled(cancel.reason or "cancelled")
    if child.cancelled:
        raise SummaryFailed("failed", "summary timed out", True)
    if finish in _CAP_REASONS:
        raise SummaryFailed("failed", "summary hit the output token cap", True)
    text = "".join(parts).strip()
    if not text:
        raise SummaryFailed("failed", CALLED_TOOL if called else "summary was empty", True)
    return text
