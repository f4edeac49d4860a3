"""Fold OpenAI Responses stream events into Reasonix chunks (pure, no I/O).

A hosted web search is a ``web_search_call`` output item; when it is done
(``action.type == "search"``: the query and, with ``include``, the sources)
it becomes one WEB_SEARCH chunk, and the item is kept for replay. The API
reports no search count in ``usage``, so completed search calls are counted.
"""

from __future__ import annotations

from reasonix.errors import ProviderStreamError
from reasonix.provider.base import PartialCall, as_int, load_event, stream_error
from reasonix.provider.responses.wire import META_KEY
from reasonix.provider.sse import ServerSentEvent
from reasonix.provider.types import Chunk, ChunkKind, Usage, WebSearchCall, WebSearchResult

TYPE_CHECKING = False  # typing is not imported at run time (it costs a start 2-3 ms)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["ResponsesFolder", "parse_usage"]

_INCOMPLETE = {"max_output_tokens": "length", "content_filter": "content_filter"}


def parse_usage(u: dict[str, Any]) -> Usage:
    """Responses ``usage`` (input includes the cached part)."""
    return Usage(
        input_tokens=as_int(u.get("input_tokens")),
        output_tokens=as_int(u.get("output_tokens")),
        cache_read_tokens=as_int((u.get("input_tokens_details") or {}).get("cached_tokens")),
        reasoning_tokens=as_int((u.get("output_tokens_details") or {}).get("reasoning_tokens")),
    )


class ResponsesFolder:
    """Function calls are keyed by ``output_index`` and ordered by it."""

    def __init__(self, where: str = "responses") -> None:
        self.where = where
        self.done = False
        self.finish_reason = ""
        self.usage: Usage | None = None
        self._calls: dict[int, PartialCall] = {}
        self._by_item: dict[str, int] = {}  # item id -> output_index
        self._reasoning: list[dict[str, Any]] = []  # replayed items: reasoning, web searches
        self._summary_index: dict[str, int] = {}
        self.searches = 0

    def feed(self, event: ServerSentEvent) -> list[Chunk]:
        """Chunks for one event."""
        obj = load_event(event, self.where)
        if not isinstance(obj, dict):
            raise ProviderStreamError(f"{self.where}: unexpected event {event.data[:120]!r}")
        typ = str(obj.get("type") or event.event)
        if typ == "response.output_text.delta":
            return _chunk(ChunkKind.TEXT, obj.get("delta"))
        if typ in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            return self._reasoning_delta(obj)
        if typ == "response.function_call_arguments.delta":
            self._call_for(obj).parts.append(str(obj.get("delta") or ""))
        elif typ == "response.function_call_arguments.done":
            if isinstance(obj.get("arguments"), str):
                self._call_for(obj).parts = [obj["arguments"]]
        elif typ in ("response.output_item.added", "response.output_item.done"):
            return self._item(obj.get("output_index"), obj.get("item") or {}, typ.endswith(".done"))
        elif typ in ("response.completed", "response.incomplete"):
            self._end(obj.get("response") or {})
        elif typ in ("response.failed", "error"):
            raise stream_error(self.where, (obj.get("response") or {}).get("error") or obj)
        return []

    def _reasoning_delta(self, obj: dict[str, Any]) -> list[Chunk]:
        # Separate summary parts with a blank line, as they read as paragraphs.
        item, index = str(obj.get("item_id") or ""), as_int(obj.get("summary_index"))
        prefix = ""
        if item in self._summary_index and self._summary_index[item] != index:
            prefix = "\n\n"
        self._summary_index[item] = index
        delta = obj.get("delta")
        return _chunk(ChunkKind.REASONING, prefix + delta if isinstance(delta, str) else None)

    def _call_for(self, obj: dict[str, Any]) -> PartialCall:
        index = obj.get("output_index")
        if not isinstance(index, int):
            index = self._by_item.get(str(obj.get("item_id")), -1)
        call = self._calls.get(index)
        if call is None:
            raise ProviderStreamError(f"{self.where}: arguments for an unknown function call")
        return call

    def _item(self, index: Any, item: dict[str, Any], done: bool) -> list[Chunk]:
        kind = item.get("type")
        if kind == "function_call":
            if not isinstance(index, int):
                index = len(self._calls) + 1000  # no index: keep arrival order after indexed ones
            call = self._calls.setdefault(index, PartialCall())
            call.id = call.id or str(item.get("call_id") or "")
            call.name = call.name or str(item.get("name") or "")
            if item.get("id"):
                self._by_item[str(item["id"])] = index
            if done and isinstance(item.get("arguments"), str):
                call.parts = [item["arguments"]]
        elif kind == "reasoning" and done:
            keep: dict[str, Any] = {
                k: item[k] for k in ("type", "id", "summary", "encrypted_content") if k in item
            }
            self._reasoning.append(keep)
        elif kind == "web_search_call" and done:
            self._reasoning.append(
                {k: item[k] for k in ("type", "id", "status", "action") if k in item}
            )
            return self._search(item)
        return []

    def _search(self, item: dict[str, Any]) -> list[Chunk]:
        raw = item.get("action")
        action: dict[str, Any] = raw if isinstance(raw, dict) else {}
        if action.get("type", "search") != "search":
            return []  # open_page / find_in_page: part of browsing, not a search to show
        self.searches += 1
        results = tuple(
            WebSearchResult(str(s.get("title") or ""), str(s.get("url")))
            for s in action.get("sources") or []
            if isinstance(s, dict) and s.get("url")
        )
        query = action.get("query")
        status = str(item.get("status") or "")
        call = WebSearchCall(
            id=str(item.get("id") or ""),
            query=query if isinstance(query, str) else "",
            results=results,
            error=status if status in ("failed", "incomplete") else "",
        )
        return [Chunk(ChunkKind.WEB_SEARCH, search=call)]

    def _end(self, resp: dict[str, Any]) -> None:
        self.done = True
        if isinstance(resp.get("usage"), dict):
            self.usage = parse_usage(resp["usage"])
        if resp.get("status") == "incomplete":
            reason = str((resp.get("incomplete_details") or {}).get("reason") or "incomplete")
            self.finish_reason = _INCOMPLETE.get(reason, reason)

    def finish(self) -> list[Chunk]:
        """Complete calls, usage and DONE (with reasoning items for replay)."""
        if not self.done:
            raise ProviderStreamError(f"{self.where}: stream ended before response.completed")
        out = [
            Chunk(ChunkKind.TOOL_CALL, tool_call=self._calls[i].complete(f"call_{i}", self.where))
            for i in sorted(self._calls)
        ]
        if self.usage is not None or self.searches:
            usage = self.usage or Usage()
            usage.web_search_requests = self.searches
            out.append(Chunk(ChunkKind.USAGE, usage=usage))
        reason = self.finish_reason or ("tool_calls" if self._calls else "stop")
        meta = {META_KEY: {"items": self._reasoning}} if self._reasoning else {}
        out.append(Chunk(ChunkKind.DONE, finish_reason=reason, reasoning_meta=meta))
        return out


def _chunk(kind: ChunkKind, text: Any) -> list[Chunk]:
    return [Chunk(kind, text=text)] if isinstance(text, str) and text else []
