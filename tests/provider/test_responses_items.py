"""The responses kind's output items: folded into chunks, replayed as they were (issue 33).

Pure fold and encoder tests for what a single replayed request cannot show:
the shape a refusal is replayed in, a recorded turn whose text the agent
replaced, streams that carry only the final response, commentary-only answers
and usage arithmetic. The end-to-end cases are in test_traffic_responses.py.
"""

from __future__ import annotations

import json
from typing import Any

from reasonix.provider.responses.fold import ResponsesFolder, parse_usage
from reasonix.provider.responses.wire import encode_input
from reasonix.provider.sse import ServerSentEvent
from reasonix.provider.types import Chunk, ChunkKind, Message, Role, ToolCall


def fold(*events: dict[str, Any]) -> list[Chunk]:
    f = ResponsesFolder()
    out: list[Chunk] = []
    for obj in events:
        out += f.feed(ServerSentEvent(str(obj["type"]), json.dumps(obj)))
    return out + f.finish()


def shown(chunks: list[Chunk], kind: ChunkKind = ChunkKind.TEXT) -> str:
    return "".join(c.text for c in chunks if c.kind is kind)


def done(chunks: list[Chunk]) -> Chunk:
    assert chunks[-1].kind is ChunkKind.DONE
    return chunks[-1]


def completed(*output: dict[str, Any], status: str = "completed", **extra: Any) -> dict[str, Any]:
    return {
        "type": "response.completed",
        "response": {"status": status, "output": list(output), **extra},
    }


def message(*parts: dict[str, Any], phase: str = "") -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
    }
    item["content"] = list(parts)
    return {**item, "phase": phase} if phase else item


def text(t: str) -> dict[str, Any]:
    return {"type": "output_text", "text": t, "annotations": []}


def replayed(
    chunks: list[Chunk], content: str | None = None, calls: list[ToolCall] | None = None
) -> list[dict[str, Any]]:
    """The input items the next request carries for this answer."""
    d = done(chunks)
    said = shown(chunks) if content is None else content
    if calls is None:
        calls = [c.tool_call for c in chunks if c.kind is ChunkKind.TOOL_CALL and c.tool_call]
    msg = Message(Role.ASSISTANT, said, calls, reasoning_meta=d.reasoning_meta)
    return encode_input([msg])


def test_a_refusal_streams_as_text_and_is_replayed_as_a_refusal_part() -> None:
    where = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    chunks = fold(
        {"type": "response.output_item.added", "output_index": 0, "item": message()},
        {"type": "response.refusal.delta", **where, "delta": "I can't "},
        {"type": "response.refusal.delta", **where, "delta": "help with that."},
        {"type": "response.refusal.done", **where, "refusal": "I can't help with that."},
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": message({"type": "refusal", "refusal": "I can't help with that."}),
        },
        completed(),
    )
    assert shown(chunks) == "I can't help with that."
    assert done(chunks).finish_reason == "refusal"
    assert replayed(chunks) == [
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "refusal", "refusal": "I can't help with that."}],
        }
    ]


def test_text_the_agent_replaced_is_replayed_as_plain_text_in_the_message_place() -> None:
    # An empty refusal is recorded by the agent as its own note: the items no longer
    # stand for the turn, so the note goes back as one assistant message.
    chunks = fold(
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": {"type": "reasoning", "id": "rs", "summary": [], "encrypted_content": "E"},
        },
        {"type": "response.output_item.done", "output_index": 1, "item": message(text("Hello."))},
        completed(),
    )
    items = replayed(chunks, content="refused by the provider: policy")
    assert items == [
        {"type": "reasoning", "id": "rs", "summary": [], "encrypted_content": "E"},
        {"role": "assistant", "content": "refused by the provider: policy"},
    ]


def test_a_stream_with_only_the_final_response_still_shows_and_replays_it() -> None:
    # openai-python tests/lib/responses/test_commentary_parsing.py streams just
    # response.created and response.completed (output in the final response).
    call = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "ls",
        "arguments": "{}",
    }
    chunks = fold(
        {"type": "response.created", "response": {"status": "in_progress", "output": []}},
        completed(message(text("Looking.")), call),
    )
    assert shown(chunks) == "Looking."
    assert [c.tool_call for c in chunks if c.tool_call] == [ToolCall("call_1", "ls", "{}")]
    assert replayed(chunks) == [
        {"type": "message", "role": "assistant", "content": [text("Looking.")]},
        {"type": "function_call", "call_id": "call_1", "name": "ls", "arguments": "{}"},
    ]


def test_commentary_alone_is_the_answer_rather_than_an_empty_one() -> None:
    chunks = fold(completed(message(text("Working on it."), phase="commentary")))
    assert shown(chunks, ChunkKind.REASONING) == "Working on it."
    assert shown(chunks) == "Working on it."  # not an empty answer the agent would ask again
    assert done(chunks).finish_reason == "complete"
    assert replayed(chunks)[0]["phase"] == "commentary"


def test_reasoning_parts_and_items_read_as_paragraphs() -> None:
    def delta(item: str, index: int, t: str) -> dict[str, Any]:
        return {
            "type": "response.reasoning_summary_text.delta",
            "item_id": item,
            "summary_index": index,
            "delta": t,
        }

    chunks = fold(
        delta("rs_1", 0, "a"),
        delta("rs_1", 0, "b"),
        delta("rs_1", 1, "c"),
        delta("rs_2", 0, "d"),
        completed(),
    )
    assert shown(chunks, ChunkKind.REASONING) == "ab\n\nc\n\nd"


def test_a_call_cut_by_the_limit_keeps_its_arguments_verbatim() -> None:
    head = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "write_file",
        "arguments": "",
    }
    chunks = fold(
        {"type": "response.output_item.added", "output_index": 0, "item": head},
        {
            "type": "response.function_call_arguments.delta",
            "item_id": "fc_1",
            "output_index": 0,
            "delta": '{"path":"a',
        },
        completed(status="incomplete", incomplete_details={"reason": "max_output_tokens"}),
    )
    (call,) = [c.tool_call for c in chunks if c.tool_call]
    assert call.truncated and call.arguments == '{"path":"a'
    assert (done(chunks).finish_reason, done(chunks).detail) == ("length", "max_output_tokens")
    # the agent drops it: nothing of it is replayed
    assert replayed(chunks, calls=[]) == []


def test_an_unknown_incomplete_reason_still_reads_as_cut() -> None:
    chunks = fold(completed(status="incomplete", incomplete_details={"reason": "interrupted"}))
    assert (done(chunks).finish_reason, done(chunks).detail) == ("length", "interrupted")


def test_reasoning_tokens_are_part_of_output_whoever_counts_them() -> None:
    openai = {
        "input_tokens": 10,
        "output_tokens": 300,
        "output_tokens_details": {"reasoning_tokens": 256},
        "total_tokens": 310,
    }
    beside = {
        "input_tokens": 10,
        "output_tokens": 44,
        "output_tokens_details": {"reasoning_tokens": 256},
        "total_tokens": 310,
    }
    assert (parse_usage(openai).output_tokens, parse_usage(openai).reasoning_tokens) == (300, 256)
    assert (parse_usage(beside).output_tokens, parse_usage(beside).reasoning_tokens) == (300, 256)
