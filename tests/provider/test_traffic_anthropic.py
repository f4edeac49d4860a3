"""Anthropic Messages streams, shaped as the vendor documents them, through ``run --json``.

Every fixture is written by hand from the shape named in its ``source`` (the
streaming-messages page of docs.anthropic.com and the types of
anthropics/anthropic-sdk-python); tests/provider/TRAFFIC_SOURCES.md lists them.
"""

from __future__ import annotations

from typing import Any

import pytest
from anthropic_events import (
    CITATION,
    MCP_RESULT,
    MCP_USE,
    PING,
    REDACTED,
    SEARCH_RESULT,
    SIG,
    STOP,
    THOUGHT,
    assistant,
    block,
    end,
    results,
    start,
    stream,
    t,
    text,
    tool_use,
)
from traffic_kit import Case, Replayed, replay, verify

DOCS = "https://docs.anthropic.com/en/docs/build-with-claude/streaming"
SDK = "anthropics/anthropic-sdk-python src/anthropic/types/"


# -- what the next request must carry --------------------------------------------------------


def _thinking_replayed(got: Replayed) -> None:
    blocks = assistant(got)
    assert blocks[0] == {"type": "thinking", "thinking": THOUGHT, "signature": SIG}
    assert [b["type"] for b in blocks] == ["thinking", "text", "tool_use"]
    assert blocks[1]["text"] == "I'll list the folder first."


def _tool_input_exact(got: Replayed) -> None:
    use = assistant(got)[-1]
    assert use == {
        "type": "tool_use",
        "id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
        "name": "read_file",
        "input": {"path": "notes.txt", "offset": 2, "limit": 40},
    }
    assert [r["tool_use_id"] for r in results(got)] == ["toolu_01T1x1fJ34qAmk2tNTrN7Up6"]


def _parallel_in_order(got: Replayed) -> None:
    uses = [b for b in assistant(got) if b["type"] == "tool_use"]
    assert [(u["id"], u["name"], u["input"]) for u in uses] == [
        ("toolu_01A", "ls", {"path": "."}),
        ("toolu_01B", "glob", {"pattern": "**/*.py"}),
    ]
    assert [r["tool_use_id"] for r in results(got)] == ["toolu_01A", "toolu_01B"]


def _search_blocks_in_order(got: Replayed) -> None:
    blocks = assistant(got)
    assert [b["type"] for b in blocks] == [
        "text",
        "server_tool_use",
        "web_search_tool_result",
        "text",
        "text",
        "text",
        "tool_use",
    ]
    assert blocks[0]["text"] == "I'll check the current weather in New York City for you."
    assert blocks[1]["input"] == {"query": "weather NYC today"}
    assert blocks[2]["content"][0]["encrypted_content"] == "Ev0DCioIAxgCIiQ3NmU4ZmI4OC1k..."
    assert [b["text"] for b in blocks[3:6]] == [
        "Based on the search results, ",
        "it is 72°F and sunny in Manhattan",
        " this afternoon.",
    ]


def _cut_call_not_run(got: Replayed) -> None:
    blocks = assistant(got)
    assert [b["type"] for b in blocks] == ["text", "tool_use"]
    assert blocks[1] == {"type": "tool_use", "id": "toolu_01OK", "name": "ls", "input": {}}
    assert [r["tool_use_id"] for r in results(got)] == ["toolu_01OK"]
    assert "toolu_01CUT" not in str(got.bodies[1:])  # neither replayed nor answered


def _texts_replayed_apart(got: Replayed) -> None:
    blocks = assistant(got)
    assert blocks[:2] == [
        {"type": "text", "text": "The file list is below."},
        {"type": "text", "text": "I will read the notes next."},
    ]


def _redacted_replayed(got: Replayed) -> None:
    blocks = assistant(got)
    assert blocks[:2] == [
        {"type": "thinking", "thinking": "Checking the folder.", "signature": SIG},
        {"type": "redacted_thinking", "data": REDACTED},
    ]
    assert blocks[2]["type"] == "tool_use"


def _transient(got: Replayed) -> None:
    assert got.result["is_error"] is True
    assert got.result.get("error", {}).get("kind") == "provider.transient"
    assert "Overloaded" in got.result["error"]["message"]


def _api_error(got: Replayed) -> None:
    assert got.result["is_error"] is True and got.result["subtype"] != "success"
    assert got.result.get("error", {}).get("kind") == "provider.transient"
    assert "Internal server error" in got.result["error"]["message"]


WEB = "https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/web-search-tool"

