"""Fold Anthropic Messages stream events into Reasonix chunks (pure, no I/O).

Server-side web search arrives as a ``server_tool_use`` block (its input,
``{"query": …}``, streamed as ``input_json_delta``) followed by a complete
``web_search_tool_result`` block; the pair becomes one WEB_SEARCH chunk the
moment the result block starts, and both blocks are kept for replay.
"""

from __future__ import annotations

import json

from reasonix.errors import ProviderStreamError
from reasonix.provider.anthropic.wire import META_KEY
from reasonix.provider.base import PartialCall, as_int, load_event, stream_error
from reasonix.provider.sse import ServerSentEvent
from reasonix.provider.types import Chunk, ChunkKind, Usage, WebSearchCall, WebSearchResult

TYPE_CHECKING = False  # typing is not imported at run time (it costs a start 2-3 ms)
if TYPE_CHECKING:
    from typing import Any

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
        self._blocks: dict[int, dict[str, Any]] = {}  # index -> block replayed verbatim
        self._calls: dict[int, PartialCall] = {}
        self._server_input: dict[int, list[str]] = {}  # server_tool_use index -> input JSON

    def feed(self, event: ServerSentEvent) -> list[Chunk]:
        """Chunks for one event."""
        obj = load_event(event, self.where)
        if not isinstance(obj, dict):
            raise ProviderStreamError(f"{self.where}: unexpected event {event.data[:120]!r}")
        typ = obj.get("type") or event.event
        if typ == "content_block_delta":
            return self._delta(obj.get("index"), obj.get("delta") or {})
        if typ == "content_block_start":
            return self._start(obj.get("index"), obj.get("content_block") or {})
        if typ == "message_start":
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

    def _start(self, index: Any, block: dict[str, Any]) -> list[Chunk]:
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
        elif kind == "server_tool_use":
            given = block.get("input")
            self._blocks[index] = {
                "type": "server_tool_use",
                "id": str(block.get("id") or ""),
                "name": str(block.get("name") or ""),
                "input": given if isinstance(given, dict) else {},
            }
            self._server_input[index] = []
        elif kind == "web_search_tool_result":
            self._blocks[index] = dict(block)
            return [Chunk(ChunkKind.WEB_SEARCH, search=self._search(block))]
        return []

    def _server_use(self, tool_use_id: str) -> dict[str, Any]:
        """The replay form of the server_tool_use block ``tool_use_id``, input completed."""
        for i, b in self._blocks.items():
            if b.get("type") == "server_tool_use" and b.get("id") == tool_use_id:
                parts = "".join(self._server_input.get(i, []))
                if parts:
                    try:
                        value = json.loads(parts)
                    except ValueError:
                        value = None
                    if isinstance(value, dict):
                        b["input"] = value
                return b
        return {}

    def _search(self, block: dict[str, Any]) -> WebSearchCall:
        use = self._server_use(str(block.get("tool_use_id") or ""))
        query = (use.get("input") or {}).get("query")
        content = block.get("content")
        results: list[WebSearchResult] = []
        error = ""
        if isinstance(content, list):
            for item in content:
                if isinstance(item, dict) and item.get("type") == "web_search_result":
                    url = str(item.get("url") or "")
                    results.append(WebSearchResult(str(item.get("title") or ""), url))
        elif isinstance(content, dict):  # {"type": "web_search_tool_result_error", …}
            error = str(content.get("error_code") or content.get("type") or "error")
        return WebSearchCall(
            id=str(block.get("tool_use_id") or ""),
            query=query if isinstance(query, str) else "",
            results=tuple(results),
            error=error,
        )

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
            server = self._server_input.get(index) if isinstance(index, int) else None
            if server is not None:
                part = delta.get("partial_json")
                if isinstance(part, str):
                    server.append(part)
                return []
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
        searches = (u.get("server_tool_use") or {}).get("web_search_requests")
        if isinstance(searches, int):
            self._usage["web_search_requests"] = searches

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
            web_search_requests=as_int(u.get("web_search_requests")),
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
        # A thinking block without a signature cannot be replayed; drop it. So is a search
        # call without its result (a cut turn): the API wants every server_tool_use answered.
        answered = {b.get("tool_use_id") for b in blocks if b["type"] == "web_search_tool_result"}
        blocks = [
            b
            for b in blocks
            if (b["type"] != "thinking" or b["signature"])
            and (b["type"] != "server_tool_use" or b.get("id") in answered)
        ]
        if blocks:
            meta[META_KEY] = {"blocks": blocks}
        reason = STOP_REASONS.get(self.stop_reason, self.stop_reason or "stop")
        out.append(Chunk(ChunkKind.DONE, finish_reason=reason, reasoning_meta=meta))
        return out
