"""Vendor-shaped chat-completions streams through the whole product (issue 33).

The ``openai`` kind talks to OpenAI, DeepSeek, OpenRouter, xAI, Mistral,
Qwen/DashScope, Moonshot, Ollama, vLLM and llama.cpp. Every stream below is
written by hand from the shape the vendor documents or publishes (``source``;
tests/provider/TRAFFIC_SOURCES.md lists them) and replayed through
``reasonix run --json -y``. Each case asserts the text shown, the tool calls
dispatched (through the next request's body), the usage and how the run ended.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import Fault, ToolSpec, Turn
from openai_events import (
    DASHSCOPE,
    DEEPSEEK,
    DONE,
    LLAMA_CPP,
    MISTRAL,
    MOONSHOT,
    OLLAMA,
    OPENAI,
    OPENROUTER,
    VLLM,
    XAI,
    all_of,
    call,
    chunk,
    failed_with,
    later,
    never_replays,
    reasoning_replayed,
    replays_calls,
    usage_chunk,
)
from traffic_kit import Case, replay, sse, verify

# -- the table -----------------------------------------------------------------

OPENAI_STREAMING = "https://platform.openai.com/docs/api-reference/chat-streaming/streaming"
OPENAI_TOOLS = "https://platform.openai.com/docs/guides/function-calling#streaming"
LS = '{"path": "."}'
GLOB = '{"pattern": "*.toml"}'

CASES: list[Case] = [
    Case(
        name="openai_plain_text",
        kind="openai",
        source=OPENAI_STREAMING,
        body=sse(
            chunk(OPENAI, {"role": "assistant", "content": "", "refusal": None}, logprobs=None),
            chunk(OPENAI, {"content": "Hello"}, logprobs=None),
            chunk(OPENAI, {"content": "! How can I help"}, logprobs=None),
            chunk(OPENAI, {"content": " you today?"}, logprobs=None),
            chunk(OPENAI, {}, "stop", logprobs=None),
            usage_chunk(
                OPENAI,
                {
                    "prompt_tokens": 19,
                    "completion_tokens": 10,
                    "total_tokens": 29,
                    "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
                    "completion_tokens_details": {
                        "reasoning_tokens": 0,
                        "audio_tokens": 0,
                        "accepted_prediction_tokens": 0,
                        "rejected_prediction_tokens": 0,
                    },
                },
            ),
            done=True,
        ),
        text="Hello! How can I help you today?",
        stop_reason="complete",
        subtype="success",
        usage={"input_tokens": 19, "output_tokens": 10, "cache_read_input_tokens": 0},
        requests=1,
    ),
    Case(
        name="openai_usage_only_final_chunk_with_cache",
        kind="openai",
        source=OPENAI_STREAMING + " (stream_options.include_usage: a last chunk with "
        "choices [] and usage; prompt_tokens_details.cached_tokens per "
        "https://platform.openai.com/docs/guides/prompt-caching)",
        body=sse(
            {**chunk(OPENAI, {"role": "assistant", "content": ""}), "usage": None},
            {**chunk(OPENAI, {"content": "Cached."}), "usage": None, "obfuscation": "Xy"},
            {**chunk(OPENAI, {}, "stop"), "usage": None},
            usage_chunk(
                OPENAI,
                {
                    "prompt_tokens": 2006,
                    "completion_tokens": 300,
                    "total_tokens": 2306,
                    "prompt_tokens_details": {"cached_tokens": 1920},
                    "completion_tokens_details": {"reasoning_tokens": 0},
                },
                obfuscation="aB3",
            ),
            done=True,
        ),
        text="Cached.",
        stop_reason="complete",
        usage={"input_tokens": 86, "output_tokens": 300, "cache_read_input_tokens": 1920},
    ),
    Case(
        name="openai_tool_call_round_trip",
        kind="openai",
        source=OPENAI_TOOLS,
        body=sse(
            chunk(
                OPENAI,
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [call(0, "call_DdmO9pD3xa9XTPNJ32zg2hcA", "ls")],
                    "refusal": None,
                },
            ),
            chunk(OPENAI, {"tool_calls": [call(0, args='{"')]}),
            chunk(OPENAI, {"tool_calls": [call(0, args="path")]}),
            chunk(OPENAI, {"tool_calls": [call(0, args='": ".')]}),
            chunk(OPENAI, {"tool_calls": [call(0, args='"}')]}),
            chunk(OPENAI, {}, "tool_calls"),
            usage_chunk(OPENAI, {"prompt_tokens": 82, "completion_tokens": 17, "total_tokens": 99}),
            done=True,
        ),
        then=[DONE],
        text="done",
        stop_reason="complete",
        usage={"input_tokens": 182, "output_tokens": 37},
        requests=2,
        check=replays_calls(("call_DdmO9pD3xa9XTPNJ32zg2hcA", "ls", LS)),
    ),
    Case(
        name="openai_parallel_tool_calls",
        kind="openai",
        source=OPENAI_TOOLS + " (parallel function calling: one index per call)",
        body=sse(
            chunk(OPENAI, {"role": "assistant", "content": None}),
            chunk(OPENAI, {"tool_calls": [call(0, "call_62136354", "ls", "")]}),
            chunk(OPENAI, {"tool_calls": [call(0, args='{"path"')]}),
            chunk(OPENAI, {"tool_calls": [call(0, args=': "."}')]}),
            chunk(OPENAI, {"tool_calls": [call(1, "call_62136355", "glob", "")]}),
            chunk(OPENAI, {"tool_calls": [call(1, args='{"pattern": ')]}),
            chunk(OPENAI, {"tool_calls": [call(1, args='"*.toml"}')]}),
            chunk(OPENAI, {}, "tool_calls"),
            usage_chunk(
                OPENAI, {"prompt_tokens": 90, "completion_tokens": 40, "total_tokens": 130}
            ),
            done=True,
        ),
        then=[DONE],
        text="done",
        stop_reason="complete",
        usage={"input_tokens": 190, "output_tokens": 60},
        check=replays_calls(("call_62136354", "ls", LS), ("call_62136355", "glob", GLOB)),
    ),
    Case(
        name="openai_refusal",
        kind="openai",
        source="https://platform.openai.com/docs/guides/structured-outputs#refusals "
        "(delta.refusal streams the refusal; finish_reason stop)",
        body=sse(
            chunk(OPENAI, {"role": "assistant", "content": None, "refusal": ""}),
            chunk(OPENAI, {"refusal": "I'm sorry, "}),
            chunk(OPENAI, {"refusal": "I can't assist with that request."}),
            chunk(OPENAI, {}, "stop"),
            usage_chunk(OPENAI, {"prompt_tokens": 30, "completion_tokens": 10, "total_tokens": 40}),
            done=True,
        ),
        text="I'm sorry, I can't assist with that request.",
        stop_reason="refusal",
        subtype="refused",
        requests=1,  # no retry
        usage={"input_tokens": 30, "output_tokens": 10},
    ),
    Case(
        name="openai_length_cut_text",
        kind="openai",
        source=OPENAI_STREAMING + " (finish_reason length: max_completion_tokens reached)",
        body=sse(
            chunk(OPENAI, {"role": "assistant", "content": ""}),
            chunk(OPENAI, {"content": "The first three primes are 2, 3"}),
            chunk(OPENAI, {}, "length"),
            usage_chunk(OPENAI, {"prompt_tokens": 25, "completion_tokens": 16, "total_tokens": 41}),
            done=True,
        ),
        contains=("The first three primes are 2, 3",),
        stop_reason="max_tokens",
        subtype="truncated",
    ),
    Case(
        name="openai_length_cut_inside_a_tool_call",
        kind="openai",
        source=OPENAI_TOOLS + " (finish_reason length while arguments stream)",
        body=sse(
            chunk(OPENAI, {"role": "assistant", "content": None}),
            chunk(OPENAI, {"tool_calls": [call(0, "call_cut01", "write_file", "")]}),
            chunk(OPENAI, {"tool_calls": [call(0, args='{"path": "cut.txt", "con')]}),
            chunk(OPENAI, {"tool_calls": [call(0, args='tent": "hel')]}),
            chunk(OPENAI, {}, "length"),
            usage_chunk(OPENAI, {"prompt_tokens": 60, "completion_tokens": 16, "total_tokens": 76}),
            done=True,
        ),
        stop_reason="max_tokens",
        subtype="truncated",
        check=never_replays('{"path": "cut.txt", "content": "hel', "cut.txt"),
    ),
    Case(
        name="openai_content_filter",
        kind="openai",
        source="https://learn.microsoft.com/azure/ai-services/openai/concepts/content-filter "
        "(finish_reason content_filter)",
        body=sse(
            chunk(OPENAI, {"role": "assistant", "content": ""}),
            chunk(OPENAI, {"content": "Here is how"}),
            chunk(OPENAI, {}, "content_filter"),
            done=True,
        ),
        contains=("Here is how",),
        stop_reason="content_filter",
        subtype="filtered",
    ),
    Case(
        name="openai_logprobs_chunks",
        kind="openai",
        source="https://platform.openai.com/docs/api-reference/chat-streaming/streaming"
        " (choices[].logprobs.content[] with token, logprob, bytes, top_logprobs)",
        body=sse(
            chunk(OPENAI, {"role": "assistant", "content": ""}, logprobs={"content": []}),
            chunk(
                OPENAI,
                {"content": "Yes"},
                logprobs={
                    "content": [
                        {
                            "token": "Yes",
                            "logprob": -0.0001,
                            "bytes": [89, 101, 115],
                            "top_logprobs": [
                                {"token": "Yes", "logprob": -0.0001, "bytes": [89, 101, 115]},
                                {"token": "No", "logprob": -9.2, "bytes": [78, 111]},
                            ],
                        }
                    ],
                    "refusal": None,
                },
            ),
            chunk(
                OPENAI,
                {"content": "."},
                logprobs={
                    "content": [{"token": ".", "logprob": -0.02, "bytes": [46], "top_logprobs": []}]
                },
            ),
            chunk(OPENAI, {}, "stop", logprobs=None),
            usage_chunk(OPENAI, {"prompt_tokens": 12, "completion_tokens": 2, "total_tokens": 14}),
            done=True,
        ),
        text="Yes.",
        stop_reason="complete",
        usage={"input_tokens": 12, "output_tokens": 2},
    ),
    Case(
        name="deepseek_reasoner_cache_hit",
        kind="openai",
        model="deepseek-reasoner",
        source="https://api-docs.deepseek.com/guides/reasoning_model (delta.reasoning_content) and "
        "https://api-docs.deepseek.com/guides/kv_cache (prompt_cache_hit_tokens / miss)",
        body=sse(
            chunk(DEEPSEEK, {"role": "assistant", "content": None, "reasoning_content": ""}),
            chunk(DEEPSEEK, {"content": None, "reasoning_content": "9.11 vs 9.8: "}),
            chunk(DEEPSEEK, {"content": None, "reasoning_content": "compare tenths."}),
            chunk(DEEPSEEK, {"content": "9.8 is greater.", "reasoning_content": None}),
            {
                **chunk(DEEPSEEK, {"content": "", "reasoning_content": None}, "stop"),
                "usage": {
                    "prompt_tokens": 1300,
                    "completion_tokens": 210,
                    "total_tokens": 1510,
                    "prompt_tokens_details": {"cached_tokens": 1280},
                    "completion_tokens_details": {"reasoning_tokens": 196},
                    "prompt_cache_hit_tokens": 1280,
                    "prompt_cache_miss_tokens": 20,
                },
            },
            done=True,
        ),
        text="9.8 is greater.",
        absent=("compare tenths",),
        stop_reason="complete",
        usage={"input_tokens": 20, "output_tokens": 210, "cache_read_input_tokens": 1280},
    ),
    Case(
        name="deepseek_reasoner_tool_loop_replays_reasoning",
        kind="openai",
        model="deepseek-reasoner",
        source="https://api-docs.deepseek.com/guides/thinking_mode#tool-calls "
        "(reasoning_content sent back on the assistant tool-call message)",
        body=sse(
            chunk(DEEPSEEK, {"role": "assistant", "content": None, "reasoning_content": ""}),
            chunk(DEEPSEEK, {"reasoning_content": "List the folder first."}),
            chunk(
                DEEPSEEK,
                {"tool_calls": [call(0, "call_00_oXz1Y0kFzRr1uHq2m3", "ls", '{"path":')]},
            ),
            chunk(DEEPSEEK, {"tool_calls": [call(0, args=' "."}')]}),
            {
                **chunk(DEEPSEEK, {"content": ""}, "tool_calls"),
                "usage": {
                    "prompt_tokens": 400,
                    "completion_tokens": 30,
                    "total_tokens": 430,
                    "prompt_cache_hit_tokens": 384,
                    "prompt_cache_miss_tokens": 16,
                },
            },
            done=True,
        ),
        then=[DONE],
        text="done",
        usage={"input_tokens": 116, "output_tokens": 50, "cache_read_input_tokens": 384},
        check=all_of(
            replays_calls(("call_00_oXz1Y0kFzRr1uHq2m3", "ls", LS)),
            reasoning_replayed("List the folder first."),
        ),
    ),
    Case(
        name="openrouter_reasoning_deltas",
        kind="openai",
        model="deepseek/deepseek-r1",
        source="https://openrouter.ai/docs/use-cases/reasoning-tokens (delta.reasoning, "
        "reasoning_details) and https://openrouter.ai/docs/api-reference/streaming "
        "(': OPENROUTER PROCESSING' comments)",
        body=sse(
            ": OPENROUTER PROCESSING",
            chunk(OPENROUTER, {"role": "assistant", "content": "", "reasoning": None}),
            chunk(
                OPENROUTER,
                {
                    "role": "assistant",
                    "content": "",
                    "reasoning": "Simple greeting.",
                    "reasoning_details": [
                        {
                            "type": "reasoning.text",
                            "text": "Simple greeting.",
                            "format": "unknown",
                            "index": 0,
                        }
                    ],
                },
                native_finish_reason=None,
                logprobs=None,
            ),
            ": OPENROUTER PROCESSING",
            chunk(
                OPENROUTER, {"role": "assistant", "content": "Hi there!"}, native_finish_reason=None
            ),
            chunk(
                OPENROUTER,
                {"role": "assistant", "content": ""},
                "stop",
                native_finish_reason="stop",
            ),
            usage_chunk(
                OPENROUTER,
                {
                    "prompt_tokens": 11,
                    "completion_tokens": 57,
                    "total_tokens": 68,
                    "cost": 0.000129,
                    "is_byok": False,
                    "prompt_tokens_details": {"cached_tokens": 0},
                    "completion_tokens_details": {"reasoning_tokens": 49},
                },
            ),
            done=True,
        ),
        text="Hi there!",
        absent=("Simple greeting",),
        stop_reason="complete",
        usage={"input_tokens": 11, "output_tokens": 57},
    ),
    Case(
        name="openrouter_error_inside_a_200_stream",
        kind="openai",
        model="openai/gpt-4o",
        source="https://openrouter.ai/docs/api-reference/errors (Streaming Error Formats: an "
        "error object with finish_reason error after the answer began)",
        body=sse(
            chunk(OPENROUTER, {"role": "assistant", "content": "The answer "}),
            {
                **chunk(OPENROUTER, {"content": ""}, "error", native_finish_reason="error"),
                "error": {"code": "server_error", "message": "Provider disconnected unexpectedly"},
            },
            done=True,
        ),
        then=[],
        subtype="error_during_execution",
        check=lambda got: failed_with(got, "Provider disconnected unexpectedly"),
    ),
    Case(
        name="xai_reasoning_tokens_outside_completion_tokens",
        kind="openai",
        model="grok-3-mini",
        source="https://docs.x.ai/docs/guides/reasoning (reasoning_content deltas; "
        "usage.completion_tokens_details.reasoning_tokens, which completion_tokens excludes: "
        "prompt + completion + reasoning = total_tokens)",
        body=sse(
            chunk(XAI, {"role": "assistant", "content": ""}),
            chunk(XAI, {"reasoning_content": "User says hi; "}),
            chunk(XAI, {"reasoning_content": "answer briefly."}),
            chunk(XAI, {"content": "Hi!"}),
            {
                **chunk(XAI, {}, "stop"),
                "usage": {
                    "prompt_tokens": 288,
                    "completion_tokens": 2,
                    "total_tokens": 579,
                    "prompt_tokens_details": {
                        "text_tokens": 288,
                        "audio_tokens": 0,
                        "image_tokens": 0,
                        "cached_tokens": 256,
                    },
                    "completion_tokens_details": {
                        "reasoning_tokens": 289,
                        "audio_tokens": 0,
                        "accepted_prediction_tokens": 0,
                        "rejected_prediction_tokens": 0,
                    },
                    "num_sources_used": 0,
                },
            },
            done=True,
        ),
        text="Hi!",
        stop_reason="complete",
        usage={"input_tokens": 32, "output_tokens": 291, "cache_read_input_tokens": 256},
    ),
    Case(
        name="xai_tool_call_in_one_chunk",
        kind="openai",
        model="grok-4-fast",
        source="https://docs.x.ai/docs/guides/function-calling (streaming returns each "
        "function call whole in one chunk)",
        body=sse(
            chunk(
                {**XAI, "model": "grok-4-fast"},
                {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "id": "call_54742461",
                            "function": {"name": "glob", "arguments": GLOB},
                            "index": 0,
                            "type": "function",
                        }
                    ],
                },
            ),
            {
                **chunk({**XAI, "model": "grok-4-fast"}, {}, "tool_calls"),
                "usage": {"prompt_tokens": 500, "completion_tokens": 25, "total_tokens": 525},
            },
            done=True,
        ),
        then=[DONE],
        text="done",
        usage={"output_tokens": 45},
        check=replays_calls(("call_54742461", "glob", GLOB)),
    ),
    Case(
        name="mistral_magistral_list_content",
        kind="openai",
        model="magistral-medium-2509",
        source="https://docs.mistral.ai/capabilities/reasoning (content as a list of "
        "ThinkChunk {type: thinking, thinking: [TextChunk]} and TextChunk)",
        body=sse(
            chunk(MISTRAL, {"role": "assistant", "content": ""}),
            chunk(
                MISTRAL,
                {"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "2+2 "}]}]},
            ),
            chunk(
                MISTRAL,
                {
                    "content": [
                        {"type": "thinking", "thinking": [{"type": "text", "text": "is 4."}]}
                    ]
                },
            ),
            chunk(MISTRAL, {"content": [{"type": "text", "text": "The answer "}]}),
            chunk(MISTRAL, {"content": [{"type": "text", "text": "is 4."}]}),
            {
                **chunk(MISTRAL, {"content": ""}, "stop"),
                "usage": {"prompt_tokens": 40, "total_tokens": 75, "completion_tokens": 35},
            },
            done=True,
        ),
        text="The answer is 4.",
        absent=("2+2",),
        stop_reason="complete",
        usage={"input_tokens": 40, "output_tokens": 35},
    ),
    Case(
        name="mistral_tool_call",
        kind="openai",
        model="mistral-medium-latest",
        source="https://docs.mistral.ai/capabilities/function_calling (nine-character call "
        "ids, arguments whole)",
        body=sse(
            chunk(
                {**MISTRAL, "model": "mistral-medium-latest"}, {"role": "assistant", "content": ""}
            ),
            chunk(
                {**MISTRAL, "model": "mistral-medium-latest"},
                {
                    "content": "",
                    "tool_calls": [
                        {"id": "D681PevKs", "function": {"name": "ls", "arguments": LS}, "index": 0}
                    ],
                },
                "tool_calls",
            ),
            {
                **chunk({**MISTRAL, "model": "mistral-medium-latest"}, {"content": ""}),
                "choices": [],
                "usage": {"prompt_tokens": 70, "total_tokens": 90, "completion_tokens": 20},
            },
            done=True,
        ),
        then=[DONE],
        text="done",
        usage={"input_tokens": 170, "output_tokens": 40},
        check=replays_calls(("D681PevKs", "ls", LS)),
    ),
    Case(
        name="qwen_dashscope_text",
        kind="openai",
        model="qwen-plus",
        source="https://help.aliyun.com/zh/model-studio/developer-reference/"
        "use-qwen-by-calling-api (compatible-mode stream; last chunk choices [] with usage)",
        body=sse(
            chunk(DASHSCOPE, {"content": "", "role": "assistant"}, logprobs=None),
            chunk(DASHSCOPE, {"content": "我是"}, logprobs=None),
            chunk(DASHSCOPE, {"content": "通义千问。"}, logprobs=None),
            chunk(DASHSCOPE, {"content": ""}, "stop", logprobs=None),
            usage_chunk(
                DASHSCOPE,
                {
                    "prompt_tokens": 22,
                    "completion_tokens": 5,
                    "total_tokens": 27,
                    "prompt_tokens_details": {"cached_tokens": 0},
                },
            ),
            done=True,
        ),
        text="我是通义千问。",
        stop_reason="complete",
        usage={"input_tokens": 22, "output_tokens": 5},
    ),
    Case(
        name="qwen_dashscope_tool_loop",
        kind="openai",
        model="qwen-plus",
        source="https://help.aliyun.com/zh/model-studio/qwen-function-calling (streamed "
        "tool_calls: the first delta has id and name, later ones an empty id and argument text)",
        body=sse(
            chunk(
                DASHSCOPE,
                {
                    "content": None,
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_8f08d2b0fc0c4d8fab7123",
                            "type": "function",
                            "function": {"name": "glob", "arguments": ""},
                        }
                    ],
                },
            ),
            chunk(
                DASHSCOPE,
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "",
                            "type": "function",
                            "function": {"arguments": '{"pattern": '},
                        }
                    ]
                },
            ),
            chunk(
                DASHSCOPE,
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "",
                            "type": "function",
                            "function": {"arguments": '"*.toml"}'},
                        }
                    ]
                },
            ),
            chunk(DASHSCOPE, {"content": None}, "tool_calls"),
            usage_chunk(
                DASHSCOPE, {"prompt_tokens": 250, "completion_tokens": 21, "total_tokens": 271}
            ),
            done=True,
        ),
        then=[
            Turn.tools([ToolSpec("ls", LS, id="call_second")], usage={"input_tokens": 300}),
            DONE,
        ],
        text="done",
        requests=3,
        usage={"output_tokens": 61},
        check=all_of(
            replays_calls(("call_8f08d2b0fc0c4d8fab7123", "glob", GLOB)),
            later(
                replays_calls(
                    ("call_8f08d2b0fc0c4d8fab7123", "glob", GLOB), ("call_second", "ls", LS)
                )
            ),
        ),
    ),
    Case(
        name="moonshot_kimi_tool_call_gets_reasoning_content",
        kind="openai",
        model="kimi-k2.5",
        toml="reasoning_content_on_tool_calls = true\n",
        source="https://platform.moonshot.ai/docs/guide/use-kimi-k2-thinking-model (keep "
        "reasoning_content on assistant tool-call messages; usage inside the choice)",
        body=sse(
            chunk(MOONSHOT, {"role": "assistant", "content": ""}),
            chunk(MOONSHOT, {"tool_calls": [call(0, "ls:0", "ls", LS)]}),
            chunk(
                MOONSHOT,
                {},
                "tool_calls",
                usage={
                    "prompt_tokens": 120,
                    "completion_tokens": 12,
                    "total_tokens": 132,
                    "cached_tokens": 0,
                },
            ),
            done=True,
        ),
        then=[DONE],
        text="done",
        usage={"input_tokens": 220, "output_tokens": 32},
        check=all_of(replays_calls(("ls:0", "ls", LS)), reasoning_replayed("")),
    ),
    Case(
        name="ollama_reasoning_and_text",
        kind="openai",
        model="qwen3:8b",
        source="https://github.com/ollama/ollama/blob/main/docs/openai.md (OpenAI-compatible "
        "/v1/chat/completions; thinking models stream delta.reasoning)",
        body=sse(
            chunk(OLLAMA, {"role": "assistant", "content": "", "reasoning": "Greet back."}),
            chunk(OLLAMA, {"role": "assistant", "content": "Hello"}),
            chunk(OLLAMA, {"role": "assistant", "content": "!"}),
            chunk(OLLAMA, {"role": "assistant", "content": ""}, "stop"),
            usage_chunk(OLLAMA, {"prompt_tokens": 14, "completion_tokens": 9, "total_tokens": 23}),
            done=True,
        ),
        text="Hello!",
        absent=("Greet",),
        stop_reason="complete",
        usage={"input_tokens": 14, "output_tokens": 9},
    ),
    Case(
        name="ollama_tool_call_with_finish_stop",
        kind="openai",
        model="qwen3:8b",
        source="https://github.com/ollama/ollama/blob/main/docs/openai.md (tool calls arrive "
        "whole; older servers end them with finish_reason stop)",
        body=sse(
            chunk(
                OLLAMA,
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {
                            "id": "call_m1xq0r2b",
                            "index": 0,
                            "type": "function",
                            "function": {"name": "ls", "arguments": LS},
                        }
                    ],
                },
            ),
            chunk(OLLAMA, {"role": "assistant", "content": ""}, "stop"),
            usage_chunk(
                OLLAMA, {"prompt_tokens": 150, "completion_tokens": 18, "total_tokens": 168}
            ),
            done=True,
        ),
        then=[DONE],
        text="done",
        check=replays_calls(("call_m1xq0r2b", "ls", LS)),
    ),
    Case(
        name="vllm_reasoning_content",
        kind="openai",
        model="Qwen/QwQ-32B",
        source="https://docs.vllm.ai/en/latest/features/reasoning_outputs.html (streamed "
        "delta.reasoning_content, then content)",
        body=sse(
            chunk(VLLM, {"role": "assistant", "content": ""}, logprobs=None),
            chunk(VLLM, {"reasoning_content": "Paris is the capital."}, logprobs=None),
            chunk(VLLM, {"content": "Paris."}, logprobs=None),
            chunk(VLLM, {"content": ""}, "stop", logprobs=None, stop_reason=None),
            usage_chunk(VLLM, {"prompt_tokens": 17, "total_tokens": 40, "completion_tokens": 23}),
            done=True,
        ),
        text="Paris.",
        absent=("capital",),
        stop_reason="complete",
        usage={"input_tokens": 17, "output_tokens": 23},
    ),
    Case(
        name="llama_cpp_timings",
        kind="openai",
        model="gpt-oss-20b",
        source="https://github.com/ggml-org/llama.cpp/tree/master/tools/server (stream chunks; "
        "the last carries usage and timings: cache_n prompt tokens reused from the cache)",
        body=sse(
            chunk(LLAMA_CPP, {"role": "assistant", "content": None}),
            chunk(LLAMA_CPP, {"reasoning_content": "Say hi."}),
            chunk(LLAMA_CPP, {"content": "Hi"}),
            chunk(LLAMA_CPP, {"content": "."}),
            chunk(LLAMA_CPP, {}, "stop"),
            usage_chunk(
                LLAMA_CPP,
                {"completion_tokens": 18, "prompt_tokens": 197, "total_tokens": 215},
                timings={
                    "cache_n": 161,
                    "prompt_n": 36,
                    "prompt_ms": 79.751,
                    "prompt_per_token_ms": 2.215,
                    "prompt_per_second": 451.4,
                    "predicted_n": 18,
                    "predicted_ms": 139.164,
                    "predicted_per_token_ms": 7.731,
                    "predicted_per_second": 129.34,
                },
            ),
            done=True,
        ),
        text="Hi.",
        stop_reason="complete",
        usage={"input_tokens": 36, "output_tokens": 18, "cache_read_input_tokens": 161},
    ),
    Case(
        name="json_body_instead_of_a_stream",
        kind="openai",
        source="https://platform.openai.com/docs/api-reference/chat/object (a whole "
        "chat.completion, as a server that ignores stream: true answers)",
        body=sse(
            chunk(OPENAI, {"role": "assistant", "content": None}),
            chunk(OPENAI, {"tool_calls": [call(0, "call_first", "ls", LS)]}),
            chunk(OPENAI, {}, "tool_calls"),
            done=True,
        ),
        then=[
            Fault.status(
                200,
                body=json.dumps(
                    {
                        **OPENAI,
                        "object": "chat.completion",
                        "choices": [
                            {
                                "index": 0,
                                "message": {
                                    "role": "assistant",
                                    "content": "Listed.",
                                    "refusal": None,
                                },
                                "logprobs": None,
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {"prompt_tokens": 50, "completion_tokens": 3, "total_tokens": 53},
                    }
                ),
            )
        ],
        text="Listed.",
        stop_reason="complete",
        usage={"output_tokens": 3},
        requests=2,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_openai_traffic(
    case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    verify(case, replay(case, tmp_path, capsys, monkeypatch))


def test_table_is_large_and_sourced() -> None:
    assert len(CASES) >= 18
    assert len({c.name for c in CASES}) == len(CASES)
    assert all(c.kind == "openai" and c.source.startswith("https://") for c in CASES)