CASES: list[Any] = [
    Case(
        "plain_text",
        "anthropic",
        stream(start(), text(0, "Hello", "!"), PING, end("end_turn"), STOP),
        f"{DOCS} (Basic streaming request)",
        text="Hello!",
        stop_reason="complete",
        subtype="success",
        usage={"input_tokens": 25, "output_tokens": 15},
        requests=1,
    ),
    Case(
        "thinking_and_text_with_signature",
        "anthropic",
        stream(
            start(input_tokens=90, output_tokens=1),
            block(
                0,
                {"type": "thinking", "thinking": ""},
                {"type": "thinking_delta", "thinking": THOUGHT[:27]},
                {"type": "thinking_delta", "thinking": THOUGHT[27:]},
                {"type": "signature_delta", "signature": SIG},
            ),
            text(1, "I'll list ", "the folder first."),
            tool_use(2, "toolu_01Th", "ls", '{"path": "."}'),
            end("tool_use", 60),
            STOP,
        ),
        f"{DOCS} (Streaming request with extended thinking; thinking_delta, signature_delta)",
        text="done",
        absent=("The user wants",),
        check=_thinking_replayed,
    ),
    Case(
        "tool_use_input_replayed_exactly",
        "anthropic",
        stream(
            start(input_tokens=472, output_tokens=2),
            text(0, "Okay", ",", " let's", " read", " the", " notes", ":"),
            PING,
            tool_use(
                1,
                "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
                "read_file",
                '{"path":',
                ' "notes',
                '.txt"',
                ', "offset": 2, ',
                '"limit": 40}',
            ),
            end("tool_use", 89),
            STOP,
        ),
        f"{DOCS} (Streaming request with tool use; input_json_delta)",
        text="done",
        requests=2,
        check=_tool_input_exact,
    ),
    Case(
        "parallel_tool_use",
        "anthropic",
        stream(
            start(input_tokens=510, output_tokens=2),
            text(0, "Let me look at both."),
            tool_use(1, "toolu_01A", "ls", '{"path"', ': "."}'),
            tool_use(2, "toolu_01B", "glob", '{"pattern": ', '"**/*.py"}'),
            end("tool_use", 120),
            STOP,
        ),
        "https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use "
        "(parallel tool use: several tool_use blocks, one message of tool_result blocks)",
        text="done",
        requests=2,
        check=_parallel_in_order,
    ),
    Case(
        "web_search_server_tool_blocks",
        "anthropic",
        stream(
            start(input_tokens=2679, cache_creation_input_tokens=0, cache_read_input_tokens=0),
            text(0, "I'll check", " the current weather in New York City for you", "."),
            block(
                1,
                {
                    "type": "server_tool_use",
                    "id": "srvtoolu_014hJH82Qum7Td6UV8gDXThB",
                    "name": "web_search",
                    "input": {},
                },
                *(
                    {"type": "input_json_delta", "partial_json": p}
                    for p in ("", '{"query', '":', ' "weather', " NY", "C to", 'day"}')
                ),
            ),
            block(2, SEARCH_RESULT),
            text(3, "Based on the search results, "),
            block(
                4, {"type": "text", "text": ""}, CITATION, t("it is 72°F and sunny in Manhattan")
            ),
            text(5, " this afternoon."),
            tool_use(6, "toolu_01Ws", "ls", '{"path": "."}'),
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                "usage": {
                    "input_tokens": 10682,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                    "output_tokens": 510,
                    "server_tool_use": {"web_search_requests": 1},
                },
            },
            STOP,
        ),
        f"{DOCS} (Streaming request with web search tool use); {WEB} (citations split text blocks)",
        toml="web_search = true\n",
        text="done",
        check=_search_blocks_in_order,
    ),
    Case(
        "web_search_text_shown_apart_and_cited_run_joined",
        "anthropic",
        stream(
            start(input_tokens=2679),
            text(0, "I'll check the current weather in New York City for you."),
            block(
                1,
                {
                    "type": "server_tool_use",
                    "id": "srvtoolu_014hJH82Qum7Td6UV8gDXThB",
                    "name": "web_search",
                    "input": {"query": "weather NYC today"},
                },
            ),
            block(2, SEARCH_RESULT),
            text(3, "Based on the search results, "),
            block(
                4, {"type": "text", "text": ""}, t("it is 72°F and sunny in Manhattan"), CITATION
            ),
            text(5, " this afternoon."),
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 510, "server_tool_use": {"web_search_requests": 1}},
            },
            STOP,
        ),
        f"{DOCS} (Streaming request with web search tool use); {WEB} (citations)",
        toml="web_search = true\n",
        text="I'll check the current weather in New York City for you.\n\n"
        "Based on the search results, it is 72°F and sunny in Manhattan this afternoon.",
        usage={"server_tool_use": {"web_search_requests": 1}},  # type: ignore[dict-item]
        requests=1,
    ),
    pytest.param(
        Case(
            "refusal_after_text",
            "anthropic",
            stream(
                start(),
                text(0, "I can't help ", "with that request."),
                end(
                    "refusal",
                    12,
                    stop_details={
                        "type": "refusal",
                        "category": "cyber",
                        "explanation": "The request asked for working malware.",
                    },
                ),
                STOP,
            ),
            f"{SDK}stop_reason.py, raw_message_delta_event.py, refusal_stop_details.py",
            contains=("I can't help with that request.",),
            stop_reason="refusal",
            subtype="refused",
            requests=1,
        ),
    ),
    pytest.param(
        Case(
            "refusal_without_text",
            "anthropic",
            stream(
                start(),
                end(
                    "refusal",
                    0,
                    stop_details={
                        "type": "refusal",
                        "category": "reasoning_extraction",
                        "explanation": "This request cannot be answered.",
                    },
                ),
                STOP,
            ),
            f"{SDK}refusal_stop_details.py (category, explanation; output may be empty)",
            contains=("This request cannot be answered.", "reasoning_extraction"),
            stop_reason="refusal",
            subtype="refused",
            requests=1,
        ),
    ),
    pytest.param(
        Case(
            "max_tokens_on_text",
            "anthropic",
            stream(
                start(), text(0, "The three steps are: first, open the"), end("max_tokens", 8), STOP
            ),
            f"{SDK}stop_reason.py (max_tokens); {DOCS} (message_delta)",
            text="The three steps are: first, open the",
            stop_reason="max_tokens",
            subtype="truncated",
            requests=1,
        ),
    ),
    pytest.param(
        Case(
            "max_tokens_inside_tool_use",
            "anthropic",
            stream(
                start(),
                text(0, "Reading it now."),
                tool_use(1, "toolu_01CUT", "read_file", '{"path": "src/ma'),
                end("max_tokens", 40),
                STOP,
            ),
            "https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use "
            "(max_tokens with an incomplete tool_use block); " + DOCS,
            contains=("Reading it now.",),
            stop_reason="max_tokens",
            subtype="truncated",
            requests=1,  # the cut call is never run, so nothing goes back
        ),
    ),
    pytest.param(
        Case(
            "max_tokens_after_a_complete_tool_use",
            "anthropic",
            stream(
                start(),
                text(0, "Two calls."),
                tool_use(1, "toolu_01OK", "ls", "{}"),
                tool_use(2, "toolu_01CUT", "read_file", '{"pa', close=False),
                end("max_tokens", 40),
                STOP,
            ),
            "https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use "
            "(max_tokens with an incomplete tool_use block); " + DOCS,
            check=_cut_call_not_run,
        ),
    ),
    Case(
        "unknown_block_mcp_tool_use_with_input_json_delta",
        "anthropic",
        stream(
            start(input_tokens=300),
            block(
                0,
                MCP_USE,
                {"type": "input_json_delta", "partial_json": '{"message"'},
                {"type": "input_json_delta", "partial_json": ': "Hello"}'},
            ),
            block(1, MCP_RESULT),
            text(2, "The server said Hello."),
            end("end_turn", 42),
            STOP,
        ),
        "https://docs.anthropic.com/en/docs/agents-and-tools/mcp-connector "
        "(mcp_tool_use / mcp_tool_result blocks); "
        f"{SDK}beta/beta_mcp_tool_use_block.py, beta_mcp_tool_result_block.py; "
        f"{DOCS} (Other events)",
        text="The server said Hello.",
        stop_reason="complete",
        usage={"input_tokens": 300, "output_tokens": 42},
        requests=1,
    ),
    Case(
        "unknown_block_and_delta_types_skipped",
        "anthropic",
        stream(
            start(input_tokens=80),
            {"type": "future_event", "detail": {"x": 1}},
            block(0, {"type": "container_upload", "file_id": "file_011CNha8iCJcU1wXNR6q4V8w"}),
            block(
                1,
                {"type": "text", "text": ""},
                t("Uploaded."),
                {"type": "text_shine_delta", "x": 1},
            ),
            block(2, {"type": "brand_new_block"}, {"type": "brand_new_delta", "data": "?"}),
            end("end_turn", 9),
            STOP,
        ),
        f"{DOCS} (Other events: new event types may be added); "
        "https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/code-execution-tool "
        "(container_upload block); " + SDK + "beta/beta_container_upload_block.py",
        text="Uploaded.",
        stop_reason="complete",
        usage={"input_tokens": 80, "output_tokens": 9},
        requests=1,
    ),
    Case(
        "two_text_blocks_shown_apart",
        "anthropic",
        stream(
            start(),
            text(0, "First, the summary."),
            text(1, "Second, the details."),
            end("end_turn"),
            STOP,
        ),
        f"{DOCS} (each content block has its own index in the final content array)",
        text="First, the summary.\n\nSecond, the details.",
        requests=1,
    ),
    Case(
        "two_text_blocks_replayed_as_two",
        "anthropic",
        stream(
            start(),
            text(0, "The file list is below."),
            text(1, "I will read the notes next."),
            tool_use(2, "toolu_01Tx", "ls", '{"path": "."}'),
            end("tool_use"),
            STOP,
        ),
        f"{DOCS} (content blocks by index)",
        text="done",
        requests=2,
        check=_texts_replayed_apart,
    ),
    Case(
        "overloaded_error_event",
        "anthropic",
        stream(
            start(),
            PING,
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        ),
        f"{DOCS} (Error events: overloaded_error)",
        subtype="error_during_execution",
        check=_transient,
    ),
    Case(
        "api_error_event_after_text",
        "anthropic",
        stream(
            start(),
            block(0, {"type": "text", "text": ""}, t("Partial ans")),
            {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}},
        ),
        f"{DOCS} (Error events); https://docs.anthropic.com/en/api/errors (api_error)",
        check=_api_error,
    ),
    Case(
        "ping_events_everywhere",
        "anthropic",
        stream(
            PING,
            start(),
            PING,
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
            PING,
            {"type": "content_block_delta", "index": 0, "delta": t("Still ")},
            PING,
            PING,
            {"type": "content_block_delta", "index": 0, "delta": t("here.")},
            {"type": "content_block_stop", "index": 0},
            PING,
            end("end_turn", 4),
            PING,
            STOP,
        ),
        f"{DOCS} (Ping events: any number, dispersed throughout the response)",
        text="Still here.",
        stop_reason="complete",
        usage={"output_tokens": 4},
        requests=1,
    ),
    Case(
        "message_delta_usage_with_cache_fields",
        "anthropic",
        stream(
            start(
                input_tokens=4,
                cache_creation_input_tokens=1500,
                cache_read_input_tokens=20000,
                output_tokens=1,
            ),
            text(0, "Cached."),
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {
                    "input_tokens": 4,
                    "cache_creation_input_tokens": 1500,
                    "cache_read_input_tokens": 20000,
                    "output_tokens": 310,
                },
            },
            STOP,
        ),
        f"{SDK}message_delta_usage.py (cumulative counters, cache fields); "
        "https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching",
        text="Cached.",
        usage={
            "input_tokens": 4,
            "output_tokens": 310,
            "cache_read_input_tokens": 20000,
            "cache_creation_input_tokens": 1500,
        },
        requests=1,
    ),
    Case(
        "redacted_thinking_replayed",
        "anthropic",
        stream(
            start(),
            block(
                0,
                {"type": "thinking", "thinking": "", "signature": ""},
                {"type": "thinking_delta", "thinking": "Checking the folder."},
                {"type": "signature_delta", "signature": SIG},
            ),
            block(1, {"type": "redacted_thinking", "data": REDACTED}),
            tool_use(2, "toolu_01Rd", "ls", '{"path": "."}'),
            end("tool_use"),
            STOP,
        ),
        "https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking "
        "(redacted_thinking blocks, passed back unmodified); "
        f"{SDK}redacted_thinking_block.py",
        text="done",
        check=_redacted_replayed,
    ),
    pytest.param(
        Case(
            "pause_turn_is_an_unfinished_answer",
            "anthropic",
            stream(
                start(),
                text(0, "Searching several sources; this takes a while."),
                end("pause_turn", 30),
                STOP,
            ),
            f"{SDK}stop_reason.py (pause_turn); {WEB} (pause_turn: send the response back "
            "to let Claude continue)",
            contains=("this takes a while.",),
            subtype="truncated",
            requests=1,
        ),
    ),
    pytest.param(
        Case(
            "model_context_window_exceeded_is_length",
            "anthropic",
            stream(
                start(),
                text(0, "The list goes on: a, b, c"),
                end("model_context_window_exceeded", 5),
                STOP,
            ),
            f"{SDK}stop_reason.py (model_context_window_exceeded)",
            text="The list goes on: a, b, c",
            stop_reason="max_tokens",
            subtype="truncated",
            requests=1,
        ),
    ),
]


def _name(case: Any) -> str:
    return case.name if isinstance(case, Case) else case.values[0].name


@pytest.mark.parametrize("case", CASES, ids=_name)
def test_anthropic_traffic(
    case: Case, tmp_path: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    verify(case, replay(case, tmp_path, capsys, monkeypatch))
