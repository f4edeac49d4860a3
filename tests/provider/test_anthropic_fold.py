"""The anthropic fold and encoder in detail (issue 33): stop reasons, cut tool calls,
unknown blocks, text blocks kept apart and replayed as they were."""

from __future__ import annotations

import json
from typing import Any

import pytest

from reasonix.provider.anthropic.fold import AnthropicFolder
from reasonix.provider.anthropic.wire import encode_messages
from reasonix.provider.sse import ServerSentEvent
from reasonix.provider.types import FINISH_REASONS, Chunk, ChunkKind, Message, Role, ToolCall


def fold(*events: dict[str, Any]) -> tuple[AnthropicFolder, list[Chunk]]:
    f = AnthropicFolder()
    out: list[Chunk] = []
    for e in events:
        out += f.feed(ServerSentEvent(event=e["type"], data=json.dumps(e)))
    return f, out + f.finish()


def start_block(i: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": i, "content_block": block}


def delta(i: int, d: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": i, "delta": d}


def stop_block(i: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": i}


def text_block(i: int, *pieces: str) -> list[dict[str, Any]]:
    return [
        start_block(i, {"type": "text", "text": ""}),
        *(delta(i, {"type": "text_delta", "text": p}) for p in pieces),
        stop_block(i),
    ]


def end(reason: str, **more: Any) -> list[dict[str, Any]]:
    return [
        {"type": "message_delta", "delta": {"stop_reason": reason, **more}, "usage": {}},
        {"type": "message_stop"},
    ]


def shown(chunks: list[Chunk]) -> str:
    return "".join(c.text for c in chunks if c.kind is ChunkKind.TEXT)


@pytest.mark.parametrize(
    ("reason", "finish", "detail"),
    [
        ("end_turn", "complete", ""),
        ("stop_sequence", "complete", ""),
        ("max_tokens", "length", ""),
        ("model_context_window_exceeded", "length", "model_context_window_exceeded"),
        ("pause_turn", "length", "pause_turn"),
        ("refusal", "refusal", ""),
        ("some_future_reason", "complete", "some_future_reason"),
    ],
)
def test_every_stop_reason_maps_into_the_vocabulary(reason: str, finish: str, detail: str) -> None:
    _, out = fold(*text_block(0, "x"), *end(reason))
    done = out[-1]
    assert done.kind is ChunkKind.DONE and done.finish_reason in FINISH_REASONS
    assert (done.finish_reason, done.detail) == (finish, detail)


def test_a_refusal_keeps_its_text_and_explains_itself() -> None:
    details = {"type": "refusal", "category": "cyber", "explanation": "Not with malware."}
    _, out = fold(*text_block(0, "I can't ", "help."), *end("refusal", stop_details=details))
    assert shown(out) == "I can't help."
    assert (out[-1].finish_reason, out[-1].detail) == ("refusal", "Not with malware. (cyber)")
    _, out = fold(*end("refusal", stop_details={"type": "refusal", "category": "bio"}))
    assert shown(out) == "" and out[-1].detail == "bio"


def test_a_tool_use_cut_by_max_tokens_is_yielded_verbatim_and_marked() -> None:
    events = [
        start_block(0, {"type": "tool_use", "id": "toolu_ok", "name": "ls", "input": {}}),
        delta(0, {"type": "input_json_delta", "partial_json": '{"path": "."}'}),
        stop_block(0),
        start_block(1, {"type": "tool_use", "id": "toolu_cut", "name": "read_file", "input": {}}),
        delta(1, {"type": "input_json_delta", "partial_json": '{"path": "src/ma'}),
        stop_block(1),  # the API closes the block even when the limit cut it
        *end("max_tokens"),
    ]
    _, out = fold(*events)
    calls = [c.tool_call for c in out if c.tool_call is not None]
    assert [(c.id, c.arguments, c.truncated) for c in calls] == [
        ("toolu_ok", '{"path": "."}', False),
        ("toolu_cut", '{"path": "src/ma', True),
    ]
    assert out[-1].finish_reason == "length"
    # the same call with a whole input is a normal call, and so is a broken one without the cut
    _, out = fold(*events[:3], *end("tool_use"))
    assert [c.tool_call.truncated for c in out if c.tool_call] == [False]


def test_a_tool_use_with_no_input_yet_is_cut_with_empty_arguments() -> None:
    events = [start_block(0, {"type": "tool_use", "id": "t", "name": "ls", "input": {}})]
    _, out = fold(*events, *end("max_tokens"))
    call = next(c.tool_call for c in out if c.tool_call)
    assert (call.arguments, call.truncated) == ("", True)


def test_unknown_blocks_and_deltas_are_skipped_with_a_note_and_usage_is_kept() -> None:
    f, out = fold(
        {"type": "message_start", "message": {"usage": {"input_tokens": 7, "output_tokens": 1}}},
        start_block(0, {"type": "mcp_tool_use", "id": "m", "name": "echo", "input": {}}),
        delta(0, {"type": "input_json_delta", "partial_json": '{"a": 1}'}),
        delta(0, {"type": "text_delta", "text": "not ours"}),
        stop_block(0),
        delta(5, {"type": "input_json_delta", "partial_json": "{}"}),  # a block never started
        *text_block(1, "Hi."),
        delta(1, {"type": "sparkle_delta", "x": 1}),
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 3},
        },
        {"type": "message_stop"},
    )
    assert shown(out) == "Hi."
    assert not [c for c in out if c.kind is ChunkKind.TOOL_CALL]
    usage = next(c.usage for c in out if c.usage)
    assert (usage.input_tokens, usage.output_tokens) == (7, 3)
    assert len(f.notes) == 3 and "mcp_tool_use" in f.notes[0] and "sparkle_delta" in f.notes[2]
    assert out[-1].reasoning_meta == {}  # the unknown block is not replayed


@pytest.mark.parametrize(
    ("pieces", "between", "expected"),
    [
        (["First.", "Second."], False, "First.\n\nSecond."),
        (["Done:", "next"], False, "Done:\n\nnext"),
        (["Ends with a space ", "next"], False, "Ends with a space next"),
        (["Born in 1916", ", in Petoskey"], False, "Born in 1916, in Petoskey"),
        (["According to the results", "the sky"], False, "According to the resultsthe sky"),
        (["Let me look it up", "Found it"], True, "Let me look it up\n\nFound it"),
        (["搜索结果显示，", "他生于1916年"], False, "搜索结果显示，他生于1916年"),
        (["完成了。", "下一步"], False, "完成了。\n\n下一步"),
    ],
)
def test_text_blocks_are_kept_apart_unless_they_continue_a_sentence(
    pieces: list[str], between: bool, expected: str
) -> None:
    events = text_block(0, pieces[0])
    if between:  # a thought between the two (its signature missing: not replayed)
        events += [start_block(1, {"type": "thinking", "thinking": ""}), stop_block(1)]
    _, out = fold(*events, *text_block(2, pieces[1]), *end("end_turn"))
    assert shown(out) == expected
    msg = Message(Role.ASSISTANT, expected, reasoning_meta=out[-1].reasoning_meta)
    blocks = encode_messages([Message(Role.USER, "q"), msg])[0][1]["content"]
    assert blocks == [{"type": "text", "text": p} for p in pieces]


def test_one_text_block_alone_stores_no_marks() -> None:
    _, out = fold(*text_block(0, "Just ", "this."), *end("end_turn"))
    assert out[-1].reasoning_meta == {}


def test_edited_text_or_older_data_goes_out_as_one_block_after_the_others() -> None:
    thinking = {"type": "thinking", "thinking": "t", "signature": "S"}
    marks = [thinking, {"type": "text", "chars": 2}, {"type": "text", "chars": 2, "sep": "\n\n"}]
    for content, meta in [
        ("A.\n\nB.", {"blocks": [thinking]}),  # stored before marks existed
        ("A.\n\nB. [cancelled]", {"blocks": marks}),  # the text no longer matches
        ("A.B.", {"blocks": marks}),  # the break is missing
    ]:
        msg = Message(Role.ASSISTANT, content, reasoning_meta={"anthropic": meta})
        blocks = encode_messages([Message(Role.USER, "q"), msg])[0][1]["content"]
        assert blocks == [thinking, {"type": "text", "text": content}], content
    msg = Message(Role.ASSISTANT, "A.\n\nB.", reasoning_meta={"anthropic": {"blocks": marks}})
    msg.tool_calls = [ToolCall("toolu_1", "ls", '{"path": "."}')]
    blocks = encode_messages([Message(Role.USER, "q"), msg])[0][1]["content"]
    assert blocks == [
        thinking,
        {"type": "text", "text": "A."},
        {"type": "text", "text": "B."},
        {"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {"path": "."}},
    ]


def test_text_in_a_block_start_is_shown() -> None:
    _, out = fold(
        start_block(0, {"type": "text", "text": "Hello"}),
        delta(0, {"type": "text_delta", "text": " there."}),
        stop_block(0),
        *end("end_turn"),
    )
    assert shown(out) == "Hello there."
