"""Fold Anthropic Messages stream events into Reasonix chunks (pure, no I/O).

Server-side web search arrives as a ``server_tool_use`` block (its input,
``{"query": …}``, streamed as ``input_json_delta``) followed by a complete
``web_search_tool_result`` block; the pair becomes one WEB_SEARCH chunk the
moment the result block starts, and both blocks are kept for replay.

Separate ``text`` blocks are shown with a paragraph break between them where
the model left none (see :func:`_separator`); the blocks' lengths and the
separators go into the replay data so the next request carries the blocks
as they were. Content block types and delta types this fold does not know
(``mcp_tool_use``, ``container_upload``, whatever comes next) are skipped and
noted in :attr:`AnthropicFolder.notes`; they never end the turn.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from reasonix.errors import ProviderStreamError
from reasonix.provider.anthropic.wire import META_KEY, PARAGRAPH
from reasonix.provider.base import PartialCall, as_int, load_event, stream_error
from reasonix.provider.sse import ServerSentEvent
from reasonix.provider.types import (
    Chunk,
    ChunkKind,
    ToolCall,
    Usage,
    WebSearchCall,
    WebSearchResult,
)

if TYPE_CHECKING:
    from typing import Any

__all__ = ["STOP_REASONS", "AnthropicFolder"]

# stop_reason -> Chunk.finish_reason. pause_turn (a server tool's long turn paused; the
# documented remedy is to send the answer back so the model continues) is an unfinished
# answer, like an output limit: "length". An unknown future reason counts as complete.
STOP_REASONS = {
    "end_turn": "complete",
    "stop_sequence": "complete",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "pause_turn": "length",
    "refusal": "refusal",
}
# Reasons whose own name is the only explanation the API gives: it goes into Chunk.detail.
_NAMED = frozenset({"model_context_window_exceeded", "pause_turn"})
# A block that starts with one of these continues the sentence before it (a cited run is
# split into text blocks mid-sentence: "born on April 30, 1916" + ", in Petoskey").
_CONTINUES = (
    ",.;:!?)]}%'\"\u201d\u2019\u2026"  # ASCII, closing quotes, the ellipsis
    "\u3001\uff0c\u3002\uff1b\uff1a\uff01\uff1f\uff09\u3011\u300b\u300d\u300f"  # CJK
)
_SENTENCE_END = ".!?:\u3002\uff01\uff1f\uff1a\u2026"
_CLOSERS = ")]}'\"\u201d\u2019\u3011\u300b\u300d\u300f*_`"


def _separator(before: str, after: str, apart: bool) -> str:
    """What to show between two text blocks: a paragraph break, or nothing.

    Nothing when the model already put whitespace at the seam or the new block
    continues a sentence; otherwise a break when other blocks (a search, a
    thought) came between the two or the first ended a sentence. Adjacent
    blocks that meet mid-sentence are a cited run and stay joined.
    """
    if not before or not after or before[-1].isspace() or after[0].isspace():
        return ""
    if after[0] in _CONTINUES:
        return ""
    end = before.rstrip(_CLOSERS)[-1:]
    return PARAGRAPH if apart or (end and end in _SENTENCE_END) else ""


def _is_object(raw: str) -> bool:
    try:
        return isinstance(json.loads(raw), dict)
    except ValueError:
        return False


class AnthropicFolder:
    """Blocks are keyed by their ``index``; tool input JSON is concatenated verbatim.

    ``notes`` collects debug lines about what was skipped (unknown block and
    delta types); nothing is printed.
    """

    def __init__(self, where: str = "anthropic") -> None:
        self.where = where
        self.done = False
        self.stop_reason = ""
        self.stop_details: dict[str, Any] = {}
        self.notes: list[str] = []
        self._usage: dict[str, int] = {}
        self._blocks: dict[int, dict[str, Any]] = {}  # index -> block replayed verbatim
        self._texts: dict[int, dict[str, Any]] = {}  # index -> {"chars", "sep"} of a text block
        self._calls: dict[int, PartialCall] = {}
        self._server_input: dict[int, list[str]] = {}  # server_tool_use index -> input JSON
        self._stopped: set[int] = set()  # blocks whose content_block_stop arrived
        self._skipped: set[int] = set()  # blocks of a type we do not know
        self._shown = ""  # the text shown so far (its tail decides the next separator)
        self._apart = False  # a non-text block started since the last text was shown

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
        if typ == "content_block_stop":
            if isinstance(obj.get("index"), int):
                self._stopped.add(obj["index"])
        elif typ == "message_start":
            self._add_usage((obj.get("message") or {}).get("usage") or {})
        elif typ == "message_delta":
            self._add_usage(obj.get("usage") or {})
            delta = obj.get("delta") or {}
            if delta.get("stop_reason"):
                self.stop_reason = str(delta["stop_reason"])
            if isinstance(delta.get("stop_details"), dict):
                self.stop_details = delta["stop_details"]
        elif typ == "message_stop":
            self.done = True
        elif typ == "error":
            raise stream_error(self.where, obj)
        return []  # ping and future event types carry nothing for us

    def _note(self, line: str) -> None:
        if line not in self.notes:
            self.notes.append(line)

    def _start(self, index: Any, block: dict[str, Any]) -> list[Chunk]:
        kind = block.get("type")
        if not isinstance(index, int):
            raise ProviderStreamError(f"{self.where}: content block without an index")
        if kind == "text":
            self._texts[index] = {"chars": 0, "sep": ""}
            return self._text(index, block.get("text"))
        self._apart = bool(self._shown)  # text after this block is set apart from the last
        if kind == "tool_use":
            self._calls[index] = PartialCall(
                id=str(block.get("id") or ""), name=str(block.get("name") or "")
            )
        elif kind == "thinking":
            signature = str(block.get("signature") or "")
            self._blocks[index] = {"type": "thinking", "thinking": "", "signature": signature}
            return self._thinking(index, block.get("thinking"))
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
        else:
            self._skipped.add(index)
            self._note(f"skipped content block {index} of unknown type {kind!r}")
        return []

    def _text(self, index: int, text: Any) -> list[Chunk]:
        if not isinstance(text, str) or not text:
            return []
        block = self._texts.setdefault(index, {"chars": 0, "sep": ""})
        out: list[Chunk] = []
        if not block["chars"]:  # this block's first text: keep it apart from the last one
            sep = _separator(self._shown, text, self._apart)
            if sep:
                block["sep"] = sep
                out.append(Chunk(ChunkKind.TEXT, text=sep))
        block["chars"] += len(text)
        self._shown = (self._shown + text)[-64:]
        self._apart = False
        out.append(Chunk(ChunkKind.TEXT, text=text))
        return out

    def _thinking(self, index: int, text: Any) -> list[Chunk]:
        if not isinstance(text, str) or not text:
            return []
        block = self._blocks.get(index)
        if block is not None and block.get("type") == "thinking":
            block["thinking"] += text
        return [Chunk(ChunkKind.REASONING, text=text)]

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
        if isinstance(index, int) and index in self._skipped:
            return []  # a block we do not know: none of its deltas are ours either
        if kind == "text_delta":
            return self._text(index, delta.get("text")) if isinstance(index, int) else []
        if kind == "thinking_delta":
            return self._thinking(index, delta.get("thinking")) if isinstance(index, int) else []
        if kind == "signature_delta":
            block = self._blocks.get(index) if isinstance(index, int) else None
            if block is not None and block.get("type") == "thinking":
                block["signature"] += delta.get("signature") or ""
        elif kind == "input_json_delta":
            part = delta.get("partial_json")
            server = self._server_input.get(index) if isinstance(index, int) else None
            call = self._calls.get(index) if isinstance(index, int) else None
            if server is not None and isinstance(part, str):
                server.append(part)
            elif call is not None and isinstance(part, str) and part:
                call.parts.append(part)
            elif server is None and call is None:
                self._note(f"skipped input_json_delta for block {index}, not a tool call")
        elif kind != "citations_delta":  # citations are not replayed (the results they cite are)
            self._note(f"skipped delta of unknown type {kind!r} in block {index}")
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

    def _detail(self) -> str:
        """The API's own explanation of how the answer ended ("" when it gives none)."""
        if self.stop_reason == "refusal":
            d = self.stop_details
            explanation = str(d.get("explanation") or "").strip()
            category = str(d.get("category") or "").strip()
            if explanation and category:
                return f"{explanation} ({category})"
            return explanation or category
        if self.stop_reason in _NAMED or self.stop_reason not in STOP_REASONS:
            return self.stop_reason
        return ""

    def _call(self, index: int, reason: str) -> ToolCall:
        call = self._calls[index]
        raw = "".join(call.parts)
        # Cut by the output limit: its block never closed, or its input is not whole JSON.
        # It is yielded verbatim and marked, never repaired: the agent does not run it.
        if reason == "length" and (index not in self._stopped or not _is_object(raw)):
            return ToolCall(call.id or f"toolu_{index}", call.name, raw, truncated=True)
        return call.complete(f"toolu_{index}", self.where)

    def _replay(self) -> list[dict[str, Any]]:
        """The blocks the next request must carry, in the order the model produced them."""
        # A thinking block without a signature cannot be replayed; drop it. So is a search
        # call without its result (a cut turn): the API wants every server_tool_use answered.
        answered = {
            b.get("tool_use_id")
            for b in self._blocks.values()
            if b["type"] == "web_search_tool_result"
        }
        kept = {
            i: b
            for i, b in self._blocks.items()
            if (b["type"] != "thinking" or b["signature"])
            and (b["type"] != "server_tool_use" or b.get("id") in answered)
        }
        texts = {i: t for i, t in self._texts.items() if t["chars"]}
        if (kept and texts) or len(texts) > 1:  # where the text blocks go matters: mark them
            for i, t in texts.items():
                kept[i] = {"type": "text", "chars": t["chars"]}
                if t["sep"]:
                    kept[i]["sep"] = t["sep"]
        return [kept[i] for i in sorted(kept)]

    def finish(self) -> list[Chunk]:
        """Complete calls, usage and DONE (with the blocks to replay)."""
        if not self.done and not self.stop_reason:
            raise ProviderStreamError(f"{self.where}: stream ended before message_stop")
        reason = STOP_REASONS.get(self.stop_reason) or ("tool_calls" if self._calls else "complete")
        out = [
            Chunk(ChunkKind.TOOL_CALL, tool_call=self._call(i, reason)) for i in sorted(self._calls)
        ]
        if self._usage:
            out.append(Chunk(ChunkKind.USAGE, usage=self.usage()))
        blocks = self._replay()
        meta: dict[str, Any] = {META_KEY: {"blocks": blocks}} if blocks else {}
        out.append(
            Chunk(ChunkKind.DONE, finish_reason=reason, detail=self._detail(), reasoning_meta=meta)
        )
        return out
