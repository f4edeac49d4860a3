"""Request bodies (pure encoders) and event folding with recorded events (no I/O)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fakes import FakeServer, Turn
from provider_kit import collect, provider

from reasonix.errors import ProviderStreamError
from reasonix.provider.anthropic.fold import AnthropicFolder
from reasonix.provider.anthropic.wire import encode_body as anthropic_body
from reasonix.provider.base import dumps
from reasonix.provider.openai.fold import OpenAIFolder
from reasonix.provider.openai.wire import encode_body as openai_body
from reasonix.provider.responses.fold import ResponsesFolder
from reasonix.provider.responses.wire import encode_body as responses_body
from reasonix.provider.sse import ServerSentEvent
from reasonix.provider.types import ChunkKind, Message, Request, Role, ToolCall, ToolSchema

TOOLS = [
    ToolSchema("read_file", "Read a file.", {"type": "object", "properties": {}}),
    ToolSchema("grep", "Search.", {"type": "object", "properties": {}}),
]
CALL = ToolCall("call_1", "read_file", '{"path":"a.py"}')


def conversation() -> list[Message]:
    return [
        Message(Role.USER, "fix the bug"),
        Message(
            Role.ASSISTANT,
            "Reading.",
            tool_calls=[CALL, ToolCall("call_2", "grep", "{}")],
            reasoning="need to look",
            reasoning_meta={
                "anthropic": {
                    "blocks": [{"type": "thinking", "thinking": "need to look", "signature": "SIG"}]
                },
                "responses": {
                    "items": [
                        {
                            "type": "reasoning",
                            "id": "rs_1",
                            "summary": [],
                            "encrypted_content": "ENC",
                        },
                        {"type": "reasoning", "id": "rs_2", "summary": []},
                    ]
                },
            },
        ),
        Message(Role.TOOL, "contents", tool_call_id="call_1"),
        Message(Role.TOOL, "no match", tool_call_id="call_2"),
        Message(Role.USER, "and now?"),
    ]


# -- openai ------------------------------------------------------------------------


def test_openai_body_shape_and_replay() -> None:
    req = Request(model="m", messages=conversation(), system="SYS", tools=TOOLS)
    body = openai_body(req, extra={})
    assert list(body) == ["model", "stream", "stream_options", "tools", "messages"]
    assert body["stream_options"] == {"include_usage": True}
    assert body["tools"][0] == {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file.",
            "parameters": TOOLS[0].parameters,
        },
    }
    msgs = body["messages"]
    assert msgs[0] == {"role": "system", "content": "SYS"}
    assert msgs[2]["reasoning_content"] == "need to look"
    assert msgs[2]["tool_calls"][0] == {
        "id": "call_1",
        "type": "function",
        "function": {"name": "read_file", "arguments": '{"path":"a.py"}'},
    }
    assert msgs[3] == {"role": "tool", "tool_call_id": "call_1", "content": "contents"}
    assert "max_tokens" not in body and "temperature" not in body


def test_openai_optional_fields_and_extra_body() -> None:
    req = Request(
        model="m",
        messages=[Message(Role.USER, "x")],
        max_tokens=100,
        temperature=0.2,
        effort="high",
    )
    extra = {"model": "evil", "stream": False, "top_p": 0.9, "temperature": 0.7}
    body = openai_body(req, extra=extra, max_tokens_field="max_completion_tokens")
    assert body["model"] == "m" and body["stream"] is True
    assert body["max_completion_tokens"] == 100
    assert body["reasoning_effort"] == "high"
    assert body["top_p"] == 0.9 and body["temperature"] == 0.7  # explicit config wins


def test_openai_bodies_are_byte_stable_prefixes_across_turns() -> None:
    msgs = conversation()[:1]
    first = dumps(openai_body(Request(model="m", messages=msgs, system="S", tools=TOOLS), extra={}))
    msgs = [*msgs, Message(Role.ASSISTANT, "ok"), Message(Role.USER, "more")]
    second = dumps(
        openai_body(Request(model="m", messages=msgs, system="S", tools=TOOLS), extra={})
    )
    assert second.startswith(first[:-2])  # everything up to the old "]}" is unchanged


def test_openai_body_prefix_stable_over_the_wire() -> None:
    with FakeServer("openai", [Turn(text="a"), Turn(text="b")]) as srv:
        p = provider("openai", srv.url)
        history = [Message(Role.USER, "one")]
        collect(p, Request(model="m", messages=list(history), system="S", tools=TOOLS))
        history += [Message(Role.ASSISTANT, "a"), Message(Role.USER, "two")]
        collect(p, Request(model="m", messages=list(history), system="S", tools=TOOLS))
        b1, b2 = srv.requests[0].body, srv.requests[1].body
    assert b2.startswith(b1[:-2])


def ev(obj: Any, event: str = "message") -> ServerSentEvent:
    return ServerSentEvent(event, obj if isinstance(obj, str) else json.dumps(obj))


def delta(d: dict[str, Any], finish: str | None = None) -> ServerSentEvent:
    return ev({"choices": [{"index": 0, "delta": d, "finish_reason": finish}]})


def test_openai_fold_without_index_and_deepseek_usage() -> None:
    f = OpenAIFolder()
    out = []
    for e in [
        delta({"reasoning_content": "hm"}),
        delta({"tool_calls": [{"id": "a", "function": {"name": "x", "arguments": '{"k":'}}]}),
        delta({"tool_calls": [{"function": {"arguments": "1}"}}]}),
        delta({"tool_calls": [{"id": "b", "function": {"name": "y", "arguments": "{}"}}]}),
        delta({}, "tool_calls"),
        ev(
            {
                "choices": [],
                "usage": {
                    "prompt_tokens": 10,
                    "completion_tokens": 3,
                    "prompt_cache_hit_tokens": 8,
                    "prompt_cache_miss_tokens": 2,
                },
            }
        ),
        ev("[DONE]"),
    ]:
        out += f.feed(e)
    out += f.finish()
    calls = [c.tool_call for c in out if c.tool_call]
    assert [(c.id, c.name, c.arguments) for c in calls] == [("a", "x", '{"k":1}'), ("b", "y", "{}")]
    usage = next(c.usage for c in out if c.usage)
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (10, 8, 3)


def test_openai_fold_arguments_sent_as_an_object() -> None:
    f = OpenAIFolder()
    call = {"index": 0, "id": "a", "function": {"name": "x", "arguments": {"k": "é"}}}
    f.feed(delta({"tool_calls": [call]}, "tool_calls"))
    assert f.finish()[0].tool_call == ToolCall("a", "x", '{"k": "é"}')


def test_openai_fold_finish_without_done_marker_is_accepted() -> None:
    f = OpenAIFolder()
    f.feed(delta({"content": "x"}, "stop"))
    assert f.finish()[-1].finish_reason == "complete"


def test_openai_fold_cut_before_finish_raises() -> None:
    f = OpenAIFolder()
    f.feed(delta({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "x"}}]}))
    with pytest.raises(ProviderStreamError):
        f.finish()


def test_openai_fold_nameless_call_is_a_stream_error() -> None:
    f = OpenAIFolder()
    f.feed(delta({"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}, "tool_calls"))
    with pytest.raises(ProviderStreamError, match="no name"):
        f.finish()


# -- anthropic ----------------------------------------------------------------------


def test_anthropic_body_shape_cache_breakpoints_and_merging() -> None:
    req = Request(model="m", messages=conversation(), system="SYS", tools=TOOLS, temperature=0.1)
    body = anthropic_body(req, max_tokens=4096, extra={"metadata": {"user_id": "u"}})
    eph = {"type": "ephemeral"}
    assert body["system"] == [{"type": "text", "text": "SYS", "cache_control": eph}]
    assert "cache_control" not in body["tools"][0]
    assert body["tools"][1]["cache_control"] == eph
    assert body["tools"][1]["input_schema"] == TOOLS[1].parameters
    assert body["max_tokens"] == 4096 and body["temperature"] == 0.1
    assert body["metadata"] == {"user_id": "u"}
    msgs = body["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "user"]
    assert msgs[1]["content"] == [
        {"type": "thinking", "thinking": "need to look", "signature": "SIG"},
        {"type": "text", "text": "Reading."},
        {"type": "tool_use", "id": "call_1", "name": "read_file", "input": {"path": "a.py"}},
        {"type": "tool_use", "id": "call_2", "name": "grep", "input": {}},
    ]
    # two tool results and the next user text merge into one user message
    assert msgs[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "call_1", "content": "contents"},
        {"type": "tool_result", "tool_use_id": "call_2", "content": "no match"},
        {"type": "text", "text": "and now?", "cache_control": eph},
    ]
    assert "cache_control" not in msgs[0]["content"][-1]


def test_anthropic_thinking_effort_and_no_temperature() -> None:
    req = Request(model="m", messages=[Message(Role.USER, "x")], effort="high", temperature=0.5)
    body = anthropic_body(req, max_tokens=64000, extra={})
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 32768}
    assert "temperature" not in body
    small = anthropic_body(req, max_tokens=1000, extra={})
    assert "thinking" not in small  # below the API's minimum budget


def test_anthropic_max_tokens_always_sent_over_the_wire() -> None:
    with FakeServer("anthropic", [Turn(text="x"), Turn(text="y")]) as srv:
        p = provider("anthropic", srv.url)
        collect(p, Request(model="m", messages=[Message(Role.USER, "x")]))
        collect(p, Request(model="m", messages=[Message(Role.USER, "x")], max_tokens=777))
        assert srv.requests[0].json["max_tokens"] == 32000
        assert srv.requests[1].json["max_tokens"] == 777


def test_anthropic_fold_thinking_signature_redacted_and_usage() -> None:
    f = AnthropicFolder()
    events = [
        {
            "type": "message_start",
            "message": {
                "usage": {
                    "input_tokens": 5,
                    "cache_read_input_tokens": 90,
                    "cache_creation_input_tokens": 5,
                    "output_tokens": 1,
                }
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking"}},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "hmm"},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "signature_delta", "signature": "S1"},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "redacted_thinking", "data": "R"},
        },
        {"type": "content_block_stop", "index": 1},
        {"type": "ping"},
        {
            "type": "content_block_start",
            "index": 2,
            "content_block": {"type": "tool_use", "id": "t", "name": "n", "input": {}},
        },
        {"type": "content_block_stop", "index": 2},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use"},
            "usage": {"output_tokens": 9},
        },
        {"type": "message_stop"},
    ]
    out = []
    for e in events:
        out += f.feed(ev(e, e["type"]))
    assert f.done
    out += f.finish()
    assert [c.text for c in out if c.kind is ChunkKind.REASONING] == ["hmm"]
    call = next(c.tool_call for c in out if c.tool_call)
    assert (call.id, call.name, call.arguments) == ("t", "n", "{}")
    usage = next(c.usage for c in out if c.usage)
    assert (usage.input_tokens, usage.cache_read_tokens, usage.cache_write_tokens) == (100, 90, 5)
    assert usage.output_tokens == 9
    done = out[-1]
    assert done.finish_reason == "tool_calls"
    assert done.reasoning_meta == {
        "anthropic": {
            "blocks": [
                {"type": "thinking", "thinking": "hmm", "signature": "S1"},
                {"type": "redacted_thinking", "data": "R"},
            ]
        }
    }


def test_anthropic_thinking_roundtrip_over_the_wire() -> None:
    with FakeServer(
        "anthropic", [Turn(text="a", reasoning="think", signature="SIG9"), Turn(text="b")]
    ) as srv:
        p = provider("anthropic", srv.url)
        chunks = collect(p)
        meta = chunks[-1].reasoning_meta
        history = [
            Message(Role.USER, "hello"),
            Message(Role.ASSISTANT, "a", reasoning="think", reasoning_meta=meta),
            Message(Role.USER, "next"),
        ]
        collect(p, Request(model="m", messages=history))
        replayed = srv.requests[1].json["messages"][1]["content"][0]
    assert replayed == {"type": "thinking", "thinking": "think", "signature": "SIG9"}


# -- responses ----------------------------------------------------------------------


def test_responses_body_is_a_stateless_replay() -> None:
    req = Request(model="m", messages=conversation(), system="SYS", tools=TOOLS, max_tokens=50)
    body = responses_body(req, extra={"store": True, "truncation": "auto"})
    assert body["store"] is False and body["stream"] is True
    assert body["instructions"] == "SYS"
    assert body["tools"][0] == {
        "type": "function",
        "name": "read_file",
        "description": "Read a file.",
        "parameters": TOOLS[0].parameters,
    }
    assert body["max_output_tokens"] == 50 and body["truncation"] == "auto"
    assert "reasoning" not in body and "include" not in body
    assert body["input"] == [
        {"role": "user", "content": "fix the bug"},
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "ENC"},
        {"role": "assistant", "content": "Reading."},
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "read_file",
            "arguments": '{"path":"a.py"}',
        },
        {"type": "function_call", "call_id": "call_2", "name": "grep", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "contents"},
        {"type": "function_call_output", "call_id": "call_2", "output": "no match"},
        {"role": "user", "content": "and now?"},
    ]


def test_responses_effort_requests_summaries_and_encrypted_reasoning() -> None:
    req = Request(model="m", messages=[Message(Role.USER, "x")], effort="low")
    body = responses_body(req, extra={})
    assert body["reasoning"] == {"effort": "low", "summary": "auto"}
    assert body["include"] == ["reasoning.encrypted_content"]


def test_responses_encrypted_reasoning_roundtrip_over_the_wire() -> None:
    with FakeServer(
        "responses", [Turn(text="a", reasoning="r", encrypted="E1"), Turn(text="b")]
    ) as srv:
        p = provider("responses", srv.url)
        meta = collect(p)[-1].reasoning_meta
        assert meta["responses"]["items"][0]["encrypted_content"] == "E1"
        history = [
            Message(Role.USER, "hello"),
            Message(Role.ASSISTANT, "a", reasoning_meta=meta),
            Message(Role.USER, "next"),
        ]
        collect(p, Request(model="m", messages=history))
        items = srv.requests[1].json["input"]
    assert items[1]["type"] == "reasoning" and items[1]["encrypted_content"] == "E1"


def test_responses_incomplete_and_failed() -> None:
    with FakeServer(
        "responses", [Turn(text="cut short", finish_reason="max_output_tokens")]
    ) as srv:
        chunks = collect(provider("responses", srv.url))
    assert chunks[-1].finish_reason == "length"
    f = ResponsesFolder()
    failed = {
        "type": "response.failed",
        "response": {"status": "failed", "error": {"code": "server_error", "message": "oops"}},
    }
    with pytest.raises(ProviderStreamError, match="oops"):
        f.feed(ev(failed))


def test_responses_fold_arguments_done_is_authoritative() -> None:
    f = ResponsesFolder()
    add = {
        "type": "response.output_item.added",
        "output_index": 0,
        "item": {"type": "function_call", "id": "fc", "call_id": "c", "name": "n", "arguments": ""},
    }
    f.feed(ev(add))
    f.feed(ev({"type": "response.function_call_arguments.delta", "item_id": "fc", "delta": '{"a"'}))
    f.feed(
        ev(
            {
                "type": "response.function_call_arguments.done",
                "item_id": "fc",
                "output_index": 0,
                "arguments": '{"a":1}',
            }
        )
    )
    f.feed(ev({"type": "response.completed", "response": {"status": "completed"}}))
    out = f.finish()
    assert out[0].tool_call == ToolCall("c", "n", '{"a":1}')
    assert out[-1].finish_reason == "tool_calls"
