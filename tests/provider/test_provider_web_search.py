"""``web_search = true`` against the fakes: the server tool goes out, search results come back.

Anthropic sends the versioned Messages server tool and folds ``server_tool_use`` +
``web_search_tool_result`` into one WEB_SEARCH chunk (replayed next turn as received);
Responses sends the hosted ``web_search`` tool plus ``include`` of the sources and folds
``web_search_call`` items. The openai kind has no search: its request stays unchanged.
"""

from __future__ import annotations

import json

import pytest
from fakes import FakeServer, SearchSpec, ToolSpec, Turn
from provider_kit import collect, provider, request

from reasonix.provider.types import ChunkKind, Message, Role, ToolSchema

HITS = [("Python 3.13 release notes", "https://docs.python.org/3.13/whatsnew/3.13.html"),
        ("PEP 719", "https://peps.python.org/pep-0719/")]  # fmt: skip
SEARCH = SearchSpec("python 3.13 release date", HITS)
TOOL = ToolSchema("read_file", "Read a file.", {"type": "object", "properties": {}})


@pytest.mark.parametrize("kind", ["anthropic", "responses"])
def test_search_tool_is_sent_and_results_fold_into_one_chunk(kind: str) -> None:
    turn = Turn(text="It was released in October 2024.", searches=[SEARCH])
    with FakeServer(kind, [turn], fragment=11) as srv:
        chunks = collect(provider(kind, srv.url, web_search=True), request(tools=[TOOL]))
        body = srv.requests[0].json
    tools = body["tools"]
    assert tools[0].get("name") == "read_file"  # function tools keep their place
    if kind == "anthropic":
        assert tools[-1] == {"type": "web_search_20250305", "name": "web_search"}
        assert "cache_control" in tools[0]  # the breakpoint stays on the last function tool
    else:
        assert tools[-1] == {"type": "web_search"}
        assert body["include"] == ["web_search_call.action.sources"]
    searches = [c.search for c in chunks if c.kind is ChunkKind.WEB_SEARCH]
    assert len(searches) == 1 and searches[0] is not None
    found = searches[0]
    assert found.query == "python 3.13 release date" and found.error == ""
    assert [r.url for r in found.results] == [url for _, url in HITS]
    if kind == "anthropic":
        assert [r.title for r in found.results] == [title for title, _ in HITS]
    kinds = [c.kind for c in chunks]
    assert kinds.index(ChunkKind.WEB_SEARCH) < kinds.index(ChunkKind.TEXT)  # live, before text
    usage = next(c.usage for c in chunks if c.kind is ChunkKind.USAGE)
    assert usage is not None and usage.web_search_requests == 1
    text = "".join(c.text for c in chunks if c.kind is ChunkKind.TEXT)
    assert text == "It was released in October 2024."


def test_anthropic_search_blocks_are_replayed_and_the_prefix_is_stable() -> None:
    turns = [Turn(text="Found it.", searches=[SEARCH]), Turn(text="Sure.")]
    with FakeServer("anthropic", turns) as srv:
        p = provider("anthropic", srv.url, web_search=True)
        chunks = collect(p, request(tools=[TOOL]))
        done = chunks[-1]
        reply = Message(Role.ASSISTANT, "Found it.", reasoning_meta=done.reasoning_meta)
        follow = request(tools=[TOOL])
        follow.messages += [reply, Message(Role.USER, "thanks")]
        collect(p, follow)
        first, second = srv.requests[0].json, srv.requests[1].json
    blocks = second["messages"][1]["content"]
    assert [b["type"] for b in blocks] == ["server_tool_use", "web_search_tool_result", "text"]
    assert blocks[0]["input"] == {"query": "python 3.13 release date"}
    assert blocks[1]["content"][0]["encrypted_content"] == "enc-0"  # replayed verbatim
    assert first["tools"] == second["tools"]


def test_responses_search_items_are_replayed() -> None:
    turns = [Turn(text="Found it.", searches=[SEARCH]), Turn(text="Sure.")]
    with FakeServer("responses", turns) as srv:
        p = provider("responses", srv.url, web_search=True)
        done = collect(p, request())[-1]
        follow = request()
        follow.messages += [
            Message(Role.ASSISTANT, "Found it.", reasoning_meta=done.reasoning_meta),
            Message(Role.USER, "thanks"),
        ]
        collect(p, follow)
        second = srv.requests[1].json
    call = second["input"][1]
    assert call["type"] == "web_search_call" and call["action"]["query"] == SEARCH.query
    message = second["input"][2]  # the message item as it came, its citations included
    assert message["type"] == "message" and message["role"] == "assistant"
    assert message["content"][0]["text"] == "Found it."
    assert message["content"][0]["annotations"][0]["type"] == "url_citation"


@pytest.mark.parametrize("kind", ["anthropic", "responses"])
def test_a_failed_search_reports_the_vendor_error(kind: str) -> None:
    turn = Turn(text="No luck.", searches=[SearchSpec("q", error="max_uses_exceeded")])
    with FakeServer(kind, [turn]) as srv:
        chunks = collect(provider(kind, srv.url, web_search=True))
    found = next(c.search for c in chunks if c.kind is ChunkKind.WEB_SEARCH)
    assert found is not None and found.results == () and found.error
    if kind == "anthropic":
        assert found.error == "max_uses_exceeded"


def test_a_search_alongside_a_tool_call_keeps_the_call_intact() -> None:
    turn = Turn(searches=[SEARCH], tool_calls=[ToolSpec("read_file", '{"path": "a"}')])
    with FakeServer("anthropic", [turn]) as srv:
        chunks = collect(provider("anthropic", srv.url, web_search=True))
    calls = [c.tool_call for c in chunks if c.kind is ChunkKind.TOOL_CALL]
    assert len(calls) == 1 and calls[0] is not None and calls[0].arguments == '{"path": "a"}'


@pytest.mark.parametrize("kind", ["openai", "anthropic", "responses"])
def test_without_web_search_the_request_is_unchanged(kind: str) -> None:
    bodies = []
    for flag in (False, True):
        with FakeServer(kind, [Turn(text="hi")]) as srv:
            p = provider(kind, srv.url, web_search=flag)
            collect(p, request(tools=[TOOL]))
            bodies.append(srv.requests[0].body)
        if kind == "openai":
            assert not p.supports_web_search
    if kind == "openai":  # no server-side search here: byte-identical either way
        assert bodies[0] == bodies[1]
    else:
        assert bodies[0] != bodies[1]
        assert b"web_search" not in bodies[0]
    assert "web_search" not in json.loads(bodies[0]).get("tools", [{}])[0].get("name", "")
