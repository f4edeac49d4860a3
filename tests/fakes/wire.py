"""Render a scripted :class:`~fakes.script.Turn` as each vendor's SSE stream.

Every renderer returns a list of complete SSE events (bytes), so the server
can count events for fault injection. Shapes follow the vendors' streaming
documentation: OpenAI chat completions chunks, Anthropic Messages events and
OpenAI Responses events — including server-side web search (Anthropic's
``server_tool_use`` + ``web_search_tool_result`` blocks with cited text;
Responses' ``web_search_call`` items and ``url_citation`` annotations).
"""

from __future__ import annotations

import json
from typing import Any

from fakes.script import Fault, Turn

__all__ = ["KINDS", "error_body", "error_event", "render", "request_id_header"]

KINDS = ("openai", "anthropic", "responses")


def _data(obj: Any) -> bytes:
    # ensure_ascii=False on purpose: multi-byte UTF-8 then crosses read boundaries.
    return b"data: " + json.dumps(obj, ensure_ascii=False).encode() + b"\n\n"


def _event(name: str, obj: Any) -> bytes:
    return f"event: {name}\n".encode() + _data(obj)


def _interleave(turn: Turn) -> list[tuple[int, str]]:
    """(call index, argument piece) pairs, round-robin across calls."""
    chunks = [turn.arg_chunks(c) for c in turn.tool_calls]
    out: list[tuple[int, str]] = []
    for round_ in range(max((len(c) for c in chunks), default=0)):
        for i, parts in enumerate(chunks):
            if round_ < len(parts):
                out.append((i, parts[round_]))
    return out


# -- OpenAI chat completions ---------------------------------------------------


def _openai(turn: Turn) -> list[bytes]:
    base = {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": turn.model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return _data({**base, "choices": [choice]})

    out = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"reasoning_content": r}) for r in turn.reasoning_pieces()]
    out += [chunk({"content": t}) for t in turn.text_pieces()]
    ids = turn.call_ids()
    started: set[int] = set()
    for i, piece in _interleave(turn):
        tc: dict[str, Any] = {"index": i, "function": {"arguments": piece}}
        if i not in started:
            started.add(i)
            tc = {
                "index": i,
                "id": ids[i],
                "type": "function",
                "function": {"name": turn.tool_calls[i].name, "arguments": piece},
            }
        out.append(chunk({"tool_calls": [tc]}))
    for i, call in enumerate(turn.tool_calls):  # a call with empty arguments
        if i not in started:
            tc = {
                "index": i,
                "id": ids[i],
                "type": "function",
                "function": {"name": call.name, "arguments": ""},
            }
            out.append(chunk({"tool_calls": [tc]}))
    finish = turn.finish_reason or ("tool_calls" if turn.tool_calls else "stop")
    out.append(chunk({}, finish))
    u = turn.usage
    usage = {
        "prompt_tokens": u["input_tokens"],
        "completion_tokens": u["output_tokens"],
        "total_tokens": u["input_tokens"] + u["output_tokens"],
        "prompt_tokens_details": {"cached_tokens": u["cache_read_tokens"]},
        "completion_tokens_details": {"reasoning_tokens": u["reasoning_tokens"]},
        "prompt_cache_hit_tokens": u["cache_read_tokens"],
        "prompt_cache_miss_tokens": u["input_tokens"] - u["cache_read_tokens"],
    }
    out.append(_data({**base, "choices": [], "usage": usage}))
    out.append(b"data: [DONE]\n\n")
    return out


# -- Anthropic Messages --------------------------------------------------------


