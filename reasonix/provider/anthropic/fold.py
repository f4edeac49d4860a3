"""Fold Anthropic Messages stream events into Reasonix chunks (pure, no I/O)."""

from __future__ import annotations

from typing import Any

from reasonix.errors import ProviderStreamError
from reasonix.provider.anthropic.wire import META_KEY
from reasonix.provider.base import PartialCall, as_int, load_event, stream_error
from reasonix.provider.sse import ServerSentEvent
from reasonix.provider.types import Chunk, ChunkKind, Usage

__all__ = ["STOP_REASONS", "AnthropicFolder"]

STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "refusal": "content_filter",
}


class AnthropicFolder:
    """Blocks are keyed by their ``index``; tool input JSON is concatenated verbatim."""

    def __init__(self, where: str = "anthropic") -> None:
        self.where = where
        self.done = False
        self.stop_reason = ""
        self._usage: dict[str, int] = {}
        self._blocks: dict[int, dict[str, Any]] = {}  # index -> thinking/redacted block
        self._calls: dict[int, PartialCall] = {}

    def feed(self, event: ServerSentEvent) -> list[Chunk]:
        """Chunks for one event."""
        obj = load_event(event, self.where)
        if not isinstance(obj, dict):
            raise ProviderStreamError(f"{self.where}: unexpected event {event.data[:120]!r}")
        typ = obj.get("type") or event.event
        if typ == "content_block_delta":
            return self._delta(obj.get("index"), obj.get("delta") or {})
        if typ == "content_block_start":
            self._start(obj.get("index"), obj.get("content_block") or {})
        elif typ == "message_start":
            self._add_usage((obj.get("message") or {}).get("usage") or {})
        elif typ == "message_delta":
            self._add_usage(obj.get("usage") or {})
            reason = (obj.get("delta") or {}).get("stop_reason")
            if reason:
                self.stop_reason = str(reason)
        elif typ == "message_stop":
            self.done = True
        elif typ == "error":
            raise stream_error(self.where, obj)
        return []  # ping, content_block_stop and future event types carry nothing for us

    def _start(self, index: Any, block: dict[str, Any]) -> None:
        kind = block.get("type")
        if not isinstance(index, int):
            raise ProviderStreamError(f"{self.where}: content block without an index")
        if kind == "tool_use":
            self._calls[index] = PartialCall(
                id=str(block.get("id") or ""), name=str(block.get("name") or "")
            )
        elif kind == "thinking":
            self._blocks[index] = {"type": "thinking", "thinking": "", "signature": ""}
        elif kind == "redacted_thinking":
            self._blocks[index] = {"type": "redacted_thinking", "data": block.get("data", "")}

    def _delta(self, index: Any, delta: dict[str, Any]) -> list[Chunk]:
        kind = delta.get("type")
        if kind == "text_delta":
            text = delta.get("text") or ""
            return [Chunk(ChunkKind.TEXT, text=text)] if text else []
        if kind == "thinking_delta":
            text = delta.get("thinking") or ""
            block = self._blocks.get(index) if isinstance(index, int) else None
            if block is not None:
                block["thinking"] += text
            return [Chunk(ChunkKind.REASONING, text=text)] if text else []
        if kind == "signature_delta":
            block = self._blocks.get(index) if isinstance(index, int) else None
            if block is not None:
                block["signature"] += delta.get("signature") or ""
        elif kind == "input_json_delta":
            call = self._calls.get(index) if isinstance(index, int) else None
            if call is None:
                raise ProviderStreamError(f"{self.where}: input delta for unknown block {index}")
            part = delta.get("partial_json")
            if isinstance(part, str) and part:
                call.parts.append(part)
        return []

    def _add_usage(self, u: dict[str, Any]) -> None:
        # message_delta repeats counters cumulatively, so later values replace earlier ones.
        for key in (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        ):
            if isinstance(u.get(key), int):
                self._usage[key] = u[key]

    def usage(self) -> Usage:
        """Normalised usage: input counts the cached and cache-written parts too."""
        u = self._usage
        read, write = (
            as_int(u.get("cache_read_input_tokens")),
            as_int(u.get("cache_creation_input_tokens")),
        )
        return Usage(
            input_tokens=as_int(u.get("input_tokens")) + read + write,
            output_tokens=as_int(u.get("output_tokens")),
            cache_read_tokens=read,
            cache_write_tokens=write,
        )

    def finish(self) -> list[Chunk]:
        """Complete calls, usage and DONE (with thinking blocks for replay)."""
        if not self.done and not self.stop_reason:
            raise ProviderStreamError(f"{self.where}: stream ended before message_stop")
        out = [
            Chunk(ChunkKind.TOOL_CALL, tool_call=self._calls[i].complete(f"toolu_{i}", self.where))
            for i in sorted(self._calls)
        ]
        if self._usage:
            out.append(Chunk(ChunkKind.USAGE, usage=self.usage()))
        meta: dict[str, Any] = {}
        blocks = [self._blocks[i] for i in sorted(self._blocks)]
        # A thinking block without a signature cannot be replayed; drop it.
        blocks = [b for b in blocks if b["type"] != "thinking" or b["signature"]]
        if blocks:
            meta[META_KEY] = {"blocks": blocks}
        reason = STOP_REASONS.get(self.stop_reason, self.stop_reason or "stop")
        out.append(Chunk(ChunkKind.DONE, finish_reason=reason, reasoning_meta=meta))
        return out
