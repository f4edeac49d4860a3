"""The openai kind's fold and encoder on the dialects vendors really send (issue 33).

Pure folds of hand-written events (the whole-product replays are in
test_traffic_openai.py): finish reasons in one vocabulary, refusals, typed
content parts, reasoning tokens outside ``completion_tokens``, a tool call cut
by the output limit, and the Moonshot ``reasoning_content`` flag.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeServer, Fault
from provider_kit import collect, provider

from reasonix.config import load
from reasonix.config.presets import preset
from reasonix.errors import ProviderStreamError
from reasonix.provider.openai.fold import OpenAIFolder, parse_usage
from reasonix.provider.openai.wire import encode_body
from reasonix.provider.sse import ServerSentEvent
from reasonix.provider.types import FINISH_REASONS, Chunk, ChunkKind, Message, Request, Role
from reasonix.provider.types import ToolCall as Call


def ev(obj: Any) -> ServerSentEvent:
    return ServerSentEvent("message", obj if isinstance(obj, str) else json.dumps(obj))


def delta(d: dict[str, Any], finish: str | None = None) -> ServerSentEvent:
    return ev({"choices": [{"index": 0, "delta": d, "finish_reason": finish}]})


def fold(*events: ServerSentEvent) -> list[Chunk]:
    f = OpenAIFolder()
    out: list[Chunk] = []
    for e in events:
        out += f.feed(e)
    return out + f.finish()


def texts(chunks: list[Chunk], kind: ChunkKind = ChunkKind.TEXT) -> str:
    return "".join(c.text for c in chunks if c.kind is kind)


def done(chunks: list[Chunk]) -> Chunk:
    assert chunks[-1].kind is ChunkKind.DONE
    return chunks[-1]


@pytest.mark.parametrize(
    ("vendor", "reason", "detail"),
    [
        ("stop", "complete", ""),
        ("tool_calls", "complete", ""),  # no call arrived: the answer simply ended
        ("function_call", "complete", ""),
        ("length", "length", ""),
        ("model_length", "length", "model_length"),  # Mistral
        ("content_filter", "content_filter", ""),
        ("sensitive", "content_filter", "sensitive"),  # Moonshot
        ("error", "error", "error"),  # OpenRouter
        ("insufficient_system_resource", "error", "insufficient_system_resource"),  # DeepSeek
        ("something_new", "complete", "something_new"),
    ],
)
def test_finish_reasons_map_to_one_vocabulary(vendor: str, reason: str, detail: str) -> None:
    end = done(fold(delta({"content": "x"}, vendor)))
    assert end.finish_reason in FINISH_REASONS
    assert (end.finish_reason, end.detail) == (reason, detail)


def test_refusal_streams_as_text_and_ends_as_refusal() -> None:
    out = fold(
        delta({"role": "assistant", "content": None, "refusal": ""}),
        delta({"refusal": "I'm sorry, "}),
        delta({"refusal": "I can't help with that."}),
        delta({}, "stop"),
        ev("[DONE]"),
    )
    assert texts(out) == "I'm sorry, I can't help with that."
    assert done(out).finish_reason == "refusal"


def test_magistral_typed_parts_split_into_reasoning_and_text() -> None:
    thinking = {"type": "thinking", "thinking": [{"type": "text", "text": "Two plus two"}]}
    out = fold(
        delta({"role": "assistant", "content": [thinking]}),
        delta({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "."}]}]}),
        delta({"content": [{"type": "text", "text": "It is "}]}),
        delta({"content": "4."}),
        delta({"content": [{"type": "reference", "reference_ids": [1]}]}),  # no answer text
        delta({}, "stop"),
    )
    assert texts(out, ChunkKind.REASONING) == "Two plus two."
    assert texts(out) == "It is 4."
    assert done(out).finish_reason == "complete"


def test_refusal_part_and_reasoning_part() -> None:
    out = fold(
        delta({"content": [{"type": "reasoning", "reasoning": "policy says no"}]}),
        delta({"content": [{"type": "refusal", "refusal": "I can't do that."}]}),
        delta({}, "stop"),
    )
    assert texts(out, ChunkKind.REASONING) == "policy says no"
    assert texts(out) == "I can't do that."
    assert done(out).finish_reason == "refusal"


def test_a_whole_message_folds_like_deltas() -> None:
    message = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "look first"},
            {"type": "text", "text": "Reading."},
        ],
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}},
            {"id": "c2", "type": "function", "function": {"name": "ls", "arguments": '{"p":1}'}},
        ],
    }
    out = fold(ev({"choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]}))
    assert texts(out, ChunkKind.REASONING) == "look first"
    assert texts(out) == "Reading."
    calls = [c.tool_call for c in out if c.tool_call]
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("c1", "read", "{}"),
        ("c2", "ls", '{"p":1}'),
    ]
    assert done(out).finish_reason == "tool_calls"


def test_message_refusal_is_the_answer() -> None:
    message = {"role": "assistant", "content": None, "refusal": "No."}
    out = fold(ev({"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}))
    assert (texts(out), done(out).finish_reason) == ("No.", "refusal")


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        # xAI: completion_tokens leaves reasoning out; total_tokens says so
        (
            {
                "prompt_tokens": 288,
                "completion_tokens": 27,
                "total_tokens": 628,
                "prompt_tokens_details": {"cached_tokens": 287},
                "completion_tokens_details": {"reasoning_tokens": 313},
            },
            (288, 340, 287, 313),
        ),
        # OpenAI: reasoning is inside completion_tokens
        (
            {
                "prompt_tokens": 20,
                "completion_tokens": 300,
                "total_tokens": 320,
                "completion_tokens_details": {"reasoning_tokens": 256},
            },
            (20, 300, 0, 256),
        ),
        # no total, but more reasoning than completion: it cannot be inside it
        (
            {
                "prompt_tokens": 5,
                "completion_tokens": 1,
                "completion_tokens_details": {"reasoning_tokens": 290},
            },
            (5, 291, 0, 290),
        ),
        # DeepSeek cache counters, unchanged
        (
            {
                "prompt_tokens": 100,
                "completion_tokens": 40,
                "total_tokens": 140,
                "prompt_cache_hit_tokens": 64,
                "prompt_cache_miss_tokens": 36,
                "completion_tokens_details": {"reasoning_tokens": 30},
            },
            (100, 40, 64, 30),
        ),
    ],
)
def test_usage_counts_what_is_billed(usage: dict[str, Any], expected: tuple[int, ...]) -> None:
    u = parse_usage(usage)
    assert (u.input_tokens, u.output_tokens, u.cache_read_tokens, u.reasoning_tokens) == expected


def test_llama_cpp_timings_give_the_cache_figure() -> None:
    usage = {"completion_tokens": 18, "prompt_tokens": 197, "total_tokens": 215}
    out = fold(
        delta({"content": "hi"}, "stop"),
        ev({"choices": [], "usage": usage, "timings": {"cache_n": 161, "prompt_n": 36}}),
        ev("[DONE]"),
    )
    u = next(c.usage for c in out if c.usage)
    assert (u.input_tokens, u.output_tokens, u.cache_read_tokens) == (197, 18, 161)


def test_moonshot_usage_inside_the_choice() -> None:
    usage = {"prompt_tokens": 19, "completion_tokens": 5, "total_tokens": 24, "cached_tokens": 0}
    out = fold(
        ev({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop", "usage": usage}]})
    )
    u = next(c.usage for c in out if c.usage)
    assert (u.input_tokens, u.output_tokens) == (19, 5)


def test_a_call_cut_by_length_is_marked_and_kept_verbatim() -> None:
    first = {"index": 0, "id": "a", "function": {"name": "read", "arguments": '{"p": "x"}'}}
    cut = {"index": 1, "id": "b", "function": {"name": "write", "arguments": '{"p": "y", "t'}}
    out = fold(delta({"tool_calls": [first]}), delta({"tool_calls": [cut]}), delta({}, "length"))
    calls = [c.tool_call for c in out if c.tool_call]
    assert [(c.id, c.arguments, c.truncated) for c in calls] == [
        ("a", '{"p": "x"}', False),
        ("b", '{"p": "y", "t', True),
    ]
    assert done(out).finish_reason == "length"


def test_a_call_cut_before_any_argument_keeps_empty_text() -> None:
    cut = {"index": 0, "id": "a", "function": {"name": "read", "arguments": ""}}
    out = fold(delta({"tool_calls": [cut]}), delta({}, "length"))
    call = next(c.tool_call for c in out if c.tool_call)
    assert (call.arguments, call.truncated) == ("", True)


def test_a_complete_call_under_length_is_not_truncated() -> None:
    whole = {"index": 0, "id": "a", "function": {"name": "read", "arguments": '{"p": 1}'}}
    out = fold(delta({"tool_calls": [whole]}), delta({}, "length"))
    call = next(c.tool_call for c in out if c.tool_call)
    assert (call.arguments, call.truncated) == ('{"p": 1}', False)


def test_vllm_error_object_is_a_stream_error() -> None:
    with pytest.raises(ProviderStreamError, match="out of memory"):
        fold(delta({"content": "a"}), ev({"object": "error", "message": "CUDA out of memory"}))


def _assistant_with_call(reasoning: str = "") -> Request:
    call = Call("c1", "read", "{}")
    return Request(
        model="m",
        messages=[
            Message(Role.USER, "go"),
            Message(Role.ASSISTANT, "", [call], reasoning=reasoning),
            Message(Role.TOOL, "ok", tool_call_id="c1"),
            Message(Role.ASSISTANT, "plain answer"),
        ],
    )


def test_reasoning_content_on_tool_calls_flag() -> None:
    on = encode_body(_assistant_with_call(), extra={}, reasoning_on_tool_calls=True)["messages"]
    assert on[1]["reasoning_content"] == "" and on[1]["tool_calls"]
    assert "reasoning_content" not in on[3]  # only messages with tool calls
    off = encode_body(_assistant_with_call(), extra={})["messages"]
    assert "reasoning_content" not in off[1]  # DeepSeek and everyone else: unchanged
    kept = encode_body(_assistant_with_call("why"), extra={}, reasoning_on_tool_calls=True)
    assert kept["messages"][1]["reasoning_content"] == "why"


def test_moonshot_preset_and_config_key(tmp_path: Path) -> None:
    moonshot = preset("moonshot")
    assert moonshot is not None and moonshot.reasoning_content_on_tool_calls is True
    deepseek = preset("deepseek")
    assert deepseek is not None and deepseek.reasoning_content_on_tool_calls is False
    (tmp_path / "reasonix.toml").write_text(
        '[[providers]]\nname = "kimi-gw"\nkind = "openai"\nbase_url = "https://gw.example/v1"\n'
        'models = ["kimi-k2.5"]\nreasoning_content_on_tool_calls = true\n'
    )
    gw = load(tmp_path).provider("kimi-gw")
    assert gw is not None
    assert gw.reasoning_content_on_tool_calls is True


def test_a_whole_json_answer_instead_of_a_stream() -> None:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Hello there."},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12},
    }
    with FakeServer("openai", [Fault.status(200, body=json.dumps(body))]) as srv:
        out = collect(provider("openai", srv.url))
    assert texts(out) == "Hello there."
    assert done(out).finish_reason == "complete"
    assert next(c.usage for c in out if c.usage).output_tokens == 3