def _anthropic(turn: Turn) -> list[bytes]:
    u = turn.usage
    fresh = u["input_tokens"] - u["cache_read_tokens"] - u["cache_write_tokens"]
    start_usage = {
        "input_tokens": fresh,
        "cache_creation_input_tokens": u["cache_write_tokens"],
        "cache_read_input_tokens": u["cache_read_tokens"],
        "output_tokens": 1,
    }
    msg = {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": turn.model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": start_usage,
    }
    out = [_event("message_start", {"type": "message_start", "message": msg})]
    idx = 0

    def block(start: dict[str, Any], deltas: list[dict[str, Any]]) -> None:
        nonlocal idx
        out.append(
            _event(
                "content_block_start",
                {"type": "content_block_start", "index": idx, "content_block": start},
            )
        )
        for d in deltas:
            out.append(
                _event(
                    "content_block_delta", {"type": "content_block_delta", "index": idx, "delta": d}
                )
            )
        out.append(_event("content_block_stop", {"type": "content_block_stop", "index": idx}))
        idx += 1

    if turn.reasoning:
        deltas = [{"type": "thinking_delta", "thinking": r} for r in turn.reasoning_pieces()]
        deltas.append({"type": "signature_delta", "signature": turn.signature})
        block({"type": "thinking", "thinking": "", "signature": ""}, deltas)
    out.append(_event("ping", {"type": "ping"}))
    for sid, search in zip(turn.search_ids("srvtoolu_fake_"), turn.searches, strict=True):
        query = json.dumps({"query": search.query}, ensure_ascii=False)
        half = len(query) // 2
        block(
            {"type": "server_tool_use", "id": sid, "name": "web_search", "input": {}},
            [{"type": "input_json_delta", "partial_json": p} for p in (query[:half], query[half:])],
        )
        content: Any = [
            {
                "type": "web_search_result",
                "title": title,
                "url": url,
                "encrypted_content": f"enc-{i}",
                "page_age": "April 1, 2025",
            }
            for i, (title, url) in enumerate(search.results)
        ]
        if search.error:
            content = {"type": "web_search_tool_result_error", "error_code": search.error}
        block({"type": "web_search_tool_result", "tool_use_id": sid, "content": content}, [])
    if turn.text:
        deltas = [{"type": "text_delta", "text": t} for t in turn.text_pieces()]
        cited = next((s.results[0] for s in turn.searches if s.results), None)
        if cited is not None:  # the answer cites the first hit, as the real API does
            citation = {
                "type": "web_search_result_location",
                "url": cited[1],
                "title": cited[0],
                "encrypted_index": "enc-index-0",
                "cited_text": "cited text",
            }
            deltas.insert(0, {"type": "citations_delta", "citation": citation})
        block({"type": "text", "text": ""}, deltas)
    for cid, call in zip(turn.call_ids(), turn.tool_calls, strict=True):
        parts = turn.arg_chunks(call) if call.arguments != "{}" else []
        block(
            {"type": "tool_use", "id": cid, "name": call.name, "input": {}},
            [{"type": "input_json_delta", "partial_json": p} for p in parts],
        )
    stop = turn.finish_reason or ("tool_use" if turn.tool_calls else "end_turn")
    out.append(
        _event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": _anthropic_delta_usage(turn),
            },
        )
    )
    out.append(_event("message_stop", {"type": "message_stop"}))
    return out


def _anthropic_delta_usage(turn: Turn) -> dict[str, Any]:
    usage: dict[str, Any] = {"output_tokens": turn.usage["output_tokens"]}
    if turn.searches or turn.usage.get("web_search_requests"):
        usage["server_tool_use"] = {"web_search_requests": turn.search_count()}
    return usage


# -- OpenAI Responses ----------------------------------------------------------


