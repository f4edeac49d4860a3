"""Fold OpenAI Responses stream events into Reasonix chunks (pure, no I/O).

Every output item is kept, in ``output_index`` order, for the next request
(``reasoning_meta["responses"]["items"]``): reasoning items, hosted web
searches, assistant message items (their parts, annotations and ``phase``)
and a ``function_call`` marker by ``call_id`` whose name and arguments the
wire fills from the recorded tool calls. So the next request carries the
items the model produced, as it produced them.

Display: the text of separate message items and separate content parts is
joined with a blank line (:func:`~reasonix.provider.responses.wire.shown_text`);
a ``phase: "commentary"`` message is the model talking while it works, not the
answer, so it streams as REASONING. Refusal parts stream as TEXT and end the
answer with finish reason ``refusal``.

A hosted web search is a ``web_search_call`` output item; when it is done
(``action.type == "search"``: the query and, with ``include``, the sources)
it becomes one WEB_SEARCH chunk. The API reports no search count in
``usage``, so completed search calls are counted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reasonix.errors import ProviderStreamError
from reasonix.provider.base import PartialCall, as_int, load_event, stream_error
from reasonix.provider.responses.wire import META_KEY, part_text, shown_text
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

__all__ = ["ResponsesFolder", "parse_usage"]

# incomplete_details.reason -> finish reason; a reason not listed still means the
# answer was cut short, so it reads as "length" (the vendor's word goes in detail)
_INCOMPLETE = {"max_output_tokens": "length", "content_filter": "content_filter"}
_COMMENTARY = "commentary"
_UNINDEXED = 1_000_000  # items without an output_index sort after the indexed ones


def parse_usage(u: dict[str, Any]) -> Usage:
    """Responses ``usage``: input includes the cached part, output the reasoning part.

    OpenAI counts reasoning tokens inside ``output_tokens``. A server that
    leaves them out (its ``total_tokens`` is input + output + reasoning, or
    its output is smaller than the reasoning part) is corrected so output and
    cost are what was billed.
    """
    inp, out = as_int(u.get("input_tokens")), as_int(u.get("output_tokens"))
    reasoning = as_int((u.get("output_tokens_details") or {}).get("reasoning_tokens"))
    if reasoning and (out < reasoning or as_int(u.get("total_tokens")) == inp + out + reasoning):
        out += reasoning
    return Usage(
        input_tokens=inp,
        output_tokens=out,
        cache_read_tokens=as_int((u.get("input_tokens_details") or {}).get("cached_tokens")),
        reasoning_tokens=reasoning,
    )


def _part(raw: Any) -> dict[str, Any] | None:
    """A message content part as it is replayed (no logprobs: they are not input)."""
    if not isinstance(raw, dict):
        return None
    kind = raw.get("type")
    if kind == "output_text":
        notes = raw.get("annotations")
        text = raw.get("text")
        return {
            "type": "output_text",
            "text": text if isinstance(text, str) else "",
            "annotations": notes if isinstance(notes, list) else [],
        }
    if kind == "refusal":
        said = raw.get("refusal")
        return {"type": "refusal", "refusal": said if isinstance(said, str) else ""}
    return {k: v for k, v in raw.items() if k != "logprobs"}


class _Message:
    """An assistant message item being streamed: its phase and content parts."""

    def __init__(self, phase: Any) -> None:
        self.phase: str = phase if isinstance(phase, str) else ""
        self.parts: dict[int, dict[str, Any]] = {}
        self.emitted: dict[int, str] = {}  # text already streamed, per content_index

    def record(self) -> dict[str, Any]:
        """The item as it is replayed: no id or status (store is false)."""
        rec: dict[str, Any] = {
            "type": "message",
            "role": "assistant",
            "content": [self.parts[i] for i in sorted(self.parts)],
        }
        if self.phase:
            rec["phase"] = self.phase
        return rec


class ResponsesFolder:
    """Output items are keyed by ``output_index`` and ordered by it."""

    def __init__(self, where: str = "responses") -> None:
        self.where = where
        self.done = False
        self.finish_reason = ""
        self.detail = ""
        self.usage: Usage | None = None
        self._calls: dict[int, PartialCall] = {}
        self._closed: set[int] = set()  # calls whose arguments are known to be complete
        self._messages: dict[int, _Message] = {}
        self._items: dict[int, dict[str, Any]] = {}  # replayed items other than messages/calls
        self._by_item: dict[str, int] = {}  # item id -> output_index
        self._finished_items: set[int] = set()  # output_item.done seen
        self._last: dict[ChunkKind, tuple[Any, ...]] = {}  # last part streamed, per channel
        self._refused = False
        self.searches = 0

    # -- events -------------------------------------------------------------------
    def feed(self, event: ServerSentEvent) -> list[Chunk]:
        """Chunks for one event."""
        obj = load_event(event, self.where)
        if not isinstance(obj, dict):
            raise ProviderStreamError(f"{self.where}: unexpected event {event.data[:120]!r}")
        typ = str(obj.get("type") or event.event)
        if typ in ("response.output_text.delta", "response.refusal.delta"):
            return self._text_delta(obj, refusal=typ == "response.refusal.delta")
        if typ == "response.output_text.annotation.added":
            self._annotate(obj)
        elif typ in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            index = obj.get("summary_index", obj.get("content_index"))
            key = (typ, str(obj.get("item_id") or ""), as_int(index))
            return self._say(ChunkKind.REASONING, key, obj.get("delta"))
        elif typ == "response.function_call_arguments.delta":
            self._call_for(obj).parts.append(str(obj.get("delta") or ""))
        elif typ == "response.function_call_arguments.done":
            if isinstance(obj.get("arguments"), str):
                self._call_for(obj).parts = [obj["arguments"]]
                self._closed.add(self._index(obj))
        elif typ in ("response.output_item.added", "response.output_item.done"):
            item = obj.get("item")
            item = item if isinstance(item, dict) else {}
            return self._item(obj.get("output_index"), item, typ.endswith(".done"))
        elif typ in ("response.completed", "response.incomplete"):
            resp = obj.get("response")
            return self._end(resp if isinstance(resp, dict) else {}, typ)
        elif typ in ("response.failed", "error"):
            # A failed response has no answer to show: the vendor's code and message
            # become a typed error (an overflow one the session compacts on).
            raise stream_error(self.where, (obj.get("response") or {}).get("error") or obj)
        return []

    def _index(self, obj: dict[str, Any]) -> int:
        """The event's output_index, else the one its item id was announced with."""
        index = obj.get("output_index")
        if isinstance(index, int):
            return index
        item_id = str(obj.get("item_id") or "")
        if item_id not in self._by_item:
            self._by_item[item_id] = _UNINDEXED + len(self._by_item)
        return self._by_item[item_id]

    def _say(self, channel: ChunkKind, key: tuple[Any, ...], text: Any) -> list[Chunk]:
        # Separate parts read as paragraphs: a blank line whenever the part changes.
        if not isinstance(text, str) or not text:
            return []
        last = self._last.get(channel)
        self._last[channel] = key
        prefix = "\n\n" if last is not None and last != key else ""
        return [Chunk(channel, text=prefix + text)]

    def _message(self, index: int, phase: Any = None) -> _Message:
        msg = self._messages.get(index)
        if msg is None:
            msg = self._messages[index] = _Message(phase)
        return msg

    def _show(self, index: int, ci: int, msg: _Message, text: str) -> list[Chunk]:
        """Stream one piece of a message part: the answer, or commentary as reasoning."""
        msg.emitted[ci] = msg.emitted.get(ci, "") + text
        channel = ChunkKind.REASONING if msg.phase == _COMMENTARY else ChunkKind.TEXT
        return self._say(channel, ("message", index, ci), text)

    def _text_delta(self, obj: dict[str, Any], *, refusal: bool) -> list[Chunk]:
        delta = obj.get("delta")
        if not isinstance(delta, str):
            return []
        index, ci = self._index(obj), as_int(obj.get("content_index"))
        msg = self._message(index)
        kind, field = ("refusal", "refusal") if refusal else ("output_text", "text")
        part = msg.parts.setdefault(ci, _part({"type": kind}) or {})
        part[field] = str(part.get(field) or "") + delta
        self._refused = self._refused or refusal
        return self._show(index, ci, msg, delta)

    def _annotate(self, obj: dict[str, Any]) -> None:
        note = obj.get("annotation")
        msg = self._messages.get(self._index(obj))
        if msg is None or not isinstance(note, dict):
            return
        part = msg.parts.setdefault(
            as_int(obj.get("content_index")), _part({"type": "output_text"}) or {}
        )
        if isinstance(part.get("annotations"), list):
            part["annotations"].append(note)

    def _call_for(self, obj: dict[str, Any]) -> PartialCall:
        call = self._calls.get(self._index(obj))
        if call is None:
            raise ProviderStreamError(f"{self.where}: arguments for an unknown function call")
        return call

    # -- items --------------------------------------------------------------------
    def _item(self, index: Any, item: dict[str, Any], done: bool) -> list[Chunk]:
        kind = item.get("type")
        if not isinstance(index, int):
            index = self._index({"item_id": item.get("id") or f"#{len(self._by_item)}"})
        elif item.get("id"):
            self._by_item[str(item["id"])] = index
        if done:
            self._finished_items.add(index)
        if kind == "message":
            msg = self._message(index, item.get("phase"))
            return self._message_done(index, msg, item) if done else []
        if kind == "function_call":
            call = self._calls.setdefault(index, PartialCall())
            call.id = call.id or str(item.get("call_id") or "")
            call.name = call.name or str(item.get("name") or "")
            if done and isinstance(item.get("arguments"), str):
                call.parts = [item["arguments"]]
            if done and item.get("status") != "incomplete":
                self._closed.add(index)
        elif kind == "reasoning" and done:
            keep = ("type", "id", "summary", "encrypted_content")
            self._items[index] = {k: item[k] for k in keep if k in item}
        elif kind == "web_search_call" and done:
            self._items[index] = {
                k: item[k] for k in ("type", "id", "status", "action") if k in item
            }
            return self._search(item)
        return []

    def _message_done(self, index: int, msg: _Message, item: dict[str, Any]) -> list[Chunk]:
        """The finished item is authoritative; text no delta carried is streamed now."""
        out: list[Chunk] = []
        content = item.get("content")
        if not isinstance(content, list):
            return out
        for ci, raw in enumerate(content):
            part = _part(raw)
            if part is None:
                continue
            msg.parts[ci] = part
            text, sent = part_text(part), msg.emitted.get(ci, "")
            if part.get("type") == "refusal" and text:
                self._refused = True
            if text.startswith(sent) and len(text) > len(sent):
                out += self._show(index, ci, msg, text[len(sent) :])
        return out

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

    # -- the end ------------------------------------------------------------------
    def _end(self, resp: dict[str, Any], typ: str) -> list[Chunk]:
        self.done = True
        out: list[Chunk] = []
        # A server that streams only the final response still has its output shown
        # and kept; an item that was streamed keeps what its events carried (the
        # deltas of a call the limit cut are its verbatim arguments).
        output = resp.get("output")
        streamed = {*self._messages, *self._calls, *self._items, *self._finished_items}
        for index, item in enumerate(output if isinstance(output, list) else []):
            if isinstance(item, dict) and index not in streamed:
                out += self._item(index, item, True)
        if isinstance(resp.get("usage"), dict):
            self.usage = parse_usage(resp["usage"])
        if resp.get("status") == "incomplete" or typ == "response.incomplete":
            reason = str((resp.get("incomplete_details") or {}).get("reason") or "")
            self.finish_reason = _INCOMPLETE.get(reason, "length")
            self.detail = reason or "incomplete"
        return out

    def _tool_calls(self) -> list[ToolCall]:
        calls: list[ToolCall] = []
        for i in sorted(self._calls):
            partial = self._calls[i]
            if self.finish_reason == "length" and i not in self._closed:
                # The output limit cut this call: its arguments go on verbatim, marked,
                # so the agent never runs it (and never "repairs" them).
                tc = ToolCall(partial.id or f"call_{i}", partial.name, "".join(partial.parts))
                tc.truncated = True
                calls.append(tc)
            else:
                calls.append(partial.complete(f"call_{i}", self.where))
        return calls

    def finish(self) -> list[Chunk]:
        """Complete calls, usage and DONE (with the output items for replay)."""
        if not self.done:
            raise ProviderStreamError(f"{self.where}: stream ended before response.completed")
        out: list[Chunk] = []
        calls = self._tool_calls()
        records = {i: m.record() for i, m in self._messages.items()}
        if not self.finish_reason and not calls and ChunkKind.TEXT not in self._last:
            # Only commentary came: it is all the model said, so it is the answer
            # (rather than an "empty" answer the agent would ask for again).
            out += _chunk(ChunkKind.TEXT, shown_text(list(records.values())))
        out += [Chunk(ChunkKind.TOOL_CALL, tool_call=tc) for tc in calls]
        if self.usage is not None or self.searches:
            usage = self.usage or Usage()
            usage.web_search_requests = self.searches
            out.append(Chunk(ChunkKind.USAGE, usage=usage))
        reason = self.finish_reason
        if not reason:
            reason = "tool_calls" if calls else "refusal" if self._refused else "complete"
        kept = dict(self._items)
        kept.update(records)
        kept.update(
            {
                i: {"type": "function_call", "call_id": tc.id}
                for i, tc in zip(sorted(self._calls), calls, strict=True)
            }
        )
        meta = {META_KEY: {"items": [kept[i] for i in sorted(kept)]}} if kept else {}
        out.append(
            Chunk(ChunkKind.DONE, finish_reason=reason, detail=self.detail, reasoning_meta=meta)
        )
        return out


def _chunk(kind: ChunkKind, text: Any) -> list[Chunk]:
    return [Chunk(kind, text=text)] if isinstance(text, str) and text else []