def _responses(turn: Turn) -> list[bytes]:
    seq = 0
    out: list[bytes] = []

    def ev(name: str, **fields: Any) -> None:
        nonlocal seq
        out.append(_event(name, {"type": name, "sequence_number": seq, **fields}))
        seq += 1

    resp: dict[str, Any] = {
        "id": "resp_fake",
        "object": "response",
        "status": "in_progress",
        "model": turn.model,
        "output": [],
    }
    ev("response.created", response=resp)
    ev("response.in_progress", response=resp)
    items: list[dict[str, Any]] = []
    if turn.reasoning:
        oi, rid = len(items), "rs_fake"
        ev(
            "response.output_item.added",
            output_index=oi,
            item={"id": rid, "type": "reasoning", "summary": []},
        )
        ev(
            "response.reasoning_summary_part.added",
            item_id=rid,
            output_index=oi,
            summary_index=0,
            part={"type": "summary_text", "text": ""},
        )
        for r in turn.reasoning_pieces():
            ev(
                "response.reasoning_summary_text.delta",
                item_id=rid,
                output_index=oi,
                summary_index=0,
                delta=r,
            )
        full = "".join(turn.reasoning_pieces())
        ev(
            "response.reasoning_summary_text.done",
            item_id=rid,
            output_index=oi,
            summary_index=0,
            text=full,
        )
        item = {"id": rid, "type": "reasoning", "summary": [{"type": "summary_text", "text": full}]}
        if turn.encrypted:
            item["encrypted_content"] = turn.encrypted
        ev("response.output_item.done", output_index=oi, item=item)
        items.append(item)
    for wid, search in zip(turn.search_ids("ws_fake_"), turn.searches, strict=True):
        oi = len(items)
        ev(
            "response.output_item.added",
            output_index=oi,
            item={"id": wid, "type": "web_search_call", "status": "in_progress"},
        )
        for phase in ("in_progress", "searching", "completed"):
            ev(f"response.web_search_call.{phase}", item_id=wid, output_index=oi)
        # Sources carry URLs only; titles come with the url_citation annotations.
        action = {
            "type": "search",
            "query": search.query,
            "sources": [{"type": "url", "url": url} for _, url in search.results],
        }
        status = "failed" if search.error else "completed"
        item = {"id": wid, "type": "web_search_call", "status": status, "action": action}
        ev("response.output_item.done", output_index=oi, item=item)
        items.append(item)
    if turn.text:
        oi, mid = len(items), "msg_fake"
        ev(
            "response.output_item.added",
            output_index=oi,
            item={
                "id": mid,
                "type": "message",
                "status": "in_progress",
                "role": "assistant",
                "content": [],
            },
        )
        ev(
            "response.content_part.added",
            item_id=mid,
            output_index=oi,
            content_index=0,
            part={"type": "output_text", "text": "", "annotations": []},
        )
        for t in turn.text_pieces():
            ev("response.output_text.delta", item_id=mid, output_index=oi, content_index=0, delta=t)
        full = "".join(turn.text_pieces())
        annotations = [
            {
                "type": "url_citation",
                "start_index": 0,
                "end_index": len(full),
                "url": url,
                "title": title,
            }
            for search in turn.searches
            for title, url in search.results[:1]
        ]
        for n, annotation in enumerate(annotations):
            ev(
                "response.output_text.annotation.added",
                item_id=mid,
                output_index=oi,
                content_index=0,
                annotation_index=n,
                annotation=annotation,
            )
        part = {"type": "output_text", "text": full, "annotations": annotations}
        ev("response.output_text.done", item_id=mid, output_index=oi, content_index=0, text=full)
        ev("response.content_part.done", item_id=mid, output_index=oi, content_index=0, part=part)
        item = {
            "id": mid,
            "type": "message",
            "status": "completed",
            "role": "assistant",
            "content": [part],
        }
        ev("response.output_item.done", output_index=oi, item=item)
        items.append(item)
    first = len(items)
    calls = []
    for cid, call in zip(turn.call_ids(), turn.tool_calls, strict=True):
        oi = len(items) + len(calls)
        fc = {
            "id": f"fc_{oi}",
            "type": "function_call",
            "status": "in_progress",
            "call_id": cid,
            "name": call.name,
            "arguments": "",
        }
        ev("response.output_item.added", output_index=oi, item=fc)
        calls.append(fc)
    for i, piece in _interleave(turn):
        ev(
            "response.function_call_arguments.delta",
            item_id=calls[i]["id"],
            output_index=first + i,
            delta=piece,
        )
    for i, (fc, call) in enumerate(zip(calls, turn.tool_calls, strict=True)):
        ev(
            "response.function_call_arguments.done",
            item_id=fc["id"],
            output_index=first + i,
            arguments=call.arguments,
        )
        done = {**fc, "status": "completed", "arguments": call.arguments}
        ev("response.output_item.done", output_index=first + i, item=done)
        items.append(done)
    u = turn.usage
    usage = {
        "input_tokens": u["input_tokens"],
        "input_tokens_details": {"cached_tokens": u["cache_read_tokens"]},
        "output_tokens": u["output_tokens"],
        "output_tokens_details": {"reasoning_tokens": u["reasoning_tokens"]},
        "total_tokens": u["input_tokens"] + u["output_tokens"],
    }
    if turn.finish_reason in ("", "completed", "stop"):
        ev(
            "response.completed",
            response={**resp, "status": "completed", "output": items, "usage": usage},
        )
    else:  # e.g. "max_output_tokens": an incomplete response
        ev(
            "response.incomplete",
            response={
                **resp,
                "status": "incomplete",
                "output": items,
                "incomplete_details": {"reason": turn.finish_reason},
                "usage": usage,
            },
        )
    return out


_RENDER = {"openai": _openai, "anthropic": _anthropic, "responses": _responses}


def render(kind: str, turn: Turn) -> list[bytes]:
    """The complete SSE events for ``turn`` in ``kind``'s wire format."""
    return _RENDER[kind](turn)


def error_event(kind: str, message: str) -> bytes:
    """The vendor's in-stream error event."""
    if kind == "anthropic":
        return _event(
            "error", {"type": "error", "error": {"type": "overloaded_error", "message": message}}
        )
    if kind == "responses":
        return _event(
            "error",
            {
                "type": "error",
                "code": "server_error",
                "message": message,
                "param": None,
                "sequence_number": 999,
            },
        )
    return _data({"error": {"message": message, "type": "server_error", "code": None}})


_OVERFLOW = {
    "openai": "This model's maximum context length is 131072 tokens. However, you requested "
    "140000 tokens (130000 in the messages, 10000 in the completion).",
    "anthropic": "prompt is too long: 210000 tokens > 200000 maximum",
    "responses": "Your input exceeds the context window of this model. Please adjust your "
    "input and try again.",
}


def error_body(kind: str, fault: Fault) -> bytes:
    """The response body for an HTTP error fault, shaped like the vendor's."""
    if fault.body is not None:
        return fault.body.encode()
    overflow = fault.error_type == "context_length_exceeded"
    message = fault.message or (_OVERFLOW[kind] if overflow else f"fake error {fault.code}")
    if kind == "anthropic":
        typ = "invalid_request_error" if overflow else (fault.error_type or "api_error")
        if fault.code == 429 and not fault.error_type:
            typ = "rate_limit_error"
        obj: Any = {"type": "error", "error": {"type": typ, "message": message}}
    else:
        code = fault.error_type or None
        typ = "invalid_request_error" if fault.code < 500 else "server_error"
        obj = {"error": {"message": message, "type": typ, "param": None, "code": code}}
    return json.dumps(obj).encode()


def request_id_header(kind: str) -> str:
    """The header each vendor uses for its request id."""
    return "request-id" if kind == "anthropic" else "x-request-id"
